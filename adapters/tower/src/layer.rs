//! The generic layer: [`DeadlineLayer`], its service [`Deadline`] and its response future.

use core::fmt;
use core::future::Future;
use core::pin::Pin;
use core::task::{Context, Poll, ready};
use core::time::Duration;

use pin_project_lite::pin_project;
use punctual_core::WheelRef;
use tower_layer::Layer;
use tower_service::Service;

use crate::BoxError;
use crate::limits::{Admitted, Limits};
use crate::source::{GrpcTimeout, OwnLimit, RequestTimeout, TimeoutHeaders};

/// A [`Layer`] that bounds each request by a deadline and runs its handling under a
/// punctual budget of the same length. Every punctual deadline started while the response
/// future is polled ends no later than the request's.
///
/// The deadline covers the response future from its first poll, which tower's and hyper's
/// callers make right after `call`. It does not cover `poll_ready`, the service's
/// back-pressure shared by every request. Put a `tower::load_shed` or a `tower::timeout`
/// around readiness if it must be bounded too.
///
/// Errors are boxed into [`BoxError`]: the inner service's own, or a [`punctual_core::Elapsed`]
/// when the deadline passed first, named after the layer ([`named`](Self::named);
/// `"request"` by default). An enclosing budget that ends earlier ends the request at its
/// instant, and the `Elapsed` is that budget's.
///
/// `W` is the wheel: `punctual::DefaultWheel` with `DeadlineLayer::new`, or a wheel of your own
/// with `DeadlineLayer::on`. Deadlines inside respect the budget when they are on the same
/// wheel, as default deadlines are.
///
/// ```
/// use std::time::Duration;
/// use punctual::DeadlineExt;
/// use punctual_tower::DeadlineLayer;
/// use tower::{ServiceBuilder, ServiceExt, service_fn};
///
/// # #[tokio::main(flavor = "current_thread", start_paused = true)]
/// # async fn main() {
/// let svc = ServiceBuilder::new()
///     .layer(DeadlineLayer::<punctual::DefaultWheel>::new(Duration::from_millis(50)).named("lookup"))
///     .service(service_fn(|key: u32| async move {
///         // A downstream call that allows itself a second: the request's 50 ms win.
///         tokio::time::sleep(Duration::from_secs(5)).deadline(Duration::from_secs(1)).await?;
///         Ok::<_, punctual::Elapsed>(key)
///     }));
/// let err = svc.oneshot(7).await.unwrap_err();
/// let elapsed = err.downcast_ref::<punctual::Elapsed>().unwrap();
/// assert_eq!(elapsed.name(), Some("lookup"));
/// assert_eq!(elapsed.duration(), Duration::from_millis(50));
/// # }
/// ```
#[derive(Debug, Clone, Copy)]
pub struct DeadlineLayer<W, T = OwnLimit> {
    limits: Limits<W, T>,
}

impl<W: WheelRef + Default> DeadlineLayer<W> {
    /// A layer bounding each request by `limit`, on the default wheel of `W`
    /// (`punctual::DefaultWheel`: the wheel the request's default deadlines choose).
    pub fn new(limit: Duration) -> Self {
        Self::on(W::default(), limit)
    }
}

impl<W: WheelRef> DeadlineLayer<W> {
    /// A layer bounding each request by `limit` on `wheel`.
    pub fn on(wheel: W, limit: Duration) -> Self {
        Self {
            limits: Limits::new(wheel, limit, OwnLimit),
        }
    }
}

impl<W: WheelRef, T> DeadlineLayer<W, T> {
    /// Names the deadline: the name an `Elapsed` from this layer carries.
    pub fn named(mut self, name: &'static str) -> Self {
        self.limits.name = name;
        self
    }

    /// Also takes an `http::Request`'s `grpc-timeout` header when it asks for less than the
    /// layer's limit, never more. A malformed header is ignored
    /// ([`grpc_timeout::from_headers`](crate::grpc_timeout::from_headers)).
    pub fn grpc_timeout(self) -> DeadlineLayer<W, GrpcTimeout> {
        DeadlineLayer {
            limits: self.limits.with_source(GrpcTimeout),
        }
    }

    /// Also takes the shortest of an `http::Request`'s timeout headers (`grpc-timeout`,
    /// Envoy's `x-envoy-expected-rq-timeout-ms`, Connect's `connect-timeout-ms`) when it
    /// asks for less than the layer's limit, never more. Malformed ones are ignored
    /// ([`TimeoutHeaders`]).
    pub fn timeout_headers(self) -> DeadlineLayer<W, TimeoutHeaders> {
        DeadlineLayer {
            limits: self.limits.with_source(TimeoutHeaders),
        }
    }

    /// Refuses, before the inner service is called, a request whose deadline leaves less
    /// than `least`: the layer's own limit, or the shorter one the request asks for. The
    /// response future fails at once with an [`Elapsed`](punctual_core::Elapsed) of that
    /// deadline, named after the layer. Each refusal counts in the wheel's
    /// [`Stats::refused`](punctual_core::Stats::refused) and is reported by a debug-level
    /// `tracing` event. Off (zero) by default.
    ///
    /// Work that cannot finish in time is then not started at all, as Finagle's
    /// `DeadlineFilter` does.
    pub fn refuse_below(mut self, least: Duration) -> Self {
        self.limits.refuse_below = least;
        self
    }

    /// The layer's own limit.
    pub fn limit(&self) -> Duration {
        self.limits.limit
    }
}

impl<S, W: WheelRef, T: Clone> Layer<S> for DeadlineLayer<W, T> {
    type Service = Deadline<S, W, T>;

    fn layer(&self, inner: S) -> Self::Service {
        Deadline {
            inner,
            limits: self.limits.clone(),
        }
    }
}

/// The service [`DeadlineLayer`] makes: bounds each request of `S` by the layer's
/// deadline and budget.
#[derive(Debug, Clone)]
pub struct Deadline<S, W, T = OwnLimit> {
    inner: S,
    limits: Limits<W, T>,
}

impl<S, W, T> Deadline<S, W, T> {
    /// The inner service.
    pub fn get_ref(&self) -> &S {
        &self.inner
    }

    /// The inner service.
    pub fn get_mut(&mut self) -> &mut S {
        &mut self.inner
    }

    /// The inner service, unwrapped.
    pub fn into_inner(self) -> S {
        self.inner
    }
}

impl<S, W, T, Req> Service<Req> for Deadline<S, W, T>
where
    S: Service<Req>,
    S::Error: Into<BoxError>,
    W: WheelRef,
    T: RequestTimeout<Req>,
{
    type Response = S::Response;
    type Error = BoxError;
    type Future = ResponseFuture<S::Future, W>;

    /// Forwards to the inner service: the deadline does not cover readiness.
    fn poll_ready(&mut self, cx: &mut Context<'_>) -> Poll<Result<(), Self::Error>> {
        self.inner.poll_ready(cx).map_err(Into::into)
    }

    fn call(&mut self, req: Req) -> Self::Future {
        let limit = self.limits.limit_for(&req);
        ResponseFuture {
            inner: self.limits.admit(limit, || self.inner.call(req)),
        }
    }
}

pin_project! {
    /// The response future of [`Deadline`].
    ///
    /// # Errors
    ///
    /// The inner service's error, boxed; or a boxed [`punctual_core::Elapsed`] when the
    /// request's deadline (or an enclosing budget) passed first, or at once when the
    /// layer refused the request ([`refuse_below`](DeadlineLayer::refuse_below)).
    ///
    /// # Cancel safety
    ///
    /// Dropping it drops the inner response future. When the deadline passes, the inner
    /// future is dropped before the error is returned.
    #[must_use = "futures do nothing unless you `.await` or poll them"]
    pub struct ResponseFuture<F, W: WheelRef> {
        #[pin]
        inner: Admitted<F, W>,
    }
}

impl<F: Future, W: WheelRef> ResponseFuture<F, W> {
    /// The budget the request runs under, once the first poll has started it.
    pub fn budget(&self) -> Option<punctual_core::Budget> {
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
        Poll::Ready(match ready!(self.project().inner.poll(cx)) {
            Ok(Ok(response)) => Ok(response),
            Ok(Err(error)) => Err(error.into()),
            Err(elapsed) => Err(Box::new(elapsed)),
        })
    }
}

impl<F, W: WheelRef> fmt::Debug for ResponseFuture<F, W> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ResponseFuture")
            .field("inner", &self.inner)
            .finish()
    }
}
