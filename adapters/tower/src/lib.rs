#![doc = include_str!("../README.md")]
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
