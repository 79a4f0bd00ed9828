//! gRPC deadlines across two tonic services, with no per-call code.
//!
//! A caller gives its work a 400 ms budget and calls the front service through a tonic
//! `Channel` wrapped in `PropagateDeadlineLayer`: every call carries what is left of the
//! budget in `grpc-timeout`. The front relays the call to the back service the same way,
//! less a 20 ms margin per hop. The back handler would take 10 s; its layer stops it when
//! its share of the budget is spent and answers `DEADLINE_EXCEEDED`, which comes back to
//! the caller as code 4, never `CANCELLED`.
//!
//!     cargo run -p punctual-tower --example tonic_deadline --features tonic
//!
//! The services are served through axum (tonic's `Routes`), because tonic's own `Server`
//! times each call out by `grpc-timeout` itself and answers `CANCELLED`. It checks what it
//! prints and exits non-zero if a check fails.

#[path = "../tests/support/echo_grpc.rs"]
mod echo_grpc;

use std::net::SocketAddr;
use std::process::ExitCode;
use std::sync::Arc;
use std::time::{Duration, Instant};

use echo_grpc::{Downstream, EchoClient, EchoRequest, EchoServer, Seen, serve};
use punctual::adapters::tower::{PropagateDeadlineLayer, grpc_timeout, into_status};
use tonic::Code;
use tonic::transport::Channel;
use tower::ServiceBuilder;

/// A tonic channel to `addr`.
async fn connect(addr: SocketAddr) -> Channel {
    let uri = format!("http://{addr}");
    Channel::from_shared(uri).unwrap().connect().await.unwrap()
}

#[tokio::main]
async fn main() -> ExitCode {
    let back_seen = Arc::new(Seen::default());
    let back = serve(EchoServer::new(back_seen.clone())).await;
    let to_back = ServiceBuilder::new()
        .map_err(into_status)
        .layer(PropagateDeadlineLayer::new().margin(Duration::from_millis(20)))
        .service(connect(back).await);
    let to_back = EchoClient::new(to_back);
    let downstream: Downstream = Arc::new(move |request| {
        let mut back = to_back.clone();
        Box::pin(async move { back.unary(request).await.map(|r| r.into_inner()) })
    });
    let front_seen = Arc::new(Seen::default());
    let front = serve(EchoServer::relaying(front_seen.clone(), downstream)).await;
    let mut client = EchoClient::new(
        ServiceBuilder::new()
            .map_err(into_status)
            .layer(PropagateDeadlineLayer::new().margin(Duration::from_millis(20)))
            .service(connect(front).await),
    );

    let start = Instant::now();
    let request = EchoRequest {
        message: "hello".into(),
        wait_ms: 10_000,
        ..Default::default()
    };
    let outcome = punctual::budget(Duration::from_millis(400), client.unary(request)).await;
    let took = start.elapsed();
    let code = match outcome {
        Ok(Err(status)) => status.code(),
        Ok(Ok(_)) => Code::Ok,
        Err(_) => Code::DeadlineExceeded, // the caller's own budget ended first
    };
    let told = |seen: &Seen| -> Vec<Duration> {
        let told = seen.timeouts.lock().unwrap();
        told.iter()
            .filter_map(|t| grpc_timeout::parse(t.as_bytes()).ok())
            .collect()
    };
    let (front_told, back_told) = (told(&front_seen), told(&back_seen));
    println!("caller: {code:?} after {took:?} (budget 400 ms)");
    println!("front was told {front_told:?}, back was told {back_told:?}");

    tokio::time::sleep(Duration::from_millis(200)).await;
    let checks = [
        (
            "the caller got DEADLINE_EXCEEDED",
            code == Code::DeadlineExceeded,
        ),
        (
            "within the budget, give or take",
            took < Duration::from_secs(2),
        ),
        (
            "each hop was told less, by the margin at least",
            front_told.len() == 1
                && back_told.len() == 1
                && front_told[0] <= Duration::from_millis(380)
                && back_told[0] <= front_told[0] - Duration::from_millis(20),
        ),
        ("the back handler was stopped", back_seen.cancelled() == 1),
        ("the front handler was stopped", front_seen.cancelled() == 1),
    ];
    let mut ok = true;
    for (check, passed) in checks {
        println!("{} {check}", if passed { "ok  " } else { "FAIL" });
        ok &= passed;
    }
    if ok {
        ExitCode::SUCCESS
    } else {
        ExitCode::FAILURE
    }
}
