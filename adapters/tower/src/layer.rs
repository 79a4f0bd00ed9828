//! The generic layer: [`DeadlineLayer`], its service and its response future.

use core::fmt;
use core::future::Future;
use core::pin::Pin;
use core::task::{Context, Poll};
use core::time::Duration;

use pin_project_lite::pin_project;
use punctual_core::{
    Budget, Elapsed, Limit, Outcome, OutcomeKind, RawWheel, Reading, Sleep, WheelRef,
};
use tower_layer::Layer;
use tower_service::Service;

use crate::BoxError;
use crate::admission::{Admission, Admitted, OrElapsed, boxed, shared_builders};
use crate::headers::{OwnLimit, RequestTimeout};

/// A [`Layer`] that bounds each request's response future, from its first poll, by a
/// deadline, and runs it under a budget of the same length on the wheel `W` (see the
/// crate example). Errors are boxed into [`BoxError`]: the inner service's own, or an
/// [`Elapsed`] named after the layer (or an enclosing budget's, when that ends first).
#[derive(Debug, Clone, Copy)]
pub struct DeadlineLayer<W, T = OwnLimit> {
    admission: Admission<W>,
    source: T,
    count_readiness: bool,
}

shared_builders!(DeadlineLayer => DeadlineService {
    count_readiness: false
});

impl<W: WheelRef, T> DeadlineLayer<W, T> {
    /// Counts the wait in `poll_ready` since the previous `call` against the next
    /// request's deadline (off by default). A wait that uses up the limit ends ready, and
    /// the next call fails at once with an [`Elapsed`], the inner service not called. Each
    /// clone waits on its own.
    pub fn count_readiness(mut self) -> Self {
        self.count_readiness = true;
        self
    }
}

impl<S, W: WheelRef, T: Clone> Layer<S> for DeadlineLayer<W, T> {
    type Service = DeadlineService<S, W, T>;

    fn layer(&self, inner: S) -> Self::Service {
        DeadlineService {
            inner,
            layer: self.clone(),
            waiting: None,
            waited_out: None,
        }
    }
}

/// The service [`DeadlineLayer`] makes.
#[derive(Debug)]
pub struct DeadlineService<S, W: WheelRef, T = OwnLimit> {
    inner: S,
    layer: DeadlineLayer<W, T>,
    // With `count_readiness`: the wait since the last call, or the limit it used up.
    waiting: Option<Waiting<W>>,
    waited_out: Option<Elapsed>,
}

impl<S: Clone, W: WheelRef, T: Clone> Clone for DeadlineService<S, W, T> {
    /// A clone waits for readiness on its own.
    fn clone(&self) -> Self {
        self.layer.layer(self.inner.clone())
    }
}

/// A wait for readiness: its start, and once not ready, a sleep to the limit's end.
#[derive(Debug)]
struct Waiting<W: WheelRef> {
    wheel: W,
    started: Reading,
    limit: Option<Pin<Box<Sleep<'static, W>>>>,
}

impl<W: WheelRef> Waiting<W> {
    fn start(mut wheel: W) -> Self {
        wheel.choose();
        let started = RawWheel::now(wheel.get());
        Self {
            wheel,
            started,
            limit: None,
        }
    }

    fn waited(&self) -> Duration {
        RawWheel::now(self.wheel.get()).saturating_duration_since(self.started)
    }

    /// Whether the wait has used up `limit`; else the task is woken when it does.
    fn used_up(&mut self, limit: Duration, cx: &mut Context<'_>) -> bool {
        let (wheel, left) = (self.wheel, limit.saturating_sub(self.waited()));
        let start = || Box::pin(Sleep::new(wheel, Limit::After(left)));
        let sleep = self.limit.get_or_insert_with(start);
        sleep.as_mut().poll(cx).is_ready()
    }
}

impl<S, W, T, Req> Service<Req> for DeadlineService<S, W, T>
where
    S: Service<Req>,
    S::Error: Into<BoxError>,
    W: WheelRef,
    T: RequestTimeout<Req>,
{
    type Response = S::Response;
    type Error = BoxError;
    type Future = ResponseFuture<S::Future, W>;

    fn poll_ready(&mut self, cx: &mut Context<'_>) -> Poll<Result<(), Self::Error>> {
        if !self.layer.count_readiness {
            return self.inner.poll_ready(cx).map_err(Into::into);
        }
        if self.waited_out.is_some() {
            return Poll::Ready(Ok(())); // the next call fails at once
        }
        let Admission { wheel, limit, .. } = self.layer.admission;
        let waiting = self.waiting.get_or_insert_with(|| Waiting::start(wheel));
        match self.inner.poll_ready(cx) {
            // Keep the wait: the call takes it off the request's deadline.
            Poll::Ready(Ok(())) => return Poll::Ready(Ok(())),
            Poll::Ready(Err(error)) => {
                self.waiting = None;
                return Poll::Ready(Err(error.into()));
            }
            Poll::Pending if !waiting.used_up(limit, cx) => return Poll::Pending,
            Poll::Pending => {}
        }
        self.waiting = None;
        let name = self.layer.admission.name;
        self.waited_out = Some(Elapsed::new(limit, Some(name)));
        // The next request's outcome: elapsed while waiting for readiness.
        let outcome = Outcome::new(name, OutcomeKind::Elapsed, Some(limit), limit);
        punctual_core::report_outcome(&outcome);
        Poll::Ready(Ok(()))
    }

    fn call(&mut self, req: Req) -> Self::Future {
        if let elapsed @ Some(_) = self.waited_out.take() {
            let inner = OrElapsed::Elapsed { elapsed };
            return ResponseFuture { inner };
        }
        let waited = self.waiting.take().map_or(Duration::ZERO, |w| w.waited());
        let admission = &self.layer.admission;
        let limit = admission.limit_for(&self.layer.source, &req);
        let limit = limit.saturating_sub(waited);
        let inner = admission.admit(admission.name, limit, || self.inner.call(req));
        ResponseFuture { inner }
    }
}

pin_project! {
    /// The response future of [`DeadlineService`].
    ///
    /// # Errors
    ///
    /// The inner service's error, or an [`Elapsed`] (at once for a refused request), boxed.
    ///
    /// # Cancel safety
    ///
    /// Dropping it, or the deadline passing, drops the inner response future.
    #[must_use = "futures do nothing unless you `.await` or poll them"]
    pub struct ResponseFuture<F, W: WheelRef> {
        #[pin]
        inner: Admitted<F, W>,
    }
}

impl<F: Future, W: WheelRef> ResponseFuture<F, W> {
    /// The budget the request runs under, once the first poll has started it.
    pub fn budget(&self) -> Option<Budget> {
        self.inner.budget()
    }
}

impl<F, R, E, W> Future for ResponseFuture<F, W>
where
    F: Future<Output = Result<R, E>>,
    E: Into<BoxError>,
    W: WheelRef,
{
    type Output = Result<R, BoxError>;

    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Self::Output> {
        let result = self.project().inner.poll(cx);
        result.map(|result| boxed(result.and_then(|result| result)))
    }
}

impl<F, W: WheelRef> fmt::Debug for ResponseFuture<F, W> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_tuple("ResponseFuture").field(&self.inner).finish()
    }
}
