//! Tower middleware on [punctual] deadlines. A layer bounds each request by a deadline and
//! runs its handling under a budget: every punctual deadline started while serving it
//! ends no later than the request's. Its HTTP flavour answers a status code instead of an
//! error. Propagation over `grpc-timeout` makes the next service stop when the caller
//! would stop waiting.
//!
//! * [`DeadlineLayer`]: any `Service` whose error converts into [`BoxError`]; a request
//!   that runs out of time fails with a boxed [`Elapsed`], named after the layer.
//! * [`HttpDeadlineLayer`]: `http` services whose error is `Infallible` (axum, hyper,
//!   tonic servers); a request that runs out of time is answered `504 Gateway Timeout`
//!   (or the status you choose), and a body still streaming at the deadline is cut.
//! * Propagation: `.grpc_timeout()` on either layer reads the request's `grpc-timeout`
//!   ([`grpc_timeout::parse`]; malformed values are ignored), never later than the layer's
//!   own limit; `.timeout_headers()` also reads Envoy's and Connect's millisecond headers
//!   ([`timeout_ms`]), the shortest winning. [`PropagateDeadlineLayer`] writes the
//!   caller's remaining budget into outgoing requests, less an optional per-hop margin,
//!   rounded down, in the header the downstream reads ([`TimeoutHeader`]).
//! * [`WithinBudget`]: a `tower::retry` policy that
//!   stops once the budget is spent.
//! * `into_status` (feature `tonic`): a tower error as the `tonic::Status` a gRPC client
//!   expects, `DEADLINE_EXCEEDED` for an `Elapsed`; `Elapsed` itself converts with `?`.
//! * [`HyperTimer`]: `hyper::rt::Timer` on a punctual wheel, for hyper's
//!   own timeouts (header read, keep-alive).
//!
//! # Which wheel
//!
//! Each type takes the wheel handle `W` its budgets run on. `punctual::wheel::DefaultWheel` is the
//! wheel default deadlines choose, which a handler's `fut.deadline(d)` respects.
//! `punctual::adapters::tower` names these types with it
//! (`punctual::adapters::tower::DeadlineLayer::new(d)`). Here, name it
//! (`DeadlineLayer::<punctual::wheel::DefaultWheel>::new(d)`), or give a wheel of your own with `on`.
//!
//! On tokio's multi-thread runtime each worker has a default wheel of its own, all on the
//! real clock. So a request's budget follows its task to another worker: deadlines started
//! there end with it, and [`remaining_budget`] and [`PropagateDeadlineLayer`] find it.
//!
//! # What the deadline covers
//!
//! The response future, from its first poll, which tower's and hyper's callers make right
//! after `call`; with the HTTP flavour, the response body too (see [`HttpDeadlineLayer`]).
//! Not `poll_ready`: readiness is back-pressure shared by all requests. Where a request
//! waits for readiness on its own (a rate limit, a reconnect), the generic layer's
//! [`count_readiness`](DeadlineLayer::count_readiness) counts the wait against it.
//!
//! # With `tower::retry`
//!
//! * Deadline outside the retry (`ServiceBuilder::new().layer(deadline).retry(policy)`):
//!   one budget for all attempts. Each attempt's deadlines are cut to what is left, and no
//!   attempt starts after the budget: the retry future is dropped with it.
//! * Deadline inside the retry (`.retry(policy).layer(deadline)`): a limit per attempt,
//!   cut to any enclosing budget. Wrap the policy in [`WithinBudget`] so that it stops
//!   once that budget is spent, instead of starting attempts that fail at once.
//!
//! # Example
//!
//! ```
//! use std::time::Duration;
//! use punctual::DeadlineExt;
//! use punctual_tower::DeadlineLayer;
//! use tower::{ServiceBuilder, ServiceExt, service_fn};
//!
//! # #[tokio::main(flavor = "current_thread", start_paused = true)]
//! # async fn main() {
//! let svc = ServiceBuilder::new()
//!     .layer(DeadlineLayer::<punctual::wheel::DefaultWheel>::new(Duration::from_millis(200)).named("quote"))
//!     .service(service_fn(|item: &'static str| async move {
//!         // The price service may take 150 ms, the stock service 1 s: the second is cut
//!         // to the 50 ms left of the request's budget.
//!         tokio::time::sleep(Duration::from_millis(150)).deadline(Duration::from_secs(1)).await?;
//!         let stock = tokio::time::sleep(Duration::from_secs(1)).deadline(Duration::from_secs(1)).await;
//!         let elapsed = stock.unwrap_err();
//!         assert!(elapsed.is_budget());
//!         Err::<&str, _>(elapsed)
//!     }));
//! let start = tokio::time::Instant::now();
//! let err = svc.oneshot("tea").await.unwrap_err();
//! assert_eq!(err.downcast_ref::<punctual::Elapsed>().unwrap().name(), Some("quote"));
//! assert_eq!(start.elapsed(), Duration::from_millis(200));
//! # }
//! ```
//!
//! [punctual]: https://docs.rs/punctual
#![cfg_attr(docsrs, feature(doc_cfg))]
#![warn(missing_docs, missing_debug_implementations, unreachable_pub)]

mod body;
pub mod grpc_timeout;
mod http;
mod hyper_timer;
mod layer;
mod limits;
mod propagate;
mod retry;
mod source;
#[cfg(feature = "tonic")]
mod status;
pub mod timeout_ms;

pub use body::DeadlineBody;
pub use http::{
    DEFAULT_STATUS, HttpDeadlineLayer, HttpDeadlineService, HttpResponseFuture, RouteName,
};
pub use hyper_timer::HyperTimer;
pub use layer::{DeadlineLayer, DeadlineService, ResponseFuture};
pub use propagate::{
    PropagateDeadline, PropagateDeadlineLayer, PropagateResponseFuture, remaining_budget,
};
pub use retry::WithinBudget;
pub use source::{GrpcTimeout, OwnLimit, RequestTimeout, TimeoutHeader, TimeoutHeaders};
#[cfg(feature = "tonic")]
pub use status::into_status;

pub use punctual_core::Elapsed;

/// A boxed error, as tower's middleware returns (the same type as `tower::BoxError`).
pub type BoxError = Box<dyn std::error::Error + Send + Sync>;
