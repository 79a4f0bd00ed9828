//! Tower middleware on [punctual] deadlines. A layer bounds each request by a deadline
//! and runs its handling under a budget: every punctual deadline started while serving it
//! ends no later than the request's.
//!
//! * [`DeadlineLayer`]: any `Service` whose error converts into [`BoxError`]; a late
//!   request fails with a boxed [`Elapsed`] named after the layer.
//! * [`HttpDeadlineLayer`]: `http` services whose error is `Infallible` (axum, hyper,
//!   tonic servers); a late request is answered `504` (or gRPC's `DEADLINE_EXCEEDED`),
//!   and a body still streaming at the deadline is cut.
//! * Propagation: `.grpc_timeout()` or `.timeout_headers()` on either layer takes a
//!   shorter deadline from the request's headers ([`TimeoutHeader`]);
//!   [`PropagateDeadlineLayer`] writes the caller's remaining budget into outgoing ones.
//! * [`WithinBudget`]: a `tower::retry` policy that stops once the budget is spent.
//! * `into_status` (feature `tonic`): a tower error as a `tonic::Status`.
//! * [`HyperTimer`]: `hyper::rt::Timer` on a punctual wheel.
//!
//! Each type takes the wheel `W` its budgets run on: `punctual::wheel::DefaultWheel`, the
//! one a handler's default deadlines choose (`punctual::adapters::tower` names the types
//! with it), or a wheel of your own with `on`. On tokio's multi-thread runtime a budget
//! follows its task from worker to worker.
//!
//! The deadline covers the response future from its first poll (tower's and hyper's
//! callers poll right after `call`), and with the HTTP flavour the body; not `poll_ready`,
//! unless [`DeadlineLayer::count_readiness`] says so. With `tower::retry`, a deadline
//! outside the retry is one budget for all attempts; inside it, a limit per attempt, whose
//! policy [`WithinBudget`] stops once the enclosing budget is spent.
//!
//! [punctual]: https://docs.rs/punctual
#![cfg_attr(docsrs, feature(doc_cfg))]

mod headers;
mod http;
mod hyper_timer;
mod layer;
mod limits;
mod propagate;

pub use headers::{
    GrpcTimeout, OwnLimit, RequestTimeout, TimeoutHeader, TimeoutHeaders, grpc_timeout, timeout_ms,
};
pub use http::{
    DEFAULT_STATUS, DeadlineBody, HttpDeadlineLayer, HttpDeadlineService, HttpResponseFuture,
    RouteName,
};
pub use hyper_timer::HyperTimer;
pub use layer::{DeadlineLayer, DeadlineService, ResponseFuture};
#[cfg(feature = "tonic")]
pub use propagate::into_status;
pub use propagate::{
    PropagateDeadline, PropagateDeadlineLayer, PropagateResponseFuture, WithinBudget,
    remaining_budget,
};

pub use punctual_core::Elapsed;

/// A boxed error, as tower's middleware returns (the same type as `tower::BoxError`).
pub type BoxError = Box<dyn std::error::Error + Send + Sync>;
