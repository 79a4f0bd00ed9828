//! Shorthands for durations, readings and wheels on the manual clock.

use core::task::Poll;
use core::time::Duration;

use punctual_core::{Elapsed, Fixed, Growable, ManualClock, Storage, Wheel};

/// The tick of most test wheels.
pub(crate) const TICK: Duration = Duration::from_millis(1);

/// The manual clock's last reading.
pub(crate) const CLOCK_END: Duration = Duration::from_nanos(u64::MAX);

pub(crate) fn ms(n: u64) -> Duration {
    Duration::from_millis(n)
}

pub(crate) fn us(n: u64) -> Duration {
    Duration::from_micros(n)
}

pub(crate) fn ns(n: u64) -> Duration {
    Duration::from_nanos(n)
}

/// `n` ticks of `tick`, saturating at `Duration::MAX`.
pub(crate) fn ticks(tick: Duration, n: u64) -> Duration {
    duration_of(tick.as_nanos() * u128::from(n))
}

/// `nanos` nanoseconds, saturating at `Duration::MAX`.
pub(crate) fn duration_of(nanos: u128) -> Duration {
    let secs = u64::try_from(nanos / 1_000_000_000).unwrap_or(u64::MAX);
    if secs == u64::MAX {
        return Duration::MAX;
    }
    Duration::new(secs, (nanos % 1_000_000_000) as u32)
}

/// Deadline lengths, in ticks, that straddle every level boundary and the wheel's range.
pub(crate) const SPREAD: [u64; 16] = [
    1,
    2,
    3,
    5,
    63,
    64,
    65,
    4095,
    4097,
    (1 << 18) + 1,
    (1 << 24) - 1,
    (1 << 30) + 7,
    (1 << 32) + 1,
    (1 << 36) - 1,
    (1 << 36) + 3,
    (1 << 38) + 11,
];

/// A wheel of `N` entries on a new manual clock, with 1 ms ticks.
pub(crate) fn fixed<const N: usize>() -> Wheel<ManualClock, Fixed<N>> {
    Wheel::fixed(ManualClock::new(), TICK)
}

/// A growable wheel on a new manual clock, with 1 ms ticks.
pub(crate) fn growable() -> Wheel<ManualClock, Growable> {
    Wheel::growable(ManualClock::new(), TICK)
}

/// The error of a deadline's poll that must have fired.
pub(crate) fn is_elapsed<T: core::fmt::Debug>(poll: Poll<Result<T, Elapsed>>) -> Elapsed {
    match poll {
        Poll::Ready(Err(elapsed)) => elapsed,
        other => panic!("expected Ready(Err(Elapsed)), got {other:?}"),
    }
}

pub(crate) trait AdvanceToManual {
    /// Moves the manual clock to `to` and turns the wheel.
    fn advance_to_manual(&self, to: Duration);
}

impl<S: Storage> AdvanceToManual for Wheel<ManualClock, S> {
    fn advance_to_manual(&self, to: Duration) {
        let now = punctual_core::Clock::now(self.clock());
        assert!(to >= now);
        self.advance(to - now);
    }
}
