//! gRPC end to end with tonic over loopback, on real time: the server's layer honours the
//! client's `grpc-timeout` and answers `DEADLINE_EXCEEDED`; a client `Channel` wrapped in
//! the propagation layer stamps each call with what is left of the caller's budget; streams
//! bounded per item and as a whole. Timing checks leave room for a loaded machine.
#![cfg(feature = "tonic")]

#[path = "support/echo_grpc.rs"]
mod echo_grpc;

use std::net::SocketAddr;
use std::sync::Arc;
use std::time::{Duration, Instant};

use echo_grpc::{Downstream, EchoClient, EchoReply, EchoRequest, EchoServer, Seen, serve};
use futures_util::StreamExt;
use hyper_util::client::legacy::Client;
use hyper_util::client::legacy::connect::HttpConnector;
use hyper_util::rt::TokioExecutor;
use punctual::StreamDeadlineExt;
use punctual::adapters::tower::{PropagateDeadlineLayer, into_status};
use punctual_tower::grpc_timeout;
use tonic::body::Body;
use tonic::client::GrpcService;
use tonic::transport::Channel;
use tonic::{Code, Request};
use tower::ServiceBuilder;

async fn channel(addr: SocketAddr) -> Channel {
    let uri = format!("http://{addr}");
    Channel::from_shared(uri).unwrap().connect().await.unwrap()
}

/// A client whose calls carry the caller's budget, less `margin`.
fn propagating(
    channel: Channel,
    margin: Duration,
) -> EchoClient<
    impl GrpcService<Body, Error = tonic::Status, ResponseBody = Body, Future: Send>
    + Clone
    + Send
    + Sync
    + 'static,
> {
    let service = ServiceBuilder::new()
        .map_err(into_status)
        .layer(PropagateDeadlineLayer::new().margin(margin))
        .service(channel);
    EchoClient::new(service)
}

fn request(wait_ms: u64) -> EchoRequest {
    EchoRequest {
        message: "hi".into(),
        wait_ms,
        ..Default::default()
    }
}

/// Waits up to 5 s for `done`, polling every 10 ms.
async fn eventually(done: impl Fn() -> bool) -> bool {
    let start = Instant::now();
    while start.elapsed() < Duration::from_secs(5) {
        if done() {
            return true;
        }
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    done()
}

fn parse(header: &str) -> Duration {
    grpc_timeout::parse(header.as_bytes()).unwrap()
}

/// A gRPC client over plain HTTP/2, with no timer of its own: what it gets is what the
/// server answered. (A tonic `Channel` also times each call out by its `grpc-timeout`.)
fn plain_client(addr: SocketAddr) -> EchoClient<Client<HttpConnector, Body>> {
    let http2 = Client::builder(TokioExecutor::new())
        .http2_only(true)
        .build_http::<Body>();
    let origin = http::Uri::try_from(format!("http://{addr}")).unwrap();
    EchoClient::with_origin(http2, origin)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn server_answers_deadline_exceeded() {
    let seen = Arc::new(Seen::default());
    let addr = serve(EchoServer::new(seen.clone())).await;
    let mut client = plain_client(addr);

    let mut call = Request::new(request(10_000));
    call.set_timeout(Duration::from_millis(100));
    let start = Instant::now();
    let status = client.unary(call).await.unwrap_err();
    assert_eq!(status.code(), Code::DeadlineExceeded, "{status:?}");
    assert!(start.elapsed() >= Duration::from_millis(100));
    assert!(
        start.elapsed() < Duration::from_secs(5),
        "the 10 s layer ran on"
    );
    assert!(
        eventually(|| seen.cancelled() == 1).await,
        "handler not dropped"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn channel_reports_deadline_exceeded() {
    let seen = Arc::new(Seen::default());
    let addr = serve(EchoServer::new(seen.clone())).await;
    let mut client = propagating(channel(addr).await, Duration::ZERO);

    // tonic's own `set_timeout`: its Channel races the server with a timer of its own;
    // whichever wins, `into_status` reports DEADLINE_EXCEEDED, not CANCELLED.
    let mut call = Request::new(request(10_000));
    call.set_timeout(Duration::from_millis(100));
    let status = client.unary(call).await.unwrap_err();
    assert_eq!(status.code(), Code::DeadlineExceeded, "{status:?}");
    assert!(
        eventually(|| seen.cancelled() == 1).await,
        "handler not dropped"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn channel_stamps_remaining_budget() {
    let seen = Arc::new(Seen::default());
    let addr = serve(EchoServer::new(seen.clone())).await;
    let mut client = propagating(channel(addr).await, Duration::ZERO);

    // Outside a budget, nothing is written: the server's own 10 s is all there is.
    let reply = client.unary(request(0)).await.unwrap().into_inner();
    assert_eq!(reply.grpc_timeout, "");
    let budget = Duration::from_micros(reply.budget_us);
    assert!(budget > Duration::from_secs(5) && budget <= Duration::from_secs(10));

    // Inside one, every call carries what is left of it, and the server runs under it.
    let reply: EchoReply = punctual::budget(Duration::from_secs(3), async {
        client.unary(request(0)).await.unwrap().into_inner()
    })
    .await
    .unwrap();
    let sent = parse(&reply.grpc_timeout);
    assert!(sent <= Duration::from_secs(3), "{sent:?}");
    assert!(sent > Duration::from_secs(1), "{sent:?}");
    let budget = Duration::from_micros(reply.budget_us);
    assert!(
        budget > Duration::ZERO && budget <= sent,
        "{budget:?} {sent:?}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn spent_budget_never_leaves() {
    let seen = Arc::new(Seen::default());
    let addr = serve(EchoServer::new(seen.clone())).await;
    let mut client = propagating(channel(addr).await, Duration::from_millis(200));

    // 100 ms left is less than the 200 ms margin: the call fails at once.
    let outcome = punctual::budget(Duration::from_millis(100), async {
        client.unary(request(0)).await
    })
    .await
    .unwrap();
    let status = outcome.unwrap_err();
    assert_eq!(status.code(), Code::DeadlineExceeded, "{status:?}");
    assert_eq!(seen.started(), 0, "a spent call reached the server");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn relay_gives_downstream_less() {
    let back_seen = Arc::new(Seen::default());
    let back = serve(EchoServer::new(back_seen.clone())).await;
    let to_back = propagating(channel(back).await, Duration::from_millis(20));
    let downstream: Downstream = Arc::new(move |request| {
        let mut client = to_back.clone();
        Box::pin(async move { client.unary(request).await.map(|r| r.into_inner()) })
    });
    let front_seen = Arc::new(Seen::default());
    let front = serve(EchoServer::relaying(front_seen.clone(), downstream)).await;
    let mut client = EchoClient::new(channel(front).await);

    let mut call = Request::new(request(10_000));
    call.set_timeout(Duration::from_millis(300));
    let start = Instant::now();
    let status = client.unary(call).await.unwrap_err();
    assert_eq!(status.code(), Code::DeadlineExceeded, "{status:?}");
    assert!(start.elapsed() < Duration::from_secs(5));

    // The back service was told less than the front had: 300 ms, less the margin, less
    // what passed on the way.
    let told = back_seen.timeouts.lock().unwrap().clone();
    assert_eq!(told.len(), 1);
    assert!(parse(&told[0]) <= Duration::from_millis(280), "{told:?}");
    assert!(eventually(|| back_seen.cancelled() == 1).await);
    assert!(eventually(|| front_seen.cancelled() == 1).await);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn server_stream_idle_timeout() {
    let seen = Arc::new(Seen::default());
    let addr = serve(EchoServer::new(seen.clone())).await;
    let mut client = EchoClient::new(channel(addr).await);

    // One reply at once, then a 10 s gap that the server's 100 ms idle bound cuts.
    let stream = EchoRequest {
        message: "tick".into(),
        wait_ms: 10_000,
        count: 0,
        idle_ms: 100,
    };
    let start = Instant::now();
    let replies = client.stream(stream).await.unwrap().into_inner();
    let replies: Vec<_> = replies.collect().await;
    assert_eq!(replies.len(), 2, "{replies:?}");
    assert_eq!(replies[0].as_ref().unwrap().message, "tick 0");
    let status = replies[1].as_ref().unwrap_err();
    assert_eq!(status.code(), Code::DeadlineExceeded, "{status:?}");
    assert!(start.elapsed() >= Duration::from_millis(100));
    assert!(start.elapsed() < Duration::from_secs(5));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn client_bounds_whole_stream() {
    let seen = Arc::new(Seen::default());
    let addr = serve(EchoServer::new(seen.clone())).await;
    let mut client = EchoClient::new(channel(addr).await);

    // Replies every 20 ms, forever; the client allows the whole stream 300 ms.
    let start = Instant::now();
    let replies = client.stream(request(20)).await.unwrap().into_inner();
    let replies: Vec<_> = replies
        .total_deadline(Duration::from_millis(300))
        .collect()
        .await;
    assert!(start.elapsed() >= Duration::from_millis(300));
    let (last, items) = replies.split_last().unwrap();
    assert!(!items.is_empty() && items.iter().all(|r| matches!(r, Ok(Ok(_)))));
    let elapsed = last.as_ref().unwrap_err();
    // Into a status for the client's own callers.
    assert_eq!(tonic::Status::from(*elapsed).code(), Code::DeadlineExceeded);
    // Dropping the stream resets it: the server stops sending.
    assert!(
        eventually(|| seen.cancelled() == 1).await,
        "server stream ran on"
    );
}

#[test]
fn other_errors_map_as_tonic_does() {
    let status = into_status("refused".into());
    assert_eq!(status.code(), Code::Unknown);
    assert_eq!(status.message(), "refused");
    let status = into_status(Box::new(tonic::Status::unavailable("down")));
    assert_eq!(status.code(), Code::Unavailable);
}

#[test]
fn tonic_timeouts_are_deadline_exceeded() {
    let status = into_status(Box::new(tonic::TimeoutExpired(())));
    assert_eq!(status.code(), Code::DeadlineExceeded);
}
