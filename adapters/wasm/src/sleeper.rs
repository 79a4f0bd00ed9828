//! `TimeoutSleeper`: the driver's sleeps, on the host's `setTimeout`.
//!
//! * A sleep completes only once its clock reads its time (a timer that fired early is set
//!   again); it holds at most one timer, which dropping it clears.
//! * A timer waits the time left rounded up to a millisecond, at most [`MAX_TIMEOUT`].
//! * A timer shorter than the clamp of nested timers is set after a [`Hop`].

use core::future::Future;
use core::pin::Pin;
use core::task::{Context, Poll};
use core::time::Duration;

use gloo_timers::future::TimeoutFuture;
use punctual_core::{Clock, Reading, Sleeper};

use crate::hop::{CLAMPED_BELOW, Hop};

/// The longest wait of one `setTimeout` (hosts take a longer one as zero): 2<sup>31</sup>
/// − 1 ms, about 24.8 days. A longer sleep waits this, then sets a timer again.
pub const MAX_TIMEOUT: Duration = Duration::from_millis(i32::MAX as u64);

/// The [`Sleeper`] of a wheel whose clock runs at the host's pace ([`HostClock`], or a
/// clock that reads it): a `setTimeout` for the time left. [`driver`](crate::driver)
/// makes one for you.
///
/// Never early; how late is up to the host's timers (see the crate docs).
///
/// [`HostClock`]: crate::HostClock
#[derive(Debug, Clone, Copy, Default)]
pub struct TimeoutSleeper<C> {
    clock: C,
}

impl<C: Clock + Clone> TimeoutSleeper<C> {
    /// A sleeper for a wheel on `clock`.
    pub const fn new(clock: C) -> Self {
        Self { clock }
    }
}

impl<C: Clock + Clone> Sleeper for TimeoutSleeper<C> {
    type Sleep = TimeoutSleep<C>;

    fn sleep_until(&mut self, at: Reading) -> TimeoutSleep<C> {
        TimeoutSleep {
            clock: self.clock.clone(),
            at,
            wait: Wait::Idle,
        }
    }
}

/// The sleep of a [`TimeoutSleeper`]: completes once the clock reads its time.
///
/// # Cancel safety
///
/// Dropping it clears its timer.
#[derive(Debug)]
#[must_use = "futures do nothing unless you `.await` or poll them"]
pub struct TimeoutSleep<C> {
    clock: C,
    at: Reading,
    wait: Wait,
}

/// What a sleep waits on.
#[derive(Debug)]
enum Wait {
    /// Nothing yet, or a timer that fired before the clock read the sleep's time.
    Idle,
    /// A hop out of nested timers, before a short timer.
    Hop(Hop),
    /// The hop is done (or the host has none): set the timer now.
    Hopped,
    Timer(TimeoutFuture),
}

impl<C> TimeoutSleep<C> {
    /// The reading this sleep completes at.
    pub fn at(&self) -> Reading {
        self.at
    }
}

// Nothing in it is pinned: the clock is only read, the hop and the timer are `Unpin`.
impl<C> Unpin for TimeoutSleep<C> {}

impl<C: Clock> Future for TimeoutSleep<C> {
    type Output = ();

    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<()> {
        let this = self.get_mut();
        loop {
            let now = Reading::since_origin(this.clock.now());
            if now >= this.at {
                this.wait = Wait::Idle;
                return Poll::Ready(());
            }
            let millis = timeout_millis(this.at.saturating_duration_since(now));
            match &mut this.wait {
                Wait::Idle if millis < CLAMPED_BELOW => {
                    this.wait = Hop::new().map_or(Wait::Hopped, Wait::Hop);
                }
                Wait::Idle | Wait::Hopped => this.wait = Wait::Timer(TimeoutFuture::new(millis)),
                Wait::Hop(hop) => match Pin::new(hop).poll(cx) {
                    Poll::Ready(()) => this.wait = Wait::Hopped,
                    Poll::Pending => return Poll::Pending,
                },
                Wait::Timer(timer) => match Pin::new(timer).poll(cx) {
                    // Fired before the clock reads `at` (a host that fires early, or a
                    // wait cut to `MAX_TIMEOUT`): set a timer for the rest.
                    Poll::Ready(()) => this.wait = Wait::Idle,
                    Poll::Pending => return Poll::Pending,
                },
            }
        }
    }
}

/// The `setTimeout` delay for `left`: whole milliseconds rounded up, at most
/// [`MAX_TIMEOUT`], at least 1 ms for any time left.
pub(crate) fn timeout_millis(left: Duration) -> u32 {
    // At most `i32::MAX`, as `MAX_TIMEOUT` is: the cast is exact.
    left.min(MAX_TIMEOUT).as_nanos().div_ceil(1_000_000) as u32
}

#[cfg(test)]
mod tests {
    use core::time::Duration;

    #[cfg(target_family = "wasm")]
    use wasm_bindgen_test::wasm_bindgen_test as test;

    use super::{MAX_TIMEOUT, timeout_millis};

    #[test]
    fn millis_round_up() {
        assert_eq!(timeout_millis(Duration::from_nanos(1)), 1);
        assert_eq!(timeout_millis(Duration::from_millis(1)), 1);
        assert_eq!(timeout_millis(Duration::from_nanos(1_000_001)), 2);
        assert_eq!(timeout_millis(Duration::from_micros(2_500)), 3);
        assert_eq!(timeout_millis(Duration::from_secs(3)), 3_000);
    }

    #[test]
    fn millis_stay_within_max_timeout() {
        let max = i32::MAX as u32;
        assert_eq!(timeout_millis(MAX_TIMEOUT), max);
        assert_eq!(timeout_millis(MAX_TIMEOUT + Duration::from_nanos(1)), max);
        assert_eq!(timeout_millis(Duration::from_secs(40 * 86_400)), max);
        assert_eq!(timeout_millis(Duration::MAX), max);
    }
}
