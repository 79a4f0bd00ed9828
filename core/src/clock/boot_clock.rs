//! A clock that counts the time the system spent suspended: `CLOCK_BOOTTIME` on Linux.
//!
//! * On Linux a reading is one `clock_gettime(CLOCK_BOOTTIME)` call, exact to the nanosecond.
//! * Readings never go backwards, across threads too: the kernel keeps the clock monotonic.
//! * Elsewhere, and under Miri, the clock reads `std::time::Instant`, as `StdClock` does.
//! * Sleeps on Linux stop during a suspend, so a driver on this clock bounds its sleeps.
//!   `punctual`'s thread driver sleeps at most a second at a time.

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
/// `std::time::Instant`, which counts suspended time on Windows and not on macOS.
///
/// A wheel of one's own counts on it as on any clock; `punctual`'s global wheel takes it
/// with `punctual::GlobalClock::select` before its first use. Sleeps on Linux stop while
/// the machine is suspended, so a driver of one's own on this clock should sleep at most
/// a second or so at a time, as `punctual`'s thread driver does.
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
