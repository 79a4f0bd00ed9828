//! The free functions on the default wheel: `sleep`, `sleep_until`, `interval`,
//! `interval_at`, `budget`, and tokio's shapes `timeout` and `timeout_at`.

use core::future::IntoFuture;
use core::time::Duration;

use punctual_core::Limit;

use crate::budget::Budgeted;
use crate::default_wheel::{Deadline, DefaultWheel, Interval, Sleep};
use crate::ext::DeadlineExt;
use crate::instant::DeadlineInstant;

/// A future that completes `duration` after its first poll, on the default wheel (see
/// [`DeadlineExt`]).
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
/// As [`DeadlineExt::deadline`], at its first poll.
pub fn sleep(duration: Duration) -> Sleep {
    Sleep::new(DefaultWheel::new(), Limit::After(duration))
}

/// A future that completes at `at` (a `std::time::Instant`, or a `tokio::time::Instant`
/// with the `tokio` feature), on the default wheel.
///
/// # Panics
///
/// As [`DeadlineExt::deadline`], at its first poll.
pub fn sleep_until(at: impl DeadlineInstant) -> Sleep {
    Sleep::new(DefaultWheel::new(), Limit::At(at.reading()))
}

/// Ticks once a `period` on the default wheel, the first tick at once (at its first
/// poll), as `tokio::time::interval`. See [`punctual_core::Interval`].
///
/// Each tick returns the instant it was due at: a `tokio::time::Instant` with the `tokio`
/// feature, else a `std::time::Instant` (`.into()` gives the latter from either). After a
/// stall the default ([`MissedTickBehavior::Skip`](crate::MissedTickBehavior::Skip)) gives
/// one tick, then keeps the grid; tokio's default is `Burst`.
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
/// If `period` is zero, as tokio's; else as [`DeadlineExt::deadline`], at its first poll.
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

/// Gives `future` a budget of `duration`: the whole block is bounded by it, and every
/// default deadline started while it runs ends no later than it.
///
/// The budget travels with the polling of `future`, on any executor;
/// [`Budget::current`](crate::Budget::current) reads it inside.
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
/// (`examples/budget_retries.rs` runs a retry loop under a budget.)
///
/// # Errors
///
/// `Err(Elapsed)`, with `is_budget()`, when the budget runs out before `future`
/// completes; `future` has been dropped by then. Deadlines inside that the budget cut
/// short also return an `Elapsed` with `is_budget()`.
///
/// # Panics
///
/// As [`DeadlineExt::deadline`], at its first poll (which reads the clock even if `future`
/// is ready).
pub fn budget<F: IntoFuture>(duration: Duration, future: F) -> Budgeted<F::IntoFuture> {
    Budgeted::new(future.into_future(), duration)
}

/// `future.deadline(duration)` in the shape of `tokio::time::timeout` (taking any
/// [`IntoFuture`]), so migrating is a change of path. Unlike tokio's, the clock starts at
/// the first pending poll, and `Err(Elapsed)` never comes early.
///
/// # Errors
///
/// `Err(Elapsed)` when `duration` passes before `future` completes; `future` has been
/// dropped by then.
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
/// `Err(Elapsed)` when `at` passes before `future` completes; `future` has been dropped
/// by then.
///
/// # Panics
///
/// As [`DeadlineExt::deadline_at`].
///
/// # Cancel safety
///
/// Dropping the deadline drops `future`.
pub fn timeout_at<F: IntoFuture>(at: impl DeadlineInstant, future: F) -> Deadline<F::IntoFuture> {
    future.into_future().deadline_at(at)
}
