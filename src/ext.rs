//! The API on the default wheel: the extension traits and the free functions.

use core::future::{Future, IntoFuture};
use core::time::Duration;

use futures_core::Stream;
use punctual_core::Limit;

use crate::budget::Budgeted;
#[cfg(feature = "config")]
use crate::default_wheel::NamedDeadline;
use crate::default_wheel::{Deadline, DefaultWheel, IdleTimeout, Interval, Sleep, StreamDeadline};
use crate::instant::DeadlineInstant;

/// Bounds any future by a deadline on the default wheel, chosen at the first poll that finds
/// it pending ([`DefaultWheel`]): a paused thread's (`test-util`), a tokio runtime's
/// (`tokio`), else the global wheel. On a wheel of your own, `wheel.deadline(d, fut)`.
///
/// Every `Err(Elapsed)` here comes after the inner future was dropped.
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
    /// Bounds `self` by `duration`, measured from its first pending poll.
    ///
    /// # Errors
    ///
    /// `Err(Elapsed)` when `duration` passes first.
    ///
    /// # Panics
    ///
    /// At the first pending poll, if the global wheel's timer thread cannot be started
    /// ([`GlobalClock`](crate::wheel::GlobalClock)).
    ///
    /// # Cancel safety
    ///
    /// Dropping the deadline drops `self`.
    fn deadline(self, duration: Duration) -> Deadline<Self> {
        Deadline::new(self, DefaultWheel::new(), Limit::After(duration))
    }

    /// Bounds `self` by the instant `at` ([`DeadlineInstant`]); one already past fires at
    /// the first pending poll.
    ///
    /// # Errors
    ///
    /// `Err(Elapsed)` when `at` passes first.
    ///
    /// # Panics
    ///
    /// As [`deadline`](DeadlineExt::deadline).
    ///
    /// # Cancel safety
    ///
    /// Dropping the deadline drops `self`.
    fn deadline_at(self, at: impl DeadlineInstant) -> Deadline<Self> {
        Deadline::new(self, DefaultWheel::new(), Limit::At(at.reading()))
    }

    /// Bounds `self` by the limit installed for `name` now ([`crate::report::limit_for`]),
    /// and names the deadline so its outcome is reported.
    ///
    /// # Errors
    ///
    /// `Err(Elapsed)` when the limit passes first.
    ///
    /// # Panics
    ///
    /// As [`deadline`](DeadlineExt::deadline).
    #[cfg(feature = "config")]
    fn deadline_named(self, name: &'static str) -> NamedDeadline<Self> {
        let limit = crate::report::limit_for(name);
        Deadline::new(self, DefaultWheel::new(), Limit::After(limit)).named(name)
    }

    /// Carries the budget in force here into `self`, wherever it is polled, for work handed
    /// to another task (`tokio::spawn(work.with_current_budget())`; see the
    /// [guide](crate::guide)). Its end is an instant: waiting to be polled counts. With no
    /// budget in force, `self` runs unbounded.
    ///
    /// # Errors
    ///
    /// `Err(Elapsed)` ([`is_budget`](punctual_core::Elapsed::is_budget)) when the budget
    /// runs out first.
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
/// // Items in time pass through as `Ok`; a stream that stalls ends with one `Err`.
/// let stalled = stream::iter([1]).chain(stream::pending());
/// let items: Vec<_> = stalled.idle_timeout(Duration::from_millis(5)).collect().await;
/// assert!(items[0].is_ok() && items[1].is_err() && items.len() == 2);
/// # });
/// ```
pub trait StreamDeadlineExt: Stream + Sized {
    /// Bounds the whole stream by `duration` from its first poll: when it passes, the
    /// stream yields one `Err(Elapsed)` and ends. See [`StreamDeadline`].
    ///
    /// # Panics
    ///
    /// As [`DeadlineExt::deadline`].
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

/// A future that completes `duration` after its first poll, on the default wheel.
///
/// ```
/// # futures_executor::block_on(async {
/// let start = std::time::Instant::now();
/// punctual::sleep(std::time::Duration::from_millis(3)).await;
/// assert!(start.elapsed() >= std::time::Duration::from_millis(3));
/// # });
/// ```
///
/// # Panics
///
/// As [`DeadlineExt::deadline`].
pub fn sleep(duration: Duration) -> Sleep {
    Sleep::new(DefaultWheel::new(), Limit::After(duration))
}

/// A future that completes at `at` (a `std::time::Instant`, or a `tokio::time::Instant`
/// with the `tokio` feature), on the default wheel.
///
/// # Panics
///
/// As [`DeadlineExt::deadline`].
pub fn sleep_until(at: impl DeadlineInstant) -> Sleep {
    Sleep::new(DefaultWheel::new(), Limit::At(at.reading()))
}

/// Ticks once a `period` on the default wheel, the first tick at its first poll, as
/// `tokio::time::interval` ([`punctual_core::Interval`]); each tick returns the instant it
/// was due at (tokio's with `tokio`). After a stall it gives one tick, then keeps the grid
/// ([`MissedTickBehavior::Skip`](crate::MissedTickBehavior::Skip); tokio's is `Burst`).
///
/// ```
/// use std::time::{Duration, Instant};
///
/// # futures_executor::block_on(async {
/// let mut interval = punctual::interval(Duration::from_millis(2));
/// let first = interval.tick().await; // at once
/// let second = interval.tick().await;
/// // On the grid (a tick taken late may skip some), and never early.
/// assert_eq!((second - first).as_nanos() % 2_000_000, 0);
/// assert!(second - first >= Duration::from_millis(2));
/// let first: Instant = first.into(); // with or without the `tokio` feature
/// assert!(first.elapsed() >= Duration::from_millis(2));
/// # });
/// ```
///
/// # Panics
///
/// If `period` is zero, as tokio's; else as [`DeadlineExt::deadline`].
#[track_caller]
pub fn interval(period: Duration) -> Interval {
    Interval::new(DefaultWheel::new(), Limit::After(Duration::ZERO), period)
}

/// As [`interval`], the first tick at `start` (at once if `start` is past), as
/// `tokio::time::interval_at`.
///
/// # Panics
///
/// As [`interval`].
#[track_caller]
pub fn interval_at(start: impl DeadlineInstant, period: Duration) -> Interval {
    Interval::new(DefaultWheel::new(), Limit::At(start.reading()), period)
}

/// Gives `future` a budget of `duration`, which bounds it and every default deadline
/// started while it is polled, on any executor ([`Budget::current`](crate::Budget::current)).
///
/// ```
/// use std::time::Duration;
/// use punctual::DeadlineExt;
///
/// # futures_executor::block_on(async {
/// let outcome = punctual::budget(Duration::from_millis(10), async {
///     // A limit of its own of a second: the budget ends it at 10 ms.
///     std::future::pending::<()>().deadline(Duration::from_secs(1)).await
/// })
/// .await;
/// assert!(outcome.and_then(|inner| inner).unwrap_err().is_budget());
/// # });
/// ```
///
/// # Errors
///
/// `Err(Elapsed)` with `is_budget()` when the budget runs out first (as deadlines inside
/// that it cut short return), `future` dropped by then.
///
/// # Panics
///
/// As [`DeadlineExt::deadline`], at its first poll, even if `future` is ready.
pub fn budget<F: IntoFuture>(duration: Duration, future: F) -> Budgeted<F::IntoFuture> {
    Budgeted::new(future.into_future(), duration)
}

/// `future.deadline(duration)` in the shape of `tokio::time::timeout` (taking any
/// [`IntoFuture`]), so migrating is a change of path. Unlike tokio's, the clock starts at
/// the first pending poll, and `Err(Elapsed)` never comes early.
///
/// # Errors
///
/// `Err(Elapsed)` when `duration` passes first, `future` dropped by then.
///
/// # Panics
///
/// As [`DeadlineExt::deadline`].
///
/// # Cancel safety
///
/// Dropping the deadline drops `future`.
pub fn timeout<F: IntoFuture>(duration: Duration, future: F) -> Deadline<F::IntoFuture> {
    future.into_future().deadline(duration)
}

/// `future.deadline_at(at)` in the shape of `tokio::time::timeout_at`: `at` is a
/// `std::time::Instant`, or a `tokio::time::Instant` with the `tokio` feature.
///
/// # Errors
///
/// `Err(Elapsed)` when `at` passes first, `future` dropped by then.
///
/// # Panics
///
/// As [`DeadlineExt::deadline`].
///
/// # Cancel safety
///
/// Dropping the deadline drops `future`.
pub fn timeout_at<F: IntoFuture>(at: impl DeadlineInstant, future: F) -> Deadline<F::IntoFuture> {
    future.into_future().deadline_at(at)
}
