//! The load generator: a fixed number of keep-alive HTTP/1 connections, each sending its
//! next request as soon as the last one's answer is read, until a shared count of requests
//! is reached; the latency of each request as the client saw it.

use std::net::SocketAddr;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use http_body_util::{BodyExt, Empty};
use hyper::Request;
use hyper::body::Bytes;
use hyper_util::rt::TokioIo;

/// Runs `callers` tasks `caller(i, sent)` at once, each calling until the shared count
/// `sent` reaches `requests`; every call's latency and the wall time of the whole.
pub(crate) async fn spread<F: Future<Output = Vec<Duration>> + Send + 'static>(
    callers: usize,
    requests: usize,
    caller: impl Fn(usize, Arc<AtomicUsize>) -> F,
) -> (Vec<Duration>, Duration) {
    let sent = Arc::new(AtomicUsize::new(0));
    let start = Instant::now();
    let tasks: Vec<_> = (0..callers)
        .map(|i| tokio::spawn(caller(i, sent.clone())))
        .collect();
    let mut latencies = Vec::with_capacity(requests);
    for task in tasks {
        latencies.extend(task.await.expect("a caller of the load generator"));
    }
    (latencies, start.elapsed())
}

/// Sends `requests` requests to `addr` over `connections` connections at once.
pub(crate) async fn run(
    addr: SocketAddr,
    connections: usize,
    requests: usize,
) -> (Vec<Duration>, Duration) {
    spread(connections, requests, |_, sent| async move {
        one_connection(addr, &sent, requests).await
    })
    .await
}

async fn one_connection(addr: SocketAddr, sent: &AtomicUsize, requests: usize) -> Vec<Duration> {
    let stream = tokio::net::TcpStream::connect(addr).await.expect("connect");
    stream.set_nodelay(true).expect("TCP_NODELAY");
    let (mut sender, conn) = hyper::client::conn::http1::handshake(TokioIo::new(stream))
        .await
        .expect("HTTP/1 handshake");
    tokio::spawn(conn);
    let mut latencies = Vec::new();
    while sent.fetch_add(1, Ordering::Relaxed) < requests {
        let request = Request::get("/")
            .header("host", "localhost")
            .body(Empty::<Bytes>::new())
            .expect("a request");
        let start = Instant::now();
        let response = sender.send_request(request).await.expect("a response");
        assert!(
            response.status().is_success(),
            "status {}",
            response.status()
        );
        response.into_body().collect().await.expect("the body");
        latencies.push(start.elapsed());
    }
    latencies
}
