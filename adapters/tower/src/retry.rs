//! [`WithinBudget`]: a `tower::retry` policy that stops once the budget is spent.

use core::time::Duration;

use punctual_core::WheelRef;
use tower::retry::Policy;

use crate::propagate::remaining_budget;

/// Wraps a `tower::retry` [`Policy`] so that nothing is retried once the budget in force
/// (a layer's further out, a `punctual::budget`) is spent. With a per-attempt deadline
/// inside the retry, attempts then fail at once, and a policy retrying on that error
/// would spin; this one stops, and the budget's `Elapsed` is returned.
///
/// ```
/// use std::time::Duration;
/// use punctual_tower::{DeadlineLayer, WithinBudget};
/// use tower::{ServiceBuilder, ServiceExt, service_fn};
///
/// #[derive(Clone)]
/// struct Always;
/// impl<Req: Clone, Res, E> tower::retry::Policy<Req, Res, E> for Always {
///     type Future = std::future::Ready<()>;
///     fn retry(&mut self, _: &mut Req, r: &mut Result<Res, E>) -> Option<Self::Future> {
///         r.is_err().then(|| std::future::ready(()))
///     }
///     fn clone_request(&mut self, req: &Req) -> Option<Req> {
///         Some(req.clone())
///     }
/// }
///
/// # #[tokio::main(flavor = "current_thread", start_paused = true)]
/// # async fn main() {
/// let attempts = std::sync::Arc::new(std::sync::atomic::AtomicU32::new(0));
/// let counted = attempts.clone();
/// let client = ServiceBuilder::new()
///     .retry(WithinBudget::<_, punctual::wheel::DefaultWheel>::new(Always))
///     .layer(DeadlineLayer::<punctual::wheel::DefaultWheel>::new(Duration::from_millis(100)).named("attempt"))
///     .service(service_fn(move |()| {
///         counted.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
///         async { std::future::pending::<Result<(), tower::BoxError>>().await }
///     }));
/// let outcome = punctual::budget(Duration::from_millis(250), client.oneshot(())).await;
/// // Attempts at 0, 100 and 200 ms; the third is cut to the 250 ms budget, and none
/// // follows (the error is the budget's, from the block or from the last attempt).
/// let err = outcome.map_or_else(|e| Box::new(e) as tower::BoxError, |r| r.unwrap_err());
/// assert!(err.downcast_ref::<punctual::Elapsed>().unwrap().is_budget());
/// assert_eq!(attempts.load(std::sync::atomic::Ordering::Relaxed), 3);
/// # }
/// ```
#[derive(Debug, Clone, Copy)]
pub struct WithinBudget<P, W> {
    policy: P,
    wheel: W,
}

impl<P, W: WheelRef + Default> WithinBudget<P, W> {
    /// `policy`, stopped by the budget for deadlines on `W`'s default wheel
    /// (`punctual::wheel::DefaultWheel`).
    pub fn new(policy: P) -> Self {
        Self::on(W::default(), policy)
    }
}

impl<P, W: WheelRef> WithinBudget<P, W> {
    /// `policy`, stopped by the budget for deadlines on `wheel`.
    pub fn on(wheel: W, policy: P) -> Self {
        Self { policy, wheel }
    }

    /// The wrapped policy.
    pub fn get_ref(&self) -> &P {
        &self.policy
    }

    fn spent(&self) -> bool {
        remaining_budget(self.wheel) == Some(Duration::ZERO)
    }
}

impl<P, W, Req, Res, E> Policy<Req, Res, E> for WithinBudget<P, W>
where
    P: Policy<Req, Res, E>,
    W: WheelRef,
{
    type Future = P::Future;

    fn retry(&mut self, req: &mut Req, result: &mut Result<Res, E>) -> Option<Self::Future> {
        if self.spent() {
            return None;
        }
        self.policy.retry(req, result)
    }

    fn clone_request(&mut self, req: &Req) -> Option<Req> {
        self.policy.clone_request(req)
    }
}
