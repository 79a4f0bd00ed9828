//! The client side of deadline propagation: [`PropagateDeadlineLayer`] writes what is left
//! of the caller's budget into each outgoing request's timeout header.

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
use crate::source::TimeoutHeader;

/// What is left of the budget in force on this thread, on `wheel`'s clock. `None` when no
/// budget is in force for deadlines on that wheel: none at all, or one on another wheel.
///
/// ```
/// use std::time::Duration;
///
/// # #[tokio::main(flavor = "current_thread", start_paused = true)]
/// # async fn main() {
/// assert_eq!(punctual_tower::remaining_budget(punctual::wheel::DefaultWheel::new()), None);
/// punctual::budget(Duration::from_secs(2), async {
///     tokio::time::sleep(Duration::from_millis(500)).await;
///     let left = punctual_tower::remaining_budget(punctual::wheel::DefaultWheel::new()).unwrap();
///     assert_eq!(left, Duration::from_millis(1500));
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

/// A [`Layer`] for outgoing HTTP requests (a hyper client, a tonic channel). It sets each
/// request's `grpc-timeout` to what is left of the caller's budget, rounded down
/// ([`grpc_timeout::encode`](crate::grpc_timeout::encode)). A callee with a [`DeadlineLayer`](crate::DeadlineLayer) or
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
/// # Margin and floor
///
/// What is written is what is left, less the [`margin`](Self::margin) (zero by default),
/// rounded down to the precision of the header ([`writes`](Self::writes)): the callee never gets more time than the caller
/// had left. Set a margin for the time a request spends on the network and in queues
/// before the callee's clock starts, which gRPC does not count. A call with nothing left
/// after the margin is not sent: its response future fails at once with the budget's
/// [`Elapsed`], and the inner service is not called: the layer never writes a zero
/// timeout. (A shorter value already on the request, zero included, is kept.)
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
///     .layer(PropagateDeadlineLayer::<punctual::wheel::DefaultWheel>::new())
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
    margin: Duration,
    header: TimeoutHeader,
}

impl<W: WheelRef + Default> PropagateDeadlineLayer<W> {
    /// A layer reading the budget for deadlines on `W`'s default wheel
    /// (`punctual::wheel::DefaultWheel`: the one default deadlines choose).
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

    /// Takes `margin` off what is left before it is written: the network's share of each
    /// hop. A call with no more than `margin` left fails at once (see "Margin and floor");
    /// with a millisecond header, one with less than `margin` and a millisecond.
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
    /// let sent = punctual::budget(Duration::from_millis(300), client.clone().oneshot(http::Request::new(())))
    ///     .await
    ///     .unwrap()
    ///     .unwrap();
    /// assert_eq!(sent, "280000u");
    ///
    /// // 15 ms left, less the 20 ms margin: nothing to send, so the call fails at once.
    /// let late = punctual::budget(Duration::from_millis(15), client.oneshot(http::Request::new(())))
    ///     .await
    ///     .unwrap()
    ///     .unwrap_err();
    /// assert!(late.downcast_ref::<punctual::Elapsed>().unwrap().is_budget());
    /// # }
    /// ```
    #[must_use]
    pub fn margin(mut self, margin: Duration) -> Self {
        self.margin = margin;
        self
    }

    /// Writes the remaining budget into `header` instead of `grpc-timeout`: the one the
    /// downstream reads (Envoy's or Connect's, in whole milliseconds, rounded down).
    ///
    /// ```
    /// use std::time::Duration;
    /// use punctual_tower::{PropagateDeadlineLayer, TimeoutHeader};
    /// use tower::{ServiceBuilder, ServiceExt, service_fn};
    ///
    /// # #[tokio::main(flavor = "current_thread", start_paused = true)]
    /// # async fn main() {
    /// let client = ServiceBuilder::new()
    ///     .layer(PropagateDeadlineLayer::<punctual::wheel::DefaultWheel>::new().writes(TimeoutHeader::Connect))
    ///     .service(service_fn(|req: http::Request<()>| async move {
    ///         Ok::<_, std::convert::Infallible>(req.headers()["connect-timeout-ms"].clone())
    ///     }));
    /// let sent = punctual::budget(Duration::from_micros(300_900), client.oneshot(http::Request::new(())))
    ///     .await
    ///     .unwrap()
    ///     .unwrap();
    /// assert_eq!(sent, "300");
    /// # }
    /// ```
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
            wheel: self.wheel,
            margin: self.margin,
            header: self.header,
        }
    }
}

/// The service [`PropagateDeadlineLayer`] makes.
#[derive(Debug, Clone, Copy)]
pub struct PropagateDeadline<S, W> {
    inner: S,
    wheel: W,
    margin: Duration,
    header: TimeoutHeader,
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
        if let Some((budget, left)) = current_budget(self.wheel) {
            let sent = self.header.round_down(left.saturating_sub(self.margin));
            if sent.is_zero() {
                let elapsed = Elapsed::budget(budget.duration(), budget.name());
                let state = Sent::Spent {
                    elapsed: Some(elapsed),
                };
                return PropagateResponseFuture { state };
            }
            self.header.write_at_most(req.headers_mut(), sent);
        }
        let state = Sent::Called {
            inner: self.inner.call(req),
        };
        PropagateResponseFuture { state }
    }
}

pin_project! {
    /// The response future of [`PropagateDeadline`]: the inner service's, or the budget's
    /// `Elapsed` at once for a call that had nothing left to send.
    #[derive(Debug)]
    #[must_use = "futures do nothing unless you `.await` or poll them"]
    pub struct PropagateResponseFuture<F> {
        #[pin]
        state: Sent<F>,
    }
}

pin_project! {
    /// Whether the request went out.
    #[project = SentProj]
    #[derive(Debug)]
    enum Sent<F> {
        Called { #[pin] inner: F },
        Spent { elapsed: Option<Elapsed> },
    }
}

impl<F, R, E> Future for PropagateResponseFuture<F>
where
    F: Future<Output = Result<R, E>>,
    E: Into<BoxError>,
{
    type Output = Result<R, BoxError>;

    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Self::Output> {
        match self.project().state.project() {
            SentProj::Called { inner } => inner.poll(cx).map_err(Into::into),
            SentProj::Spent { elapsed } => {
                let elapsed = elapsed
                    .take()
                    .expect("`PropagateResponseFuture` polled after completion");
                Poll::Ready(Err(Box::new(elapsed)))
            }
        }
    }
}
