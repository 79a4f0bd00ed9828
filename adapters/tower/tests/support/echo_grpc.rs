//! A small gRPC service written by hand, as `tonic-build` would generate it, so the tests
//! and the example need no `protoc`: `test.Echo/Unary` and `test.Echo/Stream`.
//!
//! * `Unary` waits `wait_ms` (on a punctual sleep, so the request's budget and the layer
//!   can cut it), then answers with what it saw: the `grpc-timeout` it was sent, and the
//!   budget left. With a `downstream`, it first calls it with the same request.
//! * `Stream` sends `count` replies, `wait_ms` apart (`count == 0`: forever), each gap
//!   bounded by `idle_ms` on the server when non-zero (`idle_timeout`).
//! * Every handler counts its starts and its drops in [`Seen`]: a drop before the end is a
//!   cancel.
#![allow(dead_code, unreachable_pub)]

use std::convert::Infallible;
use std::future::Future;
use std::pin::Pin;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::task::{Context, Poll};
use std::time::Duration;

use futures_util::{Stream, StreamExt};
use http::uri::PathAndQuery;
use punctual::StreamDeadlineExt;
use tonic::body::Body;
use tonic::codegen::BoxFuture;
use tonic::server::{NamedService, ServerStreamingService, UnaryService};
use tonic::{Request, Response, Status, Streaming};
use tonic_prost::ProstCodec;

/// What a client sends.
#[derive(Clone, PartialEq, prost::Message)]
pub struct EchoRequest {
    #[prost(string, tag = "1")]
    pub message: String,
    #[prost(uint64, tag = "2")]
    pub wait_ms: u64,
    #[prost(uint32, tag = "3")]
    pub count: u32,
    #[prost(uint64, tag = "4")]
    pub idle_ms: u64,
}

/// What the server answers.
#[derive(Clone, PartialEq, prost::Message)]
pub struct EchoReply {
    #[prost(string, tag = "1")]
    pub message: String,
    /// The request's `grpc-timeout` header, or empty.
    #[prost(string, tag = "2")]
    pub grpc_timeout: String,
    /// The budget the handler ran under, in microseconds (0: none).
    #[prost(uint64, tag = "3")]
    pub budget_us: u64,
}

/// What the handlers saw, shared with the test.
#[derive(Debug, Default)]
pub struct Seen {
    pub started: AtomicUsize,
    pub dropped: AtomicUsize,
    pub finished: AtomicUsize,
    pub timeouts: Mutex<Vec<String>>,
}

impl Seen {
    pub fn started(&self) -> usize {
        self.started.load(Ordering::SeqCst)
    }
    /// Handlers dropped before they finished: cancelled.
    pub fn cancelled(&self) -> usize {
        self.dropped.load(Ordering::SeqCst) - self.finished.load(Ordering::SeqCst)
    }
}

/// Counts a handler's drop, and whether it finished first.
struct Watch {
    seen: Arc<Seen>,
    finished: bool,
}

impl Watch {
    fn new(seen: &Arc<Seen>) -> Self {
        seen.started.fetch_add(1, Ordering::SeqCst);
        Self {
            seen: seen.clone(),
            finished: false,
        }
    }
}

impl Drop for Watch {
    fn drop(&mut self) {
        if self.finished {
            self.seen.finished.fetch_add(1, Ordering::SeqCst);
        }
        self.seen.dropped.fetch_add(1, Ordering::SeqCst);
    }
}

/// A client of `test.Echo` over any tower service tonic can call through.
#[derive(Debug, Clone)]
pub struct EchoClient<T> {
    inner: tonic::client::Grpc<T>,
}

impl<T> EchoClient<T>
where
    T: tonic::client::GrpcService<Body>,
    T::Error: Into<tonic::codegen::StdError>,
    T::ResponseBody: http_body::Body<Data = bytes::Bytes> + Send + 'static,
    <T::ResponseBody as http_body::Body>::Error: Into<tonic::codegen::StdError> + Send,
{
    pub fn new(inner: T) -> Self {
        Self {
            inner: tonic::client::Grpc::new(inner),
        }
    }

    /// A client of a service that takes requests with a full URI (an HTTP client).
    pub fn with_origin(inner: T, origin: http::Uri) -> Self {
        Self {
            inner: tonic::client::Grpc::with_origin(inner, origin),
        }
    }

    pub async fn unary(
        &mut self,
        request: impl tonic::IntoRequest<EchoRequest>,
    ) -> Result<Response<EchoReply>, Status> {
        self.inner
            .ready()
            .await
            .map_err(|e| Status::unknown(format!("not ready: {}", e.into())))?;
        let path = PathAndQuery::from_static("/test.Echo/Unary");
        let codec = ProstCodec::<EchoRequest, EchoReply>::default();
        self.inner.unary(request.into_request(), path, codec).await
    }

    pub async fn stream(
        &mut self,
        request: impl tonic::IntoRequest<EchoRequest>,
    ) -> Result<Response<Streaming<EchoReply>>, Status> {
        self.inner
            .ready()
            .await
            .map_err(|e| Status::unknown(format!("not ready: {}", e.into())))?;
        let path = PathAndQuery::from_static("/test.Echo/Stream");
        let codec = ProstCodec::<EchoRequest, EchoReply>::default();
        self.inner
            .server_streaming(request.into_request(), path, codec)
            .await
    }
}

/// The downstream a relaying server calls, type-erased.
pub type Downstream = Arc<
    dyn Fn(EchoRequest) -> Pin<Box<dyn Future<Output = Result<EchoReply, Status>> + Send>>
        + Send
        + Sync,
>;

/// The server side of `test.Echo`.
#[derive(Clone)]
pub struct EchoServer {
    seen: Arc<Seen>,
    downstream: Option<Downstream>,
}

impl EchoServer {
    pub fn new(seen: Arc<Seen>) -> Self {
        Self {
            seen,
            downstream: None,
        }
    }

    /// A server whose `Unary` first relays the request to `downstream`.
    pub fn relaying(seen: Arc<Seen>, downstream: Downstream) -> Self {
        Self {
            seen,
            downstream: Some(downstream),
        }
    }
}

impl NamedService for EchoServer {
    const NAME: &'static str = "test.Echo";
}

fn header(request: &Request<EchoRequest>) -> String {
    let value = request.metadata().get("grpc-timeout");
    value.and_then(|v| v.to_str().ok()).unwrap_or("").to_owned()
}

fn budget_us() -> u64 {
    let left = punctual::adapters::tower::remaining_budget();
    left.map_or(0, |left| left.as_micros() as u64)
}

struct Unary(EchoServer);

impl UnaryService<EchoRequest> for Unary {
    type Response = EchoReply;
    type Future = BoxFuture<Response<EchoReply>, Status>;

    fn call(&mut self, request: Request<EchoRequest>) -> Self::Future {
        let server = self.0.clone();
        Box::pin(async move {
            let mut watch = Watch::new(&server.seen);
            let grpc_timeout = header(&request);
            server
                .seen
                .timeouts
                .lock()
                .unwrap()
                .push(grpc_timeout.clone());
            let budget_us = budget_us();
            let request = request.into_inner();
            if let Some(downstream) = &server.downstream {
                downstream(request.clone()).await?;
            }
            punctual::sleep(Duration::from_millis(request.wait_ms)).await;
            watch.finished = true;
            Ok(Response::new(EchoReply {
                message: request.message,
                grpc_timeout,
                budget_us,
            }))
        })
    }
}

type ReplyStream = Pin<Box<dyn Stream<Item = Result<EchoReply, Status>> + Send>>;

struct ServerStream(EchoServer);

impl ServerStreamingService<EchoRequest> for ServerStream {
    type Response = EchoReply;
    type ResponseStream = ReplyStream;
    type Future = BoxFuture<Response<ReplyStream>, Status>;

    fn call(&mut self, request: Request<EchoRequest>) -> Self::Future {
        let seen = self.0.seen.clone();
        Box::pin(async move {
            let grpc_timeout = header(&request);
            let request = request.into_inner();
            let watch = Watch::new(&seen);
            let replies = futures_util::stream::unfold(0u32, move |sent| {
                let message = format!("{} {sent}", request.message);
                let grpc_timeout = grpc_timeout.clone();
                async move {
                    if request.count != 0 && sent == request.count {
                        return None;
                    }
                    if sent > 0 {
                        punctual::sleep(Duration::from_millis(request.wait_ms)).await;
                    }
                    let reply = EchoReply {
                        message,
                        grpc_timeout,
                        budget_us: 0,
                    };
                    Some((reply, sent + 1))
                }
            });
            let replies: ReplyStream = if request.idle_ms == 0 {
                Box::pin(replies.map(Ok))
            } else {
                let idle = Duration::from_millis(request.idle_ms);
                // An item later than `idle` ends the stream with DEADLINE_EXCEEDED.
                Box::pin(replies.idle_timeout(idle).map(|r| r.map_err(Status::from)))
            };
            // Ended by itself (not dropped early): finished.
            let mut watch = Some(watch);
            let replies = replies.chain(futures_util::stream::poll_fn(move |_| {
                if let Some(mut watch) = watch.take() {
                    watch.finished = true;
                }
                Poll::Ready(None)
            }));
            Ok(Response::new(Box::pin(replies) as ReplyStream))
        })
    }
}

impl tower_service::Service<http::Request<Body>> for EchoServer {
    type Response = http::Response<Body>;
    type Error = Infallible;
    type Future = BoxFuture<Self::Response, Self::Error>;

    fn poll_ready(&mut self, _: &mut Context<'_>) -> Poll<Result<(), Infallible>> {
        Poll::Ready(Ok(()))
    }

    fn call(&mut self, request: http::Request<Body>) -> Self::Future {
        let server = self.clone();
        match request.uri().path() {
            "/test.Echo/Unary" => Box::pin(async move {
                let mut grpc = tonic::server::Grpc::new(ProstCodec::default());
                Ok(grpc.unary(Unary(server), request).await)
            }),
            "/test.Echo/Stream" => Box::pin(async move {
                let mut grpc = tonic::server::Grpc::new(ProstCodec::default());
                Ok(grpc.server_streaming(ServerStream(server), request).await)
            }),
            _ => Box::pin(async { Ok(Status::unimplemented("no such method").into_http()) }),
        }
    }
}

/// Serves `server` on loopback behind a 10 s layer that takes the client's `grpc-timeout`.
///
/// Through axum (tonic's `Routes`), not tonic's `Server`: that one times each call out by
/// the same header itself, before any layer, and answers `CANCELLED`.
pub async fn serve(server: EchoServer) -> std::net::SocketAddr {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    let layer =
        punctual::adapters::tower::HttpDeadlineLayer::new(Duration::from_secs(10)).grpc_timeout();
    let router = tonic::service::Routes::new(server)
        .into_axum_router()
        .layer(layer);
    tokio::spawn(async move { axum::serve(listener, router).await });
    addr
}
