//! [`HyperTimer`]: `hyper::rt::Timer` on a punctual wheel. hyper's instants become spans
//! from now, which a sleep counts from its first poll: never earlier.

use core::future::Future;
use core::pin::Pin;
use core::task::{Context, Poll};
use core::time::Duration;
use std::time::Instant;

use hyper::rt::{Sleep, Timer};
use pin_project_lite::pin_project;
use punctual_core::{Limit, WheelRef};

/// `hyper::rt::Timer` on the wheel `W` (`punctual::wheel::DefaultWheel` for the default wheel).
///
/// ```
/// use std::time::Duration;
/// use punctual_tower::HyperTimer;
///
/// let timer = HyperTimer::<punctual::wheel::DefaultWheel>::new();
/// let _server = hyper::server::conn::http1::Builder::new()
///     .timer(timer)
///     .header_read_timeout(Duration::from_secs(5));
/// ```
#[derive(Debug, Clone, Copy, Default)]
pub struct HyperTimer<W> {
    wheel: W,
}

impl<W: WheelRef + Default> HyperTimer<W> {
    /// A timer on `W`'s default wheel.
    pub fn new() -> Self {
        Self::on(W::default())
    }
}

impl<W: WheelRef> HyperTimer<W> {
    /// A timer on `wheel`.
    pub fn on(wheel: W) -> Self {
        Self { wheel }
    }
}

impl<W> Timer for HyperTimer<W>
where
    W: WheelRef + Send + Sync + 'static,
    punctual_core::Sleep<'static, W>: Send + Sync,
{
    fn sleep(&self, duration: Duration) -> Pin<Box<dyn Sleep>> {
        let inner = punctual_core::Sleep::new(self.wheel, Limit::After(duration));
        Box::pin(HyperSleep { inner })
    }

    fn sleep_until(&self, deadline: Instant) -> Pin<Box<dyn Sleep>> {
        self.sleep(deadline.saturating_duration_since(self.now()))
    }

    /// Resets a sleep of this timer in place (a new wheel entry), another timer's anew.
    fn reset(&self, sleep: &mut Pin<Box<dyn Sleep>>, new_deadline: Instant) {
        let span = Limit::After(new_deadline.saturating_duration_since(self.now()));
        let inner = punctual_core::Sleep::new(self.wheel, span);
        match sleep.as_mut().downcast_mut_pin::<HyperSleep<W>>() {
            Some(mut mine) => mine.set(HyperSleep { inner }),
            None => *sleep = Box::pin(HyperSleep { inner }),
        }
    }
}

pin_project! {
    /// A sleep of [`HyperTimer`]: a punctual [`Sleep`](punctual_core::Sleep) for hyper.
    #[derive(Debug)]
    struct HyperSleep<W: WheelRef> {
        #[pin]
        inner: punctual_core::Sleep<'static, W>,
    }
}

impl<W: WheelRef> Future for HyperSleep<W> {
    type Output = ();

    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<()> {
        self.project().inner.poll(cx)
    }
}

impl<W> Sleep for HyperSleep<W>
where
    W: WheelRef + Send + Sync + 'static,
    punctual_core::Sleep<'static, W>: Send + Sync,
{
}
