//! `count_readiness`: the time a request waits in `poll_ready` counts against its
//! deadline, and a wait that uses up the layer's limit fails the next call at once (never
//! `poll_ready`, which would mark the service failed); off, the deadline starts at the
//! call, as tower's `Timeout` does.

use std::convert::Infallible;
use std::future::Future;
use std::pin::Pin;
use std::task::{Context, Poll};
use std::time::Duration;

use punctual::wheel::DefaultWheel;
use punctual_tower::DeadlineLayer;
use tokio::time::{Instant, Sleep};
use tower::{Layer, Service, ServiceExt};

const MS: Duration = Duration::from_millis(1);

/// A service that becomes ready `after` its first `poll_ready`, and whose work takes
/// `work`.
struct ReadyAfter {
    after: Duration,
    gate: Option<Pin<Box<Sleep>>>,
    work: Duration,
}

impl ReadyAfter {
    fn new(after: Duration, work: Duration) -> Self {
        Self {
            after,
            gate: None,
            work,
        }
    }
}

impl Service<()> for ReadyAfter {
    type Response = ();
    type Error = Infallible;
    type Future = Pin<Box<dyn Future<Output = Result<(), Infallible>> + Send>>;

    fn poll_ready(&mut self, cx: &mut Context<'_>) -> Poll<Result<(), Infallible>> {
        let after = self.after;
        let gate = self
            .gate
            .get_or_insert_with(|| Box::pin(tokio::time::sleep(after)));
        gate.as_mut().poll(cx).map(Ok)
    }

    fn call(&mut self, (): ()) -> Self::Future {
        let work = self.work;
        Box::pin(async move {
            tokio::time::sleep(work).await;
            Ok(())
        })
    }
}

#[tokio::test(start_paused = true)]
async fn the_wait_for_readiness_counts_against_the_deadline() {
    let layer = DeadlineLayer::<DefaultWheel>::new(100 * MS).count_readiness();
    let svc = layer.layer(ReadyAfter::new(40 * MS, 80 * MS));
    let start = Instant::now();
    let err = svc.oneshot(()).await.unwrap_err();
    assert!(err.downcast_ref::<punctual::Elapsed>().is_some());
    // 40 ms waiting, then 60 ms of the 80 ms of work: the request's 100 ms in all.
    assert_eq!(start.elapsed(), 100 * MS);
}

#[tokio::test(start_paused = true)]
async fn off_the_deadline_starts_at_the_call() {
    let svc = DeadlineLayer::<DefaultWheel>::new(100 * MS).layer(ReadyAfter::new(40 * MS, 80 * MS));
    let start = Instant::now();
    svc.oneshot(()).await.unwrap();
    assert_eq!(start.elapsed(), 120 * MS);
}

#[tokio::test(start_paused = true)]
async fn a_wait_past_the_limit_fails_the_next_call() {
    let mut svc = DeadlineLayer::<DefaultWheel>::new(30 * MS)
        .named("ready")
        .count_readiness()
        .layer(ReadyAfter::new(Duration::from_secs(60), MS));
    let start = Instant::now();
    // Ready, not failed: a `Buffer` in front keeps working.
    let ready = svc.ready().await.map(|_| ());
    assert!(ready.is_ok());
    assert_eq!(start.elapsed(), 30 * MS);
    let err = svc.call(()).await.unwrap_err();
    let elapsed = err.downcast::<punctual::Elapsed>().unwrap();
    assert_eq!(
        (elapsed.duration(), elapsed.name()),
        (30 * MS, Some("ready"))
    );
    assert_eq!(start.elapsed(), 30 * MS, "failed at once");
}

#[tokio::test(start_paused = true)]
async fn behind_a_buffer_a_wait_fails_one_request_only() {
    let gate = ReadyAfter::new(50 * MS, MS);
    let svc = DeadlineLayer::<DefaultWheel>::new(30 * MS)
        .count_readiness()
        .layer(gate);
    let buffered = tower::buffer::Buffer::new(svc, 4);
    // The first request's wait uses up its 30 ms; the inner service is ready at 50 ms,
    // and the next request goes through.
    assert!(buffered.clone().oneshot(()).await.is_err());
    buffered.clone().oneshot(()).await.unwrap();
}

#[tokio::test(start_paused = true)]
async fn each_call_starts_a_new_wait() {
    let mut svc = DeadlineLayer::<DefaultWheel>::new(100 * MS)
        .count_readiness()
        .layer(ReadyAfter::new(40 * MS, 70 * MS));
    // First request: 40 ms of waiting, then 60 ms left of its 100: its 70 ms of work fail.
    let first = svc.ready().await.unwrap().call(());
    assert!(first.await.is_err());
    // The service stays ready: the next request waits for nothing and has its 100 ms.
    let start = Instant::now();
    svc.ready().await.unwrap().call(()).await.unwrap();
    assert_eq!(start.elapsed(), 70 * MS);
}
