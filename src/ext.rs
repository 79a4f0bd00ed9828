//! The extension traits: `.deadline(d)` on any future, `.idle_timeout(d)` on any stream.

use core::future::Future;
use core::time::Duration;

use futures_core::Stream;
use punctual_core::Limit;

use crate::budget::Budgeted;
#[cfg(feature = "config")]
use crate::default_wheel::NamedDeadline;
use crate::default_wheel::{Deadline, DefaultWheel, IdleTimeout, StreamDeadline};
use crate::instant::DeadlineInstant;

/// Bounds any future by a deadline: `.deadline(d)` and `.deadline_at(instant)` on the
/// default wheel. On a wheel of your own, `wheel.deadline(d, fut)`.
///
/// The default wheel is chosen at the first poll that finds the future pending (see
/// [`DefaultWheel`]):
///
/// * on a thread that paused virtual time (feature `test-util`), the thread's virtual wheel;
/// * inside a tokio runtime (feature `tokio`), the runtime's wheel, on its clock;
/// * elsewhere the global wheel, driven by its own thread.
///
/// ```
/// use std::time::Duration;
/// use punctual::DeadlineExt;
///
/// # futures_executor::block_on(async {
/// // Ready in time: Ok with the output.
/// assert_eq!(async { 7 }.deadline(Duration::from_secs(1)).await, Ok(7));
///
/// // Too slow: Err(Elapsed), and the inner future is dropped.
/// let err = std::future::pending::<()>().deadline(Duration::from_millis(5)).await.unwrap_err();
/// assert_eq!(err.duration(), Duration::from_millis(5));
/// # });
/// ```
pub trait DeadlineExt: Future + Sized {
    /// Bounds `self` by `duration`, measured from its first pending poll, on the default
    /// wheel.
    ///
    /// # Errors
    ///
    /// The deadline resolves to `Err(Elapsed)` when `duration` passes before `self`
    /// completes; `self` has been dropped by then.
    ///
    /// # Panics
    ///
    /// At the first poll where `self` is pending, if the global wheel is used and its timer
    /// thread is not running and cannot be started ([`GlobalClock`](crate::wheel::GlobalClock)).
    ///
    /// # Cancel safety
    ///
    /// Dropping the deadline drops `self`; see [`punctual_core::Deadline`].
    fn deadline(self, duration: Duration) -> Deadline<Self> {
        Deadline::new(self, DefaultWheel::new(), Limit::After(duration))
    }

    /// Bounds `self` by the instant `at` ([`DeadlineInstant`]) on the default wheel. An
    /// instant already past fires at the first poll where `self` is pending.
    ///
    /// # Errors
    ///
    /// `Err(Elapsed)` when `at` passes before `self` completes.
    ///
    /// # Panics
    ///
    /// As [`deadline`](DeadlineExt::deadline).
    ///
    /// # Cancel safety
    ///
    /// Dropping the deadline drops `self`; see [`punctual_core::Deadline`].
    fn deadline_at(self, at: impl DeadlineInstant) -> Deadline<Self> {
        Deadline::new(self, DefaultWheel::new(), Limit::At(at.reading()))
    }

    /// Bounds `self` by the limit installed for `name`, read now
    /// ([`report::limit_for`](crate::report::limit_for)), and names the deadline so its
    /// outcome is reported ([`punctual::report`](crate::report)).
    ///
    /// ```
    /// use std::time::Duration;
    /// use punctual::DeadlineExt;
    /// use punctual::report::{self, Limits};
    ///
    /// report::install_limits(Limits::default().with("doc-pricing", Duration::from_millis(5)).unwrap());
    /// # futures_executor::block_on(async {
    /// let err = std::future::pending::<()>().deadline_named("doc-pricing").await.unwrap_err();
    /// assert_eq!(err.duration(), Duration::from_millis(5));
    /// assert_eq!(err.name(), Some("doc-pricing"));
    /// # });
    /// ```
    ///
    /// # Errors
    ///
    /// `Err(Elapsed)` when the limit passes before `self` completes.
    ///
    /// # Panics
    ///
    /// As [`deadline`](DeadlineExt::deadline).
    #[cfg(feature = "config")]
    fn deadline_named(self, name: &'static str) -> NamedDeadline<Self> {
        let limit = crate::report::limit_for(name);
        Deadline::new(self, DefaultWheel::new(), Limit::After(limit)).named(name)
    }

    /// Carries the budget in force here into `self`, wherever it is polled: for work handed
    /// to another task (`tokio::spawn(work.with_current_budget())`), which a budget does not
    /// reach by itself. Its end is carried as an instant, so waiting to be polled counts.
    /// With no budget in force for default deadlines, `self` runs unbounded.
    ///
    /// The [guide](crate::guide) shows it with `tokio::spawn`.
    ///
    /// # Errors
    ///
    /// `Err(Elapsed)` (with [`is_budget`](punctual_core::Elapsed::is_budget)) when the
    /// budget runs out before `self` completes; `self` has been dropped by then.
    ///
    /// # Cancel safety
    ///
    /// Dropping it drops `self`.
    fn with_current_budget(self) -> Budgeted<Self> {
        Budgeted::carrying(self)
    }
}

impl<F: Future> DeadlineExt for F {}

/// Deadlines for any [`Stream`], on the default wheel (see [`DeadlineExt`]).
///
/// ```
/// use std::time::Duration;
/// use futures_util::{StreamExt, stream};
/// use punctual::StreamDeadlineExt;
///
/// # futures_executor::block_on(async {
/// // Items that keep coming in time pass through as Ok.
/// let items: Vec<_> = stream::iter([1, 2, 3]).idle_timeout(Duration::from_millis(50)).collect().await;
/// assert_eq!(items, [Ok(1), Ok(2), Ok(3)]);
///
/// // A stream that stalls ends with one Err.
/// let stalled = stream::iter([1]).chain(stream::pending());
/// let items: Vec<_> = stalled.idle_timeout(Duration::from_millis(5)).collect().await;
/// assert_eq!(items.len(), 2);
/// assert!(items[1].is_err());
/// # });
/// ```
pub trait StreamDeadlineExt: Stream + Sized {
    /// Bounds the whole stream by `duration` from its first poll: when it passes, the
    /// stream yields one `Err(Elapsed)` and ends. See [`StreamDeadline`].
    ///
    /// # Panics
    ///
    /// As [`DeadlineExt::deadline`], at its first poll.
    fn total_deadline(self, duration: Duration) -> StreamDeadline<Self> {
        StreamDeadline::new(self, DefaultWheel::new(), duration)
    }

    /// Bounds each gap between items by `idle`: when an item is late, the stream yields
    /// one `Err(Elapsed)` and ends. See [`IdleTimeout`].
    ///
    /// # Panics
    ///
    /// As [`DeadlineExt::deadline`].
    fn idle_timeout(self, idle: Duration) -> IdleTimeout<Self> {
        IdleTimeout::new(self, DefaultWheel::new(), idle)
    }
}

impl<S: Stream> StreamDeadlineExt for S {}
