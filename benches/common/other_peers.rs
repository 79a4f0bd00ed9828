//! The peers outside tokio and punctual: async-io, futures-timer, futures-time and
//! embassy-time.

#[allow(unused_imports)]
use super::*;

/// `f` raced against a timer made only once `f` is pending (what
/// `futures_lite::FutureExt::or` with an `async { Timer::after(d).await; .. }` block does).
pub(crate) struct Race<F, T, M> {
    future: F,
    make: Option<M>,
    timer: Option<T>,
}

impl<F, T, M> Race<F, T, M> {
    pub(crate) fn new(future: F, make: M) -> Self {
        let make = Some(make);
        Self {
            future,
            make,
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
            None => this
                .timer
                .insert(this.make.take().expect("polled after completion")()),
        };
        Pin::new(timer).poll(cx).map(|_| Err(()))
    }
}

timer!(
    /// `f` raced against `async_io::Timer::after(d)`.
    AsyncIo,
    |f, d| Race::new(f, move || async_io::Timer::after(d));
    fn block_on<R: Send + 'static>(fut: impl Future<Output = R> + Send + 'static) -> R {
        async_io::block_on(fut)
    }
);

timer!(
    /// `f` raced against `futures_timer::Delay::new(d)`.
    FuturesTimer,
    |f, d| Race::new(f, move || futures_timer::Delay::new(d))
);

timer!(
    /// `futures_time::future::FutureExt::timeout` (async-io underneath).
    FuturesTime,
    |f, d| futures_time::future::FutureExt::timeout(f, futures_time::time::Duration::from(d));
    fn block_on<R: Send + 'static>(fut: impl Future<Output = R> + Send + 'static) -> R {
        async_io::block_on(fut)
    }
);

timer!(
    /// `embassy_time::with_timeout` on the `std` driver (1 MHz), generic queue of 128; `d`
    /// in whole microseconds rounded up, so that the conversion never shortens it.
    Embassy,
    |f, d| {
        let micros = d.as_nanos().div_ceil(1000) as u64;
        embassy_time::with_timeout(embassy_time::Duration::from_micros(micros), f)
    }
);
