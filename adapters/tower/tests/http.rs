//! The HTTP flavour: the status of a timed-out response (default and chosen), gRPC
//! requests, and what a streaming body does when the deadline passes after the headers
//! are sent, in memory on tokio's paused clock and over a real hyper connection.

use std::convert::Infallible;
use std::future::pending;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use bytes::Bytes;
use http::{Request, Response, StatusCode};
use http_body_util::{BodyExt, Full, StreamBody};
use punctual::Elapsed;
use punctual::wheel::DefaultWheel;
use punctual_tower::HttpDeadlineLayer;
use tokio::time::Instant;
use tower::{Layer, ServiceExt, service_fn};

const MS: Duration = Duration::from_millis(1);

fn layer(limit: Duration) -> HttpDeadlineLayer<DefaultWheel> {
    HttpDeadlineLayer::new(limit)
}

async fn never(_: Request<()>) -> Result<Response<Full<Bytes>>, Infallible> {
    pending().await
}

#[tokio::test(start_paused = true)]
async fn late_request_gets_504_with_elapsed_in_extensions() {
    let start = Instant::now();
    let response = layer(80 * MS)
        .named("page")
        .layer(service_fn(never))
        .oneshot(Request::new(()))
        .await
        .unwrap();
    assert_eq!(start.elapsed(), 80 * MS);
    assert_eq!(response.status(), StatusCode::GATEWAY_TIMEOUT);
    let elapsed = response.extensions().get::<Elapsed>().unwrap();
    assert_eq!(elapsed.name(), Some("page"));
    assert_eq!(elapsed.duration(), 80 * MS);
    assert!(
        response
            .into_body()
            .collect()
            .await
            .unwrap()
            .to_bytes()
            .is_empty()
    );
}

#[tokio::test(start_paused = true)]
async fn the_status_is_the_one_chosen() {
    let response = layer(10 * MS)
        .status(StatusCode::SERVICE_UNAVAILABLE)
        .layer(service_fn(never))
        .oneshot(Request::new(()))
        .await
        .unwrap();
    assert_eq!(response.status(), StatusCode::SERVICE_UNAVAILABLE);
}

#[tokio::test(start_paused = true)]
async fn a_late_grpc_request_is_answered_deadline_exceeded() {
    let request = Request::builder()
        .header("content-type", "application/grpc+proto")
        .header("grpc-timeout", "20m")
        .body(())
        .unwrap();
    let start = Instant::now();
    let response = layer(Duration::from_secs(1))
        .grpc_timeout()
        .layer(service_fn(never))
        .oneshot(request)
        .await
        .unwrap();
    assert_eq!(start.elapsed(), 20 * MS);
    assert_eq!(response.status(), StatusCode::OK);
    assert_eq!(response.headers()["grpc-status"], "4");
    assert_eq!(response.headers()["content-type"], "application/grpc");
}

#[tokio::test(start_paused = true)]
async fn a_response_in_time_passes_with_its_body() {
    let response = layer(80 * MS)
        .layer(service_fn(|_: Request<()>| async {
            tokio::time::sleep(79 * MS).await;
            Ok::<_, Infallible>(Response::new(Full::new(Bytes::from_static(b"hello"))))
        }))
        .oneshot(Request::new(()))
        .await
        .unwrap();
    assert_eq!(response.status(), StatusCode::OK);
    let body = response.into_body().collect().await.unwrap().to_bytes();
    assert_eq!(body, "hello");
}

/// Sets its flag when dropped.
struct DropFlag(Arc<AtomicBool>);

impl Drop for DropFlag {
    fn drop(&mut self) {
        self.0.store(true, Ordering::SeqCst);
    }
}

type Frames = StreamBody<
    std::pin::Pin<
        Box<dyn futures_util::Stream<Item = Result<http_body::Frame<Bytes>, Infallible>> + Send>,
    >,
>;

/// A body that yields a chunk every `every`, forever, and sets `dropped` when dropped.
fn ticking_body(every: Duration, dropped: Arc<AtomicBool>) -> Frames {
    let guard = DropFlag(dropped);
    let stream = futures_util::stream::unfold((0u32, guard), move |(n, guard)| async move {
        tokio::time::sleep(every).await;
        let frame = http_body::Frame::data(Bytes::from(format!("chunk {n}\n")));
        Some((Ok(frame), (n + 1, guard)))
    });
    StreamBody::new(Box::pin(stream))
}

/// A handler that answers at once with a body of a chunk every 30 ms.
fn streaming<B>(
    dropped: Arc<AtomicBool>,
) -> impl tower::Service<Request<B>, Response = Response<Frames>, Error = Infallible, Future: Send> + Clone
{
    service_fn(move |_: Request<B>| {
        let body = ticking_body(30 * MS, dropped.clone());
        async move { Ok::<_, Infallible>(Response::new(body)) }
    })
}

#[tokio::test(start_paused = true)]
async fn body_streaming_at_deadline_ends_with_elapsed() {
    let dropped = Arc::new(AtomicBool::new(false));
    let start = Instant::now();
    let response = layer(100 * MS)
        .layer(streaming(dropped.clone()))
        .oneshot(Request::new(()))
        .await
        .unwrap();
    assert_eq!(
        response.status(),
        StatusCode::OK,
        "the headers went out in time"
    );
    let mut body = response.into_body();
    let mut chunks = 0;
    let err = loop {
        match body.frame().await {
            Some(Ok(_)) => chunks += 1,
            Some(Err(err)) => break err,
            None => panic!("the body ended as if complete"),
        }
    };
    assert_eq!(start.elapsed(), 100 * MS);
    assert_eq!(chunks, 3, "chunks at 30, 60 and 90 ms");
    assert_eq!(err.downcast_ref::<Elapsed>().unwrap().duration(), 100 * MS);
    assert!(
        dropped.load(Ordering::SeqCst),
        "the inner body was not dropped"
    );
    assert!(body.frame().await.is_none());
    assert!(http_body::Body::is_end_stream(&body));
}

#[tokio::test(start_paused = true)]
async fn body_read_after_deadline_is_cut_before_next_frame() {
    let response = layer(50 * MS)
        .layer(service_fn(|_: Request<()>| async {
            let always_ready = futures_util::stream::repeat_with(|| {
                Ok::<_, Infallible>(http_body::Frame::data(Bytes::from_static(b"x")))
            });
            Ok::<_, Infallible>(Response::new(StreamBody::new(always_ready)))
        }))
        .oneshot(Request::new(()))
        .await
        .unwrap();
    let mut body = response.into_body();
    assert!(body.frame().await.unwrap().is_ok());
    tokio::time::sleep(60 * MS).await;
    let next = body.frame().await.unwrap();
    assert!(next.unwrap_err().downcast_ref::<Elapsed>().is_some());
}

#[tokio::test(start_paused = true)]
async fn an_unbounded_body_streams_past_the_deadline() {
    let dropped = Arc::new(AtomicBool::new(false));
    let start = Instant::now();
    let response = layer(100 * MS)
        .unbounded_body()
        .layer(streaming(dropped.clone()))
        .oneshot(Request::new(()))
        .await
        .unwrap();
    let mut body = response.into_body();
    for _ in 0..6 {
        assert!(body.frame().await.unwrap().is_ok());
    }
    assert_eq!(start.elapsed(), 180 * MS);
    assert!(!dropped.load(Ordering::SeqCst));
}

/// Over a real HTTP/1.1 connection on loopback: the status line and headers arrive, then
/// the body stops short of its end when the deadline passes. The client sees an error
/// reading the body, never a body that looks complete.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn over_hyper_body_cut_at_deadline_is_truncated() {
    use hyper_util::rt::TokioIo;
    use hyper_util::service::TowerToHyperService;

    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    let dropped = Arc::new(AtomicBool::new(false));
    let svc = layer(300 * MS).layer(streaming(dropped.clone()));
    tokio::spawn(async move {
        let (stream, _) = listener.accept().await.unwrap();
        let _ = hyper::server::conn::http1::Builder::new()
            .serve_connection(TokioIo::new(stream), TowerToHyperService::new(svc))
            .await;
    });

    let stream = tokio::net::TcpStream::connect(addr).await.unwrap();
    let (mut sender, conn) = hyper::client::conn::http1::handshake(TokioIo::new(stream))
        .await
        .unwrap();
    tokio::spawn(conn);
    let start = std::time::Instant::now();
    let response = sender
        .send_request(Request::new(http_body_util::Empty::<Bytes>::new()))
        .await
        .unwrap();
    assert_eq!(response.status(), StatusCode::OK);
    let mut body = response.into_body();
    let mut chunks = 0;
    let outcome = loop {
        match body.frame().await {
            Some(Ok(_)) => chunks += 1,
            Some(Err(err)) => break Err(err),
            None => break Ok(()),
        }
    };
    let took = start.elapsed();
    assert!(
        outcome.is_err(),
        "the body ended as if complete after {chunks} chunks"
    );
    assert!(chunks >= 1, "no chunk arrived before the deadline");
    assert!(took >= 300 * MS, "cut early: {took:?}");
    assert!(took < Duration::from_secs(3), "cut late: {took:?}");
    assert!(dropped.load(Ordering::SeqCst));
}

#[tokio::test(start_paused = true)]
async fn grpc_body_cut_with_deadline_exceeded_trailers() {
    let dropped = Arc::new(AtomicBool::new(false));
    let request = Request::builder()
        .header("content-type", "application/grpc")
        .body(())
        .unwrap();
    let response = layer(100 * MS)
        .layer(streaming(dropped.clone()))
        .oneshot(request)
        .await
        .unwrap();
    let mut body = response.into_body();
    let mut chunks = 0;
    let trailers = loop {
        let frame = body.frame().await.expect("ended without trailers").unwrap();
        match frame.into_trailers() {
            Ok(trailers) => break trailers,
            Err(_data) => chunks += 1,
        }
    };
    assert_eq!(chunks, 3);
    assert_eq!(trailers["grpc-status"], "4");
    assert!(dropped.load(Ordering::SeqCst));
    assert!(body.frame().await.is_none());
}
