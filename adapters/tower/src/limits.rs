//! [`Limits`]: what the generic and the HTTP layer share.

use core::fmt;
use core::future::Future;
use core::pin::Pin;
use core::task::{Context, Poll};
use core::time::Duration;

use pin_project_lite::pin_project;
use punctual_core::{Budget, Budgeted, Elapsed, Outcome, OutcomeKind, RawWheel, WheelRef};

use crate::source::RequestTimeout;

/// The name an `Elapsed` carries when a layer was not named.
pub(crate) const DEFAULT_NAME: &str = "request";

/// A layer's limit and its name, the wheel, where a request's own limit comes from, and
/// the least a request's limit may be to be admitted.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Limits<W, T> {
    pub(crate) limit: Duration,
    pub(crate) name: &'static str,
    pub(crate) wheel: W,
    pub(crate) source: T,
    pub(crate) refuse_below: Duration,
    /// Time waiting in `poll_ready` counts against the request's deadline.
    pub(crate) count_readiness: bool,
}

impl<W: WheelRef, T> Limits<W, T> {
    pub(crate) fn new(wheel: W, limit: Duration, source: T) -> Self {
        Self {
            limit,
            name: DEFAULT_NAME,
            wheel,
            source,
            refuse_below: Duration::ZERO,
            count_readiness: false,
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

    /// `future` under a budget of `limit`, named after the layer, if `limit` is at least
    /// `refuse_below`; else refused at once, counted in the wheel's stats and reported by
    /// a `tracing` event. `future` is made only when admitted.
    /// An earlier enclosing budget wins inside `Budgeted`.
    pub(crate) fn admit<F: Future>(
        &self,
        limit: Duration,
        future: impl FnOnce() -> F,
    ) -> Admitted<F, W> {
        self.admit_as(self.name, limit, future)
    }

    /// [`Limits::admit`], named `name` for this request.
    pub(crate) fn admit_as<F: Future>(
        &self,
        name: &'static str,
        limit: Duration,
        future: impl FnOnce() -> F,
    ) -> Admitted<F, W> {
        if limit < self.refuse_below {
            let mut wheel = self.wheel;
            wheel.choose();
            RawWheel::count_refused(wheel.get());
            tracing::debug!(
                target: "punctual_tower",
                name = name,
                limit_us = u64::try_from(limit.as_micros()).unwrap_or(u64::MAX),
                least_us = u64::try_from(self.refuse_below.as_micros()).unwrap_or(u64::MAX),
                "refused a request whose deadline leaves too little time"
            );
            // The request's outcome: elapsed, before it started.
            punctual_core::report_outcome(&Outcome::new(
                name,
                OutcomeKind::Elapsed,
                Some(limit),
                Duration::ZERO,
            ));
            return Admitted::Refused {
                elapsed: Some(Elapsed::new(limit, Some(name))),
            };
        }
        let inner = Budgeted::new(future(), self.wheel, limit).named(name);
        Admitted::Run { inner }
    }

    pub(crate) fn with_source<U>(self, source: U) -> Limits<W, U> {
        Limits {
            limit: self.limit,
            name: self.name,
            wheel: self.wheel,
            source,
            refuse_below: self.refuse_below,
            count_readiness: self.count_readiness,
        }
    }
}

pin_project! {
    /// A request's handling under its budget, or its refusal.
    #[project = AdmittedProj]
    pub(crate) enum Admitted<F, W: WheelRef> {
        Run { #[pin] inner: Budgeted<'static, F, W> },
        Refused { elapsed: Option<Elapsed> },
    }
}

impl<F: Future, W: WheelRef> Admitted<F, W> {
    /// The budget the request runs under, once its first poll started it.
    pub(crate) fn budget(&self) -> Option<Budget> {
        match self {
            Self::Run { inner } => inner.budget(),
            Self::Refused { .. } => None,
        }
    }
}

impl<F: Future, W: WheelRef> Future for Admitted<F, W> {
    type Output = Result<F::Output, Elapsed>;

    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Self::Output> {
        match self.project() {
            AdmittedProj::Run { inner } => inner.poll(cx),
            AdmittedProj::Refused { elapsed } => Poll::Ready(Err(elapsed
                .take()
                .expect("a refused request's future polled after completion"))),
        }
    }
}

impl<F, W: WheelRef> fmt::Debug for Admitted<F, W> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::Run { inner } => inner.fmt(f),
            Self::Refused { elapsed } => {
                f.debug_struct("Refused").field("elapsed", elapsed).finish()
            }
        }
    }
}
