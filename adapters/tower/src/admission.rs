//! What both layers share: [`Admission`], builder methods, a request's admission.

use core::future::Future;
use core::pin::Pin;
use core::task::{Context, Poll};
use core::time::Duration;

use pin_project_lite::pin_project;
use punctual_core::{Budget, Budgeted, Elapsed, Outcome, OutcomeKind, RawWheel, WheelRef};

use crate::BoxError;
use crate::headers::RequestTimeout;

/// A layer's wheel, limit and name, and the least a request's limit may be to be admitted.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Admission<W> {
    pub(crate) wheel: W,
    pub(crate) limit: Duration,
    pub(crate) name: &'static str,
    pub(crate) refuse_below: Duration,
}

impl<W: WheelRef> Admission<W> {
    /// The limit for `req`: the layer's, or what `source` says it asks for if earlier.
    pub(crate) fn limit_for<Req>(&self, source: &impl RequestTimeout<Req>, req: &Req) -> Duration {
        let asked = source.requested(req);
        asked.map_or(self.limit, |asked| asked.min(self.limit))
    }

    /// `future()` under a budget of `limit` named `name`, or below `refuse_below` refused
    /// (counted, reported, traced) without making `future`.
    pub(crate) fn admit<F: Future>(
        &self,
        name: &'static str,
        limit: Duration,
        future: impl FnOnce() -> F,
    ) -> Admitted<F, W> {
        if limit >= self.refuse_below {
            let inner = Budgeted::new(future(), self.wheel, limit).named(name);
            return OrElapsed::Run { inner };
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
        OrElapsed::Elapsed { elapsed }
    }
}

/// The constructors and builder methods both layers share, and their services' accessors;
/// `$extra` are the layer's other fields, with their defaults.
macro_rules! shared_builders {
    ($layer:ident => $service:ident { $($extra:ident: $default:expr),* }) => {
        impl<W: punctual_core::WheelRef> $layer<W> {
            /// A layer bounding each request by `limit`, on `W`'s default wheel (with
            /// `punctual::wheel::DefaultWheel`, the one a handler's default deadlines choose).
            pub fn new(limit: core::time::Duration) -> Self where W: Default {
                Self::on(W::default(), limit)
            }

            /// A layer bounding each request by `limit` on `wheel`.
            pub fn on(wheel: W, limit: core::time::Duration) -> Self {
                let (name, refuse_below) = ("request", core::time::Duration::ZERO);
                let admission = crate::admission::Admission { wheel, limit, name, refuse_below };
                Self { admission, source: crate::OwnLimit, $($extra: $default),* }
            }
        }

        impl<W: punctual_core::WheelRef, T> $layer<W, T> {
            /// Names the deadline: the name its `Elapsed` carries, and each request's
            /// outcome is reported under (`punctual::report`). `"request"` by default.
            pub fn named(mut self, name: &'static str) -> Self {
                self.admission.name = name;
                self
            }

            /// Also takes an `http::Request`'s `grpc-timeout` when it asks for less than
            /// the layer's limit, never more ([`GrpcTimeout`](crate::GrpcTimeout)).
            pub fn grpc_timeout(self) -> $layer<W, crate::GrpcTimeout> {
                let (admission, source) = (self.admission, crate::GrpcTimeout);
                $layer { admission, source, $($extra: self.$extra),* }
            }

            /// Also takes the shortest of an `http::Request`'s timeout headers when it asks
            /// for less than the layer's limit, never more
            /// ([`TimeoutHeaders`](crate::TimeoutHeaders)).
            pub fn timeout_headers(self) -> $layer<W, crate::TimeoutHeaders> {
                let (admission, source) = (self.admission, crate::TimeoutHeaders);
                $layer { admission, source, $($extra: self.$extra),* }
            }

            /// Refuses a request whose deadline leaves less than `least` (zero by default):
            /// it ends at once as timed out, the inner service not called, counted in
            /// [`Stats::refused`](punctual_core::Stats::refused) and traced at debug level.
            pub fn refuse_below(mut self, least: core::time::Duration) -> Self {
                self.admission.refuse_below = least;
                self
            }

            /// The layer's own limit.
            pub fn limit(&self) -> core::time::Duration {
                self.admission.limit
            }
        }

        impl<S, W: punctual_core::WheelRef, T> $service<S, W, T> {
            /// The inner service.
            pub fn get_ref(&self) -> &S {
                &self.inner
            }

            /// The inner service.
            pub fn get_mut(&mut self) -> &mut S {
                &mut self.inner
            }

            /// The inner service, unwrapped.
            pub fn into_inner(self) -> S {
                self.inner
            }
        }
    };
}
pub(crate) use shared_builders;

/// A request's handling under its budget, or its refusal.
pub(crate) type Admitted<F, W> = OrElapsed<Budgeted<'static, F, W>>;

pin_project! {
    /// A future, or an `Elapsed` ready at once in its place.
    #[project = OrElapsedProj]
    #[derive(Debug)]
    pub(crate) enum OrElapsed<F> {
        Run { #[pin] inner: F },
        Elapsed { elapsed: Option<Elapsed> },
    }
}

impl<F: Future> Future for OrElapsed<F> {
    type Output = Result<F::Output, Elapsed>;

    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Self::Output> {
        match self.project() {
            OrElapsedProj::Run { inner } => inner.poll(cx).map(Ok),
            OrElapsedProj::Elapsed { elapsed } => {
                Poll::Ready(Err(elapsed.take().expect("polled after completion")))
            }
        }
    }
}

impl<F: Future, W: WheelRef> Admitted<F, W> {
    /// The budget the request runs under, once its first poll started it.
    pub(crate) fn budget(&self) -> Option<Budget> {
        match self {
            Self::Run { inner } => inner.budget(),
            Self::Elapsed { .. } => None,
        }
    }
}

/// A response's errors boxed: the inner service's, or the `Elapsed`.
pub(crate) fn boxed<R, E: Into<BoxError>>(
    result: Result<Result<R, E>, Elapsed>,
) -> Result<R, BoxError> {
    result?.map_err(Into::into)
}
