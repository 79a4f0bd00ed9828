//! loom models of every lock-free hand-off in the wheel.
//!
//! Run with `RUSTFLAGS="--cfg punctual_loom" cargo test -p punctual-core --test loom --release`
//! (the script `ci/loom.sh` does). Under `cfg(punctual_loom)` the crate's atomics and cells
//! are loom's (see `core/src/sync.rs`), so loom explores every interleaving of them up to
//! the preemption bound.
//!
//! Each model checks a "no lost wakeup" property: whatever the interleaving, a deadline
//! that is due either has its task woken, or the driver was woken to turn again, and one
//! more turn then fires it; entries are never lost or freed twice.
#![cfg(punctual_loom)]

use std::future::Future;
use std::pin::Pin;
use std::sync::Arc as StdArc;
use std::task::{Context, Poll, Wake, Waker};
use std::time::Duration;

use loom::sync::Arc;
use loom::sync::atomic::{AtomicUsize, Ordering};
use loom::thread;
use punctual_core::{Clock, Fixed, Growable, ManualClock, Sleeper, Wheel};

type TestWheel = Wheel<ManualClock, Fixed<4>>;

const TICK: Duration = Duration::from_millis(1);

fn wheel() -> Arc<TestWheel> {
    Arc::new(Wheel::fixed(ManualClock::new(), TICK))
}

/// A waker that counts its wakes, with a loom atomic so loom sees the hand-off.
struct Count(AtomicUsize);

impl Wake for Count {
    fn wake(self: StdArc<Self>) {
        self.0.fetch_add(1, Ordering::SeqCst);
    }
}

fn counter() -> (StdArc<Count>, Waker) {
    let count = StdArc::new(Count(AtomicUsize::new(0)));
    let waker = Waker::from(count.clone());
    (count, waker)
}

/// Lends the wheel to spawned threads as `'static`, so a deadline can move between them.
///
/// loom has no scoped threads; every model below joins all its threads before the last
/// `Arc` is dropped, which is what makes this sound.
fn lend<W>(wheel: &Arc<W>) -> &'static W {
    // SAFETY: the models join every thread that uses the reference before dropping the
    // `Arc` that keeps the wheel alive.
    unsafe { &*Arc::as_ptr(wheel) }
}

fn woken(count: &Count) -> usize {
    count.0.load(Ordering::SeqCst)
}

/// After a model's threads joined: one more turn takes in and reclaims what is left; then
/// exactly `live` entries are in use, and when `at` comes each of their deadlines fires
/// once (`task` counts them all).
fn settle<S: punctual_core::Storage>(
    wheel: &Wheel<ManualClock, S>,
    task: &Count,
    live: usize,
    at: Duration,
) {
    wheel.turn();
    assert_eq!(wheel.occupied(), live, "entries in use");
    wheel.clock().set(at);
    wheel.turn();
    assert_eq!(
        woken(task),
        live,
        "each live deadline fired once, the others never"
    );
}

/// Arms a sleep until `at` and keeps its entry armed (the handle is forgotten), for the
/// checks that follow.
fn arm_and_keep<S: punctual_core::Storage>(wheel: &Wheel<ManualClock, S>, at: Duration) {
    let mut sleep = wheel.sleep_until(at);
    assert!(poll(&mut sleep, Waker::noop()).is_pending());
    std::mem::forget(sleep);
}

/// Arms two sleeps on this thread's shard: one until the first tick, returned (to keep it
/// armed, or forget it), and one of 30 s that a turn takes in and that is then cancelled
/// (its entry goes back on this shard's free list at the driver's next turn).
fn arm_one_and_cancel_one<S: punctual_core::Storage + 'static>(
    wheel: &Arc<Wheel<ManualClock, S>>,
    waker: &Waker,
) -> punctual_core::Sleep<'static> {
    let mut kept = lend(wheel).sleep_until(TICK);
    assert!(poll(&mut kept, waker).is_pending());
    let mut released = lend(wheel).sleep(Duration::from_secs(30));
    assert!(poll(&mut released, waker).is_pending());
    wheel.turn();
    drop(released);
    kept
}

/// After a turn that planned `planned` raced an arm due at `due`: the turn took the entry
/// in (it plans `due` or sooner), or the arm woke the driver (woken more than the `seen`
/// times counted before the race).
fn assert_taken_in_or_woken(driver: &Count, seen: usize, planned: Duration, due: Duration) {
    assert!(
        woken(driver) > seen || planned <= due,
        "lost wakeup: the driver planned {planned:?} for a deadline due at {due:?} and was not woken"
    );
}

fn poll<F: Future + Unpin>(f: &mut F, waker: &Waker) -> Poll<F::Output> {
    Pin::new(f).poll(&mut Context::from_waker(waker))
}

/// Runs `f` under loom with at most `preemptions` forced switches per execution (unless
/// `LOOM_MAX_PREEMPTIONS` says otherwise), which keeps the whole file to a few minutes.
///
/// Fails a model that loom ran only once: then no two operations of its threads were
/// ever found to race, and it checked one interleaving, not all (a model whose threads
/// meet only through memory loom cannot see, as `ManualClock`'s once was). Prints how
/// many it explored.
fn model_bounded(preemptions: usize, f: impl Fn() + Sync + Send + 'static) {
    let mut builder = loom::model::Builder::new();
    if builder.preemption_bound.is_none() {
        builder.preemption_bound = Some(preemptions);
    }
    let executions = StdArc::new(std::sync::atomic::AtomicUsize::new(0));
    let counted = executions.clone();
    builder.check(move || {
        counted.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        f();
    });
    let executions = executions.load(std::sync::atomic::Ordering::Relaxed);
    eprintln!(
        "{}: {executions} interleavings",
        std::thread::current().name().unwrap_or("model")
    );
    assert!(
        executions > 1,
        "loom explored one interleaving: the model's threads never race"
    );
}

fn model(f: impl Fn() + Sync + Send + 'static) {
    model_bounded(3, f);
}

/// Arming on one thread while the driver turns on another: either the turn takes the new
/// entry and fires it, or the arming thread sees the driver's plan and wakes the driver.
#[test]
fn arm_vs_fire() {
    model(|| {
        let wheel = wheel();
        let (task, task_waker) = counter();
        let (driver, driver_waker) = counter();
        wheel.register_driver(&driver_waker);
        wheel.turn(); // publishes the driver's plan (far away: nothing armed)
        // A new wheel starts idle, and a turn out of idle wakes the drivers: that first
        // turn woke the driver, which registers again, as a loop does.
        wheel.register_driver(&driver_waker);
        let seen = woken(&driver);

        let armer = {
            let wheel = wheel.clone();
            thread::spawn(move || {
                let mut sleep = wheel.sleep_until(TICK);
                let ready = poll(&mut sleep, &task_waker).is_ready();
                std::mem::forget(sleep); // keep the entry armed for the checks below
                ready
            })
        };
        wheel.clock().set(TICK);
        wheel.turn();
        let first_ready = armer.join().unwrap();
        if !first_ready {
            assert!(
                woken(&task) == 1 || woken(&driver) > seen,
                "lost wakeup: neither the task nor the driver was woken"
            );
            wheel.turn(); // what the woken driver does
            assert_eq!(woken(&task), 1, "due deadline not fired");
        }
    });
}

/// Sub-tick firing: the driver plans its turn at 2.6 ms, within tick 3; another thread arms
/// a deadline into the same tick, due at 2.2 ms, while the driver turns. Either that turn
/// takes the new entry in (and plans 2.2 ms), or the arming thread sees the plan and its
/// offset and wakes the driver: the earlier deadline never waits for the later one.
#[test]
fn arm_into_the_planned_tick_before_its_turn() {
    model(|| {
        let wheel = wheel();
        let (task, task_waker) = counter();
        let (_other, other_waker) = counter();
        let (driver, driver_waker) = counter();
        let us = Duration::from_micros;
        let mut later = wheel.sleep_until(us(2600));
        assert!(poll(&mut later, &other_waker).is_pending());
        std::mem::forget(later);
        wheel.register_driver(&driver_waker);
        assert_eq!(wheel.turn(), us(2600));
        // That turn took the wheel out of idle and woke the driver, which registers again.
        wheel.register_driver(&driver_waker);
        let seen = woken(&driver);

        let armer = {
            let wheel = wheel.clone();
            thread::spawn(move || {
                let mut sleep = wheel.sleep_until(us(2200));
                assert!(poll(&mut sleep, &task_waker).is_pending());
                std::mem::forget(sleep);
            })
        };
        let planned = wheel.turn();
        armer.join().unwrap();
        assert!(
            woken(&driver) > seen || planned == us(2200),
            "lost sub-tick wake: the driver plans {planned:?} and was not woken"
        );
        wheel.clock().set(us(2200));
        wheel.turn();
        assert_eq!(woken(&task), 1, "due deadline not fired at its time");
    });
}

/// After any interleaving of arm and turn, one more turn fires the deadline and wakes it.
#[test]
fn arm_then_any_turn_fires() {
    model(|| {
        let wheel = wheel();
        let (task, task_waker) = counter();
        let (_driver, driver_waker) = counter();
        wheel.register_driver(&driver_waker);
        wheel.turn();
        let armer = {
            let wheel = wheel.clone();
            thread::spawn(move || {
                let mut sleep = wheel.sleep_until(TICK);
                let first = poll(&mut sleep, &task_waker);
                assert!(first.is_pending(), "clock is at zero when arming here");
                // Keep the entry alive until the main thread is done turning.
                std::mem::forget(sleep);
            })
        };
        let turner = {
            let wheel = wheel.clone();
            thread::spawn(move || {
                wheel.turn();
            })
        };
        armer.join().unwrap();
        turner.join().unwrap();
        assert_eq!(woken(&task), 0, "fired before its time");
        wheel.clock().set(TICK);
        wheel.turn();
        assert_eq!(
            woken(&task),
            1,
            "due deadline not fired by a turn after arming"
        );
    });
}

/// Cancelling on one thread while the driver fires on another: the outcome is decided
/// once, and the entry is freed exactly once, by whichever side lets go last.
#[test]
fn cancel_vs_fire() {
    model(|| {
        let wheel = wheel();
        let (_task, task_waker) = counter();
        let mut sleep = lend(&wheel).sleep_until(TICK);
        assert!(poll(&mut sleep, &task_waker).is_pending());
        wheel.turn(); // link it into its slot
        wheel.clock().set(TICK);

        let canceller = thread::spawn(move || drop(sleep));
        let driver = {
            let wheel = wheel.clone();
            thread::spawn(move || {
                wheel.turn();
            })
        };
        canceller.join().unwrap();
        driver.join().unwrap();
        wheel.turn(); // reclaim, if the cancel won
        assert_eq!(wheel.occupied(), 0, "entry leaked or double-counted");
        // The free list is intact: all four entries can be armed again.
        let sleeps: Vec<_> = (0..4)
            .map(|_| {
                let mut s = wheel.sleep(TICK * 5);
                assert!(poll(&mut s, &task_waker).is_pending());
                s
            })
            .collect();
        assert_eq!(wheel.occupied(), 4);
        drop(sleeps);
    });
}

/// Cancelling while the driver reclaims earlier cancels and another thread arms: entries
/// move between the free list, the inboxes and the levels without being lost or shared.
#[test]
fn cancel_vs_reclamation() {
    model(|| {
        let wheel = wheel();
        let (task, task_waker) = counter();
        let mut a = lend(&wheel).sleep(Duration::from_secs(30));
        let mut b = lend(&wheel).sleep(Duration::from_secs(30));
        assert!(poll(&mut a, &task_waker).is_pending());
        assert!(poll(&mut b, &task_waker).is_pending());
        wheel.turn();
        drop(a); // on the cancel inbox

        let other = {
            let wheel = wheel.clone();
            let task_waker = task_waker.clone();
            thread::spawn(move || {
                drop(b);
                let mut c = wheel.sleep_until(TICK * 2);
                assert!(poll(&mut c, &task_waker).is_pending());
                std::mem::forget(c);
            })
        };
        let driver = {
            let wheel = wheel.clone();
            thread::spawn(move || {
                wheel.turn();
            })
        };
        other.join().unwrap();
        driver.join().unwrap();
        settle(&wheel, &task, 1, TICK * 2); // `c`
    });
}

/// Taking an entry back off the arm inbox (a release before any turn took it in) while the
/// driver takes the inbox and another thread arms on top of it: every entry is taken back,
/// reclaimed or fired exactly once, and none is lost or handed out twice.
#[test]
fn take_back_vs_take_and_push() {
    model(|| {
        let wheel = wheel();
        let (task, task_waker) = counter();
        let (_driver, driver_waker) = counter();
        wheel.register_driver(&driver_waker);
        wheel.turn();

        let releaser = {
            let wheel = wheel.clone();
            let task_waker = task_waker.clone();
            thread::spawn(move || {
                let mut a = wheel.sleep(Duration::from_secs(30));
                assert!(poll(&mut a, &task_waker).is_pending());
                drop(a); // taken back, unless the turn took it or `c` went on top
            })
        };
        let armer = {
            let wheel = wheel.clone();
            let task_waker = task_waker.clone();
            thread::spawn(move || {
                let mut c = wheel.sleep_until(TICK);
                assert!(poll(&mut c, &task_waker).is_pending());
                std::mem::forget(c); // keep it armed for the checks below
            })
        };
        wheel.turn();
        releaser.join().unwrap();
        armer.join().unwrap();
        settle(&wheel, &task, 1, TICK); // `c`
        // Every other entry is free, once: three more fit beside `c` in a wheel of four.
        let mut more: Vec<_> = (0..3)
            .map(|_| lend(&wheel).sleep(Duration::from_secs(30)))
            .collect();
        for sleep in &mut more {
            assert!(poll(sleep, &task_waker).is_pending());
        }
        assert_eq!(wheel.occupied(), 4);
        assert_eq!(wheel.degraded_polls(), 0, "an entry went missing");
    });
}

/// As above, with the releasing thread and an arming thread on the same shard, so that an
/// arm can land on top of the entry being taken back while the driver takes the inbox.
/// (Shards go round-robin in the order threads first touch a wheel, two under loom.)
#[test]
fn take_back_under_a_push_on_the_same_shard() {
    // Two preemptions, not three: 47 000 interleavings in 10 s instead of a million in
    // five minutes (CI time). A take-back that stores the head instead of its
    // compare-and-swap still fails, at once.
    model_bounded(2, || {
        let wheel = wheel();
        let (task, task_waker) = counter();
        let (_driver, driver_waker) = counter();
        wheel.register_driver(&driver_waker);
        wheel.turn();
        let claim = |wheel: &TestWheel| {
            let mut s = wheel.sleep(Duration::from_secs(30));
            assert!(poll(&mut s, Waker::noop()).is_pending());
        };
        claim(&wheel); // this thread: shard 0
        {
            let wheel = wheel.clone();
            thread::spawn(move || claim(&wheel)).join().unwrap(); // shard 1
        }
        let releaser = {
            let wheel = wheel.clone();
            let task_waker = task_waker.clone();
            thread::spawn(move || {
                // Shard 0, like this thread.
                let mut a = wheel.sleep(Duration::from_secs(30));
                assert!(poll(&mut a, &task_waker).is_pending());
                drop(a);
            })
        };
        let driver = {
            let wheel = wheel.clone();
            thread::spawn(move || {
                wheel.turn();
            })
        };
        let mut c = lend(&wheel).sleep_until(TICK);
        assert!(poll(&mut c, &task_waker).is_pending());
        releaser.join().unwrap();
        driver.join().unwrap();
        settle(&wheel, &task, 1, TICK); // `c`
        std::mem::forget(c);
    });
}

/// A thread whose shard has no free entry, on a storage that holds no untouched one,
/// steals another shard's free entry, while that shard's thread arms, releases and turns:
/// no entry is lost or handed out twice, and the stealing thread never runs degraded
/// while an entry is free.
#[test]
fn a_steal_from_another_shard_on_a_full_storage() {
    model(|| {
        let wheel: Arc<Wheel<ManualClock, Fixed<2>>> =
            Arc::new(Wheel::fixed(ManualClock::new(), TICK));
        let (task, task_waker) = counter();
        // Both entries touched by this thread's shard: one kept armed, one freed onto
        // this shard's list by the turn that reclaims it.
        let kept = arm_one_and_cancel_one(&wheel, &task_waker);
        wheel.turn();

        let other = {
            let wheel = wheel.clone();
            let task_waker = task_waker.clone();
            thread::spawn(move || {
                // Another shard, empty, and nothing untouched: steals the freed entry.
                let mut a = wheel.sleep_until(TICK);
                assert!(poll(&mut a, &task_waker).is_pending());
                std::mem::forget(a);
            })
        };
        wheel.turn();
        other.join().unwrap();
        assert_eq!(
            wheel.degraded_polls(),
            0,
            "ran degraded while an entry was free"
        );
        settle(&wheel, &task, 2, TICK); // `kept` and `a`
        std::mem::forget(kept);
    });
}

/// Growable storage hands untouched entries to a shard in blocks, and a thread whose shard
/// is empty takes a block of its own (or, on a storage that would have to grow, steals a
/// run of another shard's entries): with two threads on two shards, arming, releasing
/// (taken back or cancelled) and taking entries concurrently, no entry is lost or handed
/// out twice.
#[test]
fn fresh_blocks_and_steals_across_shards() {
    model(|| {
        let wheel: Arc<Wheel<ManualClock, punctual_core::Growable>> =
            Arc::new(Wheel::growable(ManualClock::new(), TICK));
        let (task, task_waker) = counter();
        // This thread's shard takes the first block and keeps one entry armed; the other
        // goes back on this shard's list at the driver's next turn.
        let kept = arm_one_and_cancel_one(&wheel, &task_waker);

        let other = {
            let wheel = wheel.clone();
            let task_waker = task_waker.clone();
            thread::spawn(move || {
                // Another shard, empty: takes a block of its own (the storage holds one).
                let mut a = wheel.sleep(Duration::from_secs(30));
                assert!(poll(&mut a, &task_waker).is_pending());
                let mut b = wheel.sleep_until(TICK);
                assert!(poll(&mut b, &task_waker).is_pending());
                drop(a);
                std::mem::forget(b);
            })
        };
        wheel.turn();
        let mut c = lend(&wheel).sleep(Duration::from_secs(30));
        assert!(poll(&mut c, &task_waker).is_pending());
        drop(c);
        other.join().unwrap();
        settle(&wheel, &task, 2, TICK); // `kept` and `b`
        std::mem::forget(kept);
    });
}

/// Re-registering a waker while the driver fires: the latest waker is woken, or the poll
/// that registered it sees the fire itself.
#[test]
fn waker_update_vs_fire() {
    model(|| {
        let wheel = wheel();
        let (_old, old_waker) = counter();
        let (new, new_waker) = counter();
        let mut sleep = lend(&wheel).sleep_until(TICK);
        assert!(poll(&mut sleep, &old_waker).is_pending());
        wheel.turn();
        wheel.clock().set(TICK);

        // The sleep comes back from the thread: dropping it would cancel it.
        let poller = thread::spawn(move || {
            let ready = poll(&mut sleep, &new_waker).is_ready();
            (ready, sleep)
        });
        let driver = {
            let wheel = wheel.clone();
            thread::spawn(move || {
                wheel.turn();
            })
        };
        let (ready, sleep) = poller.join().unwrap();
        driver.join().unwrap();
        assert!(
            ready || woken(&new) == 1,
            "the new waker was not woken and the poll missed the fire"
        );
        // The old waker may be woken too: the fire can take it just before the new one is
        // stored, and the register then wakes the new one itself. Spurious, never lost.
        assert!(woken(&new) <= 1, "new waker woken twice");
        drop(sleep);
    });
}

/// Two threads turning at once: one holds the driver role, the other leaves a request
/// that the holder honours with a fresh clock reading; the deadline fires exactly once.
#[test]
fn two_drivers_race() {
    model(|| {
        let wheel = wheel();
        let (task, task_waker) = counter();
        let mut sleep = wheel.sleep_until(TICK * 2);
        assert!(poll(&mut sleep, &task_waker).is_pending());
        wheel.turn();

        let first = {
            let wheel = wheel.clone();
            thread::spawn(move || {
                wheel.turn(); // sees the clock at 0, 1 or 2 ticks
            })
        };
        let second = {
            let wheel = wheel.clone();
            thread::spawn(move || {
                wheel.clock().set(TICK * 2);
                wheel.turn(); // must end with the deadline fired, by itself or the holder
            })
        };
        first.join().unwrap();
        second.join().unwrap();
        assert_eq!(
            woken(&task),
            1,
            "a turn that read 2 ticks returned without firing"
        );
        assert!(poll(&mut sleep, &task_waker).is_ready());
    });
}

/// Two threads arming, cancelling, reclaiming and arming again on a two-entry wheel: the
/// free list's ABA tag keeps every entry owned by at most one deadline. A second arm may
/// find the wheel full (the other thread's cancel not reclaimed yet) and run degraded,
/// which the wheel counts; every deadline is either on its own entry or counted.
#[test]
fn free_list_aba() {
    model_bounded(2, || {
        let wheel: Arc<Wheel<ManualClock, Fixed<2>>> =
            Arc::new(Wheel::fixed(ManualClock::new(), TICK));
        let threads: Vec<_> = (0..2)
            .map(|_| {
                let wheel = wheel.clone();
                thread::spawn(move || {
                    let waker = Waker::noop();
                    let mut s = wheel.sleep(TICK * 10);
                    assert!(poll(&mut s, waker).is_pending());
                    drop(s);
                    wheel.turn(); // reclaim (or ask the current driver to)
                    let mut s = wheel.sleep(TICK * 10);
                    assert!(poll(&mut s, waker).is_pending());
                    std::mem::forget(s);
                })
            })
            .collect();
        for t in threads {
            t.join().unwrap();
        }
        assert_eq!(wheel.occupied() + wheel.degraded_polls(), 2);
    });
}

/// Two drivers, each with a place of its own for its waker; one stops (gives its place
/// back) while another thread arms a deadline on the idle wheel. The driver that remains
/// is woken, whatever the interleaving: a stopping driver takes no other's wake with it.
#[test]
fn a_driver_stops_while_a_deadline_is_armed() {
    model(|| {
        let wheel = wheel();
        let (task, task_waker) = counter();
        let (staying, staying_waker) = counter();
        let (_leaving, leaving_waker) = counter();
        let mut stays = wheel.driver_slot();
        let mut leaves = wheel.driver_slot();
        assert!(stays.register(&staying_waker));
        assert!(leaves.register(&leaving_waker));
        // Idle: nothing armed, lingering over.
        while wheel.turn() != Duration::MAX {
            let next = wheel.next_turn();
            wheel.clock().set(next);
        }

        let w = lend(&wheel);
        let armer = thread::spawn(move || {
            let mut sleep = w.sleep(TICK);
            assert!(poll(&mut sleep, &task_waker).is_pending());
            std::mem::forget(sleep); // keep the entry armed for the checks below
        });
        drop(leaves);
        armer.join().unwrap();
        assert!(woken(&staying) >= 1, "the remaining driver was not woken");
        settle(&wheel, &task, 1, wheel.clock().now() + TICK);
        drop(stays);
    });
}

/// A driver takes its place, registers and turns on one thread while another arms a
/// deadline on the idle wheel: either the turn takes the entry in (and plans a turn by its
/// tick), or the arm sees the driver's place and wakes it. An arm before the claim finds
/// no driver to wake, and the turn, which comes after, takes the entry in.
#[test]
fn a_driver_takes_its_place_while_a_deadline_is_armed() {
    model(|| {
        let wheel = wheel();
        let (task, task_waker) = counter();
        let (driver, driver_waker) = counter();
        while wheel.turn() != Duration::MAX {
            let next = wheel.next_turn();
            wheel.clock().set(next);
        }
        let due = wheel.clock().now() + TICK;

        let w = lend(&wheel);
        let driving = thread::spawn(move || {
            let mut slot = w.driver_slot();
            assert!(slot.register(&driver_waker));
            // As its driver: a turn out of idle wakes the other drivers, not this one.
            let planned = slot.turn();
            (slot, planned)
        });
        let mut sleep = wheel.sleep(TICK);
        assert!(poll(&mut sleep, &task_waker).is_pending());
        std::mem::forget(sleep); // keep the entry armed for the checks below
        let (slot, planned) = driving.join().unwrap();
        assert_taken_in_or_woken(&driver, 0, planned, due);
        settle(&wheel, &task, 1, due);
        drop(slot);
    });
}

/// A turn by hand on the idle wheel while another thread arms a deadline later than the
/// turn will plan. The turn takes the wheel out of idle (it lingers: it plans a turn 16
/// ticks ahead), and an arm later than that plan wakes no one; the idle driver waits for
/// its waker only. So it must be woken, whatever the interleaving: by the arm, if the wheel
/// still read idle, or by the turn that took it out of idle. (Before that wake, once the
/// plan's time passed, no arm ever woke a driver again and the wheel stopped for good.)
#[test]
fn a_turn_by_hand_out_of_idle_while_a_later_deadline_is_armed() {
    turn_by_hand_out_of_idle(false);
}

/// The same, with the arming thread's shard marked in use by an earlier arm: its arm then
/// reads the plan with a plain load, as every arm on a wheel of one shard does (firmware),
/// and may read the turn's new plan while the turn's check finds its entry. The turn then
/// passes again and reads its own plan, not idle: the driver is woken only because the
/// turn remembers that its first pass left idle. (Both configurations of loom run this:
/// two shards, and one with `--cfg punctual_loom_one_shard`.)
#[test]
fn a_turn_by_hand_out_of_idle_while_a_later_deadline_is_armed_on_a_marked_shard() {
    turn_by_hand_out_of_idle(true);
}

fn turn_by_hand_out_of_idle(mark_first: bool) {
    model(move || {
        let wheel = wheel();
        let (task, task_waker) = counter();
        let (driver, driver_waker) = counter();
        if mark_first {
            // Before the driver registers: the arm's wake would take its waker.
            mark_this_threads_shard(&wheel);
        }
        let mut slot = wheel.driver_slot();
        assert!(slot.register(&driver_waker));
        // The driver's own turns, until the wheel is idle: it waits for its waker now.
        while slot.turn() != Duration::MAX {
            let next = wheel.next_turn();
            wheel.clock().set(next);
        }
        let before = woken(&driver);
        let due = wheel.clock().now() + 40 * TICK;
        race_a_turn_by_hand_with_an_arm(&wheel, due, &task_waker);
        assert!(
            woken(&driver) > before,
            "the idle driver was not woken: no one would carry out the plan"
        );
        settle(&wheel, &task, 1, due);
        drop(slot);
    });
}

/// Marks this thread's shard in use on `wheel` with an arm taken back at once: nothing is
/// left armed, and this thread's next arms read the plan with a plain load.
fn mark_this_threads_shard(wheel: &TestWheel) {
    let mut early = wheel.sleep(TICK);
    assert!(poll(&mut early, Waker::noop()).is_pending());
}

/// A turn by hand on another thread, racing an arm on this one of a sleep until `due`
/// (kept armed, its handle forgotten) whose task is `waker`'s.
fn race_a_turn_by_hand_with_an_arm(wheel: &Arc<TestWheel>, due: Duration, waker: &Waker) {
    let w = lend(wheel);
    let by_hand = thread::spawn(move || {
        let _ = w.turn();
    });
    let mut sleep = wheel.sleep_until(due);
    assert!(poll(&mut sleep, waker).is_pending());
    std::mem::forget(sleep);
    by_hand.join().unwrap();
}

/// Sleeps on the model's manual clock that tell the model when they end, so that it can
/// run a [`Driver`](punctual_core::Driver) as an executor with a timer would: poll it when
/// its task was woken, or when the clock has reached the sleep it set. A driver that is
/// idle drops its sleep, and then only a wake brings it back.
struct ClockSleeper {
    wheel: &'static TestWheel,
    /// The end of the sleep the driver holds, if any.
    until: StdArc<std::sync::Mutex<Option<Duration>>>,
}

struct ClockSleep {
    wheel: &'static TestWheel,
    at: Duration,
    until: StdArc<std::sync::Mutex<Option<Duration>>>,
}

impl Sleeper for ClockSleeper {
    type Sleep = ClockSleep;

    fn sleep_until(&mut self, at: Duration) -> ClockSleep {
        *self.until.lock().unwrap() = Some(at);
        ClockSleep {
            wheel: self.wheel,
            at,
            until: self.until.clone(),
        }
    }
}

impl Future for ClockSleep {
    type Output = ();

    fn poll(self: Pin<&mut Self>, _: &mut Context<'_>) -> Poll<()> {
        // No waker to register: the model polls the driver once the clock is there.
        if self.wheel.clock().now() >= self.at {
            Poll::Ready(())
        } else {
            Poll::Pending
        }
    }
}

impl Drop for ClockSleep {
    fn drop(&mut self) {
        let mut until = self.until.lock().unwrap();
        if *until == Some(self.at) {
            *until = None;
        }
    }
}

/// End to end, through a [`Driver`](punctual_core::Driver) future and its skipped turns:
/// the driver has left the wheel idle and waits for a wake only, when a turn by hand takes
/// the wheel out of idle while another thread arms a deadline later than that turn's plan,
/// on a shard already marked in use. Run as an executor would (polled when woken, or when
/// its sleep ends), the driver carries the plan out and the deadline fires. (Without the
/// wake of a turn that leaves idle, remembered across its passes, the driver stayed idle
/// and the deadline never fired.)
#[test]
fn a_driver_future_carries_out_a_plan_made_by_hand() {
    model(|| {
        let wheel = wheel();
        let (task, task_waker) = counter();
        let (driver, driver_waker) = counter();
        mark_this_threads_shard(&wheel);
        let until = StdArc::new(std::sync::Mutex::new(None));
        let mut driving = Box::pin(wheel.driver(ClockSleeper {
            wheel: lend(&wheel),
            until: until.clone(),
        }));
        let mut cx = Context::from_waker(&driver_waker);
        // Poll at each end of sleep until the driver has left the wheel idle (no sleep).
        loop {
            assert!(driving.as_mut().poll(&mut cx).is_pending());
            let Some(at) = *until.lock().unwrap() else {
                break;
            };
            wheel.clock().set(at);
        }
        let mut seen = woken(&driver);
        let due = wheel.clock().now() + 40 * TICK;
        race_a_turn_by_hand_with_an_arm(&wheel, due, &task_waker);

        // The executor: a poll for each wake of the driver's task, and one when the clock
        // reaches the end of the sleep the driver set; nothing else moves the clock.
        for _ in 0..100 {
            if woken(&task) == 1 {
                break;
            }
            if woken(&driver) > seen {
                seen = woken(&driver);
            } else if let Some(at) = *until.lock().unwrap() {
                wheel.clock().set(at.max(wheel.clock().now()));
            } else {
                break;
            }
            assert!(driving.as_mut().poll(&mut cx).is_pending());
        }
        assert_eq!(
            woken(&task),
            1,
            "the deadline due at {due:?} never fired: the driver stopped at {:?} (plan {:?})",
            wheel.clock().now(),
            wheel.next_turn()
        );
        drop(driving);
    });
}

/// The first arm through a shard (which marks it in use) while a turn moves the plan
/// later: the driver planned tick 2 for an earlier deadline, and another thread, on a
/// shard not in use yet, arms one due at tick 3, which needs no wake while the plan is
/// tick 2. The turn at tick 2 fires the first and plans later: either it takes the new
/// entry in (and plans tick 3), or the arming thread sees the later plan and wakes the
/// driver. The driver's handshake checks only the shards in use; a mark it does not see
/// must bring the new plan to the arming thread.
#[test]
fn a_first_arm_on_a_shard_while_the_plan_moves_later() {
    model(|| {
        let wheel = wheel();
        let (task, task_waker) = counter();
        let (driver, driver_waker) = counter();
        // This thread's shard in use, with a deadline at tick 2 planned.
        let mut first = lend(&wheel).sleep_until(TICK * 2);
        assert!(poll(&mut first, &task_waker).is_pending());
        wheel.register_driver(&driver_waker);
        assert_eq!(wheel.turn(), TICK * 2);
        // That turn took the wheel out of idle and woke the driver, which registers again.
        wheel.register_driver(&driver_waker);
        let seen = woken(&driver);

        let w = lend(&wheel);
        let armer = thread::spawn(move || arm_and_keep(w, TICK * 3));
        wheel.clock().set(TICK * 2);
        let planned = wheel.turn();
        armer.join().unwrap();
        assert_eq!(woken(&task), 1, "the first deadline did not fire");
        assert_taken_in_or_woken(&driver, seen, planned, TICK * 3);
        drop(first);
    });
}

/// Two threads on one shard not in use yet, while a turn moves the plan later: one arms
/// far ahead (it marks the shard, and needs no wake), the other arms between the old plan
/// and the new one and finds the shard marked already. The Acquire read of the plan word
/// that finds the mark must bring it the driver's new plan, or the turn must take its
/// entry in. (Threads get shards round-robin as they first touch a wheel: this thread 0,
/// then, when they start in this order, `a` 1, `b` 0 and `c` 1. `a` and `b` first touch
/// it by dropping a deadline that fired, which pushes onto no inbox.)
#[test]
fn a_second_arm_on_a_new_shard_sees_the_plan_through_the_mark() {
    // Two preemptions, not three: 200 000 interleavings in under a minute instead of 3.2
    // million in six (CI time). With the Acquire read of the plan word relaxed it still
    // fails, at once.
    model_bounded(2, || {
        let wheel = wheel();
        let (task, task_waker) = counter();
        let (driver, driver_waker) = counter();
        let mut first = lend(&wheel).sleep_until(TICK * 2);
        assert!(poll(&mut first, &task_waker).is_pending());
        let mut fired: Vec<_> = (0..2).map(|_| lend(&wheel).sleep_until(TICK)).collect();
        for sleep in &mut fired {
            assert!(poll(sleep, Waker::noop()).is_pending());
        }
        wheel.clock().set(TICK);
        wheel.register_driver(&driver_waker);
        assert_eq!(wheel.turn(), TICK * 2);
        // That turn took the wheel out of idle and woke the driver, which registers again.
        wheel.register_driver(&driver_waker);
        let seen = woken(&driver);
        // Fired, and not polled since: dropping one is a thread's first touch of a shard
        // (the handle lets go and frees the entry there).
        let (fired_b, fired_a) = (fired.pop().unwrap(), fired.pop().unwrap());

        let w = lend(&wheel);
        let a = thread::spawn(move || {
            drop(fired_a);
            arm_and_keep(w, TICK * 100);
        });
        let b = thread::spawn(move || drop(fired_b));
        let c = thread::spawn(move || arm_and_keep(w, TICK * 3));
        wheel.clock().set(TICK * 2);
        let planned = wheel.turn();
        for t in [a, b, c] {
            t.join().unwrap();
        }
        assert_eq!(woken(&task), 1, "the first deadline did not fire");
        assert_taken_in_or_woken(&driver, seen, planned, TICK * 3);
        drop(first);
    });
}

/// Sleeps that never end: the models move the clock and poll by hand.
struct NeverSleeper;

impl Sleeper for NeverSleeper {
    type Sleep = std::future::Pending<()>;

    fn sleep_until(&mut self, _: Duration) -> Self::Sleep {
        std::future::pending()
    }
}

/// A driver that left the wheel idle skips its turn when polled with nothing having woken
/// it. An arm on another thread races that poll: either the poll turns and takes the
/// entry in, or the arm wakes the driver's task, and a poll for that wake (as an executor
/// makes) turns. Either way the wheel then plans a turn by the deadline's tick.
#[test]
fn an_idle_driver_skips_its_turn_only_if_no_arm_woke_it() {
    model(|| {
        let wheel = wheel();
        let (task, task_waker) = counter();
        let (driver, driver_waker) = counter();
        let mut driving = Box::pin(wheel.driver(NeverSleeper));
        let mut cx = Context::from_waker(&driver_waker);
        // Poll until the driver has left the wheel idle (after the lingering).
        loop {
            assert!(driving.as_mut().poll(&mut cx).is_pending());
            let next = wheel.next_turn();
            if next == Duration::MAX {
                break;
            }
            wheel.clock().set(next);
        }
        let mut seen = woken(&driver);
        let due = wheel.clock().now() + TICK;

        let w = lend(&wheel);
        let armer = thread::spawn(move || {
            let mut sleep = w.sleep_until(due);
            assert!(poll(&mut sleep, &task_waker).is_pending());
            std::mem::forget(sleep); // keep the entry armed for the checks below
        });
        assert!(driving.as_mut().poll(&mut cx).is_pending());
        armer.join().unwrap();
        // Poll again for each wake the driver's task got, as its executor would.
        while woken(&driver) > seen {
            seen = woken(&driver);
            assert!(driving.as_mut().poll(&mut cx).is_pending());
        }
        assert!(
            wheel.next_turn() <= due,
            "lost wakeup: the driver plans {:?} for a deadline due at {due:?}",
            wheel.next_turn()
        );
        drop(driving);
        settle(&wheel, &task, 1, due);
    });
}

/// A deadline armed on one shard and dropped on another before any turn took it in: the
/// release cannot take it back (it is not on the releasing thread's arm inbox), so it is
/// cancelled through the other shard's cancel inbox, the arm and the cancel racing a turn.
/// The entry is reclaimed, never fires, and no entry is lost, handed out twice or left
/// linked where it was.
///
/// What makes that so in the one bad order (the arm and the cancel both pushed between a
/// turn's take of the arm inboxes and its take of the cancel inboxes) is that a turn takes
/// the cancel inboxes first (`Wheel::take_inboxes`). loom does not reach that order: it
/// needs the cancel's push (a load, then a compare-and-swap) before the turn's plain load
/// of the cancel inbox, and loom 0.7 never reorders a load-then-RMW before another
/// thread's earlier plain load of the same location. Taking the arm inboxes first passes
/// this model too; the order is argued in the code.
#[test]
fn a_deadline_dropped_on_another_shard_before_any_turn_took_it_in() {
    model(|| {
        let wheel = wheel();
        let (task, task_waker) = counter();
        let w = lend(&wheel);
        let armer = thread::spawn(move || {
            // Shard 0: the first thread to touch one (a turn touches none).
            let mut sleep = w.sleep_until(TICK);
            assert!(poll(&mut sleep, &task_waker).is_pending());
            // Shard 1.
            thread::spawn(move || drop(sleep)).join().unwrap();
        });
        // The turn races the arm and the cancel.
        wheel.turn();
        armer.join().unwrap();
        settle(&wheel, &task, 0, TICK);
        assert_every_entry_free_once(&wheel);
    });
}

/// A deadline the driver took in is dropped while the driver turns: the cancel is
/// reclaimed within a tick, as docs/design.md asks. Either that turn reclaimed it, or it plans to
/// turn within the tick, or the cancel (the first on its inbox, with the plan far away)
/// woke the driver.
#[test]
fn a_cancel_wakes_a_driver_that_plans_to_turn_later_than_the_next_tick() {
    model(|| {
        let wheel = wheel();
        let (task, task_waker) = counter();
        let (driver, driver_waker) = counter();
        wheel.register_driver(&driver_waker);
        let mut sleep = lend(&wheel).sleep(Duration::from_secs(30));
        assert!(poll(&mut sleep, &task_waker).is_pending());
        // Takes it in, and plans the turn at which its slot comes down, far later than
        // the next tick. This hand turn out of idle woke the driver (counted in `seen`),
        // which registers again, as a driver loop does before it turns.
        wheel.turn();
        assert!(wheel.next_turn() > TICK);
        wheel.register_driver(&driver_waker);
        let now = wheel.clock().now();
        let seen = woken(&driver);
        let turner = {
            let wheel = wheel.clone();
            thread::spawn(move || wheel.turn())
        };
        drop(sleep);
        let planned = turner.join().unwrap();
        assert!(
            woken(&driver) > seen || wheel.occupied() == 0 || planned <= now + TICK,
            "a cancel left for {planned:?}, reading {now:?}, and no driver woken"
        );
        settle(&wheel, &task, 0, now + TICK);
    });
}

/// Two threads arm the first deadlines of a growable wheel at once: both reserve its
/// first segment, one installs it and the other frees its copy. Each deadline has an entry
/// of its own and both fire. (That the loser's copy is freed, Miri checks:
/// `faults::two_threads_arming_the_first_deadlines_of_a_growable_wheel_each_get_an_entry`.)
#[test]
fn two_first_arms_grow_a_growable_wheel_at_once() {
    model_bounded(2, || {
        let wheel: Arc<Wheel<ManualClock, Growable>> =
            Arc::new(Wheel::growable(ManualClock::new(), TICK));
        let (task, task_waker) = counter();
        let other = {
            let wheel = wheel.clone();
            let task_waker = task_waker.clone();
            thread::spawn(move || {
                let mut sleep = lend(&wheel).sleep_until(TICK);
                assert!(poll(&mut sleep, &task_waker).is_pending());
                std::mem::forget(sleep);
            })
        };
        let mut sleep = lend(&wheel).sleep_until(TICK);
        assert!(poll(&mut sleep, &task_waker).is_pending());
        std::mem::forget(sleep);
        other.join().unwrap();
        settle(&wheel, &task, 2, TICK);
    });
}

/// `Wheel::stats` (which counts the entries in use by index, up to the slab's high-water
/// mark) on one thread while another arms the first deadline of a growable wheel: every
/// index the count reaches is in a segment the scan sees installed (the high-water mark is
/// published with Release after the segment, read with Acquire).
#[test]
fn stats_while_a_growable_wheel_grows() {
    model(|| {
        let wheel: Arc<Wheel<ManualClock, Growable>> =
            Arc::new(Wheel::growable(ManualClock::new(), TICK));
        // The scan on the spawned thread: loom explores it both before and after the
        // arm's operations only this way round.
        let w = lend(&wheel);
        let scanner = thread::spawn(move || w.stats().occupied);
        arm_and_keep(&wheel, TICK);
        assert!(scanner.join().unwrap() <= 1);
        assert_eq!(wheel.occupied(), 1);
    });
}

/// Arms `Fixed<4>`'s four entries, for one tick after the clock's reading, and turns until
/// then: none runs degraded (every entry was free exactly once), and each fires once
/// (none is still linked where an earlier use of its entry left it).
fn assert_every_entry_free_once(wheel: &Arc<TestWheel>) {
    let (task, task_waker) = counter();
    let due = wheel.clock().now() + TICK;
    let mut more: Vec<_> = (0..4).map(|_| lend(wheel).sleep_until(due)).collect();
    for sleep in &mut more {
        assert!(poll(sleep, &task_waker).is_pending());
    }
    assert_eq!(wheel.occupied(), 4);
    assert_eq!(wheel.degraded_polls(), 0, "an entry went missing");
    settle(wheel, &task, 4, due);
}

/// A wheel whose four entries hold far deadlines, so that the next deadline runs degraded.
fn full_wheel() -> Arc<TestWheel> {
    let wheel = wheel();
    for _ in 0..4 {
        arm_and_keep(&wheel, Duration::from_secs(30));
    }
    wheel.turn();
    wheel
}

/// [`full_wheel`], whose driver plans its next turn for the first tick (its last turn
/// reclaimed an entry), though the next deadline due is 30 s away: a turn at that tick
/// then plans far later, which is when a deadline that parked without waking anyone must
/// still be seen.
fn full_wheel_planning_the_next_tick() -> Arc<TestWheel> {
    let wheel = wheel();
    for _ in 0..3 {
        arm_and_keep(&wheel, Duration::from_secs(30));
    }
    let mut cancelled = lend(&wheel).sleep(Duration::from_secs(30));
    assert!(poll(&mut cancelled, Waker::noop()).is_pending());
    wheel.turn();
    drop(cancelled);
    wheel.turn();
    arm_and_keep(&wheel, Duration::from_secs(30));
    assert_eq!(wheel.next_turn(), TICK);
    wheel
}

/// A degraded deadline leaves its waker in a place while the driver turns at the next
/// tick on another thread: either that turn wakes it, or the turn's plan (or a wake of the
/// driver) brings a turn by the tick after the one it waited from; and a later turn wakes
/// it in any case (the waker is never lost in its place).
#[test]
fn a_degraded_deadline_waits_in_a_place_while_the_driver_turns() {
    model(|| {
        let wheel = full_wheel_planning_the_next_tick();
        let (task, task_waker) = counter();
        let (driver, driver_waker) = counter();
        wheel.register_driver(&driver_waker);
        let seen = woken(&driver);
        let turner = {
            let wheel = wheel.clone();
            thread::spawn(move || {
                wheel.clock().set(TICK);
                wheel.turn()
            })
        };
        // Two ticks: the clock may have moved to the first between the deadline's reads.
        let mut degraded = lend(&wheel).sleep(2 * TICK);
        assert!(poll(&mut degraded, &task_waker).is_pending());
        turner.join().unwrap();
        assert!(
            woken(&task) > 0 || woken(&driver) > seen || wheel.next_turn() <= 2 * TICK,
            "a degraded deadline waits, yet the driver plans {:?} and was not woken",
            wheel.next_turn()
        );
        wheel.clock().set(3 * TICK);
        wheel.turn();
        assert!(
            woken(&task) > 0,
            "the waker left in a place was never woken"
        );
        assert!(matches!(poll(&mut degraded, &task_waker), Poll::Ready(())));
    });
}

/// Two degraded deadlines of two tasks park at once, from two threads, while nothing
/// turns: each takes a place of its own (neither overwrites the other's waker), and one
/// turn at a later tick wakes both.
#[test]
fn two_degraded_deadlines_park_at_once_in_places_of_their_own() {
    model_bounded(2, || {
        let wheel = full_wheel();
        let (first, first_waker) = counter();
        let (second, second_waker) = counter();
        let other = {
            let wheel = wheel.clone();
            thread::spawn(move || {
                let mut degraded = lend(&wheel).sleep(TICK);
                assert!(poll(&mut degraded, &second_waker).is_pending());
                std::mem::forget(degraded);
            })
        };
        let mut degraded = lend(&wheel).sleep(TICK);
        assert!(poll(&mut degraded, &first_waker).is_pending());
        other.join().unwrap();
        assert_eq!(
            (woken(&first), woken(&second)),
            (0, 0),
            "woken before any turn"
        );
        wheel.clock().set(TICK);
        wheel.turn();
        assert_eq!(
            (woken(&first), woken(&second)),
            (1, 1),
            "each woken once by the turn"
        );
        drop(degraded);
    });
}
