//! Releases: a cancel on one thread while the driver fires, reclaims or takes the inboxes
//! on another; a take-back off the arm inbox under a turn and an arm on top of it (also on
//! the same shard); a deadline dropped on another shard before any turn took it in; a
//! cancel that must wake a driver planning to turn later than the next tick.

use std::task::Waker;
use std::time::Duration;

use loom::thread;
use punctual_core::{Clock, Reading};

use crate::support::TICK;
use crate::{
    TestWheel, assert_every_entry_free_once, counter, lend, model, model_bounded, poll, settle,
    wheel, woken,
};

/// Cancelling on one thread while the driver fires on another: the outcome is decided
/// once, and the entry is freed exactly once, by whichever side lets go last.
#[test]
fn cancel_vs_fire() {
    model(|| {
        let wheel = wheel();
        let (_task, task_waker) = counter();
        let mut sleep = lend(&wheel).sleep_until(Reading::since_origin(TICK));
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
                let mut c = wheel.sleep_until(Reading::since_origin(TICK * 2));
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
                let mut c = wheel.sleep_until(Reading::since_origin(TICK));
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
        let mut c = lend(&wheel).sleep_until(Reading::since_origin(TICK));
        assert!(poll(&mut c, &task_waker).is_pending());
        releaser.join().unwrap();
        driver.join().unwrap();
        settle(&wheel, &task, 1, TICK); // `c`
        std::mem::forget(c);
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
fn dropped_on_another_shard_before_any_turn() {
    model(|| {
        let wheel = wheel();
        let (task, task_waker) = counter();
        let w = lend(&wheel);
        let armer = thread::spawn(move || {
            // Shard 0: the first thread to touch one (a turn touches none).
            let mut sleep = w.sleep_until(Reading::since_origin(TICK));
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
fn cancel_wakes_driver_planning_past_next_tick() {
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
        assert!(wheel.next_turn() > Reading::since_origin(TICK));
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
            woken(&driver) > seen
                || wheel.occupied() == 0
                || planned <= Reading::since_origin(now + TICK),
            "a cancel left for {planned:?}, reading {now:?}, and no driver woken"
        );
        settle(&wheel, &task, 0, now + TICK);
    });
}
