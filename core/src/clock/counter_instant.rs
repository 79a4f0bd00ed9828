//! The clocks' counters off Linux, and the boot counter under Miri: `std::time::Instant`.

use core::time::Duration;
use std::time::Instant;

/// `Instant`'s own clock, counted from the origin.
#[cfg(not(target_os = "linux"))]
#[derive(Debug, Clone, Copy)]
pub(super) struct Monotonic;

#[cfg(not(target_os = "linux"))]
impl Monotonic {
    /// An origin `Instant`, and its counter.
    pub(super) fn new() -> (Instant, Self) {
        (Instant::now(), Self)
    }

    /// Readings go through `Instant`: no slack.
    pub(super) fn slack(&self) -> Duration {
        Duration::ZERO
    }

    /// As far back as `Instant` allows.
    pub(super) fn max_backdate(&self) -> Duration {
        Duration::MAX
    }

    /// Nothing to move: readings count from the origin.
    pub(super) fn backdate(&mut self, _by: Duration) {}

    /// The time since `origin`.
    #[inline]
    pub(super) fn elapsed(&self, origin: Instant) -> Duration {
        origin.elapsed()
    }
}

/// `Instant`'s clock, which counts suspends on Windows and not on macOS.
#[derive(Debug, Clone, Copy)]
pub(super) struct Boot {
    origin: Instant,
}

impl Boot {
    /// A counter from now.
    pub(super) fn new() -> Self {
        Self {
            origin: Instant::now(),
        }
    }

    /// The time since it was made.
    #[inline]
    pub(super) fn elapsed(&self) -> Duration {
        self.origin.elapsed()
    }
}
