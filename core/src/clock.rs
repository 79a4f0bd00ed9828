//! Clocks: where a wheel reads the time.
//! * A [`Clock`] reads a monotonic [`Duration`] since an origin of its own.
//! * The wheel never compares readings of two clocks.
//! * The wheel adds [`Clock::resolution`] to every relative deadline, so none ends early.
//! * The wheel reads [`Clock::reading`]: a clock that counts ticks overrides it to skip the
//!   64-bit division a `Duration` costs (a library call on 32-bit targets).

use core::time::Duration;

/// An instant at which a wheel on clock `C` (for a reset, on the future's
/// [`WheelRef`](crate::WheelRef) `C`) can end a deadline or a sleep: a
/// [`Reading`](crate::Reading), or the runtime's instant where the clock converts it.
pub trait ClockInstant<C: ?Sized> {
    /// This instant as a reading of `clock`, never before the instant.
    fn reading_on(self, clock: &C) -> crate::Reading;
}

impl<C: ?Sized> ClockInstant<C> for crate::Reading {
    #[inline]
    fn reading_on(self, _: &C) -> crate::Reading {
        self
    }
}

/// A monotonic time source for a [`Wheel`](crate::Wheel).
///
/// # Contract
///
/// * `now` never goes backwards.
/// * `now` is at most [`resolution`](Clock::resolution) behind the true time of the clock.
pub trait Clock: Sync {
    /// The time elapsed since this clock's origin.
    fn now(&self) -> Duration;

    /// How far behind the true time a reading may be (the granularity of floored
    /// readings; zero for exact clocks). The wheel adds it to relative deadlines.
    fn resolution(&self) -> Duration {
        Duration::ZERO
    }

    /// [`now`](Clock::now) as a [`Reading`](crate::Reading), what the wheel reads. An
    /// override must return exactly the default, `Reading::since_origin(self.now())`.
    #[inline]
    fn reading(&self) -> crate::Reading {
        crate::Reading::since_origin(self.now())
    }
}

impl<C: Clock + ?Sized> Clock for &C {
    fn now(&self) -> Duration {
        (**self).now()
    }

    fn resolution(&self) -> Duration {
        (**self).resolution()
    }

    #[inline]
    fn reading(&self) -> crate::Reading {
        (**self).reading()
    }
}

#[cfg(feature = "std")]
pub use std_clock::{BootClock, StdClock};

#[cfg(feature = "std")]
mod std_clock;

#[cfg(any(target_has_atomic = "64", feature = "portable-atomic"))]
pub use manual::ManualClock;

#[cfg(any(target_has_atomic = "64", feature = "portable-atomic"))]
mod manual {
    use core::time::Duration;

    use crate::time::span_of;

    #[cfg(not(any(feature = "portable-atomic", punctual_loom)))]
    use core::sync::atomic::{AtomicU64, Ordering};
    // Loom's under loom, so the models explore clock moves.
    #[cfg(punctual_loom)]
    use loom::sync::atomic::{AtomicU64, Ordering};
    #[cfg(all(feature = "portable-atomic", not(punctual_loom)))]
    use portable_atomic::{AtomicU64, Ordering};

    /// A clock that moves only when told to, exact to the nanosecond, for tests.
    /// [`Wheel::advance`](crate::Wheel::advance) moves it and fires what came due before returning.
    ///
    /// ```
    /// use core::time::Duration;
    /// use punctual_core::{Clock, ManualClock};
    /// let clock = ManualClock::new();
    /// clock.advance(Duration::from_millis(5));
    /// assert_eq!(clock.now(), Duration::from_millis(5));
    /// ```
    #[derive(Debug, Default)]
    pub struct ManualClock {
        nanos: AtomicU64,
    }

    impl ManualClock {
        crate::sync::const_fn! {
            /// A clock reading zero.
            pub fn new() -> Self {
                Self::starting_at(Duration::ZERO)
            }
        }

        crate::sync::const_fn! {
            /// A clock reading `start`.
            pub fn starting_at(start: Duration) -> Self {
                Self {
                    nanos: AtomicU64::new(span_of(start)),
                }
            }
        }

        /// Moves the clock forward by `by`, saturating, and returns the new reading.
        pub fn advance(&self, by: Duration) -> Duration {
            use Ordering::{AcqRel, Acquire};
            let by = span_of(by);
            let add = |nanos: u64| Some(nanos.saturating_add(by));
            // `add` never refuses: always `Ok`.
            let (Ok(previous) | Err(previous)) = self.nanos.fetch_update(AcqRel, Acquire, add);
            Duration::from_nanos(previous.saturating_add(by))
        }

        /// Moves the clock to `to`.
        ///
        /// # Panics
        ///
        /// If `to` is earlier than the current reading.
        pub fn set(&self, to: Duration) {
            let to = span_of(to);
            let previous = self.nanos.fetch_max(to, Ordering::AcqRel);
            assert!(
                previous <= to,
                "ManualClock::set: cannot move the clock backwards from {:?} to {:?}",
                Duration::from_nanos(previous),
                Duration::from_nanos(to),
            );
        }
    }

    impl super::Clock for ManualClock {
        fn now(&self) -> Duration {
            Duration::from_nanos(self.nanos.load(Ordering::Acquire))
        }
    }
}
