//! The part of a deadline that does not depend on the inner future: when it starts, arming,
//! polling and releasing its entry. Compiled once, not once per future type.
//!
//! [`RawWheel`] is the object-safe face of a [`Wheel`], so that `Deadline<'w, F>` does not
//! carry the wheel's clock and storage types: a deadline holds a `&'w dyn RawWheel`, and
//! each wheel operation on the pending path is one indirect call.

use core::task::{Context, Poll, Waker};
use core::time::Duration;

use crate::Elapsed;
use crate::clock::Clock;
use crate::entry::Index;
use crate::storage::Storage;
use crate::wheel::Wheel;

/// What limits a deadline: a duration from its first poll, or an instant on the wheel's
/// clock (a reading of [`Clock::now`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Limit {
    /// Ends this long after the inner future first returns `Pending`.
    After(Duration),
    /// Ends when the wheel's clock reads this.
    At(Duration),
}

mod sealed {
    pub trait Sealed {}
}

/// A wheel seen through a trait object: what a [`Deadline`](crate::Deadline) needs from
/// it. Implemented by every [`Wheel`]; sealed.
pub trait RawWheel: Sync + sealed::Sealed {
    #[doc(hidden)]
    fn start(&self, limit: Limit, waker: &Waker) -> Started;
    #[doc(hidden)]
    fn poll_armed(&self, armed: &Armed, waker: &Waker) -> bool;
    #[doc(hidden)]
    fn has_fired(&self, armed: &Armed) -> bool;
    #[doc(hidden)]
    fn release(&self, armed: &Armed) -> bool;
    #[doc(hidden)]
    fn now(&self) -> Duration;
    #[doc(hidden)]
    fn count_degraded_poll(&self);
}

/// An armed entry, as a deadline holds it.
#[doc(hidden)]
#[derive(Debug, Clone, Copy)]
pub struct Armed {
    index: Index,
    generation: u32,
    start: u64,
}

/// The outcome of a deadline's first pending poll.
#[doc(hidden)]
#[derive(Debug)]
pub enum Started {
    /// The deadline had already passed.
    Passed { requested: Duration },
    /// Armed on the wheel.
    Armed { armed: Armed, requested: Duration },
    /// The wheel is full: the deadline checks the clock on each poll until it passes.
    Full {
        target: Duration,
        requested: Duration,
    },
    /// Beyond any tick the wheel can count: it never fires.
    Never,
}

impl<C: Clock, S: Storage> sealed::Sealed for Wheel<C, S> {}

impl<C: Clock, S: Storage> RawWheel for Wheel<C, S> {
    fn start(&self, limit: Limit, waker: &Waker) -> Started {
        let now = self.clock().now();
        let (target, requested) = match limit {
            Limit::After(duration) => {
                // Add the clock's granularity: `now` may lag the true time by that much.
                let target = now
                    .checked_add(self.clock().resolution())
                    .and_then(|t| t.checked_add(duration));
                (target, duration)
            }
            Limit::At(at) => (Some(at), at.saturating_sub(now)),
        };
        let Some(target) = target else {
            return Started::Never;
        };
        if target <= now {
            return Started::Passed { requested };
        }
        let when = self.ceil_ticks(target);
        if when == u64::MAX {
            return Started::Never;
        }
        let start = self.now_tick();
        match self.arm(when, start, waker) {
            Some((index, generation)) => Started::Armed {
                armed: Armed {
                    index,
                    generation,
                    start,
                },
                requested,
            },
            None => Started::Full { target, requested },
        }
    }

    fn poll_armed(&self, armed: &Armed, waker: &Waker) -> bool {
        self.poll_entry(armed.index, armed.generation, waker)
    }

    fn has_fired(&self, armed: &Armed) -> bool {
        self.entry_fired(armed.index)
    }

    fn release(&self, armed: &Armed) -> bool {
        Wheel::release(self, armed.index, armed.generation, armed.start)
    }

    fn now(&self) -> Duration {
        self.clock().now()
    }

    fn count_degraded_poll(&self) {
        Wheel::count_degraded_poll(self);
    }
}

/// A deadline's timer state.
#[derive(Debug)]
enum State {
    /// Not polled yet: no clock read, nothing armed.
    Idle(Limit),
    Armed {
        armed: Armed,
        requested: Duration,
    },
    /// Degraded: the wheel was full when the deadline started.
    Full {
        target: Duration,
        requested: Duration,
    },
    /// Never fires.
    Never,
    /// Fired or released.
    Done,
}

/// The non-generic half of `Deadline` and `Sleep`.
pub(crate) struct Timer<'w> {
    wheel: &'w dyn RawWheel,
    state: State,
    name: Option<&'static str>,
}

impl<'w> Timer<'w> {
    pub(crate) const fn new(wheel: &'w dyn RawWheel, limit: Limit) -> Self {
        Self {
            wheel,
            state: State::Idle(limit),
            name: None,
        }
    }

    pub(crate) fn set_name(&mut self, name: &'static str) {
        self.name = Some(name);
    }

    pub(crate) fn name(&self) -> Option<&'static str> {
        self.name
    }

    /// Whether the deadline has fired; called only after the inner future returned
    /// `Pending` (or for `Sleep`). Starts the timer on the first call.
    pub(crate) fn poll_fired(&mut self, cx: &mut Context<'_>) -> Poll<Elapsed> {
        match self.state {
            State::Idle(limit) => match self.wheel.start(limit, cx.waker()) {
                Started::Passed { requested } => self.fired(requested),
                Started::Armed { armed, requested } => {
                    self.state = State::Armed { armed, requested };
                    Poll::Pending
                }
                Started::Full { target, requested } => {
                    self.state = State::Full { target, requested };
                    self.poll_full(cx)
                }
                Started::Never => {
                    self.state = State::Never;
                    Poll::Pending
                }
            },
            State::Armed { armed, requested } => {
                if self.wheel.poll_armed(&armed, cx.waker()) {
                    self.fired(requested)
                } else {
                    Poll::Pending
                }
            }
            State::Full { .. } => self.poll_full(cx),
            State::Never => Poll::Pending,
            State::Done => Poll::Pending,
        }
    }

    /// Whether an armed timer has fired, without registering a waker. Lets a deadline
    /// refuse to poll its inner future after the fire.
    pub(crate) fn has_fired(&mut self) -> Option<Elapsed> {
        if let State::Armed { armed, requested } = self.state {
            if self.wheel.has_fired(&armed) {
                return match self.fired(requested) {
                    Poll::Ready(elapsed) => Some(elapsed),
                    Poll::Pending => None,
                };
            }
        }
        None
    }

    /// Degraded mode: check the clock, try to arm again, else ask to be polled again.
    fn poll_full(&mut self, cx: &mut Context<'_>) -> Poll<Elapsed> {
        let State::Full { target, requested } = self.state else {
            unreachable!()
        };
        match self.wheel.start(Limit::At(target), cx.waker()) {
            Started::Passed { .. } => self.fired(requested),
            Started::Armed { armed, .. } => {
                self.state = State::Armed { armed, requested };
                Poll::Pending
            }
            Started::Full { .. } => {
                self.wheel.count_degraded_poll();
                cx.waker().wake_by_ref();
                Poll::Pending
            }
            Started::Never => {
                self.state = State::Never;
                Poll::Pending
            }
        }
    }

    fn fired(&mut self, requested: Duration) -> Poll<Elapsed> {
        self.release();
        Poll::Ready(Elapsed::new(requested, self.name))
    }

    /// Lets go of the entry, if armed. Idempotent.
    pub(crate) fn release(&mut self) {
        if let State::Armed { armed, .. } = core::mem::replace(&mut self.state, State::Done) {
            self.wheel.release(&armed);
        }
    }

    /// Whether the timer has started (read the clock).
    pub(crate) fn is_started(&self) -> bool {
        !matches!(self.state, State::Idle(_))
    }
}

impl Drop for Timer<'_> {
    fn drop(&mut self) {
        self.release();
    }
}

impl core::fmt::Debug for Timer<'_> {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.debug_struct("Timer")
            .field("state", &self.state)
            .field("name", &self.name)
            .finish()
    }
}
