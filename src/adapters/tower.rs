//! Tower middleware: [`punctual_tower`]'s types on [`DefaultWheel`], so every default
//! deadline in a handler respects the request's budget. See [`punctual_tower`] for what the
//! deadline covers, the HTTP flavour, propagation and retries.

use core::time::Duration;

pub use punctual_tower::{
    BoxError, DEFAULT_STATUS, GrpcTimeout, OwnLimit, PropagateResponseFuture, RequestTimeout,
    RouteName, TimeoutHeader, TimeoutHeaders, grpc_timeout, timeout_ms,
};

#[cfg(feature = "tonic")]
pub use punctual_tower::into_status;

use crate::wheel::DefaultWheel;

/// [`punctual_tower::DeadlineLayer`] on the default wheel.
pub type DeadlineLayer<T = OwnLimit> = punctual_tower::DeadlineLayer<DefaultWheel, T>;
/// [`punctual_tower::DeadlineService`] on the default wheel.
pub type DeadlineService<S, T = OwnLimit> = punctual_tower::DeadlineService<S, DefaultWheel, T>;
/// [`punctual_tower::ResponseFuture`] on the default wheel.
pub type ResponseFuture<F> = punctual_tower::ResponseFuture<F, DefaultWheel>;
/// [`punctual_tower::HttpDeadlineLayer`] on the default wheel.
pub type HttpDeadlineLayer<T = OwnLimit> = punctual_tower::HttpDeadlineLayer<DefaultWheel, T>;
/// [`punctual_tower::HttpDeadlineService`] on the default wheel.
pub type HttpDeadlineService<S, T = OwnLimit> =
    punctual_tower::HttpDeadlineService<S, DefaultWheel, T>;
/// [`punctual_tower::HttpResponseFuture`] on the default wheel.
pub type HttpResponseFuture<F> = punctual_tower::HttpResponseFuture<F, DefaultWheel>;
/// [`punctual_tower::DeadlineBody`] on the default wheel.
pub type DeadlineBody<B> = punctual_tower::DeadlineBody<B, DefaultWheel>;
/// [`punctual_tower::PropagateDeadlineLayer`] on the default wheel.
pub type PropagateDeadlineLayer = punctual_tower::PropagateDeadlineLayer<DefaultWheel>;
/// [`punctual_tower::PropagateDeadline`] on the default wheel.
pub type PropagateDeadline<S> = punctual_tower::PropagateDeadline<S, DefaultWheel>;
/// [`punctual_tower::WithinBudget`] on the default wheel.
pub type WithinBudget<P> = punctual_tower::WithinBudget<P, DefaultWheel>;

/// [`punctual_tower::HyperTimer`] on the default wheel: hyper's own timeouts on the
/// runtime's wheel.
pub type HyperTimer = punctual_tower::HyperTimer<DefaultWheel>;

/// What is left of the budget in force for default deadlines started here, if any
/// ([`punctual_tower::remaining_budget`] on the default wheel).
pub fn remaining_budget() -> Option<Duration> {
    punctual_tower::remaining_budget(DefaultWheel::new())
}
