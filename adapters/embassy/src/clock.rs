//! `EmbassyClock`: a wheel's clock on `embassy_time::Instant`.

use core::time::Duration;

use embassy_time::{Instant, TICK_HZ};
use punctual_core::{Clock, ClockInstant, Reading};

use crate::convert;

/// The time of embassy-time's driver: [`Instant::now`] since its zero, in nanoseconds
/// rounded down; its [`resolution`](Clock::resolution) is one embassy tick (see the
/// crate's `# Precision`). It needs the final binary's time driver. A unit struct:
/// `Wheel::fixed(EmbassyClock, tick)` makes a `static` wheel of another tick.
#[derive(Debug, Default, Clone, Copy, PartialEq, Eq, Hash)]
pub struct EmbassyClock;

impl EmbassyClock {
    /// The clock reading of `instant`, rounded down to a whole nanosecond.
    pub const fn reading_of(instant: Instant) -> Reading {
        Reading::from_nanos(convert::reading_nanos_of_ticks(instant.as_ticks(), TICK_HZ))
    }

    /// The first embassy instant whose reading is at or after `reading` (unlike
    /// `Instant::from_nanos`, which rounds down); [`Instant::MAX`] beyond embassy's range.
    pub const fn instant_at_or_after(reading: Reading) -> Instant {
        Instant::from_ticks(convert::ticks_at_or_after_nanos(
            reading.as_nanos(),
            TICK_HZ,
        ))
    }
}

impl ClockInstant<EmbassyClock> for Instant {
    #[inline]
    fn reading_on(self, _: &EmbassyClock) -> Reading {
        EmbassyClock::reading_of(self)
    }
}

impl Clock for EmbassyClock {
    fn now(&self) -> Duration {
        self.reading().as_duration()
    }

    fn resolution(&self) -> Duration {
        crate::RESOLUTION
    }

    #[inline]
    fn reading(&self) -> Reading {
        Self::reading_of(Instant::now())
    }
}

#[cfg(test)]
mod tests {
    use core::time::Duration;

    use embassy_time::{Instant, TICK_HZ};
    use punctual_core::Reading;

    use super::EmbassyClock;

    #[test]
    fn one_second_of_ticks_reads_one_second() {
        let one_second = Instant::from_ticks(TICK_HZ);
        let reading = EmbassyClock::reading_of(one_second);
        assert_eq!(reading.as_duration(), Duration::from_secs(1));
    }

    #[test]
    fn instant_at_or_after_never_lands_before() {
        let reading = Reading::since_origin(Duration::from_nanos(1));
        let at = EmbassyClock::instant_at_or_after(reading);
        assert!(EmbassyClock::reading_of(at) >= reading);
        // `Instant::from_nanos(1)` is tick 0: before `reading`.
        assert!(at.as_ticks() >= 1);
    }
}
