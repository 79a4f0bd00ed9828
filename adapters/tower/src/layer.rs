//! The generic layer: [`DeadlineLayer`], its service [`DeadlineService`] and its response future.

use core::fmt;
use core::future::Future;
use core::pin::Pin;
use core::task::{Context, Poll, ready};
use core::time::Duration;

use pin_project_lite::pin_project;
use punctual_core::{Elapsed, Limit, RawWheel, Reading, Sleep, WheelRef};
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
/// back-pressure shared by every request, unless [`count_readiness`](Self::count_readiness)
/// counts it.
///
/// Errors are boxed into [`BoxError`]: the inner service's own, or a [`punctual_core::Elapsed`]
/// when the deadline passed first, named after the layer ([`named`](Self::named);
/// `"request"` by default). An enclosing budget that ends earlier ends the request at its
/// instant, and the `Elapsed` is that budget's.
///
/// `W` is the wheel: `punctual::wheel::DefaultWheel` with `DeadlineLayer::new`, or a wheel of your own
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
///     .layer(DeadlineLayer::<punctual::wheel::DefaultWheel>::new(Duration::from_millis(50)).named("lookup"))
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
    /// (`punctual::wheel::DefaultWheel`: the wheel the request's default deadlines choose).
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
    /// Names the deadline: the name an `Elapsed` from this layer carries, and the name
    /// each request's outcome is reported under (completed, elapsed or dropped;
    /// `punctual::report`). Name a route's layer after the route
    /// (`route_layer` in axum) for outcomes per route. `"request"` by default.
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

    /// Counts the time spent waiting in `poll_ready` against each request's deadline, for
    /// stacks whose readiness waits (a rate limit, a reconnect, a full buffer). Off by
    /// default, as in tower's `Timeout`, since readiness is usually back-pressure shared
    /// by every request.
    ///
    /// The wait starts at the first `poll_ready` after the previous `call` (or the first
    /// ever). The next request's limit is what is left of its deadline after the wait.
    /// A wait that uses up the layer's own limit ends: `poll_ready` answers ready (an
    /// error there would mark the service failed for good, to a `tower::buffer::Buffer`,
    /// say), and the next call fails at once with an [`Elapsed`](punctual_core::Elapsed)
    /// named after the layer, without calling the inner service. Each clone of the service
    /// waits on its own.
    ///
    /// ```
    /// use std::time::Duration;
    /// use punctual_tower::DeadlineLayer;
    /// use tower::{Layer, ServiceExt};
    ///
    /// # #[tokio::main(flavor = "current_thread", start_paused = true)]
    /// # async fn main() {
    /// /// A service that is never ready (a rate limit that never lets up).
    /// struct NeverReady;
    /// impl tower::Service<()> for NeverReady {
    ///     type Response = ();
    ///     type Error = std::convert::Infallible;
    ///     type Future = std::future::Ready<Result<(), Self::Error>>;
    ///     fn poll_ready(&mut self, _: &mut std::task::Context<'_>) -> std::task::Poll<Result<(), Self::Error>> {
    ///         std::task::Poll::Pending
    ///     }
    ///     fn call(&mut self, (): ()) -> Self::Future {
    ///         std::future::ready(Ok(()))
    ///     }
    /// }
    ///
    /// let mut svc = DeadlineLayer::<punctual::wheel::DefaultWheel>::new(Duration::from_millis(30))
    ///     .count_readiness()
    ///     .layer(NeverReady);
    /// let start = tokio::time::Instant::now();
    /// let waited = svc.oneshot(()).await.unwrap_err();
    /// assert!(waited.downcast_ref::<punctual::Elapsed>().is_some());
    /// assert_eq!(start.elapsed(), Duration::from_millis(30));
    /// # }
    /// ```
    pub fn count_readiness(mut self) -> Self {
        self.limits.count_readiness = true;
        self
    }

    /// The layer's own limit.
    pub fn limit(&self) -> Duration {
        self.limits.limit
    }
}

impl<S, W: WheelRef, T: Clone> Layer<S> for DeadlineLayer<W, T> {
    type Service = DeadlineService<S, W, T>;

    fn layer(&self, inner: S) -> Self::Service {
        DeadlineService {
            inner,
            limits: self.limits.clone(),
            waiting: None,
            waited_out: None,
        }
    }
}

/// The service [`DeadlineLayer`] makes: bounds each request of `S` by the layer's
/// deadline and budget.
#[derive(Debug)]
pub struct DeadlineService<S, W: WheelRef, T = OwnLimit> {
    inner: S,
    limits: Limits<W, T>,
    /// The wait in `poll_ready` since the last call, with
    /// [`count_readiness`](DeadlineLayer::count_readiness).
    waiting: Option<Waiting<W>>,
    /// A wait that used up the limit: the next call fails with it.
    waited_out: Option<Elapsed>,
}

impl<S: Clone, W: WheelRef, T: Clone> Clone for DeadlineService<S, W, T> {
    /// A clone waits for readiness on its own.
    fn clone(&self) -> Self {
        Self {
            inner: self.inner.clone(),
            limits: self.limits.clone(),
            waiting: None,
            waited_out: None,
        }
    }
}

/// A wait for readiness: when it started on the chosen wheel, and, once the inner service
/// was not ready, a sleep to the end of the layer's limit.
#[derive(Debug)]
struct Waiting<W: WheelRef> {
    wheel: W,
    started: Reading,
    limit: Option<Pin<Box<Sleep<'static, W>>>>,
}

impl<W: WheelRef> Waiting<W> {
    fn start(mut wheel: W) -> Self {
        wheel.choose();
        Self {
            wheel,
            started: RawWheel::now(wheel.get()),
            limit: None,
        }
    }

    fn waited(&self) -> Duration {
        RawWheel::now(self.wheel.get()).saturating_duration_since(self.started)
    }

    /// Whether the wait has used up `limit`; else the task is woken when it does.
    fn used_up(&mut self, limit: Duration, cx: &mut Context<'_>) -> bool {
        let left = limit.saturating_sub(self.waited());
        let wheel = self.wheel;
        let sleep = self
            .limit
            .get_or_insert_with(|| Box::pin(Sleep::new(wheel, Limit::After(left))));
        sleep.as_mut().poll(cx).is_ready()
    }
}

impl<S, W: WheelRef, T> DeadlineService<S, W, T> {
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

    /// Forwards to the inner service: the deadline does not cover readiness, unless the
    /// layer [counts it](DeadlineLayer::count_readiness).
    fn poll_ready(&mut self, cx: &mut Context<'_>) -> Poll<Result<(), Self::Error>> {
        if !self.limits.count_readiness {
            return self.inner.poll_ready(cx).map_err(Into::into);
        }
        if self.waited_out.is_some() {
            return Poll::Ready(Ok(())); // the next call fails at once
        }
        let (wheel, limit) = (self.limits.wheel, self.limits.limit);
        let waiting = self.waiting.get_or_insert_with(|| Waiting::start(wheel));
        match self.inner.poll_ready(cx) {
            // Keep the wait: the call takes its time off the request's deadline.
            Poll::Ready(Ok(())) => Poll::Ready(Ok(())),
            Poll::Ready(Err(error)) => {
                self.waiting = None;
                Poll::Ready(Err(error.into()))
            }
            Poll::Pending => {
                if !waiting.used_up(limit, cx) {
                    return Poll::Pending;
                }
                self.waiting = None;
                self.waited_out = Some(Elapsed::new(limit, Some(self.limits.name)));
                // The next request's outcome: elapsed while waiting for readiness.
                punctual_core::report_outcome(&punctual_core::Outcome::new(
                    self.limits.name,
                    punctual_core::OutcomeKind::Elapsed,
                    Some(limit),
                    limit,
                ));
                Poll::Ready(Ok(()))
            }
        }
    }

    fn call(&mut self, req: Req) -> Self::Future {
        if let Some(elapsed) = self.waited_out.take() {
            return ResponseFuture {
                inner: Admitted::Refused {
                    elapsed: Some(elapsed),
                },
            };
        }
        let waited = self.waiting.take().map_or(Duration::ZERO, |w| w.waited());
        let limit = self.limits.limit_for(&req).saturating_sub(waited);
        ResponseFuture {
            inner: self.limits.admit(limit, || self.inner.call(req)),
        }
    }
}

pin_project! {
    /// The response future of [`DeadlineService`].
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
