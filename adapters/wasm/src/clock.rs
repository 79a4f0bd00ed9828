//! `HostClock`: the host's monotonic time, `performance.now()`, through `web_time::Instant`.
//!
//! * Every `HostClock` counts from one origin, [`BACKDATE`] before the program's first
//!   reading: readings of two compare, and instants shortly before it stay distinct.
//! * Readings and instants share a source and conversion: `reading_of(instant)` is exact.

use core::time::Duration;
use std::sync::OnceLock;

use punctual_core::{Clock, ClockInstant, Reading};
use web_time::Instant;

/// The instant every `HostClock` counts from, less [`BACKDATE`]: the first reading's.
static ORIGIN: OnceLock<Instant> = OnceLock::new();

/// How long before its first reading the clock counts from.
const BACKDATE: Duration = Duration::from_secs(3600);

/// The host's monotonic clock: `performance.now()`, as [`web_time::Instant`] reads it, in
/// browsers, web workers and Node 16+. Every `HostClock` reads the same, from an hour
/// before its first reading in the program.
///
/// # Precision
///
/// Browsers round `performance.now()` to 100 µs or coarser (5 µs cross-origin isolated);
/// a deadline is never early on this clock, but may be by that rounding on an exact one.
///
/// # Panics
///
/// A reading panics if the host has no global `performance` object.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Hash)]
pub struct HostClock;

impl HostClock {
    /// The clock. Reading it the first time in the program fixes the origin.
    pub const fn new() -> Self {
        Self
    }

    fn origin() -> Instant {
        *ORIGIN.get_or_init(Instant::now)
    }

    /// The reading of `instant`: exact, so a deadline at it never ends before `instant`.
    /// [`Reading::ZERO`] for instants more than an hour before the clock's first reading.
    pub fn reading_of(&self, instant: Instant) -> Reading {
        let origin = Self::origin();
        let since = match instant.checked_duration_since(origin) {
            Some(after) => BACKDATE.saturating_add(after),
            None => BACKDATE.saturating_sub(origin.duration_since(instant)),
        };
        Reading::since_origin(since)
    }

    /// The instant at which this clock reads `reading`: the inverse of
    /// [`reading_of`](Self::reading_of); `None` if the instant cannot be represented.
    pub fn instant_of(&self, reading: Reading) -> Option<Instant> {
        let origin = Self::origin();
        let since = reading.as_duration();
        match since.checked_sub(BACKDATE) {
            Some(after) => origin.checked_add(after),
            None => origin.checked_sub(BACKDATE - since),
        }
    }
}

impl ClockInstant<HostClock> for Instant {
    #[inline]
    fn reading_on(self, clock: &HostClock) -> Reading {
        clock.reading_of(self)
    }
}

impl Clock for HostClock {
    #[inline]
    fn now(&self) -> Duration {
        self.reading_of(Instant::now()).as_duration()
    }
}
