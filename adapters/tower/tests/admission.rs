//! Admission: a layer with `refuse_below` answers at once, before the handler runs, a
//! request whose deadline leaves too little time, and counts it in the wheel's stats.

use std::convert::Infallible;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

use http::{Request, Response, StatusCode};
use punctual::Elapsed;
use punctual::adapters::tokio::start;
use punctual_tower::{DeadlineLayer, HttpDeadlineLayer};
use tower::{Layer, ServiceExt, service_fn};

const MS: Duration = Duration::from_millis(1);

/// A handler that counts its calls and answers at once.
fn counted() -> (
    impl tower::Service<Request<()>, Response = Response<String>, Error = Infallible, Future: Send>
    + Clone,
    Arc<AtomicUsize>,
) {
    let calls = Arc::new(AtomicUsize::new(0));
    let counter = Arc::clone(&calls);
    let svc = service_fn(move |_: Request<()>| {
        counter.fetch_add(1, Ordering::SeqCst);
        async { Ok::<_, Infallible>(Response::new(String::new())) }
    });
    (svc, calls)
}

fn request(grpc_timeout: &str, grpc: bool) -> Request<()> {
    let mut request = Request::builder().header("grpc-timeout", grpc_timeout);
    if grpc {
        request = request.header("content-type", "application/grpc");
    }
    request.body(()).unwrap()
}

#[tokio::test(start_paused = true)]
async fn http_refuses_short_deadlines_before_the_handler() {
    let wheel = start();
    let (handler, calls) = counted();
    let svc = HttpDeadlineLayer::on(wheel, Duration::from_secs(5))
        .grpc_timeout()
        .named("lookup")
        .refuse_below(10 * MS)
        .layer(handler);

    let refused = svc.clone().oneshot(request("9m", false)).await.unwrap();
    assert_eq!(refused.status(), StatusCode::GATEWAY_TIMEOUT);
    let elapsed = refused.extensions().get::<Elapsed>().unwrap();
    assert_eq!(
        (elapsed.duration(), elapsed.name()),
        (9 * MS, Some("lookup"))
    );

    let grpc = svc.clone().oneshot(request("1m", true)).await.unwrap();
    assert_eq!(grpc.status(), StatusCode::OK);
    assert_eq!(grpc.headers()["grpc-status"], "4");

    assert_eq!(
        calls.load(Ordering::SeqCst),
        0,
        "a refused request was handled"
    );
    assert_eq!(wheel.stats().refused, 2);

    // At the least, or more: handled.
    for enough in ["10m", "2S"] {
        let ok = svc.clone().oneshot(request(enough, false)).await.unwrap();
        assert_eq!(ok.status(), StatusCode::OK, "{enough}");
    }
    assert_eq!(calls.load(Ordering::SeqCst), 2);
    assert_eq!(wheel.stats().refused, 2);
}

#[tokio::test(start_paused = true)]
async fn generic_layer_refuses_with_the_deadlines_elapsed() {
    let wheel = start();
    let (handler, calls) = counted();
    let svc = DeadlineLayer::on(wheel, Duration::from_secs(1))
        .grpc_timeout()
        .refuse_below(50 * MS)
        .layer(handler);
    let err = svc
        .clone()
        .oneshot(request("20m", false))
        .await
        .unwrap_err();
    let elapsed = err.downcast::<Elapsed>().unwrap();
    assert_eq!(
        (elapsed.duration(), elapsed.name()),
        (20 * MS, Some("request"))
    );
    assert!(!elapsed.is_budget());
    assert_eq!(calls.load(Ordering::SeqCst), 0);
    assert_eq!(wheel.stats().refused, 1);
    svc.oneshot(request("50m", false)).await.unwrap();
    assert_eq!(calls.load(Ordering::SeqCst), 1);
}

#[tokio::test(start_paused = true)]
async fn off_by_default_even_for_a_zero_deadline() {
    let wheel = start();
    let (handler, calls) = counted();
    let svc = HttpDeadlineLayer::on(wheel, Duration::from_secs(1))
        .grpc_timeout()
        .layer(handler);
    // A handler ready at once wins even at zero, as any deadline's inner future does.
    let response = svc.oneshot(request("0n", false)).await.unwrap();
    assert_eq!(response.status(), StatusCode::OK);
    assert_eq!(calls.load(Ordering::SeqCst), 1);
    assert_eq!(wheel.stats().refused, 0);
}
