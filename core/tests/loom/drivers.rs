//! Drivers: the driver role between two turning threads (the one left out leaves a
//! request the holder honours); drivers' places for wakers, taken or given back while a
//! deadline is armed; a turn by hand out of idle racing an arm later than its plan (also
//! on a shard marked in use, and end to end through a `Driver` future); an idle driver
//! that skips its turn only if no arm woke it; a restart (a wheel started over for a
//! new clock) racing a turn.

use std::future::Future;
use std::pin::Pin;
use std::sync::Arc as StdArc;
use std::task::{Context, Poll, Waker};
use std::time::Duration;

use loom::sync::Arc;
use loom::thread;
use punctual_core::{Clock, Reading, Sleeper};

use crate::support::{NeverSleeper, TICK};
use crate::{
    TestWheel, assert_taken_in_or_woken, counter, lend, model, poll, settle, wheel, woken,
};

/// Two threads turning at once: one holds the driver role, the other leaves a request
/// that the holder honours with a fresh clock reading; the deadline fires exactly once.
#[test]
fn two_drivers_race() {
    model(|| {
        let wheel = wheel();
        let (task, task_waker) = counter();
        let mut sleep = wheel.sleep_until(Reading::since_origin(TICK * 2));
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
        while wheel.turn() != Reading::END {
            let next = wheel.next_turn();
            wheel.clock().set(next.as_duration());
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
        while wheel.turn() != Reading::END {
            let next = wheel.next_turn();
            wheel.clock().set(next.as_duration());
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
        assert_taken_in_or_woken(&driver, 0, planned.as_duration(), due);
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
fn hand_turn_from_idle_while_a_later_one_is_armed() {
    turn_by_hand_out_of_idle(false);
}

/// The same, with the arming thread's shard marked in use by an earlier arm: its arm then
/// reads the plan with a plain load, as every arm on a wheel of one shard does (firmware),
/// and may read the turn's new plan while the turn's check finds its entry. The turn then
/// passes again and reads its own plan, not idle: the driver is woken only because the
/// turn remembers that its first pass left idle. (Both configurations of loom run this:
/// two shards, and one with `--cfg punctual_loom_one_shard`.)
#[test]
fn hand_turn_from_idle_while_later_arm_marked_shard() {
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
        while slot.turn() != Reading::END {
            let next = wheel.next_turn();
            wheel.clock().set(next.as_duration());
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
    let mut sleep = wheel.sleep_until(Reading::since_origin(due));
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

    fn sleep_until(&mut self, at: Reading) -> ClockSleep {
        *self.until.lock().unwrap() = Some(at.as_duration());
        ClockSleep {
            wheel: self.wheel,
            at: at.as_duration(),
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

/// A driver that left the wheel idle skips its turn when polled with nothing having woken
/// it. An arm on another thread races that poll: either the poll turns and takes the
/// entry in, or the arm wakes the driver's task, and a poll for that wake (as an executor
/// makes) turns. Either way the wheel then plans a turn by the deadline's tick.
#[test]
fn idle_driver_skips_turn_only_if_no_arm_woke_it() {
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
            if next == Reading::END {
                break;
            }
            wheel.clock().set(next.as_duration());
        }
        let mut seen = woken(&driver);
        let due = wheel.clock().now() + TICK;

        let w = lend(&wheel);
        let armer = thread::spawn(move || {
            let mut sleep = w.sleep_until(Reading::since_origin(due));
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
            wheel.next_turn() <= Reading::since_origin(due),
            "lost wakeup: the driver plans {:?} for a deadline due at {due:?}",
            wheel.next_turn()
        );
        drop(driving);
        settle(&wheel, &task, 1, due);
    });
}

/// `Wheel::restart` takes the driver role as a turn does: racing a turn on another
/// thread, either it is refused (the turn holds the role), or the turn, finding the role
/// taken, leaves a request that the restart honours. Either way the role ends free and
/// nothing races on the driver's state (loom checks its cell), and the wheel serves
/// from the new start: a deadline armed after fires once, at its time.
#[test]
fn a_restart_races_a_turn() {
    model(|| {
        let wheel = wheel();
        // Served a while: a deadline fired, nothing armed, the plan of its last turn.
        arm_and_fire(&wheel);
        let w = lend(&wheel);
        let turner = thread::spawn(move || {
            w.turn();
        });
        let _restarted = wheel.restart();
        turner.join().unwrap();
        let (task, task_waker) = counter();
        let start = wheel.clock().now();
        let mut sleep = wheel.sleep(TICK);
        assert!(poll(&mut sleep, &task_waker).is_pending());
        wheel.turn();
        assert_eq!(woken(&task), 0, "fired early");
        wheel.clock().set(start + TICK);
        wheel.turn();
        assert_eq!(woken(&task), 1, "not fired at its time");
        assert!(poll(&mut sleep, &task_waker).is_ready());
        assert!(wheel.restart(), "the role was left taken");
    });
}

/// Arms a deadline one tick ahead and fires it.
fn arm_and_fire(wheel: &TestWheel) {
    let (task, task_waker) = counter();
    let mut sleep = wheel.sleep(TICK);
    assert!(poll(&mut sleep, &task_waker).is_pending());
    wheel.turn();
    wheel.clock().set(wheel.clock().now() + TICK);
    wheel.turn();
    assert_eq!(woken(&task), 1);
    assert!(poll(&mut sleep, &task_waker).is_ready());
}
