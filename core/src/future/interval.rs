//! `Interval`: ticks on a grid of a period, each a sleep until its reading.
//! * The grid is in readings of the wheel the first tick chose, kept for life.
//! * A tick is given only once the timer fired at or after `next` (never early); the timer
//!   then holds no entry until the next poll arms the next tick.

use core::fmt;
use core::marker::PhantomData;
use core::pin::Pin;
use core::task::{Context, Poll};
use core::time::Duration;

use futures_core::Stream;

use crate::clock::ClockInstant;
use crate::future::timer::{RawWheel, Timer, WheelRef};
use crate::time::{Limit, Reading, duration_of, span_of};
pub use missed::MissedTickBehavior;

mod missed;

/// Ticks once a period, on a grid: the first tick at once ([`Wheel::interval`]) or at a
/// given instant ([`Wheel::interval_at`]), then one each `period`; tokio's `Interval`, on
/// a wheel. Each tick comes **never early**, **at most two wheel ticks late** with a
/// driver not starved; a later one was missed, and the next follow its
/// [`MissedTickBehavior`]. It allocates nothing, holds one entry while it waits, and is a
/// [`Stream`] that never ends. The resets settle the wheel, if no tick has yet.
///
/// # Cancel safety
///
/// Dropping it releases its entry. [`tick`](Interval::tick) is cancel safe.
///
/// # Panics
///
/// Made with a period of zero, as tokio's.
///
/// # Examples
///
/// ```
/// use core::task::{Context, Poll, Waker};
/// use core::time::Duration;
/// use punctual_core::{Fixed, ManualClock, Reading, Wheel};
///
/// let ms = Duration::from_millis;
/// let wheel: Wheel<ManualClock, Fixed<4>> = Wheel::fixed(ManualClock::new(), ms(1));
/// let mut cx = Context::from_waker(Waker::noop());
/// let mut interval = wheel.interval(ms(10));
/// assert_eq!(interval.poll_tick(&mut cx), Poll::Ready(Reading::ZERO)); // at once
/// assert!(interval.poll_tick(&mut cx).is_pending());
/// wheel.advance(ms(9));
/// assert!(interval.poll_tick(&mut cx).is_pending()); // never early
/// wheel.advance(ms(1));
/// assert_eq!(interval.poll_tick(&mut cx), Poll::Ready(Reading::ZERO + ms(10)));
/// ```
///
/// [`Wheel::interval`]: crate::Wheel::interval
/// [`Wheel::interval_at`]: crate::Wheel::interval_at
#[must_use = "an interval does nothing unless its ticks are awaited or polled"]
pub struct Interval<'w, W: WheelRef = &'w dyn RawWheel> {
    timer: Timer<W>,
    /// The next tick, on the chosen wheel's clock; `None` until the first poll fixes it.
    next: Option<Reading>,
    /// The period in saturated nanoseconds, never zero.
    period: u64,
    missed: MissedTickBehavior,
    wheel: PhantomData<&'w ()>,
}

impl<'w, W: WheelRef> Interval<'w, W> {
    /// Ticks on `wheel` once a `period`, the first at `first` (`Limit::After` counts from
    /// the first poll).
    ///
    /// # Panics
    ///
    /// If `period` is zero.
    #[track_caller]
    pub const fn new(wheel: W, first: Limit, period: Duration) -> Self {
        assert!(!period.is_zero(), "`Interval` made with a period of zero");
        Self {
            timer: Timer::new(wheel, first),
            next: None,
            period: span_of(period),
            missed: MissedTickBehavior::Skip,
            wheel: PhantomData,
        }
    }

    /// Waits for the next tick and returns the instant it was due at.
    ///
    /// # Cancel safety
    ///
    /// A `tick()` dropped before it completes takes no tick.
    pub async fn tick(&mut self) -> W::Instant {
        core::future::poll_fn(|cx| self.poll_tick(cx)).await
    }

    /// Polls for the next tick: `Ready` with the instant it was due at, once the clock
    /// reached it; else `Pending`, the last poll's waker woken when it comes.
    pub fn poll_tick(&mut self, cx: &mut Context<'_>) -> Poll<W::Instant> {
        let tick = self.next.unwrap_or_else(|| self.fix_next());
        if self.timer.poll_fired(cx, None).is_pending() {
            return Poll::Pending;
        }
        let wheel = self.timer.wheel_ref().get();
        let slack = span_of(wheel.tick()).saturating_mul(2);
        let next = self.missed.next(tick, wheel.now(), self.period, slack);
        self.wait_for(next);
        Poll::Ready(self.timer.wheel_ref().instant_of(tick))
    }

    /// Settles the wheel and waits for the idle timer's limit, the next tick.
    #[cold]
    fn fix_next(&mut self) -> Reading {
        let wheel = self.timer.chosen_wheel();
        let at = self.timer.due(wheel);
        self.wait_for(at);
        at
    }

    /// Settles the wheel and waits for `limit`.
    fn wait(&mut self, limit: Limit) {
        self.timer.reset(limit);
        self.fix_next();
    }

    /// Waits for `at`, a reading of the chosen wheel's clock.
    fn wait_for(&mut self, at: Reading) {
        self.next = Some(at);
        self.timer.reset_on_wheel(at);
    }

    /// Moves the next tick, and the grid, to one period from now, as tokio's `Interval::reset`.
    pub fn reset(&mut self) {
        self.wait(Limit::After(self.period()));
    }

    /// Moves the next tick, and the grid, to now, as tokio's `Interval::reset_immediately`.
    pub fn reset_immediately(&mut self) {
        let wheel = self.timer.chosen_wheel();
        self.wait_for(wheel.get().now());
    }

    /// Moves the next tick, and the grid, to `after` from now, as tokio's `Interval::reset_after`.
    pub fn reset_after(&mut self, after: Duration) {
        self.wait(Limit::After(after));
    }

    /// Moves the next tick, and the grid, to `at` ([`ClockInstant`]), as tokio's
    /// `Interval::reset_at`; a past `at` ticks at the next poll.
    pub fn reset_at(&mut self, at: impl ClockInstant<W>) {
        let at = at.reading_on(&self.timer.chosen_wheel());
        self.wait(Limit::At(at));
    }

    /// The period.
    pub fn period(&self) -> Duration {
        duration_of(self.period)
    }

    /// What the interval does after a missed tick.
    pub fn missed_tick_behavior(&self) -> MissedTickBehavior {
        self.missed
    }

    /// Sets what the interval does after a missed tick, from the next tick on.
    pub fn set_missed_tick_behavior(&mut self, behaviour: MissedTickBehavior) {
        self.missed = behaviour;
    }
}

/// The instants of the ticks, as [`Interval::tick`]; it never ends.
impl<W: WheelRef> Stream for Interval<'_, W> {
    type Item = W::Instant;

    fn poll_next(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Option<W::Instant>> {
        self.get_mut().poll_tick(cx).map(Some)
    }

    fn size_hint(&self) -> (usize, Option<usize>) {
        (usize::MAX, None)
    }
}

impl<W: WheelRef> fmt::Debug for Interval<'_, W> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Interval")
            .field("period", &self.period())
            .field("next", &self.next)
            .field("missed", &self.missed)
            .field("timer", &self.timer)
            .finish()
    }
}
