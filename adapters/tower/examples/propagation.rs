//! Two services over loopback HTTP in one process, and a deadline that crosses the hop.
//!
//! The front service gives each request 400 ms. Its handler spends 150 ms on its own
//! work, then calls the back service through a hyper client wrapped in
//! `PropagateDeadlineLayer`, which writes what is left of the request's budget into
//! `grpc-timeout`. The back service's layer allows 10 s but takes the header
//! (`.grpc_timeout()`), so the back handler, whose work would take 5 s, is stopped when
//! the front stops waiting, not 10 s later.
//!
//!     cargo run -p punctual-tower --example propagation
//!
//! It checks what the back service saw and when it stopped, and exits non-zero if a
//! check fails. It runs on a `current_thread` runtime; on the multi-thread runtime the
//! budget follows the request's task from worker to worker in the same way (see the
//! guide).

use std::convert::Infallible;
use std::net::SocketAddr;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use bytes::Bytes;
use http::{Request, Response, StatusCode};
use http_body_util::{BodyExt, Empty, Full};
use hyper::body::Incoming;
use hyper_util::client::legacy::Client;
use hyper_util::client::legacy::connect::HttpConnector;
use hyper_util::rt::{TokioExecutor, TokioIo};
use hyper_util::service::TowerToHyperService;
use punctual::adapters::tower::{HttpDeadlineLayer, PropagateDeadlineLayer};
use tower::{Layer, Service, ServiceExt, service_fn};

const FRONT_LIMIT: Duration = Duration::from_millis(400);
const FRONT_WORK: Duration = Duration::from_millis(150);
const BACK_LIMIT: Duration = Duration::from_secs(10);
/// What a loaded machine may add to a deadline before the answer is seen.
const SLACK: Duration = Duration::from_millis(750);

/// What the back service saw: the `grpc-timeout` it was sent, and when its handler stopped.
#[derive(Default, Debug)]
struct Seen {
    timeout: Option<String>,
    stopped_at: Option<Instant>,
}

/// Records when it is dropped: the handler's work stopped.
struct StopClock(Arc<Mutex<Seen>>);

impl Drop for StopClock {
    fn drop(&mut self) {
        self.0.lock().unwrap().stopped_at = Some(Instant::now());
    }
}

/// Serves `svc` on a loopback port, one task per connection.
async fn serve<S>(svc: S) -> SocketAddr
where
    S: Service<
            Request<Incoming>,
            Response = Response<punctual::adapters::tower::DeadlineBody<Full<Bytes>>>,
            Error = Infallible,
        > + Clone
        + Send
        + 'static,
    S::Future: Send,
{
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    tokio::spawn(async move {
        loop {
            let (stream, _) = listener.accept().await.unwrap();
            let svc = TowerToHyperService::new(svc.clone());
            tokio::spawn(async move {
                let _ = hyper::server::conn::http1::Builder::new()
                    .serve_connection(TokioIo::new(stream), svc)
                    .await;
            });
        }
    });
    addr
}

#[tokio::main(flavor = "current_thread")]
async fn main() {
    let seen = Arc::new(Mutex::new(Seen::default()));

    // The back service: 10 s of its own, less if the caller says so.
    let back_seen = seen.clone();
    let back = HttpDeadlineLayer::new(BACK_LIMIT)
        .grpc_timeout()
        .layer(service_fn(move |req: Request<Incoming>| {
            let seen = back_seen.clone();
            async move {
                seen.lock().unwrap().timeout = req
                    .headers()
                    .get("grpc-timeout")
                    .map(|v| v.to_str().unwrap().to_owned());
                let _clock = StopClock(seen);
                tokio::time::sleep(Duration::from_secs(5)).await; // slow work
                Ok::<_, Infallible>(Response::new(Full::new(Bytes::from_static(b"done"))))
            }
        }));
    let back_addr = serve(back).await;

    // The front service: 400 ms per request; its calls carry what is left.
    let client = Client::builder(TokioExecutor::new()).build(HttpConnector::new());
    let client = PropagateDeadlineLayer::new().layer(client);
    let front =
        HttpDeadlineLayer::new(FRONT_LIMIT).layer(service_fn(move |_: Request<Incoming>| {
            let client = client.clone();
            async move {
                tokio::time::sleep(FRONT_WORK).await; // the front's own work
                let call = Request::get(format!("http://{back_addr}/"))
                    .body(Empty::<Bytes>::new())
                    .unwrap();
                let status = match client.oneshot(call).await {
                    Ok(response) => response.status(),
                    Err(_) => StatusCode::BAD_GATEWAY,
                };
                Ok::<_, Infallible>(Response::new(Full::new(Bytes::from(status.to_string()))))
            }
        }));
    let front_addr = serve(front).await;

    // A client of the front service.
    let outside: Client<_, Empty<Bytes>> =
        Client::builder(TokioExecutor::new()).build(HttpConnector::new());
    let start = Instant::now();
    let response = outside
        .get(format!("http://{front_addr}/").parse().unwrap())
        .await
        .expect("the front service answered");
    let status = response.status();
    let _ = response.into_body().collect().await;
    let took = start.elapsed();
    println!("front: {status} after {took:?}");
    // Let the back service finish stopping (it is on the same runtime).
    tokio::time::sleep(Duration::from_millis(50)).await;
    let seen = seen.lock().unwrap();
    println!("back: saw grpc-timeout {:?}", seen.timeout);

    let mut failures = Vec::new();
    if status != StatusCode::GATEWAY_TIMEOUT {
        failures.push(format!("the front answered {status}, not 504"));
    }
    if took < FRONT_LIMIT || took > FRONT_LIMIT + SLACK {
        failures.push(format!(
            "the front answered after {took:?}, not at {FRONT_LIMIT:?}"
        ));
    }
    // The back was told at most what was left after the front's work: under 250 ms.
    let told = seen
        .timeout
        .as_deref()
        .and_then(|v| punctual::adapters::tower::grpc_timeout::parse(v.as_bytes()).ok());
    match told {
        Some(told) if told <= FRONT_LIMIT - FRONT_WORK && !told.is_zero() => {}
        other => failures.push(format!("the back was told {other:?}, not what was left")),
    }
    match seen.stopped_at {
        Some(at) => {
            let stopped = at - start;
            println!("back: stopped after {stopped:?}");
            if stopped > FRONT_LIMIT + SLACK {
                failures.push(format!(
                    "the back stopped after {stopped:?}, past the front's deadline"
                ));
            }
        }
        None => failures.push(String::from("the back's handler never stopped")),
    }
    for failure in &failures {
        println!("  FAILED: {failure}");
    }
    if !failures.is_empty() {
        println!("propagation: {} checks failed", failures.len());
        std::process::exit(1);
    }
    println!("propagation: all checks passed");
}
