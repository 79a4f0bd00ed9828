//! A deadline's timer: starting, arming, polling and releasing its entry, compiled once.
//! * It owns at most one entry, only while `Armed`, and releases it exactly once.
//! * Pending polls work on a copy, the timer `Poisoned` meanwhile: a panic drops the copy,
//!   which releases the entry.
//! * Out-of-line code gets the timer's parts by value, never the deadline's address.
//! * Resets are in `reset`.

use core::mem::ManuallyDrop;
use core::task::{Context, Poll};
use core::time::Duration;

use crate::future::overrun::overrun_threshold;
use crate::time::{Due, Limit, Reading, duration_of, span_of};
use crate::wheel::start::Outcome;
use fired::CapEnd;
pub(crate) use fired::{Cap, Fired};
use state::{Phase, State};
pub(crate) use wheel_ref::Armed;
pub use wheel_ref::{RawWheel, WheelRef};

mod fired;
mod reset;
#[cfg(all(test, feature = "std"))]
mod resets;
mod state;
mod wheel_ref;

/// A poll of a timer whose earlier poll panicked.
#[cold]
#[inline(never)]
#[track_caller]
fn poisoned() -> ! {
    panic!("a deadline polled again after its poll panicked")
}

/// A limit as a timer keeps it while idle: a span, or (`true`) an instant's nanoseconds.
#[inline(always)]
const fn kept(limit: Limit) -> (u64, bool) {
    match limit {
        Limit::After(duration) => (span_of(duration), false),
        Limit::At(at) => (at.as_nanos(), true),
    }
}

/// The part of every deadline-like future that does not depend on the inner future.
pub(crate) struct Timer<W: WheelRef> {
    wheel: W,
    /// The limit while idle; once started, the requested duration (the cap's, if in force)
    /// or the instant as given. Saturated nanoseconds ([`BEYOND`]).
    span: u64,
    state: State,
}

impl<W: WheelRef> Timer<W> {
    pub(crate) const fn new(wheel: W, limit: Limit) -> Self {
        let (span, instant) = kept(limit);
        Self {
            wheel,
            span,
            state: State::idle(instant),
        }
    }

    /// The wheel, settled first ([`WheelRef::choose`]), for owners that use it before starting.
    pub(crate) fn chosen_wheel(&mut self) -> W {
        self.wheel.choose();
        self.wheel
    }

    /// Whether the deadline has fired, once the inner future is `Pending`; starts the timer
    /// at the first call. `cap` (a budget's) applies if earlier. Works on a copy.
    #[cfg_attr(target_pointer_width = "64", inline)]
    #[cfg_attr(not(target_pointer_width = "64"), inline(never))]
    pub(crate) fn poll_fired(&mut self, cx: &mut Context<'_>, cap: Option<&Cap>) -> Poll<Fired> {
        let mut copy = self.lend();
        let poll = copy.poll_fired_slow(cx, cap);
        self.take_back(copy);
        poll
    }

    /// A copy to work on, leaving this timer poisoned until [`Timer::take_back`].
    #[inline(always)]
    fn lend(&mut self) -> Self {
        let copy = Self {
            wheel: self.wheel,
            span: self.span,
            state: self.state,
        };
        self.state.set_phase(Phase::Poisoned);
        copy
    }

    /// Takes back the state of a copy from [`Timer::lend`], forgetting the copy.
    #[inline(always)]
    fn take_back(&mut self, copy: Self) {
        let copy = ManuallyDrop::new(copy);
        // The wheel too: a start may have settled it (`WheelRef::choose`).
        self.wheel = copy.wheel;
        self.span = copy.span;
        self.state = copy.state;
    }

    #[inline(never)]
    fn poll_fired_slow(&mut self, cx: &mut Context<'_>, cap: Option<&Cap>) -> Poll<Fired> {
        match self.state.phase() {
            Phase::Idle => {
                self.wheel.choose();
                let cap = cap.filter(|cap| cap.wheel == self.wheel.id());
                let instant = self.state.is_instant();
                let due = if instant {
                    let at = Reading::from_nanos(self.span);
                    Due::At(if self.state.own_reading() {
                        at
                    } else {
                        self.wheel.reading_at(at)
                    })
                } else {
                    Due::After(self.span)
                };
                let started = self
                    .wheel
                    .get()
                    .start(due, cap.map(|cap| cap.at), cx.waker());
                // The requested span: the cap's if it ends the deadline; an instant stays.
                let capped = match cap {
                    Some(cap) if started.capped => {
                        self.span = span_of(cap.duration);
                        true
                    }
                    _ => {
                        if !instant {
                            self.span = started.requested;
                        }
                        false
                    }
                };
                self.started(started.outcome, capped, instant, cx)
            }
            Phase::Armed => {
                if self.wheel.get().poll_armed(&self.handle(), cx.waker()) {
                    self.fired(self.state.capped())
                } else {
                    Poll::Pending
                }
            }
            Phase::Degraded => self.poll_degraded(cx),
            Phase::Fired => self.fired(self.state.capped()),
            Phase::Never | Phase::Done => Poll::Pending,
            Phase::Poisoned => poisoned(),
        }
    }

    /// Takes on the first pending poll's outcome; `span` already holds the requested limit.
    #[inline(always)]
    fn started(
        &mut self,
        outcome: Outcome,
        capped: bool,
        instant: bool,
        cx: &mut Context<'_>,
    ) -> Poll<Fired> {
        match outcome {
            Outcome::Passed => self.fired(capped),
            Outcome::Armed(index, wake) => {
                self.state = if instant {
                    State::rearmed(index, capped).marked_instant(true)
                } else {
                    State::armed(index, capped)
                };
                // Once the state holds the entry: a panicking waker unwinds through this copy.
                if wake {
                    self.wheel.get().wake_drivers();
                }
                Poll::Pending
            }
            Outcome::Full(target, _) => {
                self.state = State::degraded(target, capped).marked_instant(instant);
                if self.state.phase() == Phase::Degraded {
                    self.poll_degraded(cx)
                } else {
                    Poll::Pending
                }
            }
            Outcome::Never => {
                self.state = State::of(Phase::Never, capped);
                Poll::Pending
            }
        }
    }

    /// Whether an armed timer has fired, without a waker; `None` while degraded (decided at
    /// a pending poll). Panics if poisoned. The phases that cannot have fired answer here,
    /// inlined into every poll (the ready path of a first poll among them).
    #[inline(always)]
    pub(crate) fn has_fired(&mut self) -> Option<Fired> {
        match self.state.phase() {
            Phase::Idle | Phase::Degraded | Phase::Never | Phase::Done => None,
            Phase::Armed | Phase::Fired | Phase::Poisoned => self.has_fired_slow(),
        }
    }

    /// [`Timer::has_fired`] for the phases that may have fired (or are poisoned).
    #[inline]
    fn has_fired_slow(&mut self) -> Option<Fired> {
        match self.state.phase() {
            Phase::Armed => {
                let mut copy = self.lend();
                let fired = copy.armed_has_fired();
                self.take_back(copy);
                fired
            }
            Phase::Fired => match self.fired(self.state.capped()) {
                Poll::Ready(fired) => Some(fired),
                Poll::Pending => None,
            },
            Phase::Poisoned => poisoned(),
            Phase::Idle | Phase::Degraded | Phase::Never | Phase::Done => None,
        }
    }

    /// [`Timer::has_fired`], and whether a degraded timer's target passed (for streams).
    pub(crate) fn has_passed(&mut self) -> Option<Fired> {
        if self.state.phase() == Phase::Degraded {
            self.degraded_has_passed()
        } else {
            self.has_fired()
        }
    }

    /// Whether a degraded timer's target has come; no copy, since it holds no entry.
    #[cold]
    fn degraded_has_passed(&mut self) -> Option<Fired> {
        debug_assert_eq!(self.state.phase(), Phase::Degraded);
        if self.wheel.get().now() < self.state.target() {
            return None;
        }
        match self.fired(self.state.capped()) {
            Poll::Ready(fired) => Some(fired),
            Poll::Pending => None,
        }
    }

    fn armed_has_fired(&mut self) -> Option<Fired> {
        debug_assert_eq!(self.state.phase(), Phase::Armed);
        if !self.wheel.get().has_fired(&self.handle()) {
            return None;
        }
        match self.fired(self.state.capped()) {
            Poll::Ready(fired) => Some(fired),
            Poll::Pending => None,
        }
    }

    /// Checks the clock and tries to arm again; else parks, or asks to be polled at once.
    fn poll_degraded(&mut self, cx: &mut Context<'_>) -> Poll<Fired> {
        debug_assert_eq!(
            self.state.phase(),
            Phase::Degraded,
            "poll_degraded outside the Degraded state"
        );
        let capped = self.state.capped();
        let target = self.state.target();
        match self
            .wheel
            .get()
            .start(Due::At(target), None, cx.waker())
            .outcome
        {
            Outcome::Passed => self.fired(capped),
            Outcome::Armed(index, wake) => {
                self.state = State::rearmed(index, capped).marked_instant(self.state.is_instant());
                if wake {
                    self.wheel.get().wake_drivers();
                }
                Poll::Pending
            }
            Outcome::Full(_, now) => {
                self.wheel.get().count_degraded_poll();
                // The reading the target was compared with: a later one could be past the
                // target, and the turn in its tick would not wake this task.
                if !self.wheel.get().leave_degraded_waker(cx.waker(), now) {
                    cx.waker().wake_by_ref();
                }
                Poll::Pending
            }
            Outcome::Never => {
                self.state = State::of(Phase::Never, capped);
                Poll::Pending
            }
        }
    }

    /// Fires: lets go of the entry and reports the requested limit and whether a cap ended it.
    fn fired(&mut self, capped: bool) -> Poll<Fired> {
        let (requested, at) = if self.state.is_instant() && !capped {
            (Duration::ZERO, Some(Reading::from_nanos(self.span)))
        } else {
            (duration_of(self.span), None)
        };
        // The instant the cap cut the deadline to, read while the entry is still held.
        let cap_end = match self.state.phase() {
            _ if !capped => CapEnd::Own,
            Phase::Armed => CapEnd::At(self.wheel.get().deadline_of(&self.handle())),
            Phase::Degraded | Phase::Fired => CapEnd::At(self.state.target()),
            _ => CapEnd::AtStart,
        };
        // How long past its time the fire is seen: for the `tracing` event, and for an
        // overrun report when one is asked for (one relaxed load when not).
        let threshold = overrun_threshold();
        let late = if cfg!(feature = "tracing") || threshold.is_some() {
            self.lateness()
        } else {
            Duration::ZERO
        };
        let overran = threshold.filter(|&after| late > after).map(|_| late);
        if overran.is_some() {
            self.wheel.get().count_overrun();
        }
        if self.state.phase() == Phase::Armed {
            // Seen fired: decided, so no cancel is attempted.
            self.state.set_phase(Phase::Done);
            release_fired(self.wheel, self.handle());
        }
        self.state = State::of(Phase::Done, capped);
        Poll::Ready(Fired {
            requested,
            at,
            cap_end,
            wheel: self.wheel.id(),
            #[cfg(feature = "tracing")]
            late,
            #[cfg(feature = "tracing")]
            overran,
        })
    }

    /// How long past its time a fired timer is seen now; zero unless armed or degraded.
    fn lateness(&self) -> Duration {
        let wheel = self.wheel.get();
        match self.state.phase() {
            Phase::Armed => wheel.now() - wheel.deadline_of(&self.handle()),
            Phase::Degraded | Phase::Fired => wheel.now() - self.state.target(),
            _ => Duration::ZERO,
        }
    }

    /// Lets go of the entry, if armed. Idempotent.
    #[cfg_attr(target_pointer_width = "64", inline)]
    #[cfg_attr(not(target_pointer_width = "64"), inline(never))]
    pub(crate) fn release(&mut self) {
        if self.state.phase() == Phase::Armed {
            self.state.set_phase(Phase::Done);
            release_armed(self.wheel, self.handle());
        }
    }

    /// Whether the owner marked its inner future dropped ([`Timer::set_inner_dropped`]).
    #[inline]
    pub(crate) fn inner_dropped(&self) -> bool {
        self.state.inner_dropped()
    }

    /// Marks the inner future dropped, once no phase change is left (a new state clears it).
    #[inline]
    pub(crate) fn set_inner_dropped(&mut self) {
        self.state.set_inner_dropped();
    }

    /// The handle of an armed timer.
    #[cfg_attr(target_pointer_width = "64", inline(always))]
    #[cfg_attr(not(target_pointer_width = "64"), inline(never))]
    fn handle(&self) -> Armed {
        Armed {
            index: self.state.index(),
            span: self.state.start_and_span().then_some(self.span),
        }
    }

    /// The limit a report shows while not fired: the requested duration (a cap's, if in
    /// force), `None` for an instant or a limit that never ends.
    pub(crate) fn reported_limit(&self) -> Option<Duration> {
        if self.span == crate::time::BEYOND || (self.state.is_instant() && !self.state.capped()) {
            None
        } else {
            Some(duration_of(self.span))
        }
    }

    /// Whether the timer has started (read the clock).
    #[inline]
    pub(crate) fn is_started(&self) -> bool {
        self.state.phase() != Phase::Idle
    }
}

/// Releases an armed entry; out of line and by value (see [`Timer::poll_fired`]).
#[inline(never)]
fn release_armed<W: WheelRef>(wheel: W, armed: Armed) {
    wheel.get().release(&armed);
}

/// Releases an armed entry, returning whether it had fired; out of line and by value.
#[inline(never)]
fn release_armed_fired<W: WheelRef>(wheel: W, armed: Armed) -> bool {
    wheel.get().release(&armed)
}

/// Releases an entry seen fired; out of line and by value (see [`Timer::poll_fired`]).
#[inline(never)]
fn release_fired<W: WheelRef>(wheel: W, armed: Armed) {
    wheel.get().release_fired(&armed);
}

impl<W: WheelRef> Drop for Timer<W> {
    #[inline]
    fn drop(&mut self) {
        self.release();
    }
}

impl<W: WheelRef> core::fmt::Debug for Timer<W> {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.debug_struct("Timer")
            .field("state", &self.state)
            .field("span", &duration_of(self.span))
            .finish()
    }
}

#[cfg(all(test, target_pointer_width = "64"))]
mod tests {
    use super::*;

    /// Memory per armed deadline: keep the layouts from growing unnoticed.
    #[test]
    fn layouts_stay_small() {
        assert_eq!(core::mem::size_of::<State>(), 8);
        assert_eq!(core::mem::size_of::<Timer<&dyn RawWheel>>(), 32);
        // The "gone" mark lives in the timer: nothing beside the future.
        type Pending = core::future::Pending<()>;
        assert_eq!(size_of::<crate::Deadline<'_, Pending>>(), 32);
        assert_eq!(
            size_of::<crate::Deadline<'_, Pending, &dyn RawWheel, crate::Named>>(),
            56,
            "a name and its start reading"
        );
        assert_eq!(core::mem::size_of::<crate::wheel::entry::Entry>(), 40);
    }
}
