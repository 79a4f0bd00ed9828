//! The HTTP server: hyper's HTTP/1 on a 2-worker tokio runtime, each request under a
//! deadline, its handler starting `k` inner deadlines one after another around a future
//! pending once (as a cache that answers at once). tokio's peers: tower's `TimeoutLayer`
//! and `tokio::time::timeout`; punctual's: punctual-tower's `DeadlineLayer` and
//! `.deadline()`.

use std::convert::Infallible;
use std::time::Duration;

use http_body_util::Full;
use hyper::body::{Bytes, Incoming};
use hyper::{Request, Response};
use hyper_util::rt::TokioIo;
use hyper_util::service::TowerToHyperService;
use punctual::DeadlineExt;
use tokio::net::TcpListener;
use tower::{BoxError, ServiceBuilder};

use crate::common::Peer;

/// The per-request deadline: never reached here.
pub(crate) const REQUEST_DEADLINE: Duration = Duration::from_secs(2);
/// Each inner deadline: never reached here.
pub(crate) const INNER_DEADLINE: Duration = Duration::from_millis(100);

/// The server's runtime for `peer`: 2 workers, each recorded for [`crate::cpu`].
pub(crate) fn runtime(peer: Peer) -> tokio::runtime::Runtime {
    let mut builder = crate::common::two_workers();
    builder
        .enable_io()
        .on_thread_start(crate::cpu::record_this_thread);
    crate::common::build(builder, peer == Peer::TokioAlt)
}

/// `k` inner deadlines one after another, each around a future pending once.
pub(crate) async fn inner_deadlines(peer: Peer, k: usize) {
    for _ in 0..k {
        let fired = match peer {
            Peer::Tokio | Peer::TokioAlt => {
                let within = tokio::time::timeout(INNER_DEADLINE, tokio::task::yield_now());
                within.await.is_err()
            }
            _ => tokio::task::yield_now()
                .deadline(INNER_DEADLINE)
                .await
                .is_err(),
        };
        assert!(!fired, "an inner deadline fired");
    }
}

/// The handler: `k` inner deadlines, then the answer.
async fn handle(peer: Peer, k: usize) -> Result<Response<Full<Bytes>>, Infallible> {
    inner_deadlines(peer, k).await;
    Ok(Response::new(Full::new(Bytes::from_static(b"ok"))))
}

/// Accepts connections on `listener` for ever (inside the server's runtime), serving each
/// with `peer`'s stack.
pub(crate) async fn serve(peer: Peer, k: usize, listener: TcpListener) {
    loop {
        let (stream, _) = listener.accept().await.expect("accept");
        stream.set_nodelay(true).expect("TCP_NODELAY");
        let io = TokioIo::new(stream);
        tokio::spawn(async move {
            let handler = tower::service_fn(move |_: Request<Incoming>| handle(peer, k));
            match peer {
                Peer::Tokio | Peer::TokioAlt => {
                    let service = ServiceBuilder::new()
                        .timeout(REQUEST_DEADLINE)
                        .service(handler);
                    connection(io, service).await;
                }
                _ => {
                    let service = ServiceBuilder::new()
                        .layer(punctual::adapters::tower::DeadlineLayer::new(
                            REQUEST_DEADLINE,
                        ))
                        .service(handler);
                    connection(io, service).await;
                }
            }
        });
    }
}

/// Serves one keep-alive connection with `service` until the client closes it.
async fn connection<S>(io: TokioIo<tokio::net::TcpStream>, service: S)
where
    S: tower::Service<Request<Incoming>, Response = Response<Full<Bytes>>> + Clone + Send + 'static,
    S::Error: Into<BoxError>,
    S::Future: Send + 'static,
{
    let served = hyper::server::conn::http1::Builder::new()
        .serve_connection(io, TowerToHyperService::new(service))
        .await;
    // A client that closes between requests ends the connection with an error: fine.
    let _ = served;
}
