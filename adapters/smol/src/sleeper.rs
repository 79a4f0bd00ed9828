//! `AsyncIoSleeper`: the driver's sleeps, on `async_io::Timer::at`.

use core::future::Future;
use core::pin::Pin;
use core::task::{Context, Poll};

use async_io::Timer;
use punctual_core::{Reading, Sleeper, StdClock};

/// The [`Sleeper`] of a wheel on a [`StdClock`]: an [`async_io::Timer`] at the instant at
/// which the clock reads the wheel's next turn.
///
/// [`driver`](crate::driver) makes one for you. Usable from any executor: async-io's
/// reactor runs inside `async_io::block_on` (so smol's), or else on its own thread.
///
/// # Precision
///
/// Never early: the reading becomes an `Instant` at which the clock reads at least that
/// ([`StdClock::instant_of`], late by at most its [`slack`](StdClock::slack)), and an
/// async-io timer never completes before its instant. How late is up to the reactor and
/// the system: typically well under a millisecond.
#[derive(Debug, Clone, Copy)]
pub struct AsyncIoSleeper {
    clock: StdClock,
}

impl AsyncIoSleeper {
    /// A sleeper for a wheel on `clock`.
    pub fn new(clock: &StdClock) -> Self {
        Self { clock: *clock }
    }
}

impl Sleeper for AsyncIoSleeper {
    type Sleep = TimerSleep;

    fn sleep_until(&mut self, at: Reading) -> TimerSleep {
        // `None`: no `Instant` holds `at`, and the sleep never completes by itself.
        let instant = self.clock.instant_of(at);
        let timer = instant.map_or_else(Timer::never, Timer::at);
        TimerSleep { timer }
    }
}

/// The sleep of an [`AsyncIoSleeper`]: an [`async_io::Timer`] that completes with `()`.
#[derive(Debug)]
#[must_use = "futures do nothing unless you `.await` or poll them"]
pub struct TimerSleep {
    timer: Timer,
}

impl TimerSleep {
    /// The timer underneath.
    pub fn timer(&self) -> &Timer {
        &self.timer
    }
}

impl Future for TimerSleep {
    type Output = ();

    fn poll(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<()> {
        Pin::new(&mut self.timer).poll(cx).map(drop)
    }
}

#[cfg(test)]
mod tests {
    use core::task::Waker;
    use core::time::Duration;

    use punctual_core::Clock;

    use super::*;

    const READINGS: [Duration; 7] = [
        Duration::ZERO,
        Duration::from_nanos(1),
        Duration::from_micros(300),
        Duration::from_nanos(999_999),
        Duration::from_millis(1),
        Duration::from_nanos(1_000_001),
        Duration::from_micros(2_500),
    ];

    #[test]
    fn conversions_late_by_slack_only() {
        let clock = StdClock::new();
        for reading in READINGS {
            let instant = clock.instant_of(Reading::since_origin(reading)).unwrap();
            assert_eq!(
                clock.reading_of(instant),
                Reading::since_origin(reading + clock.slack())
            );
        }
        assert_eq!(clock.instant_of(Reading::END), None);
    }

    #[test]
    fn never_early() {
        let clock = StdClock::new();
        let mut sleeper = AsyncIoSleeper::new(&clock);
        smol::block_on(async {
            for _ in 0..3 {
                let base = clock.now();
                for reading in READINGS {
                    let at = base + reading;
                    sleeper.sleep_until(Reading::since_origin(at)).await;
                    let now = clock.now();
                    assert!(now >= at, "woke early: {now:?} < {at:?}");
                }
            }
        });
    }

    #[test]
    fn never_early_on_async_io_thread() {
        // Without `async_io::block_on`, the reactor runs on async-io's own thread.
        let clock = StdClock::new();
        let mut sleeper = AsyncIoSleeper::new(&clock);
        let at = clock.now() + Duration::from_micros(1_500);
        std::thread::scope(|s| {
            s.spawn(|| {
                smol::future::block_on(sleeper.sleep_until(Reading::since_origin(at)));
            });
        });
        assert!(clock.now() >= at);
    }

    #[test]
    fn unrepresentable_never_completes() {
        let clock = StdClock::new();
        let mut sleeper = AsyncIoSleeper::new(&clock);
        let mut sleep = sleeper.sleep_until(Reading::END);
        assert!(!sleep.timer().will_fire());
        let mut cx = Context::from_waker(Waker::noop());
        assert!(Pin::new(&mut sleep).poll(&mut cx).is_pending());
    }
}
