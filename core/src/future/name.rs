//! Deadline names, as part of the type: [`Unnamed`], [`Named`], [`NamedResult`].
//! * A name's hooks run where a deadline starts and ends; [`Unnamed`]'s are empty.
//! * A named deadline reads the clock once at its first pending poll (not again after a
//!   reset) and once when it ends after waiting, and reports its outcome once.

use core::time::Duration;

use crate::future::outcome::{self, NOT_STARTED, OutcomeKind};
use crate::time::Reading;

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
                outcome::report_since(self.name, kind, limit(), self.start, now);
            }
        }
    };
}

labelled! {
    /// The name of a deadline made by [`Deadline::named`](crate::Deadline::named): shown by
    /// its [`Elapsed`](crate::Elapsed), and its [`Outcome`](crate::Outcome) reported when it
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
