//! The gRPC rows: tonic's `Server` with the peer's layer around one unary method (written
//! by hand as `tonic-build` would, so no `protoc`), under 8 tonic channels with 8 calls
//! in flight on each.

use std::convert::Infallible;
use std::net::SocketAddr;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::task::{Context, Poll};
use std::time::{Duration, Instant};

use http::uri::PathAndQuery;
use tokio::net::TcpListener;
use tonic::body::Body;
use tonic::codegen::BoxFuture;
use tonic::server::{NamedService, UnaryService};
use tonic::transport::{Channel, Server};
use tonic::{Request, Response, Status};
use tonic_prost::ProstCodec;
use tower::ServiceBuilder;

use crate::common::Peer;
use crate::server::{REQUEST_DEADLINE, inner_deadlines};

/// Channels (HTTP/2 connections) of the load generator.
const CHANNELS: usize = 8;
/// Calls in flight on each channel.
const PER_CHANNEL: usize = 8;

/// The message both ways.
#[derive(Clone, PartialEq, prost::Message)]
pub(crate) struct Ping {
    #[prost(uint64, tag = "1")]
    pub(crate) n: u64,
}

/// The service: one unary method, `k` inner deadlines per call.
#[derive(Clone, Copy)]
struct Echo {
    peer: Peer,
    k: usize,
}

impl NamedService for Echo {
    const NAME: &'static str = "bench.Echo";
}

impl UnaryService<Ping> for Echo {
    type Response = Ping;
    type Future = BoxFuture<Response<Ping>, Status>;

    fn call(&mut self, request: Request<Ping>) -> Self::Future {
        let Echo { peer, k } = *self;
        Box::pin(async move {
            inner_deadlines(peer, k).await;
            Ok(Response::new(request.into_inner()))
        })
    }
}

impl tower::Service<http::Request<Body>> for Echo {
    type Response = http::Response<Body>;
    type Error = Infallible;
    type Future = BoxFuture<Self::Response, Infallible>;

    fn poll_ready(&mut self, _: &mut Context<'_>) -> Poll<Result<(), Infallible>> {
        Poll::Ready(Ok(()))
    }

    fn call(&mut self, request: http::Request<Body>) -> Self::Future {
        let echo = *self;
        Box::pin(async move {
            let mut grpc = tonic::server::Grpc::new(ProstCodec::default());
            Ok(grpc.unary(echo, request).await)
        })
    }
}

/// Serves the method on `listener` for ever (inside the server's runtime), behind `peer`'s
/// per-request deadline.
pub(crate) async fn serve(peer: Peer, k: usize, listener: TcpListener) {
    let incoming = tonic::transport::server::TcpIncoming::from(listener).with_nodelay(Some(true));
    let echo = Echo { peer, k };
    let served = match peer {
        Peer::Tokio | Peer::TokioAlt => {
            Server::builder()
                .layer(ServiceBuilder::new().timeout(REQUEST_DEADLINE))
                .add_service(echo)
                .serve_with_incoming(incoming)
                .await
        }
        _ => {
            let layer = punctual::adapters::tower::DeadlineLayer::new(REQUEST_DEADLINE);
            Server::builder()
                .layer(layer)
                .add_service(echo)
                .serve_with_incoming(incoming)
                .await
        }
    };
    served.expect("the gRPC server");
}

/// Makes `requests` calls to `addr` with [`CHANNELS`] × [`PER_CHANNEL`] in flight.
pub(crate) async fn load(addr: SocketAddr, requests: usize) -> (Vec<Duration>, Duration) {
    let mut channels = Vec::with_capacity(CHANNELS);
    for _ in 0..CHANNELS {
        let endpoint = Channel::from_shared(format!("http://{addr}")).expect("a URI");
        channels.push(endpoint.tcp_nodelay(true).connect().await.expect("connect"));
    }
    crate::load::spread(CHANNELS * PER_CHANNEL, requests, |i, sent| {
        caller(channels[i / PER_CHANNEL].clone(), sent, requests)
    })
    .await
}

/// One caller: a call at a time until the shared count is reached.
async fn caller(channel: Channel, sent: Arc<AtomicUsize>, requests: usize) -> Vec<Duration> {
    let mut client = tonic::client::Grpc::new(channel);
    let mut latencies = Vec::new();
    while sent.fetch_add(1, Ordering::Relaxed) < requests {
        let start = Instant::now();
        client.ready().await.expect("the channel");
        let path = PathAndQuery::from_static("/bench.Echo/Call");
        let codec = ProstCodec::<Ping, Ping>::default();
        let reply = client.unary(Request::new(Ping { n: 7 }), path, codec).await;
        assert_eq!(reply.expect("a reply").into_inner().n, 7);
        latencies.push(start.elapsed());
    }
    latencies
}
