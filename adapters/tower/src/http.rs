//! The HTTP flavour: on expiry a response, and a body bounded by the same deadline.

use core::convert::Infallible;
use core::fmt;
use core::future::{Future, Pending, pending};
use core::pin::Pin;
use core::task::{Context, Poll, ready};

use http::header::CONTENT_TYPE;
use http::{HeaderValue, Request, Response, StatusCode};
use http_body::{Body, Frame, SizeHint};
use pin_project_lite::pin_project;
use punctual_core::{Budgeted, Elapsed, WheelRef};
use tower_layer::Layer;
use tower_service::Service;

use crate::BoxError;
use crate::admission::{Admission, Admitted, shared_builders};
use crate::grpc_timeout::deadline_exceeded;
use crate::headers::{OwnLimit, RequestTimeout};

/// The status a timed-out request is answered with unless another is chosen.
pub const DEFAULT_STATUS: StatusCode = StatusCode::GATEWAY_TIMEOUT;

/// A [`DeadlineLayer`](crate::DeadlineLayer) for HTTP services that cannot fail (axum's,
/// hyper's, tonic's servers): a late request gets an empty response of [`DEFAULT_STATUS`]
/// or [`status`](Self::status), the [`Elapsed`] in its extensions (gRPC: `200 OK` with
/// `grpc-status: 4`), and a body still streaming at the deadline is cut ([`DeadlineBody`]).
///
/// ```
/// use std::convert::Infallible;
/// use std::time::Duration;
/// use punctual_tower::HttpDeadlineLayer;
/// use tower::{ServiceBuilder, ServiceExt, service_fn};
///
/// # #[tokio::main(flavor = "current_thread", start_paused = true)]
/// # async fn main() {
/// let layer = HttpDeadlineLayer::<punctual::wheel::DefaultWheel>::new(Duration::from_secs(5));
/// let svc = ServiceBuilder::new()
///     .layer(layer.timeout_headers())
///     .service(service_fn(|_req: http::Request<()>| async {
///         tokio::time::sleep(Duration::from_secs(2)).await; // a slow downstream
///         Ok::<_, Infallible>(http::Response::new(String::from("late")))
///     }));
/// let request = http::Request::builder().header("grpc-timeout", "2S");
/// let request = request.header("x-envoy-expected-rq-timeout-ms", "300").body(()).unwrap();
/// let start = tokio::time::Instant::now();
/// let response = svc.oneshot(request).await.unwrap();
/// assert_eq!(response.status(), http::StatusCode::GATEWAY_TIMEOUT);
/// assert!(response.extensions().get::<punctual::Elapsed>().is_some());
/// assert_eq!(start.elapsed(), Duration::from_millis(300)); // the shortest header's
/// # }
/// ```
#[derive(Debug, Clone, Copy)]
pub struct HttpDeadlineLayer<W, T = OwnLimit> {
    admission: Admission<W>,
    source: T,
    status: StatusCode,
    bound_body: bool,
    route_name: Option<RouteName>,
}

/// A request's name from its method and URI ([`HttpDeadlineLayer::named_by`]).
pub type RouteName = fn(&http::Method, &http::Uri) -> Option<&'static str>;

shared_builders!(HttpDeadlineLayer => HttpDeadlineService {
    status: DEFAULT_STATUS,
    bound_body: true,
    route_name: None
});

impl<W: WheelRef, T> HttpDeadlineLayer<W, T> {
    /// The status of the response to a request whose deadline passed (not gRPC's).
    pub fn status(mut self, status: StatusCode) -> Self {
        self.status = status;
        self
    }

    /// Names each request by `route` (or after the layer when it returns `None`): outcomes
    /// per route. Return a few fixed names (`/users/{id}`, not a path): each is a label.
    pub fn named_by(mut self, route: RouteName) -> Self {
        self.route_name = Some(route);
        self
    }

    /// Lets the body of a response ready in time stream past the deadline (server-sent
    /// events, a download).
    pub fn unbounded_body(mut self) -> Self {
        self.bound_body = false;
        self
    }
}

impl<S, W: WheelRef, T: Clone> Layer<S> for HttpDeadlineLayer<W, T> {
    type Service = HttpDeadlineService<S, W, T>;

    fn layer(&self, inner: S) -> Self::Service {
        let layer = self.clone();
        HttpDeadlineService { inner, layer }
    }
}

/// The service [`HttpDeadlineLayer`] makes.
#[derive(Debug, Clone)]
pub struct HttpDeadlineService<S, W, T = OwnLimit> {
    inner: S,
    layer: HttpDeadlineLayer<W, T>,
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

    fn poll_ready(&mut self, cx: &mut Context<'_>) -> Poll<Result<(), Self::Error>> {
        self.inner.poll_ready(cx)
    }

    fn call(&mut self, req: Request<ReqBody>) -> Self::Future {
        let (layer, admission) = (&self.layer, &self.layer.admission);
        let limit = admission.limit_for(&layer.source, &req);
        let grpc = (req.headers().get(CONTENT_TYPE))
            .is_some_and(|v| v.as_bytes().starts_with(b"application/grpc"));
        let name = (layer.route_name)
            .and_then(|route| route(req.method(), req.uri()))
            .unwrap_or(admission.name);
        // The status of a late answer; `None`: gRPC's.
        let on_expiry = (!grpc).then_some(layer.status);
        let body_wheel = layer.bound_body.then_some(admission.wheel);
        let inner = admission.admit(name, limit, || self.inner.call(req));
        HttpResponseFuture {
            inner,
            on_expiry,
            body_wheel,
        }
    }
}

/// A late request's answer with `status`, or gRPC's for `None`. Not generic: compiled once.
fn expired(status: Option<StatusCode>, elapsed: Elapsed) -> Response<()> {
    let mut response = Response::new(());
    match status {
        Some(status) => *response.status_mut() = status,
        None => {
            let headers = response.headers_mut();
            headers.insert(CONTENT_TYPE, HeaderValue::from_static("application/grpc"));
            deadline_exceeded(headers);
        }
    }
    response.extensions_mut().insert(elapsed);
    response
}

pin_project! {
    /// The response future of [`HttpDeadlineService`].
    ///
    /// # Cancel safety
    ///
    /// Dropping it, or the deadline passing, drops the inner response future.
    #[must_use = "futures do nothing unless you `.await` or poll them"]
    pub struct HttpResponseFuture<F, W: WheelRef> {
        #[pin]
        inner: Admitted<F, W>,
        on_expiry: Option<StatusCode>,
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
        // The body's limit must be on the wheel the budget chooses at its first poll.
        if let Some(wheel) = this.body_wheel.as_mut() {
            wheel.choose();
        }
        let response = match ready!(this.inner.as_mut().poll(cx)).and_then(|r| r) {
            Ok(Ok(response)) => response,
            Ok(Err(never)) => match never {},
            Err(elapsed) => {
                let response = expired(*this.on_expiry, elapsed);
                return Poll::Ready(Ok(response.map(|()| DeadlineBody { state: State::Done })));
            }
        };
        // A budget on another wheel leaves the body unbounded: its instant is another clock's.
        let limit = this.body_wheel.and_then(|wheel| {
            let budget = this.inner.budget()?;
            budget.remaining(&wheel)?;
            Some(Budgeted::with_budget(pending(), wheel, budget))
        });
        let grpc = this.on_expiry.is_none();
        let state = |body| State::Streaming { body, limit, grpc };
        Poll::Ready(Ok(response.map(|body| DeadlineBody { state: state(body) })))
    }
}

impl<F, W: WheelRef> fmt::Debug for HttpResponseFuture<F, W> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_tuple("HttpResponseFuture")
            .field(&self.inner)
            .finish()
    }
}

pin_project! {
    /// The body of a response from [`HttpDeadlineService`]: empty for a timed-out one, else
    /// the inner one, which ends with an [`Elapsed`] error (gRPC: `grpc-status: 4`
    /// trailers) if the deadline passes first: hyper aborts the response, never complete.
    ///
    /// # Errors
    ///
    /// The inner body's errors, boxed, and the `Elapsed` of the request's deadline.
    pub struct DeadlineBody<B, W: WheelRef> {
        #[pin]
        state: State<B, W>,
    }
}

pin_project! {
    #[project = StateProj]
    enum State<B, W: WheelRef> {
        // A timed-out response's empty body, or a bounded body after its deadline.
        Done,
        Streaming {
            #[pin]
            body: B,
            // A budget over a never-ready future, polled for its timer alone.
            #[pin]
            limit: Option<Budgeted<'static, Pending<()>, W>>,
            grpc: bool, // ends with DEADLINE_EXCEEDED trailers, not an error
        },
    }
}

impl<B, W> Body for DeadlineBody<B, W>
where
    B: Body,
    B::Error: Into<BoxError>,
    W: WheelRef,
{
    type Data = B::Data;
    type Error = BoxError;

    fn poll_frame(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
    ) -> Poll<Option<Result<Frame<Self::Data>, Self::Error>>> {
        let mut state = self.project().state;
        let StateProj::Streaming { body, limit, grpc } = state.as_mut().project() else {
            return Poll::Ready(None);
        };
        if let Some(limit) = limit.as_pin_mut() {
            if let Poll::Ready(Err(elapsed)) = limit.poll(cx) {
                let grpc = *grpc;
                state.set(State::Done);
                if grpc {
                    let mut trailers = http::HeaderMap::new();
                    deadline_exceeded(&mut trailers);
                    return Poll::Ready(Some(Ok(Frame::trailers(trailers))));
                }
                return Poll::Ready(Some(Err(Box::new(elapsed))));
            }
        }
        body.poll_frame(cx).map_err(Into::into)
    }

    fn is_end_stream(&self) -> bool {
        match &self.state {
            State::Done => true,
            State::Streaming { body, .. } => body.is_end_stream(),
        }
    }

    fn size_hint(&self) -> SizeHint {
        match &self.state {
            State::Done => SizeHint::with_exact(0),
            State::Streaming { body, .. } => body.size_hint(),
        }
    }
}

impl<B, W: WheelRef> fmt::Debug for DeadlineBody<B, W> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let state = match &self.state {
            State::Done => "done",
            State::Streaming { limit: None, .. } => "streaming, unbounded",
            State::Streaming { limit: Some(_), .. } => "streaming, bounded",
        };
        f.debug_tuple("DeadlineBody").field(&state).finish()
    }
}
