//! The `std` clocks.
//! * `StdClock` is `std::time::Instant`'s clock. On Linux it reads `CLOCK_MONOTONIC`
//!   directly, counting from `origin_nanos`: `new` reads it (`before`), `Instant::now()`
//!   (the origin), then again (`after`, the direct origin): `slack = after - before`.
//! * A direct reading is behind `Instant`'s of the same moment by at most `slack`: a
//!   deadline at `reading_of(instant)` never fires before `instant`; `instant_of(r)` is
//!   origin + `slack` + `r`, never before the clock reads `r` (given `Instant` is
//!   `CLOCK_MONOTONIC`, as on every Linux target).
//! * `BootClock` counts suspended time: one `clock_gettime(CLOCK_BOOTTIME)` per reading
//!   on Linux, monotonic across threads; elsewhere, and under Miri, `std::time::Instant`.

use core::time::Duration;
use std::time::Instant;

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
    /// `CLOCK_MONOTONIC` ns just after `origin`: direct readings count from it.
    #[cfg(target_os = "linux")]
    origin_nanos: u64,
    /// How far after `origin` direct readings may start (zero off Linux).
    slack: Duration,
}

impl StdClock {
    /// A clock whose origin is now.
    pub fn new() -> Self {
        #[cfg(target_os = "linux")]
        {
            /// A bracket this tight was not preempted.
            const TIGHT: u64 = 1_000;
            let bracket = || {
                let before = monotonic_nanos();
                let origin = Instant::now();
                let after = monotonic_nanos();
                (origin, after, after - before)
            };
            // Up to four brackets, until one is tight.
            let mut best = bracket();
            for _ in 1..4 {
                if best.2 <= TIGHT {
                    break;
                }
                best = core::cmp::min_by_key(best, bracket(), |bracket| bracket.2);
            }
            let (origin, origin_nanos, slack) = best;
            Self {
                origin,
                origin_nanos,
                slack: Duration::from_nanos(slack),
            }
        }
        #[cfg(not(target_os = "linux"))]
        {
            Self {
                origin: Instant::now(),
                slack: Duration::ZERO,
            }
        }
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
        // The direct origin goes back to boot at most.
        #[cfg(target_os = "linux")]
        let by = by.min(Duration::from_nanos(clock.origin_nanos));
        if let Some(origin) = clock.origin.checked_sub(by) {
            clock.origin = origin;
            // At most `origin_nanos`, so under 2^64 ns.
            #[cfg(target_os = "linux")]
            {
                clock.origin_nanos -= by.as_nanos() as u64;
            }
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
        self.slack
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
        #[cfg(target_os = "linux")]
        {
            Duration::from_nanos(monotonic_nanos().saturating_sub(self.origin_nanos))
        }
        #[cfg(not(target_os = "linux"))]
        {
            self.origin.elapsed()
        }
    }
}

/// A clock that counts the time the system spent suspended (`CLOCK_BOOTTIME` on Linux),
/// measured from the moment the clock was made.
///
/// [`StdClock`] stops while the machine sleeps, as tokio's timers do:
/// choose it for work the program does. `BootClock` goes on, for something outside the
/// machine (a peer's timeout, a lease): what came due during a suspend fires at the resume.
/// Off Linux both read `std::time::Instant` (counting suspends on Windows, not on macOS).
/// Sleeps on Linux stop during a suspend: a driver of your own on it should sleep a second
/// at most. `punctual`'s global wheel takes it with `punctual::GlobalClock::select`.
///
/// ```
/// use core::time::Duration;
/// use punctual_core::{BootClock, Clock, Growable, Wheel};
///
/// let wheel = Wheel::growable(BootClock::new(), Duration::from_millis(1));
/// # let _: &Wheel<BootClock, Growable> = &wheel;
/// assert!(wheel.clock().now() < Duration::from_secs(1));
/// ```
#[derive(Debug, Clone, Copy)]
pub struct BootClock {
    /// `CLOCK_BOOTTIME` ns when the clock was made.
    #[cfg(all(target_os = "linux", not(miri)))]
    origin_nanos: u64,
    #[cfg(any(not(target_os = "linux"), miri))]
    origin: Instant,
}

impl BootClock {
    /// A clock whose origin is now.
    ///
    /// # Panics
    ///
    /// On Linux, if the kernel lacks `CLOCK_BOOTTIME` (before 2.6.39).
    pub fn new() -> Self {
        Self {
            #[cfg(all(target_os = "linux", not(miri)))]
            origin_nanos: boottime_nanos(),
            #[cfg(any(not(target_os = "linux"), miri))]
            origin: Instant::now(),
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
        #[cfg(all(target_os = "linux", not(miri)))]
        {
            Duration::from_nanos(boottime_nanos().saturating_sub(self.origin_nanos))
        }
        #[cfg(any(not(target_os = "linux"), miri))]
        {
            self.origin.elapsed()
        }
    }
}

#[cfg(target_os = "linux")]
#[inline]
fn monotonic_nanos() -> u64 {
    clock_nanos(libc::CLOCK_MONOTONIC, "CLOCK_MONOTONIC")
}

#[cfg(all(target_os = "linux", not(miri)))]
#[inline]
fn boottime_nanos() -> u64 {
    clock_nanos(libc::CLOCK_BOOTTIME, "CLOCK_BOOTTIME")
}

/// A Linux clock counting from boot, in nanoseconds; panics (naming it `name`) on failure.
#[cfg(target_os = "linux")]
#[inline]
fn clock_nanos(clock: libc::clockid_t, name: &str) -> u64 {
    let mut ts = core::mem::MaybeUninit::<libc::timespec>::uninit();
    // SAFETY: `ts` is valid for a write; a failure (checked below) leaves it unread.
    let rc = unsafe { libc::clock_gettime(clock, ts.as_mut_ptr()) };
    assert_eq!(
        rc,
        0,
        "punctual: clock_gettime({name}) failed: {}",
        std::io::Error::last_os_error()
    );
    // SAFETY: `clock_gettime` succeeded, so it wrote the whole `timespec`.
    let ts = unsafe { ts.assume_init() };
    nanos_of(ts.tv_sec as u64, ts.tv_nsec as u64)
}

/// `secs` seconds and `nanos` nanoseconds, in nanoseconds (fits a `u64` for 584 years).
#[cfg(target_os = "linux")]
#[inline]
fn nanos_of(secs: u64, nanos: u64) -> u64 {
    secs.wrapping_mul(1_000_000_000).wrapping_add(nanos)
}

#[cfg(test)]
mod tests {
    use super::super::Clock;
    use super::StdClock;
    use core::time::Duration;
    use std::time::Instant;

    use crate::time::Reading;

    const ROUNDS: usize = if cfg!(miri) { 100 } else { 100_000 };

    /// Asserts that `ROUNDS` readings of `clock` in a row never go backwards.
    pub(super) fn assert_monotonic(clock: &impl Clock) {
        let mut last = clock.now();
        for _ in 0..ROUNDS {
            let reading = clock.now();
            assert!(reading >= last, "{reading:?} after {last:?}");
            last = reading;
        }
    }

    #[test]
    fn readings_never_go_backwards() {
        assert_monotonic(&StdClock::new());
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

    #[test]
    fn readings_never_go_backwards() {
        super::tests::assert_monotonic(&BootClock::new());
    }

    #[test]
    fn it_counts_at_least_the_time_slept() {
        let clock = BootClock::new();
        let before = clock.now();
        std::thread::sleep(Duration::from_millis(5));
        assert!(clock.now() - before >= Duration::from_millis(5));
    }
}

#[cfg(target_os = "linux")]
#[cfg(test)]
mod linux_tests {
    use super::*;

    /// `CLOCK_MONOTONIC` as `Instant` holds it, parsed from its `Debug` output.
    #[cfg(not(miri))]
    fn monotonic_of(instant: Instant) -> u64 {
        let text = std::format!("{instant:?}");
        let field = |name: &str| -> u64 {
            let start = text
                .find(name)
                .unwrap_or_else(|| panic!("no {name} in Instant's Debug output: {text}"))
                + name.len();
            let digits: std::string::String = text[start..]
                .chars()
                .skip_while(|c| !c.is_ascii_digit())
                .take_while(char::is_ascii_digit)
                .collect();
            digits.parse().expect("a number")
        };
        nanos_of(field("tv_sec"), field("tv_nsec"))
    }

    #[test]
    #[cfg(not(miri))]
    fn direct_origin_is_within_slack_after_instant() {
        for _ in 0..1_000 {
            let clock = StdClock::new();
            let origin = monotonic_of(clock.origin);
            assert!(
                clock.origin_nanos >= origin,
                "direct origin before Instant's"
            );
            let gap = Duration::from_nanos(clock.origin_nanos - origin);
            assert!(gap <= clock.slack(), "{gap:?} > slack {:?}", clock.slack());
        }
    }

    #[test]
    fn nanoseconds_carry_across_whole_seconds() {
        assert_eq!(nanos_of(0, 999_999_999), 999_999_999);
        assert_eq!(nanos_of(1, 0), 1_000_000_000);
        assert_eq!(nanos_of(3, 5), 3_000_000_005);
    }

    #[test]
    #[cfg(not(miri))]
    fn boot_counts_from_clock_boottime() {
        // The origin lies between two direct readings (`CLOCK_MONOTONIC`'s would not).
        for _ in 0..1_000 {
            let before = boottime_nanos();
            let clock = BootClock::new();
            let after = boottime_nanos();
            assert!((before..=after).contains(&clock.origin_nanos));
            let reading = super::super::Clock::now(&clock);
            let later = boottime_nanos();
            assert!(Duration::from_nanos(later - clock.origin_nanos) >= reading);
        }
    }
}
