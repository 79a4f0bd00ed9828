//! What an operator sees: an axum service whose routes have named deadlines, their limits
//! from a TOML config, their outcomes exported to Prometheus through the `metrics` facade,
//! and a handler serving `punctual::report`'s snapshot and recent events as JSON.
//!
//!     cargo run -p punctual-tower --example axum_operators
//!
//! The `slow` route's downstream takes 2 s against a 100 ms limit (504); the `fast` one
//! answers in 10 ms. The example serves on a loopback port, sends 2 slow and 3 fast
//! requests, scrapes `/metrics` and `/deadlines` over HTTP, checks the counts, and exits
//! non-zero if any check fails.

use std::net::SocketAddr;
use std::time::Duration;

use axum::Router;
use axum::http::StatusCode;
use axum::routing::get;
use bytes::Bytes;
use http_body_util::{BodyExt, Empty};
use hyper_util::rt::TokioIo;
use metrics_exporter_prometheus::{Matcher, PrometheusBuilder, PrometheusHandle};
use punctual::adapters::tower::HttpDeadlineLayer;
use punctual::report::{self, Limits};

/// The service's deadline limits, as its config file would have them.
const LIMITS: &str = r#"
default = "1s"
[names]
slow = "100ms"
fast = "500ms"
"#;

async fn slow() -> &'static str {
    tokio::time::sleep(Duration::from_secs(2)).await;
    "too late"
}

async fn fast() -> &'static str {
    tokio::time::sleep(Duration::from_millis(10)).await;
    "42"
}

/// The snapshot and recent events, as JSON.
async fn deadlines() -> ([(http::HeaderName, &'static str); 1], String) {
    let json = serde_json::to_string_pretty(&report::snapshot()).expect("a snapshot serializes");
    ([(http::header::CONTENT_TYPE, "application/json")], json)
}

/// A route's layer: its deadline named after the route, its limit from the config.
fn deadline(route: &'static str) -> HttpDeadlineLayer {
    HttpDeadlineLayer::new(report::limit_for(route)).named(route)
}

/// GETs `path` on a new connection: the status and the body.
async fn fetch(addr: SocketAddr, path: &str) -> (StatusCode, Bytes) {
    let stream = tokio::net::TcpStream::connect(addr).await.expect("connect");
    let (mut sender, conn) = hyper::client::conn::http1::handshake(TokioIo::new(stream))
        .await
        .expect("handshake");
    tokio::spawn(conn);
    let request = http::Request::get(path)
        .header("host", "localhost")
        .body(Empty::<Bytes>::new())
        .expect("request");
    let response = sender.send_request(request).await.expect("response");
    let status = response.status();
    let body = response
        .into_body()
        .collect()
        .await
        .expect("body")
        .to_bytes();
    (status, body)
}

/// The value of the first sample of `metric` whose labels include each of `labels`.
fn sample(scrape: &str, metric: &str, labels: &[&str]) -> Option<f64> {
    scrape
        .lines()
        .filter(|line| line.starts_with(metric) && line[metric.len()..].starts_with('{'))
        .find(|line| labels.iter().all(|l| line.contains(l)))
        .and_then(|line| line.rsplit(' ').next()?.parse().ok())
}

fn install_prometheus() -> PrometheusHandle {
    PrometheusBuilder::new()
        .set_buckets_for_metric(
            Matcher::Full("punctual_deadline_used_seconds".into()),
            &[0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5],
        )
        .expect("buckets")
        .install_recorder()
        .expect("a recorder")
}

#[tokio::main]
async fn main() {
    let prometheus = install_prometheus();
    report::install_limits(Limits::from_toml(LIMITS).expect("valid limits"));
    let app = Router::new()
        .route("/slow", get(slow).route_layer(deadline("slow")))
        .route("/fast", get(fast).route_layer(deadline("fast")))
        .route(
            "/metrics",
            get(move || std::future::ready(prometheus.render())),
        )
        .route("/deadlines", get(deadlines));
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
        .await
        .expect("bind");
    let addr = listener.local_addr().expect("address");
    tokio::spawn(async move { axum::serve(listener, app).await.expect("serve") });

    let mut failures = 0;
    let mut check = |ok: bool, what: &str| {
        println!("{} {what}", if ok { "ok    " } else { "FAILED" });
        failures += usize::from(!ok);
    };
    for _ in 0..2 {
        let (status, _) = fetch(addr, "/slow").await;
        check(status == StatusCode::GATEWAY_TIMEOUT, "GET /slow: 504");
    }
    for _ in 0..3 {
        let (status, body) = fetch(addr, "/fast").await;
        check(
            status == StatusCode::OK && body == "42",
            "GET /fast: 200 \"42\"",
        );
    }

    let (status, body) = fetch(addr, "/metrics").await;
    let scrape = String::from_utf8_lossy(&body);
    check(status == StatusCode::OK, "GET /metrics: 200");
    let outcomes = "punctual_deadline_outcomes_total";
    let slow_elapsed = sample(
        &scrape,
        outcomes,
        &[r#"name="slow""#, r#"outcome="elapsed""#],
    );
    let fast_completed = sample(
        &scrape,
        outcomes,
        &[r#"name="fast""#, r#"outcome="completed""#],
    );
    let fast_used = sample(
        &scrape,
        "punctual_deadline_used_seconds_count",
        &[r#"name="fast""#],
    );
    let slow_limit = sample(
        &scrape,
        "punctual_deadline_limit_seconds",
        &[r#"name="slow""#],
    );
    check(slow_elapsed == Some(2.0), "metrics: slow elapsed 2");
    check(fast_completed == Some(3.0), "metrics: fast completed 3");
    check(
        fast_used == Some(3.0),
        "metrics: fast time-used histogram holds 3",
    );
    check(slow_limit == Some(0.1), "metrics: slow limit 0.1 s");
    check(
        sample(
            &scrape,
            outcomes,
            &[r#"name="fast""#, r#"outcome="elapsed""#],
        )
        .is_none(),
        "metrics: fast never elapsed",
    );

    let (status, body) = fetch(addr, "/deadlines").await;
    let json: serde_json::Value = serde_json::from_slice(&body).expect("JSON");
    let name = |n: &str| {
        json["names"]
            .as_array()?
            .iter()
            .find(|r| r["name"] == n)
            .cloned()
    };
    check(status == StatusCode::OK, "GET /deadlines: 200");
    let slow_report = name("slow").unwrap_or_default();
    let fast_report = name("fast").unwrap_or_default();
    check(
        slow_report["counts"]["elapsed"] == 2,
        "snapshot: slow elapsed 2",
    );
    check(
        slow_report["limit_seconds"] == 0.1,
        "snapshot: slow limit 0.1 s, configured",
    );
    check(
        fast_report["counts"]["completed"] == 3,
        "snapshot: fast completed 3",
    );
    let recent = json["recent"].as_array().map_or(0, Vec::len);
    check(recent == 5, "snapshot: 5 recent events");
    if failures > 0 {
        println!("{scrape}\n{json:#}");
        println!("axum_operators: {failures} checks failed");
        std::process::exit(1);
    }
    println!("axum_operators: all checks passed");
}
