//! Degraded deadlines: a deadline that finds the wheel full leaves its waker in one of the
//! wheel's places and waits for the next tick's turn; the place and the driver's plan meet
//! at the plan word, so neither the waker nor the turn that wakes it is lost.

use std::time::Duration;

use loom::sync::Arc;
use loom::thread;
use punctual_core::Reading;
use std::task::{Poll, Waker};

use crate::support::TICK;
use crate::{TestWheel, arm_and_keep, counter, lend, model, model_bounded, poll, wheel, woken};

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
/// then plans far later, which is when a deadline that left its waker without waking anyone must
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
    assert_eq!(wheel.next_turn(), Reading::since_origin(TICK));
    wheel
}

/// A degraded deadline leaves its waker in a place while the driver turns at the next
/// tick on another thread: either that turn wakes it, or the turn's plan (or a wake of the
/// driver) brings a turn by the tick after the one it waited from; and a later turn wakes
/// it in any case (the waker is never lost in its place).
#[test]
fn degraded_deadline_waits_in_place_while_turning() {
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
            woken(&task) > 0
                || woken(&driver) > seen
                || wheel.next_turn() <= Reading::since_origin(2 * TICK),
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

/// Two degraded deadlines of two tasks leave their wakers at once, from two threads, while nothing
/// turns: each takes a place of its own (neither overwrites the other's waker), and one
/// turn at a later tick wakes both.
#[test]
fn two_degraded_wakers_take_places_of_their_own() {
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
