//! A clock that counts suspended time: `CLOCK_BOOTTIME` on Linux.
//! * On Linux one `clock_gettime(CLOCK_BOOTTIME)` per reading, monotonic across threads.
//! * Elsewhere, and under Miri, it reads `std::time::Instant`.

use core::time::Duration;

use super::counters::Boot;

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
    /// Counts from when the clock was made (directly on Linux: `counter_linux`).
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
