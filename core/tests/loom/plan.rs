//! An arm and a turn meet at the driver's plan: either the turn takes the new entry in
//! (and plans its tick, or fires it), or the arming thread sees the plan and wakes the
//! driver; also into the planned tick before its sub-tick turn, and through a shard that
//! the arm marks in use for the first time while the plan moves later.

use punctual_core::Reading;
use std::task::Waker;
use std::time::Duration;

use loom::thread;

use crate::support::TICK;
use crate::{
    arm_and_keep, assert_taken_in_or_woken, counter, lend, model, model_bounded, poll, wheel, woken,
};

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
                let mut sleep = wheel.sleep_until(Reading::since_origin(TICK));
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
        let mut later = wheel.sleep_until(Reading::since_origin(us(2600)));
        assert!(poll(&mut later, &other_waker).is_pending());
        std::mem::forget(later);
        wheel.register_driver(&driver_waker);
        assert_eq!(wheel.turn(), Reading::since_origin(us(2600)));
        // That turn took the wheel out of idle and woke the driver, which registers again.
        wheel.register_driver(&driver_waker);
        let seen = woken(&driver);

        let armer = {
            let wheel = wheel.clone();
            thread::spawn(move || {
                let mut sleep = wheel.sleep_until(Reading::since_origin(us(2200)));
                assert!(poll(&mut sleep, &task_waker).is_pending());
                std::mem::forget(sleep);
            })
        };
        let planned = wheel.turn();
        armer.join().unwrap();
        assert!(
            woken(&driver) > seen || planned == Reading::since_origin(us(2200)),
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
                let mut sleep = wheel.sleep_until(Reading::since_origin(TICK));
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
        let mut first = lend(&wheel).sleep_until(Reading::since_origin(TICK * 2));
        assert!(poll(&mut first, &task_waker).is_pending());
        wheel.register_driver(&driver_waker);
        assert_eq!(wheel.turn(), Reading::since_origin(TICK * 2));
        // That turn took the wheel out of idle and woke the driver, which registers again.
        wheel.register_driver(&driver_waker);
        let seen = woken(&driver);

        let w = lend(&wheel);
        let armer = thread::spawn(move || arm_and_keep(w, TICK * 3));
        wheel.clock().set(TICK * 2);
        let planned = wheel.turn();
        armer.join().unwrap();
        assert_eq!(woken(&task), 1, "the first deadline did not fire");
        assert_taken_in_or_woken(&driver, seen, planned.as_duration(), TICK * 3);
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
fn second_arm_on_new_shard_sees_plan_via_mark() {
    // Two preemptions, not three: 200 000 interleavings in under a minute instead of 3.2
    // million in six (CI time). With the Acquire read of the plan word relaxed it still
    // fails, at once.
    model_bounded(2, || {
        let wheel = wheel();
        let (task, task_waker) = counter();
        let (driver, driver_waker) = counter();
        let mut first = lend(&wheel).sleep_until(Reading::since_origin(TICK * 2));
        assert!(poll(&mut first, &task_waker).is_pending());
        let mut fired: Vec<_> = (0..2)
            .map(|_| lend(&wheel).sleep_until(Reading::since_origin(TICK)))
            .collect();
        for sleep in &mut fired {
            assert!(poll(sleep, Waker::noop()).is_pending());
        }
        wheel.clock().set(TICK);
        wheel.register_driver(&driver_waker);
        assert_eq!(wheel.turn(), Reading::since_origin(TICK * 2));
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
        assert_taken_in_or_woken(&driver, seen, planned.as_duration(), TICK * 3);
        drop(first);
    });
}
