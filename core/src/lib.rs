#![doc = include_str!("../README.md")]
#![no_std]
#![cfg_attr(docsrs, feature(doc_cfg))]
#![cfg_attr(docsrs, doc(auto_cfg(hide(punctual_loom))))]
#![warn(missing_docs, missing_debug_implementations, unreachable_pub)]
#![warn(clippy::std_instead_of_core, clippy::alloc_instead_of_core)]

#[cfg(feature = "std")]
extern crate std;

mod clock;
mod delay_queue;
mod driver;
mod future;
mod hierarchy;
mod sync;
mod time;
mod wheel;

#[cfg(feature = "std")]
pub use clock::BootClock;
#[cfg(any(target_has_atomic = "64", feature = "portable-atomic"))]
pub use clock::ManualClock;
#[cfg(feature = "std")]
pub use clock::StdClock;
pub use clock::{Clock, ClockInstant};
#[cfg(feature = "alloc")]
pub use delay_queue::GrowableSlots;
pub use delay_queue::{DelayQueue, Expired, FixedSlots, Full, Key, SlotStorage, StaleKey};
pub use driver::{Driver, DriverSlot, Sleeper};
pub use future::budget::{Budget, block::Budgeted};
pub use future::deadline::{
    Abandoned, Deadline, DeadlineName, KeepOnElapsed, Named, NamedResult, ReportsOutput, Unnamed,
    Within,
};
pub use future::error::Elapsed;
pub use future::interval::{Interval, MissedTickBehavior};
pub use future::outcome::{
    Outcome, OutcomeKind, overrun_threshold, report_outcome, report_overruns, set_outcome_hook,
};
pub use future::sleep::Sleep;
pub use future::stream::{IdleTimeout, StreamDeadline};
pub use future::timer::{RawWheel, WheelRef};
pub use time::{Limit, Reading};
#[cfg(feature = "alloc")]
pub use wheel::GrowableWheel;
pub use wheel::heads::IndexWidth;
pub use wheel::stats::Stats;
#[cfg(feature = "alloc")]
pub use wheel::storage::Growable;
pub use wheel::storage::{Fixed, Storage};
pub use wheel::{FixedWheel, Wheel};

use core::future::Future;
use core::time::Duration;

/// The wheel's own deadlines: the limit, then the future, as in tokio's `timeout`.
impl<C: Clock, S: Storage> Wheel<C, S> {
    /// Bounds `future` by `duration` from its first pending poll (see [`Deadline`]).
    pub fn deadline<F: Future>(&self, duration: Duration, future: F) -> Deadline<'_, F> {
        Deadline::new(future, self, Limit::After(duration))
    }

    /// Bounds `future` by the instant `at` on this wheel's clock ([`ClockInstant`]).
    pub fn deadline_at<F: Future>(&self, at: impl ClockInstant<C>, future: F) -> Deadline<'_, F> {
        Deadline::new(future, self, Limit::At(at.reading_on(self.clock())))
    }

    /// A future that completes `duration` after its first poll.
    pub fn sleep(&self, duration: Duration) -> Sleep<'_> {
        Sleep::new(self, Limit::After(duration))
    }

    /// A future that completes when this wheel's clock reaches `at` ([`ClockInstant`]).
    pub fn sleep_until(&self, at: impl ClockInstant<C>) -> Sleep<'_> {
        Sleep::new(self, Limit::At(at.reading_on(self.clock())))
    }

    /// Ticks once a `period`, the first tick at its first poll ([`Interval`]).
    ///
    /// # Panics
    ///
    /// If `period` is zero.
    #[track_caller]
    pub fn interval(&self, period: Duration) -> Interval<'_> {
        Interval::new(self, Limit::After(Duration::ZERO), period)
    }

    /// Ticks once a `period`, the first tick at `start` on this wheel's clock
    /// ([`ClockInstant`]); a `start` already past gives it at the first poll.
    ///
    /// ```
    /// # use core::time::Duration;
    /// # use core::task::{Context, Waker};
    /// # use punctual_core::{Fixed, ManualClock, Wheel};
    /// # let wheel: Wheel<ManualClock, Fixed<4>> = Wheel::fixed(ManualClock::new(), Duration::from_millis(1));
    /// # let mut cx = Context::from_waker(Waker::noop());
    /// let start = wheel.now() + Duration::from_millis(5);
    /// let mut interval = wheel.interval_at(start, Duration::from_millis(10));
    /// assert!(interval.poll_tick(&mut cx).is_pending());
    /// wheel.advance(Duration::from_millis(5));
    /// assert_eq!(interval.poll_tick(&mut cx), core::task::Poll::Ready(start));
    /// ```
    ///
    /// # Panics
    ///
    /// If `period` is zero.
    #[track_caller]
    pub fn interval_at(&self, start: impl ClockInstant<C>, period: Duration) -> Interval<'_> {
        Interval::new(self, Limit::At(start.reading_on(self.clock())), period)
    }

    /// Bounds `future`, and this wheel's deadlines inside it, by `duration` ([`Budgeted`]).
    pub fn budget<F: Future>(&self, duration: Duration, future: F) -> Budgeted<'_, F> {
        Budgeted::new(future, self, duration)
    }

    /// Bounds the whole of `stream` by `duration` from its first poll ([`StreamDeadline`]).
    pub fn total_deadline<St: futures_core::Stream>(
        &self,
        duration: Duration,
        stream: St,
    ) -> StreamDeadline<'_, St> {
        StreamDeadline::new(stream, self, duration)
    }

    /// Bounds each gap between items of `stream` by `idle`. See [`IdleTimeout`].
    pub fn idle_timeout<St: futures_core::Stream>(
        &self,
        idle: Duration,
        stream: St,
    ) -> IdleTimeout<'_, St> {
        IdleTimeout::new(stream, self, idle)
    }
}
