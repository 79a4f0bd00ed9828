//! Deadline names ([`Unnamed`], [`Named`], [`NamedResult`]), the outcomes of named
//! deadlines, handed to one process-wide hook, and overrun reports.
//! * A named deadline reports exactly one outcome, what its caller saw, at the poll or
//!   drop that ends it. [`Unnamed`]'s hooks are empty: unnamed ones do no work for it.
//! * A named deadline reads the clock once at its first pending poll (not again after a
//!   reset) and once when it ends after waiting.
//! * The hook is a process setting, not a hand-off: a pointer stored and loaded relaxed.
//!   With none set (and no `tracing`), a named deadline's end costs that one load.
//! * Overrun reports, off, cost one relaxed load per fire, nothing on arm, cancel or
//!   ready. Each deadline is reported at most once, at the poll that sees it fired.

use core::sync::atomic::{AtomicPtr, AtomicU32, Ordering};
use core::time::Duration;

use crate::time::Reading;

/// How a named deadline ended. More kinds may come (`#[non_exhaustive]`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum OutcomeKind {
    /// Completed in time; its output is not a `Result` the deadline was told to judge.
    Completed,
    /// Completed in time with `Ok` ([`NamedResult`]).
    Succeeded,
    /// Completed in time with `Err` ([`NamedResult`]).
    Failed,
    /// The deadline (or a budget over it) ran out: the caller got `Err(Elapsed)`.
    Elapsed,
    /// Dropped (or taken apart by `into_inner`) before it completed or elapsed, even if
    /// its time had come.
    Dropped,
    /// Kept running after it elapsed (`punctual::report::Keeper`), then finished with `Ok`
    /// or an output that is not a `Result`. A later fate, not a second outcome.
    AbandonedSucceeded,
    /// Kept running after it elapsed, then finished with `Err`. A later fate.
    AbandonedFailed,
    /// Elapsed and to be kept running, but refused (dropped) by the cap on kept futures.
    /// A later fate.
    Refused,
}

impl OutcomeKind {
    /// A short lowercase label for metrics and logs: the variant's name in snake case.
    pub const fn as_str(self) -> &'static str {
        match self {
            Self::Completed => "completed",
            Self::Succeeded => "succeeded",
            Self::Failed => "failed",
            Self::Elapsed => "elapsed",
            Self::Dropped => "dropped",
            Self::AbandonedSucceeded => "abandoned_succeeded",
            Self::AbandonedFailed => "abandoned_failed",
            Self::Refused => "refused",
        }
    }
}

/// One named deadline's end: its name, how it ended, its limit and the time it used.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub struct Outcome {
    /// The deadline's name.
    pub name: &'static str,
    /// How it ended.
    pub kind: OutcomeKind,
    /// The limit in force when it ended: its duration, or a budget's if that cut it
    /// shorter; `None` for a deadline at an instant.
    pub limit: Option<Duration>,
    /// The time from its first pending poll to its end, on its wheel's clock; zero if it
    /// never waited (ready at its first poll, or dropped before).
    pub used: Duration,
}

impl Outcome {
    /// An outcome, for listeners' own tests and for reports made by hand.
    pub const fn new(
        name: &'static str,
        kind: OutcomeKind,
        limit: Option<Duration>,
        used: Duration,
    ) -> Self {
        Self {
            name,
            kind,
            limit,
            used,
        }
    }

    /// The time used as a fraction of the limit (above 1 when it fired late); `None`
    /// without a limit, or with a zero one.
    pub fn fraction_used(&self) -> Option<f64> {
        let limit = self.limit?.as_secs_f64();
        (limit > 0.0).then(|| self.used.as_secs_f64() / limit)
    }
}

/// The hook, a `fn(&Outcome)` as a pointer; null: none.
static HOOK: AtomicPtr<()> = AtomicPtr::new(core::ptr::null_mut());

/// Sends every named deadline's [`Outcome`] to `hook` from now on, or to no one (`None`,
/// the default). One hook per process (`punctual` with `std` installs its own for
/// `punctual::report`); it runs in the poll or drop that ends the deadline: keep it short,
/// never panic. With `tracing` each outcome is also a `debug` event (target
/// `punctual::outcome`).
///
/// ```
/// use core::sync::atomic::{AtomicUsize, Ordering};
/// use core::time::Duration;
/// use punctual_core::{Fixed, ManualClock, Outcome, Wheel};
///
/// static ELAPSED: AtomicUsize = AtomicUsize::new(0);
/// fn count(o: &Outcome) {
///     if o.kind == punctual_core::OutcomeKind::Elapsed { ELAPSED.fetch_add(1, Ordering::Relaxed); }
/// }
/// punctual_core::set_outcome_hook(Some(count));
/// let wheel: Wheel<ManualClock, Fixed<4>> = Wheel::fixed(ManualClock::new(), Duration::from_millis(1));
/// let d = wheel.deadline(Duration::ZERO, core::future::pending::<()>()).named("x");
/// assert!(futures_executor::block_on(d).is_err());
/// assert_eq!(ELAPSED.load(Ordering::Relaxed), 1);
/// # punctual_core::set_outcome_hook(None);
/// ```
pub fn set_outcome_hook(hook: Option<fn(&Outcome)>) {
    let ptr = hook.map_or(core::ptr::null_mut(), |hook| hook as *mut ());
    HOOK.store(ptr, Ordering::Relaxed);
}

/// Reports `outcome` as a named deadline's, to the hook and to `tracing`, for code that
/// ends a named limit without a [`Deadline`](crate::Deadline). Call it once per end.
#[cold]
#[inline(never)]
pub fn report_outcome(outcome: &Outcome) {
    #[cfg(feature = "tracing")]
    tracing::debug!(
        target: "punctual::outcome",
        name = outcome.name,
        outcome = outcome.kind.as_str(),
        limit = ?outcome.limit,
        used = ?outcome.used,
        "deadline ended"
    );
    let ptr = HOOK.load(Ordering::Relaxed);
    if !ptr.is_null() {
        // SAFETY: a non-null `HOOK` was stored by `set_outcome_hook` from a
        // `fn(&Outcome)`, cast to a pointer; casting it back gives that function.
        let hook = unsafe { core::mem::transmute::<*mut (), fn(&Outcome)>(ptr) };
        hook(outcome);
    }
}

/// The first pending poll's reading, as named futures keep it; [`NOT_STARTED`] before.
const NOT_STARTED: u64 = u64::MAX;

/// Reports `name`'s end, timed from `start` (a reading's nanoseconds, or [`NOT_STARTED`]).
#[inline(never)]
fn report_since(
    name: &'static str,
    kind: OutcomeKind,
    limit: Option<Duration>,
    start: u64,
    now: impl FnOnce() -> Reading,
) {
    // No hook and no `tracing`: no one to tell, so no clock read either.
    if !cfg!(feature = "tracing") && HOOK.load(Ordering::Relaxed).is_null() {
        return;
    }
    let used = match start {
        NOT_STARTED => Duration::ZERO,
        start => now().saturating_duration_since(Reading::from_nanos(start)),
    };
    report_outcome(&Outcome::new(name, kind, limit, used));
}

/// A deadline's name, as part of its type: [`Unnamed`], [`Named`] or [`NamedResult`].
/// Sealed.
pub trait DeadlineName: Copy + sealed::Sealed {
    /// The name, if any.
    fn get(&self) -> Option<&'static str>;

    /// Notes the first pending poll's time. Not part of the API.
    #[doc(hidden)]
    #[inline(always)]
    fn started(&mut self, _now: impl FnOnce() -> Reading) {}

    /// Reports an end other than completion. Not part of the API.
    #[doc(hidden)]
    #[inline(always)]
    fn ended(
        &self,
        _kind: OutcomeKind,
        _limit: impl FnOnce() -> Option<Duration>,
        _now: impl FnOnce() -> Reading,
    ) {
    }
}

/// How a name reports a completed deadline whose output is an `O`: [`Named`] as
/// completed, [`NamedResult`] as succeeded or failed. Sealed.
pub trait ReportsOutput<O>: DeadlineName {
    /// Reports completion with `output`. Not part of the API.
    #[doc(hidden)]
    #[inline(always)]
    fn completed(
        &self,
        _output: &O,
        limit: impl FnOnce() -> Option<Duration>,
        now: impl FnOnce() -> Reading,
    ) {
        self.ended(OutcomeKind::Completed, limit, now);
    }
}

mod sealed {
    pub trait Sealed {}
    impl Sealed for super::Unnamed {}
    impl Sealed for super::Named {}
    impl Sealed for super::NamedResult {}
}

/// The name of a deadline that has none: zero bytes, no reports.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Unnamed;

impl DeadlineName for Unnamed {
    #[inline(always)]
    fn get(&self) -> Option<&'static str> {
        None
    }
}

impl<O> ReportsOutput<O> for Unnamed {}

/// A name type: the name and the first pending poll's reading in nanoseconds
/// ([`NOT_STARTED`] before), `name`, `new`, and the [`DeadlineName`] hooks.
macro_rules! labelled {
    ($(#[$doc:meta])* $ty:ident) => {
        $(#[$doc])*
        #[derive(Debug, Clone, Copy, PartialEq, Eq)]
        pub struct $ty {
            name: &'static str,
            start: u64,
        }

        impl $ty {
            /// The name.
            pub const fn name(&self) -> &'static str {
                self.name
            }

            pub(crate) const fn new(name: &'static str) -> Self {
                Self { name, start: NOT_STARTED }
            }
        }

        impl DeadlineName for $ty {
            #[inline(always)]
            fn get(&self) -> Option<&'static str> {
                Some(self.name)
            }

            #[inline]
            fn started(&mut self, now: impl FnOnce() -> Reading) {
                if self.start == NOT_STARTED {
                    self.start = now().as_nanos();
                }
            }

            #[inline]
            fn ended(
                &self,
                kind: OutcomeKind,
                limit: impl FnOnce() -> Option<Duration>,
                now: impl FnOnce() -> Reading,
            ) {
                report_since(self.name, kind, limit(), self.start, now);
            }
        }
    };
}

labelled! {
    /// The name of a deadline made by [`Deadline::named`](crate::Deadline::named): shown by
    /// its [`Elapsed`](crate::Elapsed), and its [`Outcome`] reported when it
    /// ends.
    Named
}

impl<O> ReportsOutput<O> for Named {}

labelled! {
    /// The name of a deadline around a future whose output is a `Result`
    /// ([`Deadline::named_result`](crate::Deadline::named_result)): as [`Named`], and its
    /// completion reported as succeeded (`Ok`) or failed (`Err`).
    NamedResult
}

impl<T, E> ReportsOutput<Result<T, E>> for NamedResult {
    #[inline]
    fn completed(
        &self,
        output: &Result<T, E>,
        limit: impl FnOnce() -> Option<Duration>,
        now: impl FnOnce() -> Reading,
    ) {
        let kind = if output.is_ok() {
            OutcomeKind::Succeeded
        } else {
            OutcomeKind::Failed
        };
        self.ended(kind, limit, now);
    }
}

/// The threshold in microseconds; 0: off.
static AFTER_MICROS: AtomicU32 = AtomicU32::new(0);

/// Reports deadlines whose task polls them more than `after` past their time (a task that
/// does not yield), or stops reporting (`None`, the default). Each is counted in
/// [`Stats::overruns`](crate::Stats::overruns) and, with `tracing`, reported by a `warn`
/// event (target `punctual`). Applies to every wheel, from the next fire on; `after` is
/// kept in whole microseconds, rounded up, up to `u32::MAX` µs.
pub fn report_overruns(after: Option<Duration>) {
    let micros = after.map_or(0, |after| {
        let micros = after.as_nanos().div_ceil(1_000).max(1);
        u32::try_from(micros).unwrap_or(u32::MAX)
    });
    AFTER_MICROS.store(micros, Ordering::Relaxed);
}

/// The threshold [`report_overruns`] set, if any.
pub fn overrun_threshold() -> Option<Duration> {
    match AFTER_MICROS.load(Ordering::Relaxed) {
        0 => None,
        micros => Some(Duration::from_micros(micros.into())),
    }
}
