//! The global wheel: what `fut.deadline(d)` uses when nothing was set up.
//!
//! A growable wheel with a 1 ms tick, on [`GlobalClock`] (`std::time::Instant`), driven by
//! one thread that starts the first time a deadline actually needs the wheel (a deadline
//! whose inner future is ready at its first poll never starts it). The thread sleeps until
//! the next expiration, not every tick, and lives as long as the process.

use core::future::Future;
use core::time::Duration;
use std::sync::{Once, OnceLock};
use std::time::Instant;

use punctual_core::{Clock, Growable, Limit, RawWheel, Wheel};

/// The global wheel's tick.
const TICK: Duration = Duration::from_millis(1);

static GLOBAL: Wheel<GlobalClock, Growable> = Wheel::growable(GlobalClock, TICK);
static ORIGIN: OnceLock<Instant> = OnceLock::new();
static DRIVER: Once = Once::new();

/// The clock of the global wheel: `std::time::Instant`, counted from the first time any
/// deadline read it. Reading it makes sure the global driver thread runs.
#[derive(Debug, Clone, Copy, Default)]
pub struct GlobalClock;

impl GlobalClock {
    /// The reading of `instant` on this clock (zero for instants before its origin).
    pub fn reading_of(instant: Instant) -> Duration {
        instant.saturating_duration_since(*ORIGIN.get_or_init(Instant::now))
    }
}

impl Clock for GlobalClock {
    fn now(&self) -> Duration {
        DRIVER.call_once(|| {
            crate::thread_driver::spawn_named(&GLOBAL, "punctual-timer");
        });
        ORIGIN.get_or_init(Instant::now).elapsed()
    }
}

/// The global wheel, for diagnostics ([`Wheel::occupied`]) and for [`Deadline::new`]
/// with an explicit [`Limit`].
pub fn global_wheel() -> &'static Wheel<GlobalClock, Growable> {
    &GLOBAL
}

/// A deadline on the global wheel. See [`punctual_core::Deadline`] for the rules.
pub type Deadline<F> = punctual_core::Deadline<'static, F>;

/// A sleep on the global wheel. See [`punctual_core::Sleep`].
pub type Sleep = punctual_core::Sleep<'static>;

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
    /// Bounds `self` by `duration`, measured from its first poll, on the global wheel.
    ///
    /// # Errors
    ///
    /// The deadline resolves to `Err(Elapsed)` when `duration` passes before `self`
    /// completes; `self` has been dropped by then.
    ///
    /// # Cancel safety
    ///
    /// Dropping the deadline drops `self`; see [`punctual_core::Deadline`].
    fn deadline(self, duration: Duration) -> Deadline<Self> {
        Deadline::new(self, &GLOBAL, Limit::After(duration))
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
    fn deadline_at(self, at: Instant) -> Deadline<Self> {
        Deadline::new(self, &GLOBAL, Limit::At(GlobalClock::reading_of(at)))
    }

    /// Bounds `self` by `duration` on a wheel of your own.
    ///
    /// # Errors
    ///
    /// `Err(Elapsed)` when `duration` passes before `self` completes.
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
pub fn sleep(duration: Duration) -> Sleep {
    Sleep::new(&GLOBAL, Limit::After(duration))
}

/// A future that completes at `at`, on the global wheel.
pub fn sleep_until(at: Instant) -> Sleep {
    Sleep::new(&GLOBAL, Limit::At(GlobalClock::reading_of(at)))
}
