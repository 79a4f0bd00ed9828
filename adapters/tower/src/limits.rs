//! [`Limits`]: what the generic and the HTTP layer share.

use core::future::Future;
use core::time::Duration;

use punctual_core::{Budgeted, WheelRef};

use crate::source::RequestTimeout;

/// The name an `Elapsed` carries when a layer was not named.
pub(crate) const DEFAULT_NAME: &str = "request";

/// A layer's limit and its name, the wheel, and where a request's own limit comes from.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Limits<W, T> {
    pub(crate) limit: Duration,
    pub(crate) name: &'static str,
    pub(crate) wheel: W,
    pub(crate) source: T,
}

impl<W: WheelRef, T> Limits<W, T> {
    pub(crate) fn new(wheel: W, limit: Duration, source: T) -> Self {
        Self {
            limit,
            name: DEFAULT_NAME,
            wheel,
            source,
        }
    }

    /// The limit for `req`: the layer's, or what the request asks for if earlier.
    pub(crate) fn limit_for<Req>(&self, req: &Req) -> Duration
    where
        T: RequestTimeout<Req>,
    {
        match self.source.requested(req) {
            Some(asked) => asked.min(self.limit),
            None => self.limit,
        }
    }

    /// `future` under a budget of `limit`, named after the layer.
    /// An earlier enclosing budget wins inside `Budgeted`.
    pub(crate) fn bound<F: Future>(&self, limit: Duration, future: F) -> Budgeted<'static, F, W> {
        Budgeted::new(future, self.wheel, limit).named(self.name)
    }

    pub(crate) fn with_source<U>(self, source: U) -> Limits<W, U> {
        Limits {
            limit: self.limit,
            name: self.name,
            wheel: self.wheel,
            source,
        }
    }
}
