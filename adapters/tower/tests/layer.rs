//! The generic layer: the error it boxes, the budget it puts the handling under, what it
//! does not cover (`poll_ready`), nesting with an enclosing budget, and `grpc-timeout`.
//! On tokio's paused clock, which the default deadlines follow: exact instants, no real
//! time.

use std::convert::Infallible;
use std::future::pending;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::task::{Context, Poll};
use std::time::Duration;

use punctual::Elapsed;
use punctual::prelude::*;
use punctual::wheel::DefaultWheel;
use punctual_tower::{BoxError, DeadlineLayer};
use tokio::time::Instant;
use tower::{Layer, Service, ServiceBuilder, ServiceExt, service_fn};

const MS: Duration = Duration::from_millis(1);

fn layer(limit: Duration) -> DeadlineLayer<DefaultWheel> {
    DeadlineLayer::new(limit)
}

fn elapsed(err: &BoxError) -> Elapsed {
    *err.downcast_ref::<Elapsed>()
        .expect("the error is an Elapsed")
}

/// Sets its flag when dropped: the inner future is gone.
struct DropFlag(Arc<AtomicBool>);

impl Drop for DropFlag {
    fn drop(&mut self) {
        self.0.store(true, Ordering::SeqCst);
    }
}

#[tokio::test(start_paused = true)]
async fn late_request_gets_named_elapsed_and_future_dropped() {
    let dropped = Arc::new(AtomicBool::new(false));
    let flag = dropped.clone();
    let svc = ServiceBuilder::new()
        .layer(layer(40 * MS).named("checkout"))
        .service(service_fn(move |()| {
            let guard = DropFlag(flag.clone());
            async move {
                let _guard = guard;
                pending::<Result<(), Infallible>>().await
            }
        }));
    let start = Instant::now();
    let err = svc.oneshot(()).await.unwrap_err();
    assert_eq!(start.elapsed(), 40 * MS);
    let elapsed = elapsed(&err);
    assert_eq!(elapsed.name(), Some("checkout"));
    assert_eq!(elapsed.duration(), 40 * MS);
    assert!(
        dropped.load(Ordering::SeqCst),
        "the inner future was not dropped"
    );
}

#[tokio::test(start_paused = true)]
async fn an_unnamed_layer_is_named_request() {
    let svc = layer(5 * MS).layer(service_fn(|()| pending::<Result<(), Infallible>>()));
    let err = svc.oneshot(()).await.unwrap_err();
    assert_eq!(elapsed(&err).name(), Some("request"));
}

#[tokio::test(start_paused = true)]
async fn responses_and_errors_in_time_pass_through() {
    let ok = layer(40 * MS).layer(service_fn(|x: u32| async move {
        tokio::time::sleep(39 * MS).await;
        Ok::<_, Infallible>(x * 2)
    }));
    assert_eq!(ok.oneshot(21).await.unwrap(), 42);
    let failing = layer(40 * MS).layer(service_fn(|()| async {
        Err::<(), _>(std::io::Error::other("refused"))
    }));
    let err = failing.oneshot(()).await.unwrap_err();
    assert!(err.downcast_ref::<Elapsed>().is_none());
    assert_eq!(err.to_string(), "refused");
}

/// The point of the layer: a deadline the handler gives a downstream call, longer than
/// the request's, is cut to what is left of the request's budget.
#[tokio::test(start_paused = true)]
async fn handler_deadlines_end_with_the_requests_budget() {
    let svc = layer(100 * MS).named("api").layer(service_fn(|()| async {
        tokio::time::sleep(30 * MS).await;
        let start = Instant::now();
        let downstream = tokio::time::sleep(Duration::from_secs(10))
            .deadline(Duration::from_secs(1))
            .await;
        Ok::<_, Infallible>((downstream, start.elapsed()))
    }));
    // The handler sees its downstream deadline end with the budget, 70 ms after it started,
    // and returns before the layer's own timer is looked at.
    match svc.oneshot(()).await {
        Ok((downstream, took)) => {
            let cut = downstream.unwrap_err();
            assert!(cut.is_budget());
            assert_eq!(cut.duration(), 100 * MS);
            assert_eq!(took, 70 * MS);
        }
        Err(err) => assert!(elapsed(&err).is_budget()),
    }
}

/// A service that is not ready for 500 ms, then answers after 30 ms.
struct SlowToBeReady {
    ready_at: Option<std::pin::Pin<Box<tokio::time::Sleep>>>,
}

impl Service<()> for SlowToBeReady {
    type Response = ();
    type Error = Infallible;
    type Future = std::pin::Pin<Box<dyn Future<Output = Result<(), Infallible>> + Send>>;

    fn poll_ready(&mut self, cx: &mut Context<'_>) -> Poll<Result<(), Infallible>> {
        let sleep = self
            .ready_at
            .get_or_insert_with(|| Box::pin(tokio::time::sleep(500 * MS)));
        sleep.as_mut().poll(cx).map(Ok)
    }

    fn call(&mut self, (): ()) -> Self::Future {
        Box::pin(async {
            tokio::time::sleep(30 * MS).await;
            Ok(())
        })
    }
}

#[tokio::test(start_paused = true)]
async fn the_deadline_does_not_cover_poll_ready() {
    let mut svc = layer(100 * MS).layer(SlowToBeReady { ready_at: None });
    let start = Instant::now();
    let ready = svc.ready().await.unwrap();
    assert_eq!(start.elapsed(), 500 * MS);
    // 500 ms waiting for readiness, then 30 ms for the response: within the 100 ms.
    ready.call(()).await.unwrap();
    assert_eq!(start.elapsed(), 530 * MS);
}

#[tokio::test(start_paused = true)]
async fn earlier_outer_budget_ends_request_with_own_elapsed() {
    let svc = layer(Duration::from_secs(1))
        .named("inner")
        .layer(service_fn(|()| pending::<Result<(), Infallible>>()));
    let start = Instant::now();
    let outcome = punctual::budget(60 * MS, svc.oneshot(()))
        .named("outer")
        .await;
    assert_eq!(start.elapsed(), 60 * MS);
    // The block's own timer, or the request's cut to it: the outer budget either way.
    let elapsed = match outcome {
        Err(e) => e,
        Ok(inner) => elapsed(&inner.unwrap_err()),
    };
    assert!(elapsed.is_budget());
    assert_eq!(elapsed.duration(), 60 * MS);
}

fn grpc_request(timeout: &'static str) -> http::Request<()> {
    http::Request::builder()
        .header("grpc-timeout", timeout)
        .body(())
        .unwrap()
}

async fn grpc_layer_fires_after(timeout: &'static str) -> (Duration, Elapsed) {
    let svc = layer(100 * MS)
        .grpc_timeout()
        .layer(service_fn(|_: http::Request<()>| {
            pending::<Result<(), Infallible>>()
        }));
    let start = Instant::now();
    let err = svc.oneshot(grpc_request(timeout)).await.unwrap_err();
    (start.elapsed(), elapsed(&err))
}

#[tokio::test(start_paused = true)]
async fn grpc_timeout_shortens_deadline_but_never_lengthens() {
    let (after, elapsed) = grpc_layer_fires_after("30m").await;
    assert_eq!(after, 30 * MS);
    assert_eq!(elapsed.duration(), 30 * MS);
    assert_eq!(elapsed.name(), Some("request"));
    let (after, _) = grpc_layer_fires_after("30000000n").await;
    assert_eq!(after, 30 * MS);
    let (after, _) = grpc_layer_fires_after("5S").await;
    assert_eq!(
        after,
        100 * MS,
        "a longer grpc-timeout lengthened the layer's limit"
    );
    let (after, _) = grpc_layer_fires_after("0n").await;
    assert_eq!(after, Duration::ZERO);
}

#[tokio::test(start_paused = true)]
async fn a_malformed_grpc_timeout_leaves_the_layers_limit() {
    for hostile in [
        "30",
        "m",
        "123456789m",
        "-5m",
        "5 m",
        "5mm",
        "+5m",
        "5x",
        "٣m",
    ] {
        let (after, _) = grpc_layer_fires_after(hostile).await;
        assert_eq!(after, 100 * MS, "{hostile:?}");
    }
}

#[tokio::test(start_paused = true)]
async fn without_grpc_timeout_the_layer_ignores_the_header() {
    let svc = layer(100 * MS).layer(service_fn(|_: http::Request<()>| {
        pending::<Result<(), Infallible>>()
    }));
    let start = Instant::now();
    svc.oneshot(grpc_request("1m")).await.unwrap_err();
    assert_eq!(start.elapsed(), 100 * MS);
}

/// On the multi-thread runtime, a handler's task may move between workers, each with a
/// default wheel of its own; whichever worker its inner deadline starts on, the request
/// ends at its deadline, by the layer's own timer if not by the cut inner deadline.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn multi_thread_every_request_ends_at_its_deadline() {
    let svc = layer(100 * MS).layer(service_fn(|i: u32| async move {
        for _ in 0..(i % 7) {
            tokio::task::yield_now().await;
            tokio::time::sleep(MS).await;
        }
        pending::<()>().deadline(Duration::from_secs(30)).await?;
        Ok::<_, Elapsed>(())
    }));
    let start = std::time::Instant::now();
    let requests: Vec<_> = (0..64)
        .map(|i| tokio::spawn(svc.clone().oneshot(i)))
        .collect();
    for request in requests {
        let err = request.await.unwrap().unwrap_err();
        let elapsed = elapsed(&err);
        assert!(elapsed.is_budget(), "{elapsed:?}");
        assert_eq!(elapsed.duration(), 100 * MS);
    }
    let took = start.elapsed();
    assert!(took >= 100 * MS, "early: {took:?}");
    assert!(took < Duration::from_secs(5), "late: {took:?}");
}
