//! The global wheel: what `fut.deadline(d)` uses when nothing was set up.
//!
//! A growable wheel with a 1 ms tick, on [`GlobalClock`] (`std::time::Instant`), driven by
//! one thread that starts the first time a deadline actually needs the wheel (a deadline
//! whose inner future is ready at its first poll never starts it). The thread sleeps until
//! the next expiration, not every tick (waking early by the oversleep it has measured, at
//! most 50 µs, and spinning the rest, so that a turn is not late by the system's wake-up
//! latency; see `wake_lead`), and lives as long as the process.

use core::future::Future;
use core::time::Duration;
use std::sync::{Once, OnceLock};
use std::time::Instant;

use futures_core::Stream;
use punctual_core::{
    Clock, Growable, IdleTimeout, Limit, RawWheel, StdClock, StreamDeadline, Wheel, WheelRef,
};

/// The global wheel's tick.
const TICK: Duration = Duration::from_millis(1);

static GLOBAL: Wheel<GlobalClock, Growable> = Wheel::growable(GlobalClock, TICK);
static DRIVER: Once = Once::new();
/// The clock behind [`GlobalClock`], made at its first reading.
static CLOCK: OnceLock<StdClock> = OnceLock::new();

/// The clock of the global wheel: a [`StdClock`] (`std::time::Instant`'s clock, on Linux
/// `CLOCK_MONOTONIC` read directly), counted from the first time any deadline read it.
/// Reading it makes sure the global driver thread runs.
///
/// # Panics
///
/// A reading panics if the driver thread has not started yet and the operating system
/// refuses to start it ("could not start the timer thread", with the system's error): the
/// wheel's deadlines could never fire. The next reading tries to start it again.
#[derive(Debug, Clone, Copy, Default)]
pub struct GlobalClock;

impl GlobalClock {
    /// The reading of `instant` on this clock (zero for instants before its origin).
    pub fn reading_of(instant: Instant) -> Duration {
        CLOCK.get_or_init(StdClock::new).reading_of(instant)
    }
}

impl Clock for GlobalClock {
    fn now(&self) -> Duration {
        // `call_once_force`: if the operating system refuses the thread, the panic
        // ("could not start the timer thread") reaches this reader, and the next reading
        // tries again (a poisoned `call_once` would panic with a message that names no
        // cause, at every reading from then on).
        DRIVER.call_once_force(|_| {
            GLOBAL.enable_thread_spares();
            crate::thread_driver::spawn_named(&GLOBAL, "punctual-timer");
        });
        CLOCK.get_or_init(StdClock::new).now()
    }
}

/// The global wheel, for diagnostics ([`Wheel::occupied`]) and for [`Deadline::new`]
/// with an explicit [`Limit`].
pub fn global_wheel() -> &'static Wheel<GlobalClock, Growable> {
    &GLOBAL
}

/// The global wheel as a deadline holds it: zero bytes, and calls that go straight to
/// the wheel (no `dyn` indirection), since the wheel is a `static`.
#[derive(Debug, Clone, Copy, Default)]
pub struct Global;

// SAFETY: always the one `static` wheel.
unsafe impl WheelRef for Global {
    type Target = Wheel<GlobalClock, Growable>;

    #[inline]
    fn get(&self) -> &Self::Target {
        &GLOBAL
    }
}

/// A deadline on the global wheel. See [`punctual_core::Deadline`] for the rules.
pub type Deadline<F> = punctual_core::Deadline<'static, F, Global>;

/// A deadline on the global wheel with a name ([`punctual_core::Deadline::named`]: the
/// name is part of the type, so that deadlines without one carry no bytes for it).
pub type NamedDeadline<F> = punctual_core::Deadline<'static, F, Global, punctual_core::Named>;

/// A sleep on the global wheel. See [`punctual_core::Sleep`].
pub type Sleep = punctual_core::Sleep<'static, Global>;

/// Bounds any future by a deadline: `.deadline(d)` and `.deadline_at(instant)` on the
/// global wheel, `.deadline_on(&wheel, d)` on a wheel of your own.
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
    /// Bounds `self` by `duration`, measured from its first pending poll, on the global
    /// wheel.
    ///
    /// # Errors
    ///
    /// The deadline resolves to `Err(Elapsed)` when `duration` passes before `self`
    /// completes; `self` has been dropped by then.
    ///
    /// # Panics
    ///
    /// At the first poll where `self` is pending, if the global wheel's timer thread is
    /// not running and cannot be started ([`GlobalClock`]).
    ///
    /// # Cancel safety
    ///
    /// Dropping the deadline drops `self`; see [`punctual_core::Deadline`].
    fn deadline(self, duration: Duration) -> Deadline<Self> {
        Deadline::new(self, Global, Limit::After(duration))
    }

    /// Bounds `self` by the instant `at`, on the global wheel. An instant already past
    /// fires at the first poll where `self` is pending.
    ///
    /// Unlike [`deadline`](DeadlineExt::deadline), this reads the global clock's origin
    /// when called, to place `at` on it.
    ///
    /// # Errors
    ///
    /// `Err(Elapsed)` when `at` passes before `self` completes.
    ///
    /// # Panics
    ///
    /// At the first poll where `self` is pending, if the global wheel's timer thread is
    /// not running and cannot be started ([`GlobalClock`]).
    ///
    /// # Cancel safety
    ///
    /// Dropping the deadline drops `self`; see [`punctual_core::Deadline`].
    fn deadline_at(self, at: Instant) -> Deadline<Self> {
        Deadline::new(self, Global, Limit::At(GlobalClock::reading_of(at)))
    }

    /// Bounds `self` by `duration` on a wheel of your own.
    ///
    /// # Errors
    ///
    /// `Err(Elapsed)` when `duration` passes before `self` completes.
    ///
    /// # Cancel safety
    ///
    /// Dropping the deadline drops `self`; see [`punctual_core::Deadline`].
    fn deadline_on(
        self,
        wheel: &dyn RawWheel,
        duration: Duration,
    ) -> punctual_core::Deadline<'_, Self> {
        punctual_core::Deadline::new(self, wheel, Limit::After(duration))
    }
}

impl<F: Future> DeadlineExt for F {}

/// A future that completes `duration` after its first poll, on the global wheel.
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
/// At its first poll, if the global wheel's timer thread is not running and cannot be
/// started ([`GlobalClock`]).
pub fn sleep(duration: Duration) -> Sleep {
    Sleep::new(Global, Limit::After(duration))
}

/// A future that completes at `at`, on the global wheel.
///
/// # Panics
///
/// At its first poll, if the global wheel's timer thread is not running and cannot be
/// started ([`GlobalClock`]).
pub fn sleep_until(at: Instant) -> Sleep {
    Sleep::new(Global, Limit::At(GlobalClock::reading_of(at)))
}

/// A budget on the global wheel. See [`punctual_core::Budgeted`].
pub type Budgeted<F> = punctual_core::Budgeted<'static, F>;

/// Gives `future` a budget of `duration`: the whole block is bounded by it, and every
/// deadline on the global wheel started while it runs ends no later than it.
///
/// The budget reaches the deadlines inside without being passed by hand, on any
/// executor: it travels with the polling of `future` (see [`punctual_core::Budgeted`]).
///
/// ```
/// use std::time::Duration;
/// use punctual::DeadlineExt;
///
/// # futures_executor::block_on(async {
/// let attempts = std::sync::atomic::AtomicU32::new(0);
/// let outcome = punctual::budget(Duration::from_millis(30), async {
///     loop {
///         attempts.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
///         // Each attempt may take up to 20 ms, but never past the budget.
///         match std::future::pending::<()>().deadline(Duration::from_millis(20)).await {
///             Ok(()) => break,
///             Err(e) if e.is_budget() => return Err(e),
///             Err(_) => continue, // retry
///         }
///     }
///     Ok(())
/// })
/// .await;
/// // The second attempt was cut short by the budget (the block's own deadline or the
/// // attempt's, whichever the driver saw first), and no third one started. (A driver
/// // running 10 ms late sees the first attempt's deadline and the block's at once: the
/// // block then ends with the first attempt.)
/// let err = outcome.and_then(|inner| inner).unwrap_err();
/// assert!(err.is_budget());
/// assert!((1..=2).contains(&attempts.load(std::sync::atomic::Ordering::SeqCst)));
/// # });
/// ```
///
/// # Errors
///
/// The budget resolves to `Err(Elapsed)` (with `is_budget()`) when it runs out before
/// `future` completes; `future` has been dropped by then. Deadlines inside that the budget
/// cut short also return an `Elapsed` with `is_budget()`.
///
/// # Panics
///
/// At its first poll (which reads the global clock even if `future` is ready), if the
/// global wheel's timer thread is not running and cannot be started ([`GlobalClock`]).
pub fn budget<F: Future>(duration: Duration, future: F) -> Budgeted<F> {
    Budgeted::new(future, &GLOBAL, duration)
}

/// Deadlines for any [`Stream`], on the global wheel.
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
    /// At its first poll, if the global wheel's timer thread is not running and cannot
    /// be started ([`GlobalClock`]).
    fn total_deadline(self, duration: Duration) -> StreamDeadline<'static, Self> {
        StreamDeadline::new(self, &GLOBAL, duration)
    }

    /// Bounds each gap between items by `idle`: when an item is late, the stream yields
    /// one `Err(Elapsed)` and ends. See [`IdleTimeout`].
    ///
    /// # Panics
    ///
    /// At the first poll that finds the stream pending, if the global wheel's timer thread
    /// is not running and cannot be started ([`GlobalClock`]).
    fn idle_timeout(self, idle: Duration) -> IdleTimeout<'static, Self> {
        IdleTimeout::new(self, &GLOBAL, idle)
    }
}

impl<S: Stream> StreamDeadlineExt for S {}
