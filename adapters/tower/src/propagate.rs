//! The client side of propagation: [`PropagateDeadlineLayer`] writes what is left of the
//! caller's budget into each outgoing request's timeout header.

use core::future::Future;
use core::pin::Pin;
use core::task::{Context, Poll};
use core::time::Duration;

use http::Request;
use pin_project_lite::pin_project;
use punctual_core::{Budget, Elapsed, Reading, WheelRef};
use tower_layer::Layer;
use tower_service::Service;

use crate::BoxError;
use crate::limits::{OrElapsed, boxed};
use crate::source::TimeoutHeader;

/// What is left of the budget in force on this thread, on `wheel`'s clock; `None` with no
/// budget in force for deadlines on that wheel.
///
/// ```
/// use std::time::Duration;
/// use punctual::wheel::DefaultWheel;
///
/// # #[tokio::main(flavor = "current_thread", start_paused = true)]
/// # async fn main() {
/// assert_eq!(punctual_tower::remaining_budget(DefaultWheel::new()), None);
/// punctual::budget(Duration::from_secs(2), async {
///     tokio::time::sleep(Duration::from_millis(500)).await;
///     let left = punctual_tower::remaining_budget(DefaultWheel::new());
///     assert_eq!(left, Some(Duration::from_millis(1500)));
/// })
/// .await
/// .unwrap();
/// # }
/// ```
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

/// A [`Layer`] for outgoing HTTP requests (a hyper client, a tonic channel): it writes
/// what is left of the caller's budget, less the [`margin`](Self::margin), rounded down,
/// into each request's `grpc-timeout` (or the header chosen with [`writes`](Self::writes)).
/// A callee whose layer reads the header stops when the caller would stop waiting.
///
/// * The budget is the one in force where `call` runs (a request served under this
///   crate's layers, `punctual::budget`, `with_current_budget`): put the layer in front
///   of a `tower::buffer::Buffer`, whose worker makes the calls.
/// * With no budget in force, the request goes out as it is; a shorter timeout already on
///   it is kept.
/// * A call with nothing left to write is not sent: the response future fails at once
///   with the budget's [`Elapsed`]. The layer never writes a zero timeout.
///
/// Errors are boxed into [`BoxError`]: the inner service's own, or that `Elapsed`.
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

    /// Takes `margin`, the network's share of each hop, off what is left before it is
    /// written (zero by default).
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
        let PropagateDeadlineLayer {
            wheel,
            margin,
            header,
        } = self.layer;
        if let Some((budget, left)) = current_budget(wheel) {
            let (sent, value) = header.encode(left.saturating_sub(margin));
            if sent.is_zero() {
                let elapsed = Some(Elapsed::budget(budget.duration(), budget.name()));
                let state = OrElapsed::Elapsed { elapsed };
                return PropagateResponseFuture { state };
            }
            header.write_at_most(req.headers_mut(), sent, value);
        }
        let state = OrElapsed::Run {
            inner: self.inner.call(req),
        };
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
