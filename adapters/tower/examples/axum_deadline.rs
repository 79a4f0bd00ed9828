//! An axum service with punctual's HTTP deadline layer. Every request has 250 ms; the
//! report handler calls a downstream that takes 2 s, allowing it 1 s, and the request's
//! budget cuts that call to what is left. The client gets `504 Gateway Timeout` at 250 ms,
//! and the quote handler, in time, answers as usual.
//!
//!     cargo run -p punctual-tower --example axum_deadline
//!
//! It serves on a loopback port, sends the two requests, checks the answers and their
//! timing, and exits non-zero if any check fails.

use std::net::SocketAddr;
use std::time::{Duration, Instant};

use axum::Router;
use axum::http::StatusCode;
use axum::routing::get;
use bytes::Bytes;
use http_body_util::{BodyExt, Empty};
use hyper_util::rt::TokioIo;
use punctual::adapters::tower::HttpDeadlineLayer;
use punctual::prelude::*;

const REQUEST_LIMIT: Duration = Duration::from_millis(250);

/// A downstream call that is slow today.
async fn downstream() -> String {
    tokio::time::sleep(Duration::from_secs(2)).await;
    String::from("report")
}

async fn report() -> Result<String, StatusCode> {
    // The call allows itself a second, but ends with the request's budget: at 250 ms.
    downstream()
        .deadline(Duration::from_secs(1))
        .await
        .map_err(|_| StatusCode::GATEWAY_TIMEOUT)
}

async fn quote() -> &'static str {
    tokio::time::sleep(Duration::from_millis(10)).await;
    "42"
}

/// GETs `path` on a new connection: the status, the body and how long it took.
async fn fetch(addr: SocketAddr, path: &str) -> (StatusCode, Bytes, Duration) {
    let stream = tokio::net::TcpStream::connect(addr).await.expect("connect");
    let (mut sender, conn) = hyper::client::conn::http1::handshake(TokioIo::new(stream))
        .await
        .expect("handshake");
    tokio::spawn(conn);
    let request = http::Request::get(path)
        .header("host", "localhost")
        .body(Empty::<Bytes>::new())
        .expect("request");
    let start = Instant::now();
    let response = sender.send_request(request).await.expect("response");
    let status = response.status();
    let body = response
        .into_body()
        .collect()
        .await
        .expect("body")
        .to_bytes();
    (status, body, start.elapsed())
}

#[tokio::main]
async fn main() {
    let app = Router::new()
        .route("/report", get(report))
        .route("/quote", get(quote))
        // 504 is the default; `.status(..)` chooses another.
        .layer(HttpDeadlineLayer::new(REQUEST_LIMIT).named("http request"));
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
        .await
        .expect("bind");
    let addr = listener.local_addr().expect("address");
    tokio::spawn(async move { axum::serve(listener, app).await.expect("serve") });

    let mut failures = 0;
    let (status, body, took) = fetch(addr, "/report").await;
    println!("GET /report: {status} after {took:?}");
    if status != StatusCode::GATEWAY_TIMEOUT || !body.is_empty() {
        println!("  FAILED: expected an empty 504, got {status} {body:?}");
        failures += 1;
    }
    // Never before the deadline; after it, within what a loaded machine adds.
    if took < REQUEST_LIMIT || took > REQUEST_LIMIT + Duration::from_millis(750) {
        println!("  FAILED: expected the answer at {REQUEST_LIMIT:?}");
        failures += 1;
    }
    let (status, body, took) = fetch(addr, "/quote").await;
    println!("GET /quote: {status} {body:?} after {took:?}");
    if status != StatusCode::OK || body != "42" {
        println!("  FAILED: expected 200 \"42\"");
        failures += 1;
    }
    if failures > 0 {
        println!("axum_deadline: {failures} checks failed");
        std::process::exit(1);
    }
    println!("axum_deadline: all checks passed");
}
