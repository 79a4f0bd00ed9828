//! `Sleep`: a deadline on nothing.
//! * `done` is set only by the poll that returns `Ready`, cleared only by a reset; while
//!   set, polls return `Ready` and `later` is the reading it ended at.
//! * A reset keeps the wheel a started sleep chose.
//! * A reset later than the armed entry keeps the entry and sets `later` (chosen wheel's
//!   clock; `ZERO`: none): the poll that sees the old fire arms the rest.

use core::fmt;
use core::future::Future;
use core::marker::PhantomData;
use core::pin::Pin;
use core::task::{Context, Poll};

use crate::clock::ClockInstant;
use crate::future::timer::{RawWheel, Timer, WheelRef};
use crate::time::{Limit, Reading};

/// A future that completes when its time has passed: a deadline on nothing, with the
/// rules of a [`Deadline`](crate::Deadline). Made by `punctual::sleep` or
/// [`Wheel::sleep`](crate::Wheel::sleep). Once complete, polls return `Ready` again, as
/// tokio's, until a [reset](Sleep::reset).
///
/// # Cancel safety
///
/// Dropping it releases its timer entry; nothing else is lost.
///
/// # Panics
///
/// Polling it again after a poll or a reset panicked (a waker's `drop`, say).
#[must_use = "futures do nothing unless you `.await` or poll them"]
pub struct Sleep<'w, W: WheelRef = &'w dyn RawWheel> {
    timer: Timer<W>,
    /// A later time a reset moved the armed sleep to; `ZERO`: none. Once `done`: the
    /// reading the sleep ended at.
    later: Reading,
    done: bool,
    wheel: PhantomData<&'w ()>,
}

impl<'w, W: WheelRef> Sleep<'w, W> {
    /// Sleeps until `limit` on `wheel`.
    pub const fn new(wheel: W, limit: Limit) -> Self {
        Self {
            timer: Timer::new(wheel, limit),
            later: Reading::ZERO,
            done: false,
            wheel: PhantomData,
        }
    }

    /// Whether the sleep has been polled.
    pub fn is_started(&self) -> bool {
        self.timer.is_started()
    }

    /// Whether the sleep's time has come (completed, or fired for the next poll), as
    /// tokio's `Sleep::is_elapsed`. `false` before the first poll, even for a past time.
    pub fn is_elapsed(&self) -> bool {
        if self.done {
            return true;
        }
        self.timer.peek_fired() && (self.later == Reading::ZERO || self.timer.now() >= self.later)
    }

    /// The instant the sleep ends (or ended) at, as tokio's `Sleep::deadline`. A duration
    /// counts from the first poll (tokio's: from its making), so before it `sleep(d)`
    /// reports `d` from now; a sleep that never ends, an instant centuries away.
    pub fn deadline(&self) -> W::Instant {
        let mut wheel = *self.timer.wheel_ref();
        wheel.choose();
        let at = match self.done || self.later > Reading::ZERO {
            true => self.later,
            false => self.timer.due(wheel),
        };
        wheel.instant_of(at)
    }

    /// Moves the sleep to end at `at` ([`ClockInstant`]), earlier or later; a completed one
    /// runs again. As tokio's `Sleep::reset`, never before `at`. Moved later while pending,
    /// it keeps its entry (the old time's fire wakes the task once); else the next poll
    /// arms the new time, so poll it again after a reset.
    ///
    /// ```
    /// use core::task::{Context, Poll, Waker};
    /// use core::time::Duration;
    /// use punctual_core::{Fixed, ManualClock, Wheel};
    ///
    /// let wheel: Wheel<ManualClock, Fixed<4>> = Wheel::fixed(ManualClock::new(), Duration::from_millis(1));
    /// let mut cx = Context::from_waker(Waker::noop());
    /// let mut sleep = core::pin::pin!(wheel.sleep(Duration::from_millis(10)));
    /// assert!(sleep.as_mut().poll(&mut cx).is_pending());
    ///
    /// // Activity: push the sleep back to 30 ms from now.
    /// wheel.advance(Duration::from_millis(5));
    /// sleep.as_mut().reset(wheel.now() + Duration::from_millis(30));
    /// wheel.advance(Duration::from_millis(29));
    /// assert!(sleep.as_mut().poll(&mut cx).is_pending());
    /// wheel.advance(Duration::from_millis(1));
    /// assert_eq!(sleep.as_mut().poll(&mut cx), Poll::Ready(()));
    /// ```
    pub fn reset(self: Pin<&mut Self>, at: impl ClockInstant<W>) {
        let this = self.get_mut();
        let at = at.reading_on(this.timer.wheel_ref());
        if let Some(due) = this.timer.armed_due() {
            let at = this.timer.wheel_ref().reading_at(at);
            if at > due {
                // Later: the entry stays; its fire arms the rest (`poll`).
                this.later = at;
                return;
            }
        }
        this.later = Reading::ZERO;
        this.timer.reset(Limit::At(at));
        this.done = false;
    }
}

impl<W: WheelRef> Future for Sleep<'_, W> {
    type Output = ();

    fn poll(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<()> {
        if self.done {
            return Poll::Ready(());
        }
        loop {
            // Read before the fire lets the entry go: the reading `deadline` reports after.
            let due = self.timer.armed_due();
            let Poll::Ready(fired) = self.timer.poll_fired(cx, None) else {
                return Poll::Pending;
            };
            let later = core::mem::replace(&mut self.later, Reading::ZERO);
            if later > Reading::ZERO && self.timer.now() < later {
                // The old time of a sleep reset later: arm the rest.
                self.timer.reset_on_wheel(later);
                continue;
            }
            fired.elapsed(None, None);
            self.done = true;
            self.later = match (later, due) {
                (Reading::ZERO, Some(due)) => due,
                (Reading::ZERO, None) => {
                    let now = self.timer.now();
                    fired
                        .at
                        .map_or(now, |at| self.timer.wheel_ref().reading_at(at).min(now))
                }
                (later, _) => later,
            };
            return Poll::Ready(());
        }
    }
}

impl<W: WheelRef> fmt::Debug for Sleep<'_, W> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Sleep")
            .field("timer", &self.timer)
            .field("later", &self.later)
            .field("done", &self.done)
            .finish()
    }
}
