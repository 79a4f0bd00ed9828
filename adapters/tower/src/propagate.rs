//! The client side of deadline propagation: [`PropagateDeadlineLayer`] writes what is left
//! of the caller's budget into each outgoing request's `grpc-timeout` header.

use core::task::{Context, Poll};
use core::time::Duration;

use http::Request;
use punctual_core::{Budget, WheelRef};
use tower_layer::Layer;
use tower_service::Service;

use crate::grpc_timeout;

/// What is left of the budget in force on this thread, on `wheel`'s clock. `None` when no
/// budget is in force for deadlines on that wheel: none at all, or one on another wheel.
///
/// ```
/// use std::time::Duration;
///
/// # #[tokio::main(flavor = "current_thread", start_paused = true)]
/// # async fn main() {
/// assert_eq!(punctual_tower::remaining_budget(punctual::DefaultWheel::new()), None);
/// punctual::budget(Duration::from_secs(2), async {
///     tokio::time::sleep(Duration::from_millis(500)).await;
///     let left = punctual_tower::remaining_budget(punctual::DefaultWheel::new()).unwrap();
///     assert_eq!(left, Duration::from_millis(1500));
/// })
/// .await
/// .unwrap();
/// # }
/// ```
pub fn remaining_budget<W: WheelRef>(wheel: W) -> Option<Duration> {
    let mut wheel = wheel;
    wheel.choose();
    let budget = Budget::current()?;
    // A budget that never ends (`punctual::budget(Duration::MAX, ..)`) bounds nothing.
    if budget.at() == punctual_core::Reading::END {
        return None;
    }
    budget.remaining(&wheel)
}

/// A [`Layer`] for outgoing HTTP requests (a hyper client, a tonic channel). It sets each
/// request's `grpc-timeout` to what is left of the caller's budget, rounded down
/// ([`grpc_timeout::encode`]). A callee with a [`DeadlineLayer`](crate::DeadlineLayer) or
/// [`HttpDeadlineLayer`](crate::HttpDeadlineLayer) and `.grpc_timeout()` then stops when
/// the caller would stop waiting.
///
/// The budget is the one in force where `call` runs: in a request served under one of
/// this crate's layers, in `punctual::budget`, or in a task spawned with
/// `with_current_budget`. So put the layer in front of any `tower::buffer::Buffer`, whose
/// worker task makes the calls. On tokio's multi-thread runtime any worker finds it.
/// With no budget in force, the request goes out as it is. A `grpc-timeout` already on
/// the request that asks for less is kept.
///
/// Time on the network is not counted: the callee's clock starts when it receives the
/// request, as in every gRPC implementation.
///
/// ```
/// use std::time::Duration;
/// use punctual_tower::PropagateDeadlineLayer;
/// use tower::{ServiceBuilder, ServiceExt, service_fn};
///
/// # #[tokio::main(flavor = "current_thread", start_paused = true)]
/// # async fn main() {
/// let client = ServiceBuilder::new()
///     .layer(PropagateDeadlineLayer::<punctual::DefaultWheel>::new())
///     .service(service_fn(|req: http::Request<()>| async move {
///         Ok::<_, std::convert::Infallible>(req.headers()["grpc-timeout"].clone())
///     }));
/// let sent = punctual::budget(Duration::from_millis(300), client.oneshot(http::Request::new(())))
///     .await
///     .unwrap()
///     .unwrap();
/// assert_eq!(sent, "300000u");
/// # }
/// ```
#[derive(Debug, Clone, Copy, Default)]
pub struct PropagateDeadlineLayer<W> {
    wheel: W,
}

impl<W: WheelRef + Default> PropagateDeadlineLayer<W> {
    /// A layer reading the budget for deadlines on `W`'s default wheel
    /// (`punctual::DefaultWheel`: the one default deadlines choose).
    pub fn new() -> Self {
        Self::on(W::default())
    }
}

impl<W: WheelRef> PropagateDeadlineLayer<W> {
    /// A layer reading the budget for deadlines on `wheel`.
    pub fn on(wheel: W) -> Self {
        Self { wheel }
    }
}

impl<S, W: WheelRef> Layer<S> for PropagateDeadlineLayer<W> {
    type Service = PropagateDeadline<S, W>;

    fn layer(&self, inner: S) -> Self::Service {
        PropagateDeadline {
            inner,
            wheel: self.wheel,
        }
    }
}

/// The service [`PropagateDeadlineLayer`] makes.
#[derive(Debug, Clone, Copy)]
pub struct PropagateDeadline<S, W> {
    inner: S,
    wheel: W,
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
    W: WheelRef,
{
    type Response = S::Response;
    type Error = S::Error;
    type Future = S::Future;

    fn poll_ready(&mut self, cx: &mut Context<'_>) -> Poll<Result<(), Self::Error>> {
        self.inner.poll_ready(cx)
    }

    fn call(&mut self, mut req: Request<B>) -> Self::Future {
        if let Some(left) = remaining_budget(self.wheel) {
            grpc_timeout::write_at_most(req.headers_mut(), left);
        }
        self.inner.call(req)
    }
}
