//! What the generic and the HTTP layer share: [`Limits`], their builder methods, and a
//! request's admission under its budget.

use core::fmt;
use core::future::Future;
use core::pin::Pin;
use core::task::{Context, Poll};
use core::time::Duration;

use pin_project_lite::pin_project;
use punctual_core::{Budget, Budgeted, Elapsed, Outcome, OutcomeKind, RawWheel, WheelRef};

use crate::source::RequestTimeout;

/// A layer's wheel, limit and name, the least a request's limit may be to be admitted,
/// and where a request's own limit comes from.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Limits<W, T> {
    pub(crate) wheel: W,
    pub(crate) limit: Duration,
    pub(crate) name: &'static str,
    pub(crate) refuse_below: Duration,
    pub(crate) source: T,
}

impl<W: WheelRef, T> Limits<W, T> {
    pub(crate) fn new(wheel: W, limit: Duration, source: T) -> Self {
        let (name, refuse_below) = ("request", Duration::ZERO);
        Self {
            wheel,
            limit,
            name,
            refuse_below,
            source,
        }
    }

    pub(crate) fn with_source<U>(self, source: U) -> Limits<W, U> {
        let Self {
            wheel,
            limit,
            name,
            refuse_below,
            ..
        } = self;
        Limits {
            wheel,
            limit,
            name,
            refuse_below,
            source,
        }
    }

    /// The limit for `req`: the layer's, or what the request asks for if earlier.
    pub(crate) fn limit_for<Req>(&self, req: &Req) -> Duration
    where
        T: RequestTimeout<Req>,
    {
        self.source
            .requested(req)
            .map_or(self.limit, |asked| asked.min(self.limit))
    }

    /// `future()` under a budget of `limit` named `name` (an earlier enclosing budget
    /// wins), or, below `refuse_below`, refused: counted in the wheel's stats, reported as
    /// an outcome and by a `tracing` event, and `future` is not made.
    pub(crate) fn admit<F: Future>(
        &self,
        name: &'static str,
        limit: Duration,
        future: impl FnOnce() -> F,
    ) -> Admitted<F, W> {
        if limit >= self.refuse_below {
            let inner = Budgeted::new(future(), self.wheel, limit).named(name);
            return Admitted::Run { inner };
        }
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
        let outcome = Outcome::new(name, OutcomeKind::Elapsed, Some(limit), Duration::ZERO);
        punctual_core::report_outcome(&outcome);
        let elapsed = Some(Elapsed::new(limit, Some(name)));
        Admitted::Refused { elapsed }
    }
}

/// The builder methods both layers share; `$extra` are the layer's other fields.
macro_rules! shared_builders {
    ($layer:ident { $($extra:ident),* }) => {
        impl<W: WheelRef + Default> $layer<W> {
            /// A layer bounding each request by `limit`, on `W`'s default wheel (with
            /// `punctual::wheel::DefaultWheel`, the one a handler's default deadlines choose).
            pub fn new(limit: Duration) -> Self {
                Self::on(W::default(), limit)
            }
        }

        impl<W: WheelRef, T> $layer<W, T> {
            /// Names the deadline: the name its `Elapsed` carries, and each request's
            /// outcome is reported under (`punctual::report`). `"request"` by default.
            pub fn named(mut self, name: &'static str) -> Self {
                self.limits.name = name;
                self
            }

            /// Also takes an `http::Request`'s `grpc-timeout` when it asks for less than
            /// the layer's limit, never more ([`GrpcTimeout`](crate::GrpcTimeout)).
            pub fn grpc_timeout(self) -> $layer<W, crate::GrpcTimeout> {
                let limits = self.limits.with_source(crate::GrpcTimeout);
                $layer { limits, $($extra: self.$extra),* }
            }

            /// Also takes the shortest of an `http::Request`'s timeout headers when it asks
            /// for less than the layer's limit, never more
            /// ([`TimeoutHeaders`](crate::TimeoutHeaders)).
            pub fn timeout_headers(self) -> $layer<W, crate::TimeoutHeaders> {
                let limits = self.limits.with_source(crate::TimeoutHeaders);
                $layer { limits, $($extra: self.$extra),* }
            }

            /// Refuses a request whose deadline (the layer's limit, or the shorter one the
            /// request asks for) leaves less than `least`, without calling the inner
            /// service: it ends at once as timed out. Each refusal counts in the wheel's
            /// [`Stats::refused`](punctual_core::Stats::refused) and is reported by a
            /// debug-level `tracing` event. Off (zero) by default.
            pub fn refuse_below(mut self, least: Duration) -> Self {
                self.limits.refuse_below = least;
                self
            }

            /// The layer's own limit.
            pub fn limit(&self) -> Duration {
                self.limits.limit
            }
        }
    };
}
pub(crate) use shared_builders;

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
            AdmittedProj::Refused { elapsed } => {
                Poll::Ready(Err(elapsed.take().expect("polled after completion")))
            }
        }
    }
}

impl<F, W: WheelRef> fmt::Debug for Admitted<F, W> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::Run { inner } => inner.fmt(f),
            Self::Refused { elapsed } => f.debug_tuple("Refused").field(elapsed).finish(),
        }
    }
}
