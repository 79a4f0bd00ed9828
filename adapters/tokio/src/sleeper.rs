//! `TokioSleeper`: the driver's sleeps, on `tokio::time::sleep_until`.

use core::time::Duration;

use punctual_core::{Reading, Sleeper};
use tokio::time::{Instant, Sleep};

use crate::TokioClock;

/// How far ahead a sleep to an instant tokio cannot represent goes (tokio's "never").
const FAR_FUTURE: Duration = Duration::from_secs(86_400 * 365 * 30);

/// The [`Sleeper`] of a wheel on a [`TokioClock`]: [`tokio::time::sleep_until`] the
/// instant at which the clock reads the wheel's next turn.
///
/// [`driver`](crate::driver) makes one for you.
///
/// # Precision
///
/// Never early: the reading becomes the exact tokio instant, which tokio's timer rounds
/// *up* to its 1 ms resolution (so up to about 1 ms late).
///
/// # Panics
///
/// Its sleeps panic outside a tokio runtime or on one without
/// [`enable_time`](tokio::runtime::Builder::enable_time), as [`tokio::time::sleep_until`].
#[derive(Debug, Clone, Copy)]
pub struct TokioSleeper {
    clock: TokioClock,
}

impl TokioSleeper {
    /// A sleeper for a wheel on `clock`.
    pub const fn new(clock: &TokioClock) -> Self {
        Self { clock: *clock }
    }

    /// The tokio instant at which the clock reads `at`, or 30 years ahead (tokio's
    /// "never") if that cannot be represented.
    pub fn instant_of(&self, at: Reading) -> Instant {
        self.clock.instant_of(at).unwrap_or_else(|| {
            // Waking early only costs a spurious turn: the wheel reads the clock again.
            let origin = self.clock.origin();
            origin.checked_add(FAR_FUTURE).unwrap_or(origin)
        })
    }
}

impl Sleeper for TokioSleeper {
    type Sleep = Sleep;

    fn sleep_until(&mut self, at: Reading) -> Sleep {
        tokio::time::sleep_until(self.instant_of(at))
    }
}

#[cfg(test)]
mod tests {
    use punctual_core::Clock;

    use super::*;

    /// Readings off tokio's 1 ms grid, to exercise its rounding.
    const READINGS: [Duration; 8] = [
        Duration::ZERO,
        Duration::from_nanos(1),
        Duration::from_micros(300),
        Duration::from_nanos(999_999),
        Duration::from_millis(1),
        Duration::from_nanos(1_000_001),
        Duration::from_micros(2_500),
        Duration::from_millis(17),
    ];

    /// Sleeps to each reading (relative to `base`) and checks the clock then reads at least
    /// that, and at most tokio's rounding (1 ms) plus an off-grid offset (1 ms) later.
    async fn check_never_early(clock: TokioClock, base: Duration) {
        let mut sleeper = TokioSleeper::new(&clock);
        for reading in READINGS {
            let at = base + reading;
            sleeper.sleep_until(Reading::since_origin(at)).await;
            let now = clock.now();
            assert!(now >= at, "woke early: {now:?} < {at:?}");
            assert!(
                now < at.max(base) + Duration::from_millis(2),
                "woke too late: {now:?} for {at:?}"
            );
        }
    }

    #[tokio::test(start_paused = true)]
    async fn paused_never_early_on_grid() {
        let clock = TokioClock::new();
        let mut base = Duration::ZERO;
        for _ in 0..3 {
            check_never_early(clock, base).await;
            base = clock.now();
        }
    }

    #[tokio::test(start_paused = true)]
    async fn paused_never_early_off_grid() {
        // Move tokio's clock off its own millisecond grid, then make the wheel clock: the
        // wheel's readings and tokio's ticks no longer line up.
        tokio::time::advance(Duration::from_micros(400)).await;
        let clock = TokioClock::new();
        check_never_early(clock, Duration::ZERO).await;
        tokio::time::advance(Duration::from_nanos(123_457)).await;
        check_never_early(clock, clock.now()).await;
    }

    #[tokio::test]
    async fn real_time_never_early() {
        let clock = TokioClock::new();
        let mut sleeper = TokioSleeper::new(&clock);
        for reading in READINGS {
            let at = clock.now() + reading;
            sleeper.sleep_until(Reading::since_origin(at)).await;
            assert!(clock.now() >= at);
            // The std clock agrees: the tokio instant is the exact one.
            let at = Reading::since_origin(at);
            assert!(std::time::Instant::now() >= sleeper.instant_of(at).into_std());
        }
    }

    #[tokio::test(start_paused = true)]
    async fn unrepresentable_is_far_future_not_a_panic() {
        let clock = TokioClock::new();
        let mut sleeper = TokioSleeper::new(&clock);
        let far = sleeper.instant_of(Reading::END);
        assert!(far >= clock.origin() + FAR_FUTURE);
        let sleep = sleeper.sleep_until(Reading::END);
        assert_eq!(sleep.deadline(), far);
        // A reading tokio can represent is exact.
        let at = Reading::since_origin(Duration::from_nanos(1_234_567));
        assert_eq!(clock.reading_of(sleeper.instant_of(at)), at);
    }
}
