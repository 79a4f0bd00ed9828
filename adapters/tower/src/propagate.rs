//! The budget in force, for the next hop: [`PropagateDeadlineLayer`] writes what is left
//! of it into each outgoing request, [`WithinBudget`] stops retries once it is spent, and
//! `into_status` gives a client the gRPC status for an error.

use core::future::Future;
use core::pin::Pin;
use core::task::{Context, Poll};
use core::time::Duration;

use http::Request;
use pin_project_lite::pin_project;
use punctual_core::{Budget, Elapsed, Reading, WheelRef};
use tower::retry::Policy;
use tower_layer::Layer;
use tower_service::Service;

use crate::BoxError;
use crate::admission::{OrElapsed, boxed};
use crate::headers::TimeoutHeader;

/// What is left of the budget in force on this thread, on `wheel`'s clock; `None` with no
/// budget in force for deadlines on that wheel.
pub fn remaining_budget<W: WheelRef>(wheel: W) -> Option<Duration> {
    current_budget(wheel).map(|(_, left)| left)
}

/// The budget in force for deadlines on `wheel`, and what is left of it.
fn current_budget<W: WheelRef>(mut wheel: W) -> Option<(Budget, Duration)> {
    wheel.choose();
    let budget = Budget::current()?;
    // A budget that never ends (`punctual::budget(Duration::MAX, ..)`) bounds nothing.
    if budget.at() == Reading::END {
        return None;
    }
    Some((budget, budget.remaining(&wheel)?))
}

/// A [`Layer`] for outgoing HTTP requests: it writes what is left of the budget in force
/// where `call` runs (in front of a `tower::buffer::Buffer`), less the
/// [`margin`](Self::margin), rounded down, into each request's `grpc-timeout` (or
/// [`writes`](Self::writes)' header), unless the request asks for less. With nothing left,
/// the call fails at once with the budget's [`Elapsed`], boxed into [`BoxError`].
///
/// ```
/// use std::time::Duration;
/// use punctual_tower::PropagateDeadlineLayer;
/// use tower::{ServiceBuilder, ServiceExt, service_fn};
///
/// # #[tokio::main(flavor = "current_thread", start_paused = true)]
/// # async fn main() {
/// let client = ServiceBuilder::new()
///     .layer(PropagateDeadlineLayer::<punctual::wheel::DefaultWheel>::new().margin(Duration::from_millis(20)))
///     .service(service_fn(|req: http::Request<()>| async move {
///         Ok::<_, std::convert::Infallible>(req.headers()["grpc-timeout"].clone())
///     }));
/// let call = |ms| punctual::budget(Duration::from_millis(ms), client.clone().oneshot(http::Request::new(())));
/// assert_eq!(call(300).await.unwrap().unwrap(), "280000u");
/// // 15 ms left, less the 20 ms margin: nothing to send, so the call fails at once.
/// let late = call(15).await.unwrap().unwrap_err();
/// assert!(late.downcast_ref::<punctual::Elapsed>().unwrap().is_budget());
/// # }
/// ```
#[derive(Debug, Clone, Copy, Default)]
pub struct PropagateDeadlineLayer<W> {
    wheel: W,
    margin: Duration,
    header: TimeoutHeader,
}

impl<W: WheelRef + Default> PropagateDeadlineLayer<W> {
    /// A layer reading the budget for deadlines on `W`'s default wheel.
    pub fn new() -> Self {
        Self::on(W::default())
    }
}

impl<W: WheelRef> PropagateDeadlineLayer<W> {
    /// A layer reading the budget for deadlines on `wheel`.
    pub fn on(wheel: W) -> Self {
        Self {
            wheel,
            margin: Duration::ZERO,
            header: TimeoutHeader::Grpc,
        }
    }

    /// Takes `margin`, the network's share of each hop, off what is left (zero by default).
    #[must_use]
    pub fn margin(mut self, margin: Duration) -> Self {
        self.margin = margin;
        self
    }

    /// Writes `header` instead of `grpc-timeout`: the one the downstream reads.
    #[must_use]
    pub fn writes(mut self, header: TimeoutHeader) -> Self {
        self.header = header;
        self
    }
}

impl<S, W: WheelRef> Layer<S> for PropagateDeadlineLayer<W> {
    type Service = PropagateDeadline<S, W>;

    fn layer(&self, inner: S) -> Self::Service {
        PropagateDeadline {
            inner,
            layer: *self,
        }
    }
}

/// The service [`PropagateDeadlineLayer`] makes.
#[derive(Debug, Clone, Copy)]
pub struct PropagateDeadline<S, W> {
    inner: S,
    layer: PropagateDeadlineLayer<W>,
}

impl<S, W> PropagateDeadline<S, W> {
    /// The inner service.
    pub fn get_ref(&self) -> &S {
        &self.inner
    }

    /// The inner service, unwrapped.
    pub fn into_inner(self) -> S {
        self.inner
    }
}

impl<S, W, B> Service<Request<B>> for PropagateDeadline<S, W>
where
    S: Service<Request<B>>,
    S::Error: Into<BoxError>,
    W: WheelRef,
{
    type Response = S::Response;
    type Error = BoxError;
    type Future = PropagateResponseFuture<S::Future>;

    fn poll_ready(&mut self, cx: &mut Context<'_>) -> Poll<Result<(), Self::Error>> {
        self.inner.poll_ready(cx).map_err(Into::into)
    }

    fn call(&mut self, mut req: Request<B>) -> Self::Future {
        let layer = self.layer;
        if let Some((budget, left)) = current_budget(layer.wheel) {
            let left = left.saturating_sub(layer.margin);
            if !layer.header.write_at_most(req.headers_mut(), left) {
                let elapsed = Some(Elapsed::budget(budget.duration(), budget.name()));
                let state = OrElapsed::Elapsed { elapsed };
                return PropagateResponseFuture { state };
            }
        }
        let inner = self.inner.call(req);
        let state = OrElapsed::Run { inner };
        PropagateResponseFuture { state }
    }
}

pin_project! {
    /// The response future of [`PropagateDeadline`].
    #[derive(Debug)]
    #[must_use = "futures do nothing unless you `.await` or poll them"]
    pub struct PropagateResponseFuture<F> {
        #[pin]
        state: OrElapsed<F>,
    }
}

impl<F, R, E> Future for PropagateResponseFuture<F>
where
    F: Future<Output = Result<R, E>>,
    E: Into<BoxError>,
{
    type Output = Result<R, BoxError>;

    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Self::Output> {
        self.project().state.poll(cx).map(boxed)
    }
}

/// Wraps a `tower::retry` [`Policy`] so that nothing is retried once the budget in force
/// is spent (attempts would fail at once, and a retry on that error would spin): with a
/// [`DeadlineLayer`](crate::DeadlineLayer) inside the retry, a limit per attempt, and one
/// budget over them all.
#[derive(Debug, Clone, Copy)]
pub struct WithinBudget<P, W> {
    policy: P,
    wheel: W,
}

impl<P, W: WheelRef> WithinBudget<P, W> {
    /// `policy`, stopped by the budget for deadlines on `W`'s default wheel.
    pub fn new(policy: P) -> Self
    where
        W: Default,
    {
        Self::on(W::default(), policy)
    }

    /// `policy`, stopped by the budget for deadlines on `wheel`.
    pub fn on(wheel: W, policy: P) -> Self {
        Self { policy, wheel }
    }

    /// The wrapped policy.
    pub fn get_ref(&self) -> &P {
        &self.policy
    }
}

impl<P, W, Req, Res, E> Policy<Req, Res, E> for WithinBudget<P, W>
where
    P: Policy<Req, Res, E>,
    W: WheelRef,
{
    type Future = P::Future;

    fn retry(&mut self, req: &mut Req, result: &mut Result<Res, E>) -> Option<Self::Future> {
        if remaining_budget(self.wheel) == Some(Duration::ZERO) {
            return None; // spent
        }
        self.policy.retry(req, result)
    }

    fn clone_request(&mut self, req: &Req) -> Option<Req> {
        self.policy.clone_request(req)
    }
}

/// A middleware error as a `tonic::Status` (for a `map_err` outside the layers): an
/// [`Elapsed`] or tonic's `TimeoutExpired` in its source chain is `DEADLINE_EXCEEDED`,
/// anything else what `tonic::Status::from_error` makes of it.
#[cfg(feature = "tonic")]
pub fn into_status(error: BoxError) -> tonic::Status {
    let first: &(dyn std::error::Error + 'static) = &*error;
    for cause in core::iter::successors(Some(first), |cause| cause.source()) {
        if let Some(elapsed) = cause.downcast_ref::<Elapsed>() {
            return (*elapsed).into();
        }
        if cause.is::<tonic::TimeoutExpired>() {
            return tonic::Status::deadline_exceeded("the call's grpc-timeout passed");
        }
    }
    tonic::Status::from_error(error)
}
