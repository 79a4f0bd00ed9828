//! Degraded deadlines (a full wheel) and the driver's turns that wake them.
//!
//! A degraded poll compares its target with a clock reading and leaves its waker for the
//! first turn at a later tick than that reading's. A turn at or after the target's tick
//! must wake it: even when the clock passes the target during the poll, and across the
//! plan's 32-bit wrap, at ticks from 1 µs to 1 s and on every index width.
#![cfg(all(feature = "alloc", feature = "stats"))]

mod support;

use core::pin::pin;
use core::time::Duration;
use std::sync::Mutex;

use punctual_core::{Clock, Fixed, ManualClock, Reading, Storage, Wheel};
use support::{CountingWaker, ms, ticks, us};

/// A clock that reads `now`, and moves to `then` right after its next read.
#[derive(Default)]
struct MovesAfterNextRead(Mutex<(Duration, Option<Duration>)>);

impl MovesAfterNextRead {
    fn set(&self, now: Duration) {
        *self.0.lock().unwrap() = (now, None);
    }

    /// The next read returns the current time; every later one `then`.
    fn move_after_next_read(&self, then: Duration) {
        self.0.lock().unwrap().1 = Some(then);
    }
}

impl Clock for MovesAfterNextRead {
    fn now(&self) -> Duration {
        let mut clock = self.0.lock().unwrap();
        let now = clock.0;
        if let Some(then) = clock.1.take() {
            clock.0 = then;
        }
        now
    }
}

/// A `Fixed<1>` wheel held full; a deadline due at 5.5 ms polled degraded while the clock
/// goes from 5.0 ms (its comparison) to 7.9 ms; the driver's turn at 7.9 ms is past its
/// tick, so it must wake the task.
#[test]
fn clock_passing_the_target_during_a_degraded_poll_still_wakes() {
    let wheel: Wheel<MovesAfterNextRead, Fixed<1>> =
        Wheel::fixed(MovesAfterNextRead::default(), ms(1));
    let task = CountingWaker::new();
    let mut held = pin!(wheel.sleep(ms(30)));
    assert!(task.poll(held.as_mut()).is_pending());
    let _ = wheel.turn();

    let waiting = CountingWaker::new();
    let mut degraded = pin!(wheel.sleep(us(5_500)));
    assert!(waiting.poll(degraded.as_mut()).is_pending());
    assert_eq!(wheel.degraded_polls(), 1);
    wheel.clock().set(ms(5));
    let _ = wheel.turn();
    assert_eq!(waiting.wakes(), 1, "the turn at a later tick wakes it");

    wheel.clock().move_after_next_read(us(7_900));
    assert!(waiting.poll(degraded.as_mut()).is_pending());
    assert_eq!(wheel.degraded_polls(), 2);
    assert_eq!(wheel.now(), Reading::from_nanos(7_900_000));
    let _ = wheel.turn();
    assert_eq!(
        waiting.wakes(),
        2,
        "a turn past the degraded deadline's tick did not wake it"
    );
    assert!(waiting.poll(degraded.as_mut()).is_ready());
    assert_eq!(task.wakes(), 0);
}

/// Fills the wheel, then runs a degraded sleep of `span` with a driver that sleeps to each
/// plan (or turns when woken): the task is woken by the first turn at or after its tick,
/// and completes then, never early.
fn degraded_sleep_across<S: Storage>(wheel: &Wheel<ManualClock, S>, span: Duration) {
    let tick = wheel.tick();
    let task = CountingWaker::new();
    let mut held = Vec::new();
    while wheel.occupied() < wheel.capacity() {
        let mut sleep = Box::pin(wheel.sleep(ticks(tick, 1 << 33)));
        assert!(task.poll(sleep.as_mut()).is_pending());
        held.push(sleep);
    }
    let driver = CountingWaker::new();
    wheel.register_driver(&driver.waker);
    let _ = wheel.turn();

    let start = wheel.clock().now();
    let due = start + span;
    let due_tick = ticks(tick, due.as_nanos().div_ceil(tick.as_nanos()) as u64);
    let waiting = CountingWaker::new();
    let mut sleep = pin!(wheel.sleep(span));
    assert!(waiting.poll(sleep.as_mut()).is_pending());
    let polls = wheel.degraded_polls();
    assert!(polls > 0, "not degraded");
    let mut seen = 0;
    for turns in 0.. {
        assert!(turns < 1_000, "the driver turned {turns} times");
        wheel.register_driver(&driver.waker);
        let plan = wheel.turn();
        let now = wheel.clock().now();
        let driver_wakes = driver.wakes();
        if waiting.wakes() > seen {
            seen = waiting.wakes();
            if waiting.poll(sleep.as_mut()).is_ready() {
                assert!(now >= due, "ready at {now:?}, due at {due:?}");
                assert!(now < due_tick + tick, "late: {now:?}, due at {due:?}");
                break;
            }
        }
        assert!(
            now < due_tick,
            "a turn at {now:?} did not wake a degraded sleep due at {due:?}"
        );
        if driver.wakes() > driver_wakes {
            continue; // woken by the poll: turns again at once
        }
        assert!(
            plan != Reading::END && plan.as_duration() <= now + tick,
            "a degraded sleep waits, yet the driver plans {plan:?} at {now:?}"
        );
        wheel.clock().set(plan.as_duration());
    }
    assert_eq!(task.wakes(), 0, "a held deadline fired");
}

fn degraded_cases<S: Storage>(new: impl Fn(ManualClock, Duration) -> Wheel<ManualClock, S>) {
    // Fewer under Miri, whose runs of the same code at other ticks add nothing.
    let (ticks_users_pick, starts, spans): (&[Duration], &[u64], &[u64]) = if cfg!(miri) {
        (&[us(1), Duration::from_secs(1)], &[(1 << 32) - 5], &[0, 7])
    } else {
        (
            &[us(1), us(100), ms(1), Duration::from_secs(1)],
            &[0, (1 << 31) - 3, (1 << 32) - 5],
            &[0, 1, 3, 7, 64],
        )
    };
    for &tick in ticks_users_pick {
        for &start in starts {
            for &span in spans {
                let span = ticks(tick, span) + tick / 2;
                let wheel = new(ManualClock::starting_at(ticks(tick, start)), tick);
                degraded_sleep_across(&wheel, span);
            }
        }
    }
}

#[test]
fn degraded_sleeps_wake_on_their_tick_across_the_wrap() {
    degraded_cases(Wheel::<ManualClock, Fixed<1>>::fixed);
    degraded_cases(Wheel::<ManualClock, Fixed<3, u8>>::fixed);
    degraded_cases(Wheel::<ManualClock, Fixed<2, u16>>::fixed);
}
