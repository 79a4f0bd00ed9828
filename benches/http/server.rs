//! The server: hyper's HTTP/1 connections on a 2-worker multi-thread tokio runtime, each
//! request under a per-request deadline, its handler starting `k` inner deadlines one
//! after another around a future that completes quickly (pending once, then ready, as a
//! call to a cache or a database that answers at once), then answering a short body.

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

/// The per-request deadline: never reached here.
pub(crate) const REQUEST_DEADLINE: Duration = Duration::from_secs(2);
/// Each inner deadline: never reached here.
pub(crate) const INNER_DEADLINE: Duration = Duration::from_millis(100);

/// The peers: how a request and its inner calls are bounded.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Peer {
    /// `tower::timeout::TimeoutLayer` around the handler, `tokio::time::timeout` inside.
    Tokio,
    /// The same on a runtime built with tokio's alternative timer.
    TokioAlt,
    /// `punctual::adapters::tower::DeadlineLayer` around the handler (the request under a
    /// budget), `.deadline()` inside: on the runtime's own wheels, as punctual's default
    /// inside tokio.
    Punctual,
}

impl Peer {
    pub(crate) const ALL: [Peer; 3] = [Peer::Tokio, Peer::TokioAlt, Peer::Punctual];

    pub(crate) fn name(self) -> &'static str {
        match self {
            Peer::Tokio => "tower timeout + tokio",
            Peer::TokioAlt => "tower timeout + tokio alt timer",
            Peer::Punctual => "punctual-tower + deadline",
        }
    }

    pub(crate) fn named(name: &str) -> Option<Peer> {
        Self::ALL.into_iter().find(|p| p.name() == name)
    }

    /// Whether this build can run the peer (tokio's alternative timer needs
    /// `--cfg tokio_unstable`).
    pub(crate) fn available(self) -> bool {
        self != Peer::TokioAlt || cfg!(tokio_unstable)
    }
}

/// The server's runtime for `peer`: 2 workers, each recorded for [`crate::cpu`].
pub(crate) fn runtime(peer: Peer) -> tokio::runtime::Runtime {
    let mut builder = tokio::runtime::Builder::new_multi_thread();
    builder
        .worker_threads(2)
        .enable_io()
        .enable_time()
        .on_thread_start(crate::cpu::record_this_thread);
    if peer == Peer::TokioAlt {
        #[cfg(tokio_unstable)]
        builder.enable_alt_timer();
        #[cfg(not(tokio_unstable))]
        panic!("tokio's alternative timer: build with RUSTFLAGS=\"--cfg tokio_unstable\"");
    }
    builder.build().expect("the server's runtime")
}

/// `k` inner deadlines one after another, each around a future pending once.
pub(crate) async fn inner_deadlines(peer: Peer, k: usize) {
    for _ in 0..k {
        match peer {
            Peer::Tokio | Peer::TokioAlt => {
                let r = tokio::time::timeout(INNER_DEADLINE, tokio::task::yield_now()).await;
                assert!(r.is_ok(), "an inner deadline fired");
            }
            Peer::Punctual => {
                let r = tokio::task::yield_now().deadline(INNER_DEADLINE).await;
                assert!(r.is_ok(), "an inner deadline fired");
            }
        }
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
                Peer::Punctual => {
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
