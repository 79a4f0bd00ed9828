//! Clocks: where a wheel reads the time.
//!
//! A [`Clock`] reads a monotonic time as a [`Duration`] since an origin of its own choosing.
//! The wheel turns that reading into ticks; it never compares readings of two clocks.
//!
//! # Never early, with a coarse clock
//!
//! A clock whose readings are floored to a granularity (embassy's `Instant::now()` counts
//! whole ticks) reads up to one granule behind the true time. A deadline measured from such a
//! reading could end up to one granule early in real time. [`Clock::resolution`] states that
//! granule and the wheel adds it to every relative deadline, so a deadline never ends early
//! in real time either. Exact clocks ([`ManualClock`], `std::time::Instant`) report zero.

use core::time::Duration;

/// A monotonic time source for a [`Wheel`](crate::Wheel).
///
/// # Contract
///
/// * `now` never goes backwards.
/// * `now` is at most [`resolution`](Clock::resolution) behind the true time of the clock.
pub trait Clock: Sync {
    /// The time elapsed since this clock's origin.
    fn now(&self) -> Duration;

    /// How far behind the true time a reading may be (the clock's granularity, when readings
    /// are floored). The wheel adds it to relative deadlines so they never end early.
    fn resolution(&self) -> Duration {
        Duration::ZERO
    }
}

impl<C: Clock + ?Sized> Clock for &C {
    fn now(&self) -> Duration {
        (**self).now()
    }

    fn resolution(&self) -> Duration {
        (**self).resolution()
    }
}

#[cfg(feature = "std")]
pub use std_clock::StdClock;

#[cfg(feature = "std")]
mod std_clock {
    //! `std::time::Instant`'s clock, read directly on Linux.
    //!
    //! `Instant` is `CLOCK_MONOTONIC` on Linux, but a reading through it
    //! (`origin.elapsed()`) also checks and normalises two `timespec`s and builds a
    //! `Duration` from them: on the benchmark machine a reading cost 52 ns that way and
    //! 40 ns read directly, and the clock read is a third of an arm. Other systems read
    //! through `Instant`.
    //!
    //! # Agreement with `Instant`
    //!
    //! A deadline at an `Instant` (`deadline_at(fut, clock.reading_of(instant))`) turns
    //! it into a reading through `Instant`. The clock's origin is an `Instant` taken first
    //! and, on Linux, the monotonic nanoseconds read just after it, so the direct origin
    //! is at or after the `Instant` origin. A direct reading is therefore at or behind the
    //! reading `Instant` gives for the same moment, and a deadline at
    //! `reading_of(instant)` fires at or after `instant`: never early, late by the few
    //! nanoseconds between the two origin reads. That holds too if `Instant` ever counts a
    //! clock that runs at least as fast as `CLOCK_MONOTONIC` (as `CLOCK_BOOTTIME` does,
    //! adding suspends).

    use core::time::Duration;
    use std::time::Instant;

    /// `std::time::Instant`'s clock (on Linux `CLOCK_MONOTONIC`, read directly, which is
    /// cheaper), measured from the moment the clock was made.
    ///
    /// ```
    /// use punctual_core::{Clock, StdClock};
    /// let clock = StdClock::new();
    /// let a = clock.now();
    /// assert!(clock.now() >= a);
    /// ```
    #[derive(Debug, Clone, Copy)]
    pub struct StdClock {
        origin: Instant,
        /// `CLOCK_MONOTONIC` in nanoseconds, read just after `origin`.
        #[cfg(target_os = "linux")]
        origin_nanos: u64,
    }

    impl StdClock {
        /// A clock whose origin is now.
        pub fn new() -> Self {
            // `Instant` first: see "Agreement with `Instant`".
            let origin = Instant::now();
            Self {
                origin,
                #[cfg(target_os = "linux")]
                origin_nanos: monotonic_nanos(),
            }
        }

        /// The instant this clock counts from.
        pub fn origin(&self) -> Instant {
            self.origin
        }

        /// The clock reading of `instant`: `Duration::ZERO` for instants before the origin.
        /// A deadline at this reading never ends before `instant`.
        pub fn reading_of(&self, instant: Instant) -> Duration {
            instant.saturating_duration_since(self.origin)
        }
    }

    impl Default for StdClock {
        fn default() -> Self {
            Self::new()
        }
    }

    impl super::Clock for StdClock {
        #[inline]
        fn now(&self) -> Duration {
            #[cfg(target_os = "linux")]
            {
                // Read after `origin_nanos` (this clock exists), and the clock is
                // monotonic across threads: the subtraction does not saturate.
                Duration::from_nanos(monotonic_nanos().saturating_sub(self.origin_nanos))
            }
            #[cfg(not(target_os = "linux"))]
            {
                self.origin.elapsed()
            }
        }
    }

    /// `CLOCK_MONOTONIC` in nanoseconds.
    ///
    /// # Panics
    ///
    /// If `clock_gettime` fails, which it does not for this clock on Linux
    /// (`Instant::now` panics then too).
    #[cfg(target_os = "linux")]
    #[inline]
    fn monotonic_nanos() -> u64 {
        let mut ts = libc::timespec {
            tv_sec: 0,
            tv_nsec: 0,
        };
        // SAFETY: `ts` is a valid, writable `timespec`, and `CLOCK_MONOTONIC` a clock id
        // every Linux has.
        let rc = unsafe { libc::clock_gettime(libc::CLOCK_MONOTONIC, &mut ts) };
        assert_eq!(
            rc,
            0,
            "punctual: clock_gettime(CLOCK_MONOTONIC) failed: {}",
            std::io::Error::last_os_error()
        );
        // Both fields are non-negative for this clock (time since boot), and the sum fits
        // a `u64` for 584 years of uptime.
        (ts.tv_sec as u64)
            .wrapping_mul(1_000_000_000)
            .wrapping_add(ts.tv_nsec as u64)
    }

    #[cfg(test)]
    mod tests {
        use super::super::Clock;
        use super::StdClock;
        use core::time::Duration;
        use std::time::Instant;

        #[test]
        fn readings_never_go_backwards() {
            let clock = StdClock::new();
            let mut last = clock.now();
            for _ in 0..if cfg!(miri) { 100 } else { 100_000 } {
                let reading = clock.now();
                assert!(reading >= last, "{reading:?} after {last:?}");
                last = reading;
            }
        }

        #[test]
        fn a_reading_is_never_ahead_of_the_instant_read_after_it() {
            // See "Agreement with `Instant`": so a deadline at `reading_of(instant)`
            // cannot end before `instant`.
            let clock = StdClock::new();
            for _ in 0..if cfg!(miri) { 100 } else { 100_000 } {
                let reading = clock.now();
                let instant = clock.reading_of(Instant::now());
                assert!(reading <= instant, "{reading:?} ahead of {instant:?}");
            }
        }

        #[test]
        fn a_reading_keeps_up_with_instant() {
            let clock = StdClock::new();
            let before = clock.reading_of(Instant::now());
            std::thread::sleep(Duration::from_millis(5));
            let reading = clock.now();
            assert!(reading >= before + Duration::from_millis(5), "{reading:?}");
        }

        #[test]
        fn instants_before_the_origin_read_zero() {
            let before = Instant::now();
            let clock = StdClock::new();
            assert_eq!(clock.reading_of(before), Duration::ZERO);
            assert_eq!(clock.reading_of(clock.origin()), Duration::ZERO);
        }
    }
}

#[cfg(any(target_has_atomic = "64", feature = "portable-atomic"))]
pub use manual::ManualClock;

#[cfg(any(target_has_atomic = "64", feature = "portable-atomic"))]
mod manual {
    use core::time::Duration;

    #[cfg(not(any(feature = "portable-atomic", punctual_loom)))]
    use core::sync::atomic::{AtomicU64, Ordering};
    // Under loom, loom's: the models then explore clock moves against the wheel's reads.
    #[cfg(punctual_loom)]
    use loom::sync::atomic::{AtomicU64, Ordering};
    #[cfg(all(feature = "portable-atomic", not(punctual_loom)))]
    use portable_atomic::{AtomicU64, Ordering};

    /// A clock that moves only when told to, for deterministic tests.
    ///
    /// Readings are exact (nanoseconds, resolution zero). Pair it with a wheel and use
    /// [`Wheel::advance`](crate::Wheel::advance), which moves the clock and fires every
    /// deadline that came due on the calling thread before it returns.
    ///
    /// The clock never goes backwards: [`set`](ManualClock::set) to an earlier time panics.
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
                Self {
                    nanos: AtomicU64::new(0),
                }
            }
        }

        crate::sync::const_fn! {
            /// A clock reading `start`.
            pub fn starting_at(start: Duration) -> Self {
                Self {
                    nanos: AtomicU64::new(saturating_nanos(start)),
                }
            }
        }

        /// Moves the clock forward by `by` (saturating at `u64::MAX` nanoseconds, about 584
        /// years) and returns the new reading.
        pub fn advance(&self, by: Duration) -> Duration {
            let by = saturating_nanos(by);
            let mut current = self.nanos.load(Ordering::Acquire);
            loop {
                let next = current.saturating_add(by);
                match self.nanos.compare_exchange_weak(
                    current,
                    next,
                    Ordering::AcqRel,
                    Ordering::Acquire,
                ) {
                    Ok(_) => return Duration::from_nanos(next),
                    Err(actual) => current = actual,
                }
            }
        }

        /// Moves the clock to `to`.
        ///
        /// # Panics
        ///
        /// If `to` is earlier than the current reading: a clock that went backwards could
        /// make deadlines measured from it end early.
        pub fn set(&self, to: Duration) {
            let to = saturating_nanos(to);
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

    const fn saturating_nanos(d: Duration) -> u64 {
        let nanos = d.as_nanos();
        if nanos > u64::MAX as u128 {
            u64::MAX
        } else {
            nanos as u64
        }
    }
}
