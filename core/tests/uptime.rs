//! Long uptimes: tick counts around the 32-bit wrap and just below multiples of 2^36 ticks
//! (the top level's rotation), and a clock near its saturation: none lost, none early,
//! none more than two ticks late.

mod support;

use core::pin::{Pin, pin};
use core::time::Duration;

use punctual_core::{Clock, Fixed, Growable, ManualClock, Sleep, Wheel};
use support::{CountingWaker, TICK, ms, ns, ticks};

/// Starts a wheel's clock at `start`, arms sleeps of every duration in `durations` (in
/// ticks), and steps the clock by `step` until all are due, checking after every step that
/// each is never early, and fired (woken, ready) at most two ticks late.
fn run_long_uptime(tick: Duration, start: Duration, durations: &[u64], step: Duration) {
    let wheel: Wheel<ManualClock, Growable> =
        Wheel::growable(ManualClock::starting_at(start), tick);
    let mut sleeps: Vec<(Pin<Box<Sleep<'_>>>, CountingWaker, Duration, bool)> = durations
        .iter()
        .map(|&t| {
            let duration = ticks(tick, t);
            let w = CountingWaker::new();
            let mut s = Box::pin(wheel.sleep(duration));
            assert!(w.poll(s.as_mut()).is_pending());
            (s, w, start + duration, false)
        })
        .collect();
    assert_eq!(wheel.occupied(), durations.len());
    let last = sleeps.iter().map(|s| s.2).max().unwrap();
    while wheel.clock().now() < last + 2 * tick {
        let now = wheel.advance(step);
        for (s, w, requested, done) in &mut sleeps {
            if *done {
                continue;
            }
            let case = format!("start {start:?} requested {requested:?} now {now:?}");
            if now < *requested {
                assert_eq!(w.wakes(), 0, "{case}: woken early");
                assert!(w.poll(s.as_mut()).is_pending(), "{case}: early");
            } else if w.wakes() > 0 {
                assert!(w.poll(s.as_mut()).is_ready(), "{case}: woken but not ready");
                *done = true;
            } else {
                assert!(
                    now < *requested + 2 * tick,
                    "{case}: lost or more than 2 ticks late"
                );
            }
        }
    }
    assert!(sleeps.iter().all(|s| s.3), "a deadline was lost");
    assert_eq!(wheel.occupied(), 0);
}

#[test]
#[cfg_attr(
    miri,
    ignore = "thousands of turns; the same code paths run under Miri in the smaller tests"
)]
fn long_uptime_tick_counts_around_2_pow_32() {
    let durations = [1, 2, 3, 4, 5, 6, 7, 8, 10, 63, 64, 65, 100];
    for tick in [TICK, Duration::from_micros(1)] {
        for below in [1u64, 3, 5, 64] {
            let start = ticks(tick, (1 << 32) - below);
            run_long_uptime(tick, start, &durations, tick);
            run_long_uptime(tick, start + tick / 3, &durations, tick / 2);
        }
    }
}

#[test]
#[cfg_attr(
    miri,
    ignore = "thousands of turns; the same code paths run under Miri in the smaller tests"
)]
fn long_uptime_tick_counts_just_below_multiples_of_2_pow_36() {
    let durations = [1, 2, 5, 63, 64, 4095, 4096, 4097];
    for multiple in [1u64, 2, 5] {
        for below in [1u64, 2, 4096] {
            let start = ticks(TICK, (multiple << 36) - below);
            run_long_uptime(TICK, start, &durations, ms(1));
        }
    }
    // Larger jumps across the top level's rotation.
    let start = ticks(TICK, (3 << 36) - 7);
    run_long_uptime(
        TICK,
        start,
        &[10, 1 << 20, (1 << 30) + 5, (1 << 36) + 9],
        ms(1 << 19),
    );
}

#[test]
fn long_uptime_near_the_manual_clocks_saturation() {
    let end = Duration::from_nanos(u64::MAX);
    let start = end - ms(50);
    let wheel: Wheel<ManualClock, Fixed<4>> = Wheel::fixed(ManualClock::starting_at(start), TICK);
    let w = CountingWaker::new();
    let wl = CountingWaker::new();
    let mut soon = pin!(wheel.sleep(ms(20)));
    let mut past_end = pin!(wheel.sleep(ms(100)));
    assert!(w.poll(soon.as_mut()).is_pending());
    assert!(wl.poll(past_end.as_mut()).is_pending());
    wheel.advance(ms(20) - ns(1));
    assert_eq!(w.wakes(), 0);
    wheel.advance(2 * TICK);
    assert_eq!(w.wakes(), 1);
    assert!(w.poll(soon.as_mut()).is_ready());
    // The clock saturates short of the second deadline: it never fires early.
    assert_eq!(wheel.advance(Duration::from_secs(10)), end);
    assert_eq!(wl.wakes(), 0);
    assert!(wl.poll(past_end.as_mut()).is_pending());
}
