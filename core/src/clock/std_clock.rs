//! The `std` clocks. `StdClock`: `std::time::Instant`'s clock, read as `CLOCK_MONOTONIC`
//! directly on Linux.
//! * `new` reads `CLOCK_MONOTONIC` (`before`), `Instant::now()` (the origin), then
//!   `CLOCK_MONOTONIC` (`after`, the direct origin): `slack = after - before`.
//! * A direct reading is behind `Instant`'s of the same moment by at most `slack`: a
//!   deadline at `reading_of(instant)` never fires before `instant`.
//! * `instant_of(r)` is origin + `slack` + `r`: never before the clock reads `r`
//!   (given `Instant` is `CLOCK_MONOTONIC`, as on every Linux target).
//!
//! `BootClock` counts suspended time: `CLOCK_BOOTTIME` on Linux.
//! * On Linux one `clock_gettime(CLOCK_BOOTTIME)` per reading, monotonic across threads.
//! * Elsewhere, and under Miri, it reads `std::time::Instant`.

use core::time::Duration;
use std::time::Instant;

use super::counters::{Boot, Monotonic};
use crate::time::Reading;

/// `std::time::Instant`'s clock (on Linux `CLOCK_MONOTONIC`, read directly), measured
/// from the moment the clock was made.
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
    /// Counts from `origin` (directly on Linux: `counters`).
    counter: Monotonic,
}

impl StdClock {
    /// A clock whose origin is now.
    pub fn new() -> Self {
        let (origin, counter) = Monotonic::new();
        Self { origin, counter }
    }

    /// A clock whose origin is `by` before now (or as far back as allowed), so that earlier
    /// instants map to distinct readings, not zero ([`reading_of`](Self::reading_of)).
    ///
    /// ```
    /// use std::time::{Duration, Instant};
    /// use punctual_core::{Clock, StdClock};
    /// let before = Instant::now();
    /// let clock = StdClock::backdated(Duration::from_millis(5));
    /// // `before` is earlier than the clock's making, but after its origin.
    /// assert!(clock.reading_of(before) > punctual_core::Reading::ZERO);
    /// ```
    pub fn backdated(by: Duration) -> Self {
        let mut clock = Self::new();
        let by = by.min(clock.counter.max_backdate());
        if let Some(origin) = clock.origin.checked_sub(by) {
            clock.origin = origin;
            clock.counter.backdate(by);
        }
        clock
    }

    /// The instant this clock counts from (direct readings: up to [`slack`](Self::slack) after).
    pub fn origin(&self) -> Instant {
        self.origin
    }

    /// The most by which [`reading_of`](Self::reading_of) and
    /// [`instant_of`](Self::instant_of) may err, always late: under a microsecond unless
    /// [`new`](Self::new) was preempted; zero off Linux.
    pub fn slack(&self) -> Duration {
        self.counter.slack()
    }

    /// The clock reading of `instant` ([`Reading::ZERO`] before the origin): a deadline
    /// at it never ends before `instant`.
    pub fn reading_of(&self, instant: Instant) -> Reading {
        Reading::since_origin(instant.saturating_duration_since(self.origin))
    }

    /// An instant at which this clock reads `reading` or later (at most
    /// [`slack`](Self::slack) after); `None` if unrepresentable, and for [`Reading::END`].
    pub fn instant_of(&self, reading: Reading) -> Option<Instant> {
        if reading == Reading::END {
            return None; // never comes
        }
        self.origin
            .checked_add(self.slack())?
            .checked_add(reading.as_duration())
    }
}

impl Default for StdClock {
    fn default() -> Self {
        Self::new()
    }
}

impl super::ClockInstant<StdClock> for Instant {
    #[inline]
    fn reading_on(self, clock: &StdClock) -> Reading {
        clock.reading_of(self)
    }
}

impl super::Clock for StdClock {
    #[inline]
    fn now(&self) -> Duration {
        self.counter.elapsed(self.origin)
    }
}

/// A clock that counts the time the system spent suspended (`CLOCK_BOOTTIME` on Linux),
/// measured from the moment the clock was made.
///
/// # Which clock to choose
///
/// * [`StdClock`](super::StdClock) stops while the machine sleeps: a deadline measures
///   awake time, as tokio's timers do. Choose it for work the program does.
/// * `BootClock` goes on: a deadline measures real time. Choose it for something outside
///   the machine (a peer's timeout, a lease, a token's expiry): what came due during a
///   suspend fires at once after the resume.
///
/// Off Linux both read `std::time::Instant` (counting suspends on Windows, not on macOS).
/// `punctual`'s global wheel takes it with `punctual::GlobalClock::select`. Sleeps on Linux
/// stop during a suspend: a driver of your own on it should sleep a second at most.
///
/// ```
/// use core::time::Duration;
/// use punctual_core::{BootClock, Clock, Growable, Wheel};
///
/// let clock = BootClock::new();
/// let a = clock.now();
/// assert!(clock.now() >= a);
///
/// // A wheel on it, as on any clock.
/// let wheel = Wheel::growable(BootClock::new(), Duration::from_millis(1));
/// # let _: &Wheel<BootClock, Growable> = &wheel;
/// assert!(wheel.clock().now() < Duration::from_secs(1));
/// ```
#[derive(Debug, Clone, Copy)]
pub struct BootClock {
    /// Counts from when the clock was made (directly on Linux: `counters`).
    counter: Boot,
}

impl BootClock {
    /// A clock whose origin is now.
    ///
    /// # Panics
    ///
    /// On Linux, if the kernel lacks `CLOCK_BOOTTIME` (before 2.6.39).
    pub fn new() -> Self {
        Self {
            counter: Boot::new(),
        }
    }
}

impl Default for BootClock {
    fn default() -> Self {
        Self::new()
    }
}

impl super::Clock for BootClock {
    #[inline]
    fn now(&self) -> Duration {
        self.counter.elapsed()
    }
}

#[cfg(test)]
mod tests {
    use super::super::Clock;
    use super::StdClock;
    use core::time::Duration;
    use std::time::Instant;

    use crate::time::Reading;

    const ROUNDS: usize = if cfg!(miri) { 100 } else { 100_000 };

    #[test]
    fn readings_never_go_backwards() {
        let clock = StdClock::new();
        let mut last = clock.now();
        for _ in 0..ROUNDS {
            let reading = clock.now();
            assert!(reading >= last, "{reading:?} after {last:?}");
            last = reading;
        }
    }

    #[test]
    fn reading_never_ahead_of_a_later_instant() {
        let clock = StdClock::new();
        for _ in 0..ROUNDS {
            let reading = Reading::since_origin(clock.now());
            let instant = clock.reading_of(Instant::now());
            assert!(reading <= instant, "{reading:?} ahead of {instant:?}");
        }
    }

    #[test]
    fn instant_of_a_reading_is_never_early() {
        let clock = StdClock::new();
        for _ in 0..ROUNDS {
            let at = Reading::since_origin(clock.now()) + Duration::from_micros(1);
            let instant = clock.instant_of(at).expect("representable");
            while Instant::now() < instant {
                core::hint::spin_loop();
            }
            let now = Reading::since_origin(clock.now());
            assert!(now >= at, "{now:?} before {at:?}");
            if cfg!(miri) {
                break;
            }
        }
    }

    #[test]
    fn conversions_err_late_by_at_most_the_slack() {
        let clock = StdClock::new();
        assert!(
            clock.slack() < Duration::from_millis(100),
            "{:?}",
            clock.slack()
        );
        for reading in [
            Reading::ZERO,
            Reading::from_nanos(1),
            Reading::from_nanos(7_000_000),
        ] {
            let instant = clock.instant_of(reading).expect("representable");
            assert_eq!(clock.reading_of(instant), reading + clock.slack());
        }
        assert_eq!(clock.instant_of(Reading::END), None);
    }

    #[test]
    fn a_reading_keeps_up_with_instant() {
        let clock = StdClock::new();
        let before = clock.reading_of(Instant::now());
        std::thread::sleep(Duration::from_millis(5));
        let reading = Reading::since_origin(clock.now());
        assert!(
            reading + clock.slack() >= before + Duration::from_millis(5),
            "{reading:?}"
        );
    }

    #[test]
    fn instants_before_the_origin_read_zero() {
        let before = Instant::now();
        let clock = StdClock::new();
        assert_eq!(clock.reading_of(before), Reading::ZERO);
        assert_eq!(clock.reading_of(clock.origin()), Reading::ZERO);
    }
}

#[cfg(test)]
mod boot_tests {
    use super::super::Clock;
    use super::BootClock;
    use core::time::Duration;

    const ROUNDS: usize = if cfg!(miri) { 100 } else { 100_000 };

    #[test]
    fn readings_never_go_backwards() {
        let clock = BootClock::new();
        let mut last = clock.now();
        for _ in 0..ROUNDS {
            let reading = clock.now();
            assert!(reading >= last, "{reading:?} after {last:?}");
            last = reading;
        }
    }

    #[test]
    fn it_counts_at_least_the_time_slept() {
        let clock = BootClock::new();
        let before = clock.now();
        std::thread::sleep(Duration::from_millis(5));
        assert!(clock.now() - before >= Duration::from_millis(5));
    }
}
