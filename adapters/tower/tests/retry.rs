//! `tower::retry` and the request's budget: with the deadline outside the retry, the retry
//! future is dropped when the budget passes; with `WithinBudget`, a policy stops retrying
//! once the budget in force is spent, even in a loop of attempts that never yields.

use std::future::{Ready, ready};
use std::pin::pin;
use std::sync::Arc;
use std::sync::atomic::{AtomicU32, Ordering};
use std::task::{Context, Poll, Waker};
use std::time::Duration;

use punctual::Elapsed;
use punctual::wheel::{DefaultWheel, Fixed, ManualClock, Wheel};
use punctual_tower::{BoxError, DeadlineLayer, WithinBudget};
use tower::retry::Policy;
use tower::{ServiceBuilder, ServiceExt, service_fn};

const MS: Duration = Duration::from_millis(1);

/// Retries every error, at once, up to `max` times.
#[derive(Clone)]
struct Always {
    max: u32,
}

impl<Req: Clone, Res, E> Policy<Req, Res, E> for Always {
    type Future = Ready<()>;

    fn retry(&mut self, _: &mut Req, result: &mut Result<Res, E>) -> Option<Self::Future> {
        if result.is_ok() || self.max == 0 {
            return None;
        }
        self.max -= 1;
        Some(ready(()))
    }

    fn clone_request(&mut self, req: &Req) -> Option<Req> {
        Some(req.clone())
    }
}

#[tokio::test(start_paused = true)]
async fn outer_deadline_drops_the_retry_when_budget_passes() {
    let attempts = Arc::new(AtomicU32::new(0));
    let counted = attempts.clone();
    let svc = ServiceBuilder::new()
        .layer(DeadlineLayer::<DefaultWheel>::new(250 * MS).named("all attempts"))
        .retry(Always { max: 1000 })
        .service(service_fn(move |()| {
            counted.fetch_add(1, Ordering::SeqCst);
            async {
                tokio::time::sleep(100 * MS).await;
                Err::<(), _>(std::io::Error::other("flaky"))
            }
        }));
    let start = tokio::time::Instant::now();
    let err = svc.oneshot(()).await.unwrap_err();
    assert_eq!(start.elapsed(), 250 * MS);
    assert_eq!(
        err.downcast_ref::<Elapsed>().unwrap().name(),
        Some("all attempts")
    );
    assert_eq!(
        attempts.load(Ordering::SeqCst),
        3,
        "attempts at 0, 100 and 200 ms"
    );
}

/// Attempts that fail at once, each taking 10 ms of a manual clock, under a 30 ms budget:
/// the retry loop never returns `Pending`, so the budget's own timer never gets a say;
/// `WithinBudget` stops it at the third attempt, when the budget is spent. Without it the
/// policy's own limit (100) is all that stops it.
fn attempts_under_budget(within_budget: bool) -> (u32, Result<(), BoxError>) {
    let wheel: Wheel<ManualClock, Fixed<16>> = Wheel::fixed(ManualClock::new(), MS);
    let attempts = AtomicU32::new(0);
    let attempt = service_fn(|()| {
        attempts.fetch_add(1, Ordering::SeqCst);
        wheel.advance(10 * MS);
        ready(Err::<(), BoxError>("refused".into()))
    });
    let outcome = {
        let policy = Always { max: 100 };
        let retried: std::pin::Pin<Box<dyn Future<Output = Result<(), BoxError>> + '_>> =
            if within_budget {
                let svc = ServiceBuilder::new()
                    .retry(WithinBudget::on(&wheel, policy))
                    .service(attempt);
                Box::pin(svc.oneshot(()))
            } else {
                Box::pin(
                    ServiceBuilder::new()
                        .retry(policy)
                        .service(attempt)
                        .oneshot(()),
                )
            };
        let mut block = pin!(wheel.budget(30 * MS, retried));
        match block.as_mut().poll(&mut Context::from_waker(Waker::noop())) {
            Poll::Ready(Ok(outcome)) => outcome,
            other => panic!(
                "the retry loop did not end in one poll: {:?}",
                other.is_ready()
            ),
        }
    };
    (attempts.load(Ordering::SeqCst), outcome)
}

#[test]
fn within_budget_stops_retrying_once_budget_is_spent() {
    let (attempts, outcome) = attempts_under_budget(true);
    assert_eq!(attempts, 3);
    assert_eq!(outcome.unwrap_err().to_string(), "refused");
    let (attempts, _) = attempts_under_budget(false);
    assert_eq!(attempts, 101, "the policy alone retries past the budget");
}

#[test]
fn within_budget_leaves_policy_alone_without_budget() {
    let wheel: Wheel<ManualClock, Fixed<16>> = Wheel::fixed(ManualClock::new(), MS);
    let attempts = AtomicU32::new(0);
    let svc = ServiceBuilder::new()
        .retry(WithinBudget::on(&wheel, Always { max: 4 }))
        .service(service_fn(|()| {
            attempts.fetch_add(1, Ordering::SeqCst);
            ready(Err::<(), &str>("refused"))
        }));
    let mut fut = pin!(svc.oneshot(()));
    assert!(
        fut.as_mut()
            .poll(&mut Context::from_waker(Waker::noop()))
            .is_ready()
    );
    assert_eq!(attempts.load(Ordering::SeqCst), 5);
}

/// `WithinBudget` with a limit per attempt inside the retry, one budget outside. Attempts at 0, 100 and 200 ms, the third cut to
/// the budget, which ends the retries (the error is the budget's, from the block or from
/// the last attempt).
#[tokio::test(start_paused = true)]
async fn within_budget_with_a_limit_per_attempt_ends_at_the_budget() {
    static ATTEMPTS: AtomicU32 = AtomicU32::new(0);
    let client = ServiceBuilder::new()
        .retry(WithinBudget::<_, DefaultWheel>::new(Always {
            max: u32::MAX,
        }))
        .layer(DeadlineLayer::<DefaultWheel>::new(100 * MS))
        .service(service_fn(|()| {
            ATTEMPTS.fetch_add(1, Ordering::Relaxed);
            std::future::pending::<Result<(), BoxError>>()
        }));
    let outcome = punctual::budget(250 * MS, client.oneshot(())).await;
    let err = outcome.map_or_else(|e| Box::new(e) as BoxError, |r| r.unwrap_err());
    assert!(err.downcast_ref::<Elapsed>().unwrap().is_budget());
    assert_eq!(ATTEMPTS.load(Ordering::Relaxed), 3);
}
