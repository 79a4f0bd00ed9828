//! The HTTP flavour, for services whose error is `Infallible`: on expiry, a response.

use core::convert::Infallible;
use core::fmt;
use core::future::Future;
use core::pin::Pin;
use core::task::{Context, Poll, ready};
use core::time::Duration;

use http::{HeaderValue, Request, Response, StatusCode};
use pin_project_lite::pin_project;
use punctual_core::{Elapsed, WheelRef};
use tower_layer::Layer;
use tower_service::Service;

use crate::body::DeadlineBody;
use crate::grpc_timeout::deadline_exceeded;
use crate::limits::{Admitted, Limits};
use crate::source::{GrpcTimeout, OwnLimit, RequestTimeout, TimeoutHeaders};

/// The status a timed-out request is answered with unless another is chosen:
/// `504 Gateway Timeout`.
///
/// It is what proxies answer for an upstream that did not answer in time, and what gRPC's
/// `DEADLINE_EXCEEDED` maps to over HTTP. `408 Request Timeout` would blame a slow *client*
/// (and browsers retry it); `503 Service Unavailable` says the service is overloaded or down.
pub const DEFAULT_STATUS: StatusCode = StatusCode::GATEWAY_TIMEOUT;

/// A [`DeadlineLayer`](crate::DeadlineLayer) for HTTP services that cannot fail
/// (`Error = Infallible`), such as axum's, hyper's and tonic's servers. When a request's
/// deadline passes before its response is ready, the inner response future is dropped.
/// The client gets an empty response of [`DEFAULT_STATUS`], `504`, or the
/// [`status`](Self::status) chosen. Its extensions hold the [`Elapsed`], for logging
/// layers further out.
///
/// A gRPC request (`content-type: application/grpc...`) gets what gRPC requires instead:
/// `200 OK` with `grpc-status: 4` (`DEADLINE_EXCEEDED`) and no body.
///
/// As with the generic layer, the handling runs under a budget of the request's deadline,
/// the deadline does not cover `poll_ready`, and [`grpc_timeout`](Self::grpc_timeout)
/// takes a shorter deadline from the request.
///
/// # After the headers are sent
///
/// Once the inner service has answered, its status and headers are out. The body is then
/// bounded by the same instant: a body still streaming then ends with an `Elapsed` error
/// instead of its next frame, and the inner body is dropped. hyper turns that into an
/// aborted response: HTTP/1.1 closes the connection early, HTTP/2 resets the stream. So
/// the client sees a truncated response, never one that looks complete. A gRPC body ends
/// instead with trailers saying `grpc-status: 4`, so a gRPC client learns its call ran out
/// of time mid-stream. A body meant to outlive its request (server-sent events, a
/// download) can opt out with [`unbounded_body`](Self::unbounded_body).
///
/// ```
/// use std::convert::Infallible;
/// use std::time::Duration;
/// use punctual_tower::HttpDeadlineLayer;
/// use tower::{ServiceBuilder, ServiceExt, service_fn};
///
/// # #[tokio::main(flavor = "current_thread", start_paused = true)]
/// # async fn main() {
/// let svc = ServiceBuilder::new()
///     .layer(HttpDeadlineLayer::<punctual::wheel::DefaultWheel>::new(Duration::from_millis(100)))
///     .service(service_fn(|_req: http::Request<()>| async {
///         tokio::time::sleep(Duration::from_secs(2)).await; // a slow downstream
///         Ok::<_, Infallible>(http::Response::new(String::from("late")))
///     }));
/// let response = svc.oneshot(http::Request::new(())).await.unwrap();
/// assert_eq!(response.status(), http::StatusCode::GATEWAY_TIMEOUT);
/// assert!(response.extensions().get::<punctual::Elapsed>().is_some());
/// # }
/// ```
#[derive(Debug, Clone, Copy)]
pub struct HttpDeadlineLayer<W, T = OwnLimit> {
    limits: Limits<W, T>,
    status: StatusCode,
    bound_body: bool,
    route_name: Option<RouteName>,
}

/// A request's name from its method and URI ([`HttpDeadlineLayer::named_by`]).
pub type RouteName = fn(&http::Method, &http::Uri) -> Option<&'static str>;

impl<W: WheelRef + Default> HttpDeadlineLayer<W> {
    /// A layer bounding each request by `limit`, on the default wheel of `W`
    /// (`punctual::wheel::DefaultWheel`: the wheel the request's default deadlines choose).
    pub fn new(limit: Duration) -> Self {
        Self::on(W::default(), limit)
    }
}

impl<W: WheelRef> HttpDeadlineLayer<W> {
    /// A layer bounding each request by `limit` on `wheel`.
    pub fn on(wheel: W, limit: Duration) -> Self {
        Self {
            limits: Limits::new(wheel, limit, OwnLimit),
            status: DEFAULT_STATUS,
            bound_body: true,
            route_name: None,
        }
    }
}

impl<W: WheelRef, T> HttpDeadlineLayer<W, T> {
    /// The status of the response to a request whose deadline passed. gRPC requests get
    /// `200` with `grpc-status: 4` whatever this says.
    pub fn status(mut self, status: StatusCode) -> Self {
        self.status = status;
        self
    }

    /// Names the deadline: the name the `Elapsed` in a timed-out response carries, and the
    /// name each request's outcome is reported under (completed, elapsed or dropped;
    /// `punctual::report`). Name a route's layer after the route (`route_layer` in axum)
    /// for outcomes per route.
    pub fn named(mut self, name: &'static str) -> Self {
        self.limits.name = name;
        self
    }

    /// Names each request by `route`, from its method and URI, falling back to the
    /// layer's name when `route` returns `None`: one layer, outcomes per route. Return a
    /// few fixed names (a route's pattern, not its path: `/users/{id}`, not `/users/7`),
    /// since each name is a metrics label.
    ///
    /// ```
    /// use std::time::Duration;
    /// use punctual_tower::HttpDeadlineLayer;
    ///
    /// fn route(_: &http::Method, uri: &http::Uri) -> Option<&'static str> {
    ///     match uri.path() {
    ///         "/quote" => Some("GET /quote"),
    ///         p if p.starts_with("/users/") => Some("GET /users/{id}"),
    ///         _ => None,
    ///     }
    /// }
    /// let layer = HttpDeadlineLayer::<punctual::wheel::DefaultWheel>::new(Duration::from_secs(1)).named_by(route);
    /// # let _ = layer;
    /// ```
    pub fn named_by(mut self, route: RouteName) -> Self {
        self.route_name = Some(route);
        self
    }

    /// Answers at once, before the inner service is called, a request whose deadline
    /// leaves less than `least`: the layer's own limit, or the shorter one the request
    /// asks for. The answer is the timed-out one (the status, or gRPC's
    /// `DEADLINE_EXCEEDED`), with an [`Elapsed`] of that deadline in its extensions. Each
    /// refusal counts in the wheel's [`Stats::refused`](punctual_core::Stats::refused)
    /// and is reported by a debug-level `tracing` event. Off (zero) by default.
    ///
    /// ```
    /// use std::time::Duration;
    /// use punctual_tower::HttpDeadlineLayer;
    /// use tower::{Layer, ServiceExt, service_fn};
    ///
    /// # #[tokio::main(flavor = "current_thread", start_paused = true)]
    /// # async fn main() {
    /// let svc = HttpDeadlineLayer::<punctual::wheel::DefaultWheel>::new(Duration::from_secs(5))
    ///     .grpc_timeout()
    ///     .refuse_below(Duration::from_millis(10))
    ///     .layer(service_fn(|_: http::Request<()>| async {
    ///         unreachable!("a refused request is not handled");
    ///         #[allow(unreachable_code)]
    ///         Ok::<_, std::convert::Infallible>(http::Response::new(String::new()))
    ///     }));
    /// let request = http::Request::builder().header("grpc-timeout", "5m").body(()).unwrap();
    /// let response = svc.oneshot(request).await.unwrap();
    /// assert_eq!(response.status(), http::StatusCode::GATEWAY_TIMEOUT);
    /// # }
    /// ```
    pub fn refuse_below(mut self, least: Duration) -> Self {
        self.limits.refuse_below = least;
        self
    }

    /// Also takes the request's `grpc-timeout` header when it asks for less than the
    /// layer's limit, never more. A malformed header is ignored
    /// ([`grpc_timeout::from_headers`](crate::grpc_timeout::from_headers)).
    pub fn grpc_timeout(self) -> HttpDeadlineLayer<W, GrpcTimeout> {
        HttpDeadlineLayer {
            limits: self.limits.with_source(GrpcTimeout),
            status: self.status,
            bound_body: self.bound_body,
            route_name: self.route_name,
        }
    }

    /// Also takes the shortest of the request's timeout headers (`grpc-timeout`, Envoy's
    /// `x-envoy-expected-rq-timeout-ms`, Connect's `connect-timeout-ms`) when it asks for
    /// less than the layer's limit, never more. Malformed ones are ignored
    /// ([`TimeoutHeaders`]).
    ///
    /// ```
    /// use std::time::Duration;
    /// use punctual_tower::HttpDeadlineLayer;
    /// use tower::{Layer, ServiceExt, service_fn};
    ///
    /// # #[tokio::main(flavor = "current_thread", start_paused = true)]
    /// # async fn main() {
    /// let svc = HttpDeadlineLayer::<punctual::wheel::DefaultWheel>::new(Duration::from_secs(5))
    ///     .timeout_headers()
    ///     .layer(service_fn(|_: http::Request<()>| async {
    ///         tokio::time::sleep(Duration::from_secs(1)).await;
    ///         Ok::<_, std::convert::Infallible>(http::Response::new(String::new()))
    ///     }));
    /// let request = http::Request::builder()
    ///     .header("grpc-timeout", "2S")
    ///     .header("x-envoy-expected-rq-timeout-ms", "300")
    ///     .body(())
    ///     .unwrap();
    /// let start = tokio::time::Instant::now();
    /// let response = svc.oneshot(request).await.unwrap();
    /// assert_eq!(response.status(), http::StatusCode::GATEWAY_TIMEOUT);
    /// assert_eq!(start.elapsed(), Duration::from_millis(300));
    /// # }
    /// ```
    pub fn timeout_headers(self) -> HttpDeadlineLayer<W, TimeoutHeaders> {
        HttpDeadlineLayer {
            limits: self.limits.with_source(TimeoutHeaders),
            status: self.status,
            bound_body: self.bound_body,
            route_name: self.route_name,
        }
    }

    /// Leaves the body of a response that was ready in time unbounded: it streams past the
    /// request's deadline for as long as it has frames.
    pub fn unbounded_body(mut self) -> Self {
        self.bound_body = false;
        self
    }

    /// The layer's own limit.
    pub fn limit(&self) -> Duration {
        self.limits.limit
    }
}

impl<S, W: WheelRef, T: Clone> Layer<S> for HttpDeadlineLayer<W, T> {
    type Service = HttpDeadlineService<S, W, T>;

    fn layer(&self, inner: S) -> Self::Service {
        HttpDeadlineService {
            inner,
            limits: self.limits.clone(),
            status: self.status,
            bound_body: self.bound_body,
            route_name: self.route_name,
        }
    }
}

/// The service [`HttpDeadlineLayer`] makes.
#[derive(Debug, Clone)]
pub struct HttpDeadlineService<S, W, T = OwnLimit> {
    inner: S,
    limits: Limits<W, T>,
    status: StatusCode,
    bound_body: bool,
    route_name: Option<RouteName>,
}

impl<S, W, T> HttpDeadlineService<S, W, T> {
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

impl<S, W, T, ReqBody, ResBody> Service<Request<ReqBody>> for HttpDeadlineService<S, W, T>
where
    S: Service<Request<ReqBody>, Response = Response<ResBody>, Error = Infallible>,
    W: WheelRef,
    T: RequestTimeout<Request<ReqBody>>,
    ResBody: http_body::Body,
{
    type Response = Response<DeadlineBody<ResBody, W>>;
    type Error = Infallible;
    type Future = HttpResponseFuture<S::Future, W>;

    /// Forwards to the inner service: the deadline does not cover readiness.
    fn poll_ready(&mut self, cx: &mut Context<'_>) -> Poll<Result<(), Self::Error>> {
        self.inner.poll_ready(cx)
    }

    fn call(&mut self, req: Request<ReqBody>) -> Self::Future {
        let limit = self.limits.limit_for(&req);
        let grpc = is_grpc(&req);
        let name = self
            .route_name
            .and_then(|route| route(req.method(), req.uri()))
            .unwrap_or(self.limits.name);
        HttpResponseFuture {
            inner: self.limits.admit_as(name, limit, || self.inner.call(req)),
            on_expiry: OnExpiry {
                status: self.status,
                grpc,
            },
            body_wheel: self.bound_body.then_some(self.limits.wheel),
        }
    }
}

/// Whether `req` is a gRPC request, by its content type.
fn is_grpc<B>(req: &Request<B>) -> bool {
    req.headers()
        .get(http::header::CONTENT_TYPE)
        .is_some_and(|v| v.as_bytes().starts_with(b"application/grpc"))
}

/// How to answer a request whose deadline passed.
#[derive(Debug, Clone, Copy)]
struct OnExpiry {
    status: StatusCode,
    grpc: bool,
}

impl OnExpiry {
    /// The answer to a request whose deadline passed. Not generic, so compiled once.
    fn response(self, elapsed: Elapsed) -> Response<()> {
        let mut response = Response::new(());
        if self.grpc {
            let headers = response.headers_mut();
            headers.insert(
                http::header::CONTENT_TYPE,
                HeaderValue::from_static("application/grpc"),
            );
            deadline_exceeded(headers);
        } else {
            *response.status_mut() = self.status;
        }
        response.extensions_mut().insert(elapsed);
        response
    }
}

pin_project! {
    /// The response future of [`HttpDeadlineService`]: the inner service's response, or the
    /// chosen status once the deadline has passed. The body is bounded by the request's
    /// deadline unless the layer said [`unbounded_body`](HttpDeadlineLayer::unbounded_body).
    ///
    /// # Cancel safety
    ///
    /// Dropping it drops the inner response future. When the deadline passes, the inner
    /// future is dropped before the timed-out response is returned.
    #[must_use = "futures do nothing unless you `.await` or poll them"]
    pub struct HttpResponseFuture<F, W: WheelRef> {
        #[pin]
        inner: Admitted<F, W>,
        on_expiry: OnExpiry,
        body_wheel: Option<W>,
    }
}

impl<F, B, W> Future for HttpResponseFuture<F, W>
where
    F: Future<Output = Result<Response<B>, Infallible>>,
    B: http_body::Body,
    W: WheelRef,
{
    type Output = Result<Response<DeadlineBody<B, W>>, Infallible>;

    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Self::Output> {
        let mut this = self.project();
        // The body's limit must be on the budget's wheel, which the budget chooses at its
        // first poll on this thread. Choose here too, before the task can move threads;
        // a handle keeps its first choice.
        if let Some(wheel) = this.body_wheel.as_mut() {
            wheel.choose();
        }
        Poll::Ready(Ok(match ready!(this.inner.as_mut().poll(cx)) {
            Ok(Ok(response)) => {
                let limit = this
                    .body_wheel
                    .and_then(|wheel| Some((wheel, this.inner.budget()?)));
                let grpc = this.on_expiry.grpc;
                response.map(|body| DeadlineBody::bounded(body, limit, grpc))
            }
            Ok(Err(never)) => match never {},
            Err(elapsed) => this
                .on_expiry
                .response(elapsed)
                .map(|()| DeadlineBody::expired()),
        }))
    }
}

impl<F, W: WheelRef> fmt::Debug for HttpResponseFuture<F, W> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("HttpResponseFuture")
            .field("inner", &self.inner)
            .field("status", &self.on_expiry.status)
            .finish()
    }
}
