//! Tower middleware on [punctual] deadlines: each request runs under a deadline and a
//! budget, so every punctual deadline started while serving it ends no later.
//! [`DeadlineLayer`] serves any `Service` whose error converts into [`BoxError`],
//! [`HttpDeadlineLayer`] `Infallible` HTTP services; [`PropagateDeadlineLayer`] writes the
//! remaining budget into outgoing requests.
//!
//! * Each type runs on a wheel `W`: `punctual::wheel::DefaultWheel` (a handler's default
//!   deadlines' wheel), or your own with `on`.
//! * The deadline covers the response future from its first poll, not `poll_ready`
//!   (unless [`DeadlineLayer::count_readiness`]).
//! * Outside a `tower::retry`, one budget for all attempts; inside, a limit per attempt
//!   (see [`WithinBudget`]).
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
//!     .service(service_fn(|_: ()| async {
//!         // An inner deadline of 1 s is cut to the request's 200 ms budget.
//!         let elapsed = std::future::pending::<()>().deadline(Duration::from_secs(1)).await.unwrap_err();
//!         assert!(elapsed.is_budget());
//!         Err::<(), _>(elapsed)
//!     }));
//! let err = svc.oneshot(()).await.unwrap_err();
//! assert_eq!(err.downcast_ref::<punctual::Elapsed>().unwrap().name(), Some("quote"));
//! # }
//! ```
//!
//! [punctual]: https://docs.rs/punctual
#![cfg_attr(docsrs, feature(doc_cfg))]
#![warn(missing_docs, missing_debug_implementations, unreachable_pub)]

mod admission;
mod headers;
mod http;
mod hyper_timer;
mod layer;
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
