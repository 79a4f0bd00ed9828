//! Cancels and resets long after a deadline's start, across the plan's 32-bit wrap.
//!
//! The driver's plan is kept as the low 32 bits of its tick. A cancel that finds its
//! cancel inbox empty must wake a driver that plans beyond the next tick, so that the
//! entry is free again within about a tick. These tests let a driver sleep to each plan
//! (as the thread and tokio drivers do), cancel or reset a deadline at some moment of its
//! sleep, and check that the driver is woken or plans a turn by the next tick, and that
//! this turn frees the entry. They run at ticks from 1 µs to 1 s, on every index width.
#![cfg(feature = "alloc")]

mod support;

use core::pin::Pin;
use core::time::Duration;

use punctual_core::{Clock, Fixed, Growable, ManualClock, Reading, Sleep, Storage, Wheel};
use support::{CountingWaker, ticks};

/// What happens to the deadline at the chosen moment.
#[derive(Debug, Clone, Copy)]
enum LetGo {
    /// Dropped.
    Drop,
    /// Reset to a tick from now (earlier than its time), and not polled again.
    ResetEarlier,
}

/// Arms a sleep of `span` ticks, lets the driver sleep to each plan until `after` ticks
/// have passed, lets go of the sleep there as `how` says, and checks that the entry is
/// free again by the next tick.
fn let_go_late<S: Storage>(
    wheel: &Wheel<ManualClock, S>,
    span: u64,
    after: u64,
    how: LetGo,
) -> Result<(), String> {
    let tick = wheel.tick();
    let start = wheel.clock().now();
    let occupied = wheel.occupied();
    let driver = CountingWaker::new();
    let task = CountingWaker::new();
    let mut sleep: Pin<Box<Sleep<'_, _>>> = Box::pin(wheel.sleep(ticks(tick, span)));
    assert!(task.poll(sleep.as_mut()).is_pending());
    assert_eq!(wheel.occupied(), occupied + 1);
    // The driver sleeps until each plan, up to the moment of the cancel.
    let moment = start + ticks(tick, after);
    for turns in 0.. {
        assert!(
            turns < 64,
            "the driver turned {turns} times in {after} ticks"
        );
        wheel.register_driver(&driver.waker);
        let plan = wheel.turn();
        if plan == Reading::END || plan.as_duration() > moment {
            break;
        }
        wheel.clock().set(plan.as_duration());
    }
    assert_eq!(task.wakes(), 0, "fired early");
    wheel.clock().set(moment);
    wheel.register_driver(&driver.waker);
    let wakes = driver.wakes();
    match how {
        LetGo::Drop => drop(sleep),
        LetGo::ResetEarlier => {
            let at = wheel.now() + tick;
            sleep.as_mut().reset(at);
        }
    }
    let woken = driver.wakes() > wakes;
    let planned = wheel.next_turn();
    let next_tick = Reading::since_origin(moment + tick);
    if !woken && planned > next_tick {
        return Err(format!(
            "{how:?} at {moment:?}: the driver was not woken, and plans {planned:?}"
        ));
    }
    // The turn the driver takes then: at once if woken, else at its plan.
    if !woken {
        wheel.clock().set(planned.as_duration());
    }
    let _ = wheel.turn();
    if wheel.occupied() != occupied {
        return Err(format!(
            "{how:?} at {moment:?}: {} entries held after the next turn",
            wheel.occupied()
        ));
    }
    Ok(())
}

/// Spans and moments, in ticks: the plan lands 2^31 ticks or more after the start
/// (where it wraps, rebuilt near the start), just short of that, and short spans.
const CASES: [(u64, u64); 9] = [
    (5_184_000_000, 2_592_000_000),
    (10_800_000_000, 2_400_000_000),
    ((1 << 33) + 17, (1 << 31) + 3),
    ((1 << 32) + 1, (1 << 31) - 1),
    ((1 << 31) + (1 << 30), 1 << 30),
    ((1 << 30) + 7, 1 << 29),
    ((1 << 30) - 1, (1 << 30) - 2),
    (1 << 20, 1 << 19),
    (100, 50),
];

/// Ticks users pick.
const TICKS: [Duration; 4] = [
    Duration::from_micros(1),
    Duration::from_micros(100),
    Duration::from_millis(1),
    Duration::from_secs(1),
];

/// Where the clock starts, in ticks: zero, and just before the plan's 32-bit wrap.
const STARTS: [u64; 2] = [0, (1 << 32) - 5];

fn all_cases<S: Storage>(new: impl Fn(ManualClock, Duration) -> Wheel<ManualClock, S>) {
    // Fewer under Miri, whose runs of the same code at other ticks add nothing.
    let (ticks_users_pick, starts, cases): (&[Duration], &[u64], &[(u64, u64)]) = if cfg!(miri) {
        (&[TICKS[0], TICKS[3]], &STARTS[1..], &CASES[2..4])
    } else {
        (&TICKS, &STARTS, &CASES)
    };
    let mut failures = Vec::new();
    for how in [LetGo::Drop, LetGo::ResetEarlier] {
        for &tick in ticks_users_pick {
            for &start in starts {
                for &(span, after) in cases {
                    let wheel = new(ManualClock::starting_at(ticks(tick, start)), tick);
                    if let Err(failure) = let_go_late(&wheel, span, after, how) {
                        failures.push(format!("tick {tick:?}, start {start}: {failure}"));
                    }
                }
            }
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

#[test]
fn late_cancels_free_the_entry_by_the_next_tick_on_growable_wheels() {
    all_cases(Wheel::<ManualClock, Growable>::growable);
}

#[test]
fn late_cancels_free_the_entry_by_the_next_tick_on_fixed_wheels() {
    all_cases(Wheel::<ManualClock, Fixed<4>>::fixed);
    all_cases(Wheel::<ManualClock, Fixed<4, u8>>::fixed);
    all_cases(Wheel::<ManualClock, Fixed<4, u16>>::fixed);
}

/// Two cases as first reported: a 60-day sleep at 1 ms ticks dropped after 30 days, and a
/// 3-hour sleep at 1 µs ticks dropped after 40 minutes, with another deadline held.
#[test]
fn month_long_sleep_dropped_after_weeks_wakes_the_driver() {
    let day = 86_400_000;
    for (tick, span, after) in [
        (Duration::from_millis(1), 60 * day, 30 * day),
        (Duration::from_micros(1), 3 * 3_600_000_000, 40 * 60_000_000),
    ] {
        let wheel: Wheel<ManualClock, Fixed<8>> = Wheel::fixed(ManualClock::new(), tick);
        let task = CountingWaker::new();
        let mut held = Box::pin(wheel.sleep(ticks(tick, 4 * span)));
        assert!(task.poll(held.as_mut()).is_pending());
        if let Err(failure) = let_go_late(&wheel, span, after, LetGo::Drop) {
            panic!("tick {tick:?}: {failure}");
        }
        assert_eq!(wheel.occupied(), 1);
    }
}

/// A budget's timer is capped: its entry's span is not its own, so its cancel compares the
/// plan with a clock reading. With a turn planned by the next tick, it wakes no driver
/// (it once woke one at every cancel, a driver turn per request under a budget); with the
/// plan far, it does, and that turn frees the entry.
#[test]
fn capped_cancels_wake_the_driver_only_when_its_plan_is_far() {
    let ms = Duration::from_millis;
    let wheel: Wheel<ManualClock, Growable> = Wheel::growable(ManualClock::new(), ms(1));
    let driver = CountingWaker::new();
    let task = CountingWaker::new();

    // A plan far away: only the budget's own end, a minute out.
    let mut budget = Box::pin(wheel.budget(Duration::from_secs(60), core::future::pending::<()>()));
    assert!(task.poll(budget.as_mut()).is_pending());
    wheel.register_driver(&driver.waker);
    wheel.turn(); // takes the arm in: it can no longer be taken back
    assert_eq!(wheel.occupied(), 1);
    wheel.clock().advance(ms(5));
    wheel.register_driver(&driver.waker);
    let wakes = driver.wakes();
    drop(budget);
    assert!(driver.wakes() > wakes, "a far plan, and no wake");
    wheel.turn();
    assert_eq!(wheel.occupied(), 0, "the woken turn did not free the entry");

    // A turn planned by the next tick: a sleep due then.
    let mut soon = Box::pin(wheel.sleep(ms(1)));
    assert!(task.poll(soon.as_mut()).is_pending());
    let mut budget = Box::pin(wheel.budget(Duration::from_secs(60), core::future::pending::<()>()));
    assert!(task.poll(budget.as_mut()).is_pending());
    wheel.register_driver(&driver.waker);
    wheel.turn();
    assert!(wheel.next_turn() <= wheel.now() + ms(1));
    wheel.register_driver(&driver.waker);
    let wakes = driver.wakes();
    drop(budget);
    assert_eq!(
        driver.wakes(),
        wakes,
        "woke a driver that turns within a tick anyway"
    );
    // That turn frees the entry.
    wheel.clock().set(wheel.next_turn().as_duration());
    wheel.turn();
    assert!(task.poll(soon.as_mut()).is_ready());
    drop(soon);
    assert_eq!(
        wheel.occupied(),
        0,
        "the planned turn did not free the entry"
    );
}
