//! Deadline propagation: the client layer writes what is left of the caller's budget into
//! `grpc-timeout`, rounded down; a server layer with `.grpc_timeout()` runs the request
//! under it, so the callee stops when the caller stops waiting.

use std::convert::Infallible;
use std::time::Duration;

use http::{HeaderValue, Request, Response, StatusCode};
use punctual::prelude::*;
use punctual::wheel::DefaultWheel;
use punctual_tower::grpc_timeout::parse;
use punctual_tower::{BoxError, HttpDeadlineLayer, PropagateDeadlineLayer};
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use tokio::time::Instant;
use tower::{Layer, ServiceExt, service_fn};

const MS: Duration = Duration::from_millis(1);

/// A client whose "network" hands back the `grpc-timeout` it was sent.
fn echoing_client()
-> impl tower::Service<Request<()>, Response = Option<HeaderValue>, Error = BoxError, Future: Send>
+ Clone {
    PropagateDeadlineLayer::<DefaultWheel>::new().layer(service_fn(|req: Request<()>| async move {
        Ok::<_, Infallible>(req.headers().get("grpc-timeout").cloned())
    }))
}

#[tokio::test(start_paused = true)]
async fn the_remaining_budget_is_written_rounded_down() {
    let sent = punctual::budget(Duration::from_secs(2), async {
        tokio::time::sleep(Duration::from_millis(1234)).await;
        echoing_client().oneshot(Request::new(())).await.unwrap()
    })
    .await
    .unwrap()
    .unwrap();
    assert_eq!(sent, "766000u");
}

#[tokio::test(start_paused = true)]
async fn without_a_budget_the_request_goes_out_as_it_is() {
    let sent = echoing_client().oneshot(Request::new(())).await.unwrap();
    assert_eq!(sent, None);
}

#[tokio::test(start_paused = true)]
async fn preset_grpc_timeout_kept_if_shorter_else_replaced() {
    for (set, expected) in [("50m", "50m"), ("5S", "300000u")] {
        let request = Request::builder()
            .header("grpc-timeout", set)
            .body(())
            .unwrap();
        let sent = punctual::budget(300 * MS, echoing_client().oneshot(request))
            .await
            .unwrap()
            .unwrap();
        assert_eq!(sent.unwrap(), expected, "{set} on the request");
    }
}

/// A client that counts its calls and hands back the `grpc-timeout` it was sent.
fn counting_client(
    margin: Duration,
) -> (
    impl tower::Service<Request<()>, Response = Option<HeaderValue>, Error = BoxError>,
    Arc<AtomicUsize>,
) {
    let calls = Arc::new(AtomicUsize::new(0));
    let counted = Arc::clone(&calls);
    let client = PropagateDeadlineLayer::<DefaultWheel>::new()
        .margin(margin)
        .layer(service_fn(move |req: Request<()>| {
            counted.fetch_add(1, Ordering::SeqCst);
            async move { Ok::<_, Infallible>(req.headers().get("grpc-timeout").cloned()) }
        }));
    (client, calls)
}

#[tokio::test(start_paused = true)]
async fn a_spent_budget_fails_at_once_unsent() {
    let (client, calls) = counting_client(Duration::ZERO);
    let outcome = punctual::budget(10 * MS, async {
        // A blocking stretch that overruns the budget before the call is made.
        tokio::time::advance(20 * MS).await;
        client.oneshot(Request::new(())).await
    })
    .await;
    // The block's timer may see the budget first; if the call was made, it failed.
    if let Ok(call) = outcome {
        let elapsed = call.unwrap_err().downcast::<punctual::Elapsed>().unwrap();
        assert!(elapsed.is_budget());
    }
    assert_eq!(
        calls.load(Ordering::SeqCst),
        0,
        "a request left with no time"
    );
}

#[tokio::test(start_paused = true)]
async fn the_margin_is_taken_off_what_is_sent() {
    let (client, calls) = counting_client(20 * MS);
    let sent = punctual::budget(300 * MS, async {
        tokio::time::sleep(100 * MS).await;
        client.oneshot(Request::new(())).await.unwrap()
    })
    .await
    .unwrap();
    assert_eq!(sent.unwrap(), "180000u");
    assert_eq!(calls.load(Ordering::SeqCst), 1);
}

#[tokio::test(start_paused = true)]
async fn nothing_left_after_the_margin_fails_unsent() {
    for margin in [100 * MS, 150 * MS] {
        let (client, calls) = counting_client(margin);
        let call = punctual::budget(100 * MS, client.oneshot(Request::new(())))
            .named("lookup")
            .await
            .expect("the budget itself has not ended");
        let elapsed = call.unwrap_err().downcast::<punctual::Elapsed>().unwrap();
        assert!(elapsed.is_budget());
        assert_eq!(elapsed.name(), Some("lookup"));
        assert_eq!(elapsed.duration(), 100 * MS);
        assert_eq!(calls.load(Ordering::SeqCst), 0, "margin {margin:?}");
    }
}

/// The two ends in one process, with the "network" a direct call: the caller has 300 ms
/// left of its budget, the callee's layer would give 5 s, its handler wants 10 s. The
/// callee answers 504 at 300 ms, when the caller stops waiting.
#[tokio::test(start_paused = true)]
async fn the_callee_stops_when_the_callers_budget_ends() {
    let callee = HttpDeadlineLayer::<DefaultWheel>::new(Duration::from_secs(5))
        .grpc_timeout()
        .layer(service_fn(|_: Request<()>| async {
            tokio::time::sleep(Duration::from_secs(10)).await;
            Ok::<_, Infallible>(Response::new(String::new()))
        }));
    let (done, callee_done) = tokio::sync::mpsc::unbounded_channel();
    let client =
        PropagateDeadlineLayer::<DefaultWheel>::new().layer(service_fn(move |req: Request<()>| {
            let callee = callee.clone();
            let done = done.clone();
            // The callee runs in a task of its own, outside the caller's budget: only the
            // header carries it. It reports when it answered, and with what.
            async move {
                let answered = tokio::spawn(async move {
                    let response = callee.oneshot(req).await.unwrap();
                    done.send((response.status(), Instant::now())).unwrap();
                });
                answered.await.unwrap();
                Ok::<_, Infallible>(())
            }
        }));
    let start = Instant::now();
    // The caller ends at 1 s too: its own budget's timer or the callee's answer.
    let _ = punctual::budget(Duration::from_secs(1), async {
        tokio::time::sleep(700 * MS).await;
        client.oneshot(Request::new(())).await.unwrap()
    })
    .await;
    let mut callee_done = callee_done;
    let (status, at) = callee_done.recv().await.unwrap();
    assert_eq!(status, StatusCode::GATEWAY_TIMEOUT);
    assert_eq!(at - start, Duration::from_secs(1));
}

/// Rounding down never promises more than is left, whatever the unit.
#[test]
fn encoded_timeouts_never_exceed_what_is_left() {
    for nanos in [
        0,
        1,
        99_999_999,
        100_000_000,
        123_456_789_999,
        99_999_999_999_999,
        100_000_000_000_000,
        u64::MAX,
    ] {
        let left = Duration::from_nanos(nanos);
        let value = punctual_tower::grpc_timeout::encode(left);
        let sent = parse(value.as_bytes()).unwrap();
        assert!(sent <= left, "{value:?} for {left:?}");
    }
    let beyond = punctual_tower::grpc_timeout::encode(Duration::MAX);
    assert_eq!(beyond, "99999999H");
}

#[tokio::test(start_paused = true)]
async fn handler_deadline_is_also_bounded_by_the_header() {
    let svc = HttpDeadlineLayer::<DefaultWheel>::new(Duration::from_secs(5))
        .grpc_timeout()
        .layer(service_fn(|_: Request<()>| async {
            let start = Instant::now();
            let r = tokio::time::sleep(Duration::from_secs(10))
                .deadline(Duration::from_secs(2))
                .await;
            assert!(r.unwrap_err().is_budget());
            assert_eq!(start.elapsed(), 40 * MS);
            Ok::<_, Infallible>(Response::new(String::new()))
        }));
    let request = Request::builder()
        .header("grpc-timeout", "40m")
        .body(())
        .unwrap();
    let start = Instant::now();
    let _ = svc.oneshot(request).await.unwrap();
    assert_eq!(start.elapsed(), 40 * MS);
}
