//! The other peers: async-io, futures-timer, futures-time and embassy-time.

#[allow(unused_imports)]
use super::*;

/// `f` raced against a timer that is made only once `f` is pending (what
/// `futures_lite::FutureExt::or` with an `async { Timer::after(d).await; .. }` block does).
pub(crate) struct Race<F, T, M> {
    future: F,
    make: Option<M>,
    timer: Option<T>,
}

impl<F, T, M> Race<F, T, M> {
    pub(crate) fn new(future: F, make: M) -> Self {
        Self {
            future,
            make: Some(make),
            timer: None,
        }
    }
}

impl<F, T, M> Future for Race<F, T, M>
where
    F: Future + Unpin,
    T: Future + Unpin,
    M: FnOnce() -> T + Unpin,
{
    type Output = Result<F::Output, ()>;

    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Self::Output> {
        let this = self.get_mut();
        if let Poll::Ready(output) = Pin::new(&mut this.future).poll(cx) {
            return Poll::Ready(Ok(output));
        }
        let timer = match &mut this.timer {
            Some(timer) => timer,
            None => {
                let make = this.make.take().expect("Race polled after completion");
                this.timer.insert(make())
            }
        };
        Pin::new(timer).poll(cx).map(|_| Err(()))
    }
}

/// An `async_io::Timer` race.
pub(crate) struct AsyncIoRace;

impl Timeouts for AsyncIoRace {
    fn bound<F: Future + Unpin + Send + 'static>(
        f: F,
        d: Duration,
    ) -> impl Future + Send + 'static {
        Race::new(f, move || async_io::Timer::after(d))
    }

    fn timed_out<F: Future + Unpin + Send + 'static>(
        f: F,
        d: Duration,
    ) -> impl Future<Output = bool> + Send + 'static {
        async move {
            Race::new(f, move || async_io::Timer::after(d))
                .await
                .is_err()
        }
    }

    fn block_on<R: Send + 'static>(fut: impl Future<Output = R> + Send + 'static) -> R {
        async_io::block_on(fut)
    }
}

/// A `futures_timer::Delay` race.
pub(crate) struct FuturesTimerRace;

impl Timeouts for FuturesTimerRace {
    fn bound<F: Future + Unpin + Send + 'static>(
        f: F,
        d: Duration,
    ) -> impl Future + Send + 'static {
        Race::new(f, move || futures_timer::Delay::new(d))
    }

    fn timed_out<F: Future + Unpin + Send + 'static>(
        f: F,
        d: Duration,
    ) -> impl Future<Output = bool> + Send + 'static {
        async move {
            Race::new(f, move || futures_timer::Delay::new(d))
                .await
                .is_err()
        }
    }
}

/// `futures_time::future::FutureExt::timeout`.
pub(crate) struct FuturesTimeTimeout;

impl Timeouts for FuturesTimeTimeout {
    fn bound<F: Future + Unpin + Send + 'static>(
        f: F,
        d: Duration,
    ) -> impl Future + Send + 'static {
        futures_time::future::FutureExt::timeout(f, futures_time::time::Duration::from(d))
    }

    fn timed_out<F: Future + Unpin + Send + 'static>(
        f: F,
        d: Duration,
    ) -> impl Future<Output = bool> + Send + 'static {
        async move {
            futures_time::future::FutureExt::timeout(f, futures_time::time::Duration::from(d))
                .await
                .is_err()
        }
    }

    fn block_on<R: Send + 'static>(fut: impl Future<Output = R> + Send + 'static) -> R {
        async_io::block_on(fut)
    }
}

/// `embassy_time::with_timeout` on the `std` driver (1 MHz) with a generic queue.
pub(crate) struct EmbassyTimeout;

/// `d` in embassy's whole microseconds, rounded up (so that the conversion itself never
/// shortens a deadline).
fn embassy_duration(d: Duration) -> embassy_time::Duration {
    embassy_time::Duration::from_micros(d.as_nanos().div_ceil(1000) as u64)
}

impl Timeouts for EmbassyTimeout {
    fn bound<F: Future + Unpin + Send + 'static>(
        f: F,
        d: Duration,
    ) -> impl Future + Send + 'static {
        embassy_time::with_timeout(embassy_duration(d), f)
    }

    fn timed_out<F: Future + Unpin + Send + 'static>(
        f: F,
        d: Duration,
    ) -> impl Future<Output = bool> + Send + 'static {
        async move {
            embassy_time::with_timeout(embassy_duration(d), f)
                .await
                .is_err()
        }
    }
}
