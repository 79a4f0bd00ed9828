//! `TokioClock`: a wheel clock on `tokio::time::Instant`.

use core::time::Duration;

use punctual_core::{Clock, ClockInstant, Reading};
use tokio::time::Instant;

/// A wheel [`Clock`] on [`tokio::time::Instant`], from the moment it was made, exact to
/// the nanosecond: under a paused runtime ([`tokio::time::pause`]) it reads tokio's virtual
/// time, so a deadline fires when tokio's time reaches it, never before.
///
/// A reading comes from the runtime whose context the reading thread is in (outside every
/// runtime, the real clock). With a paused clock, make it inside the runtime and poll the
/// wheel's deadlines on that runtime only: one wheel per runtime.
///
/// [`tokio::time::pause`]: https://docs.rs/tokio/1/tokio/time/fn.pause.html
#[derive(Debug, Clone, Copy)]
pub struct TokioClock {
    origin: Instant,
}

impl TokioClock {
    /// A clock whose origin is [`tokio::time::Instant::now`], read on this thread.
    pub fn new() -> Self {
        Self::with_origin(Instant::now())
    }

    /// A clock counting from `origin`.
    pub const fn with_origin(origin: Instant) -> Self {
        Self { origin }
    }

    /// The instant this clock counts from: its reading zero.
    pub const fn origin(&self) -> Instant {
        self.origin
    }

    /// The reading of `instant` on this clock: [`Reading::ZERO`] for instants before the
    /// origin. (A wheel on this clock takes a tokio instant as it is: `deadline_at`.)
    pub fn reading_of(&self, instant: Instant) -> Reading {
        Reading::since_origin(instant.saturating_duration_since(self.origin))
    }

    /// The instant at which this clock reads `reading`, or `None` if that instant cannot
    /// be represented. Exact: `reading_of(instant_of(r)) == r`.
    pub fn instant_of(&self, reading: Reading) -> Option<Instant> {
        self.origin.checked_add(reading.as_duration())
    }
}

impl Default for TokioClock {
    fn default() -> Self {
        Self::new()
    }
}

impl Clock for TokioClock {
    fn now(&self) -> Duration {
        self.reading_of(Instant::now()).as_duration()
    }
}

impl ClockInstant<TokioClock> for Instant {
    #[inline]
    fn reading_on(self, clock: &TokioClock) -> Reading {
        clock.reading_of(self)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test(start_paused = true)]
    async fn reads_tokio_paused_time() {
        let clock = TokioClock::new();
        assert_eq!(clock.now(), Duration::ZERO);
        tokio::time::advance(Duration::from_nanos(1)).await;
        assert_eq!(clock.now(), Duration::from_nanos(1));
        tokio::time::advance(Duration::from_secs(3600)).await;
        assert_eq!(
            clock.now(),
            Duration::from_secs(3600) + Duration::from_nanos(1)
        );
        assert_eq!(clock.resolution(), Duration::ZERO);
    }

    #[tokio::test(start_paused = true)]
    async fn conversions_round_trip_exactly() {
        let clock = TokioClock::new();
        for reading in [
            Duration::ZERO,
            Duration::from_nanos(1),
            Duration::from_nanos(999_999),
            Duration::from_millis(1),
            Duration::from_micros(1_500),
            Duration::from_secs(86_400 * 365),
        ] {
            let reading = Reading::since_origin(reading);
            let instant = clock.instant_of(reading).unwrap();
            assert_eq!(clock.reading_of(instant), reading);
        }
        // Before the origin saturates to zero; past the representable range is `None`.
        let before = clock.origin() - Duration::from_millis(5);
        assert_eq!(clock.reading_of(before), Reading::ZERO);
        assert_eq!(clock.instant_of(Reading::END), None);
    }

    #[test]
    fn real_time_outside_a_runtime() {
        let clock = TokioClock::default();
        let a = clock.now();
        std::thread::sleep(Duration::from_millis(2));
        assert!(clock.now() >= a + Duration::from_millis(2));
    }
}
