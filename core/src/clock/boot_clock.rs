//! A clock that counts the time the system spent suspended: `CLOCK_BOOTTIME` on Linux.
//!
//! [`StdClock`](super::StdClock) counts `CLOCK_MONOTONIC` on Linux, which stops while the
//! machine (a laptop, a virtual machine) is suspended: a 30 s deadline that spans a one-hour
//! suspend ends 30 s of awake time later, an hour and a half after it started.
//! `CLOCK_BOOTTIME` is the same clock plus the time spent suspended, so the same deadline
//! has ended by the time the machine resumes. Both are monotonic, count from boot, and are
//! not moved by changes of the wall clock; between two suspends they advance alike.
//!
//! Elsewhere there is no such clock to choose, and [`BootClock`] reads
//! `std::time::Instant`, as `StdClock` does: on Windows (`QueryPerformanceCounter`) that
//! counts suspended time; on macOS and iOS (`CLOCK_UPTIME_RAW`) it does not. Under Miri,
//! which need not know `CLOCK_BOOTTIME` and never suspends, it reads `Instant` too.
//!
//! # Never early
//!
//! A reading is taken from one `clock_gettime` call, exact to the nanosecond (resolution
//! zero), and readings never go backwards, across threads too: the kernel keeps the clock
//! monotonic. A deadline measured on it ends no earlier than its duration of real time,
//! suspends included. (Counting suspends can only make it end *sooner in awake time* than
//! on `StdClock`, which is the point.)
//!
//! # Waking up after a suspend
//!
//! The clock is only half of it: whatever sleeps until a wheel's next turn must wake
//! after a resume too. Sleeps on Linux (`thread::park_timeout`, the timers of tokio and
//! async-io) count `CLOCK_MONOTONIC` and stop with it. So `punctual`'s thread driver,
//! on a wheel of this clock, never sleeps longer than a second at a time: deadlines that
//! came due during a suspend fire within about a second of the resume. A driver of one's
//! own should bound its sleeps likewise.

use core::time::Duration;
#[cfg(not(all(target_os = "linux", not(miri))))]
use std::time::Instant;

/// A clock that counts the time the system spent suspended (`CLOCK_BOOTTIME` on Linux),
/// measured from the moment the clock was made.
///
/// # Which clock to choose
///
/// * [`StdClock`](super::StdClock) (`CLOCK_MONOTONIC` on Linux) stops while the machine
///   sleeps: a deadline measures awake time, as tokio's timers and `std::time::Instant`
///   do. Choose it when a deadline bounds work the program does (a computation, a retry
///   budget): a suspend does not use up its time.
/// * `BootClock` goes on while the machine sleeps: a deadline measures real time. Choose it
///   when a deadline stands for something outside the machine that keeps time during a
///   suspend (a peer's own timeout, a lease, a token's expiry, "reconnect if silent for
///   30 s"): after a resume, what came due during the suspend fires at once.
///
/// Between suspends the two agree. On systems other than Linux both read
/// `std::time::Instant`, which counts suspended time on Windows and not on macOS (see the
/// module docs of `boot_clock`).
///
/// A wheel of one's own counts on it as on any clock; `punctual`'s global wheel takes it
/// with `punctual::GlobalClock::select` before its first use.
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
    /// `CLOCK_BOOTTIME` in nanoseconds when the clock was made: readings count from it.
    #[cfg(all(target_os = "linux", not(miri)))]
    origin_nanos: u64,
    /// The moment the clock was made.
    #[cfg(not(all(target_os = "linux", not(miri))))]
    origin: Instant,
}

impl BootClock {
    /// A clock whose origin is now.
    ///
    /// # Panics
    ///
    /// On Linux, if the kernel refuses `CLOCK_BOOTTIME` (kernels before 2.6.39, from
    /// 2011), with the system's error.
    pub fn new() -> Self {
        Self {
            #[cfg(all(target_os = "linux", not(miri)))]
            origin_nanos: boottime_nanos(),
            #[cfg(not(all(target_os = "linux", not(miri))))]
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
            // Read after `origin_nanos` (this clock exists), and the clock is monotonic
            // across threads: the subtraction does not saturate.
            Duration::from_nanos(boottime_nanos().saturating_sub(self.origin_nanos))
        }
        #[cfg(not(all(target_os = "linux", not(miri))))]
        {
            self.origin.elapsed()
        }
    }
}

/// `CLOCK_BOOTTIME` in nanoseconds (fits a `u64` for 584 years of uptime).
///
/// # Panics
///
/// If `clock_gettime` fails, which it does for this clock only on kernels older than
/// 2.6.39.
#[cfg(all(target_os = "linux", not(miri)))]
#[inline]
fn boottime_nanos() -> u64 {
    super::std_clock::clock_nanos(libc::CLOCK_BOOTTIME, "CLOCK_BOOTTIME")
}

#[cfg(test)]
mod tests {
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

    #[test]
    #[cfg(all(target_os = "linux", not(miri)))]
    fn it_counts_from_clock_boottime() {
        // Made between two direct readings of `CLOCK_BOOTTIME`, its origin lies between
        // them (a clock on `CLOCK_MONOTONIC` would lie below both on a machine that was
        // ever suspended).
        for _ in 0..1_000 {
            let before = super::boottime_nanos();
            let clock = BootClock::new();
            let after = super::boottime_nanos();
            assert!((before..=after).contains(&clock.origin_nanos));
            let reading = clock.now();
            let later = super::boottime_nanos();
            assert!(Duration::from_nanos(later - clock.origin_nanos) >= reading);
        }
    }
}
