//! A deadline's timer: starting, arming, polling and releasing its entry, compiled once.
//! * It owns at most one entry, only while `Armed`, and releases it exactly once.
//! * Pending polls work on a copy, the timer `Poisoned` meanwhile: a panic drops the copy,
//!   which releases the entry.
//! * Out-of-line code gets the timer's parts by value, never the deadline's address.

use core::mem::ManuallyDrop;
use core::task::{Context, Poll};
use core::time::Duration;

use crate::future::outcome::overrun_threshold;
use crate::time::{Due, Limit, Reading, duration_of, span_of};
use crate::wheel::start::Outcome;
use fired::CapEnd;
pub(crate) use fired::{Cap, Fired};
use state::{Phase, State};
pub(crate) use wheel_ref::Armed;
pub use wheel_ref::{RawWheel, WheelRef};

mod fired;
mod state;
mod wheel_ref;

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
    /// or the instant as given. Saturated nanoseconds ([`BEYOND`](crate::time::BEYOND)).
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

    /// The wheel, settled first ([`WheelRef::choose`]).
    pub(crate) fn chosen_wheel(&mut self) -> W {
        self.wheel.choose();
        self.wheel
    }

    /// Whether the deadline fired; the first call starts the timer. `cap` applies if earlier.
    #[cfg_attr(target_pointer_width = "64", inline)]
    #[cfg_attr(not(target_pointer_width = "64"), inline(never))]
    pub(crate) fn poll_fired(&mut self, cx: &mut Context<'_>, cap: Option<&Cap>) -> Poll<Fired> {
        self.on_copy(|copy| copy.poll_fired_slow(cx, cap))
    }

    /// Runs `f` on a copy, this timer `Poisoned` meanwhile, then takes the copy's state
    /// back and forgets it. A panic in `f` drops the copy, which releases the entry.
    #[inline(always)]
    fn on_copy<R>(&mut self, f: impl FnOnce(&mut Self) -> R) -> R {
        let (wheel, span, state) = (self.wheel, self.span, self.state);
        let mut copy = Self { wheel, span, state };
        self.state.set_phase(Phase::Poisoned);
        let result = f(&mut copy);
        let copy = ManuallyDrop::new(copy);
        // The wheel too: a start may have settled it (`WheelRef::choose`).
        (self.wheel, self.span, self.state) = (copy.wheel, copy.span, copy.state);
        result
    }

    #[inline(never)]
    fn poll_fired_slow(&mut self, cx: &mut Context<'_>, cap: Option<&Cap>) -> Poll<Fired> {
        match self.state.phase() {
            Phase::Idle => {
                self.wheel.choose();
                let cap = cap.filter(|cap| cap.wheel == self.wheel.id());
                let instant = self.state.is_instant();
                let at = Reading::from_nanos(self.span);
                let due = match (instant, self.state.own_reading()) {
                    (false, _) => Due::After(self.span),
                    (true, true) => Due::At(at),
                    (true, false) => Due::At(self.wheel.reading_at(at)),
                };
                let cap_at = cap.map(|cap| cap.at);
                let started = self.wheel.get().start(due, cap_at, cx.waker());
                // The requested span: the cap's if it ends the deadline; an instant stays.
                let capped = cap.filter(|_| started.capped);
                if let Some(cap) = capped {
                    self.span = span_of(cap.duration);
                } else if !instant {
                    self.span = started.requested;
                }
                self.took(started.outcome, capped.is_some(), instant, instant, cx)
            }
            Phase::Armed => {
                if self.wheel.get().poll_armed(&self.handle(), cx.waker()) {
                    Poll::Ready(self.fired(self.state.capped()))
                } else {
                    Poll::Pending
                }
            }
            Phase::Degraded => {
                let target = Due::At(self.state.target());
                let started = self.wheel.get().start(target, None, cx.waker());
                let (capped, instant) = (self.state.capped(), self.state.is_instant());
                self.took(started.outcome, capped, instant, true, cx)
            }
            Phase::Fired => Poll::Ready(self.fired(self.state.capped())),
            Phase::Never | Phase::Done => Poll::Pending,
            Phase::Poisoned => poisoned(),
        }
    }

    /// Takes on a start's outcome (a first one, or a degraded timer's retry). `rearmed`: an
    /// armed entry is due at its target, not at start plus span.
    #[inline(always)]
    fn took(
        &mut self,
        outcome: Outcome,
        capped: bool,
        instant: bool,
        rearmed: bool,
        cx: &mut Context<'_>,
    ) -> Poll<Fired> {
        match outcome {
            Outcome::Passed => Poll::Ready(self.fired(capped)),
            Outcome::Armed(index, wake) => {
                self.state = State::armed(index, capped, rearmed).marked_instant(instant);
                // Once the state holds the entry: a panicking waker unwinds through this copy.
                if wake {
                    self.wheel.get().wake_drivers();
                }
                Poll::Pending
            }
            // A first start on a full wheel: degraded, then polled as such.
            Outcome::Full(target, _) if self.state.phase() != Phase::Degraded => {
                self.state = State::degraded(target, capped).marked_instant(instant);
                if self.state.phase() == Phase::Degraded {
                    self.poll_fired_slow(cx, None)
                } else {
                    Poll::Pending
                }
            }
            Outcome::Full(_, now) => {
                // The reading the target was compared with: a later one could be past the
                // target, and the turn in its tick would not wake this task.
                if !self.wheel.get().degraded_poll(cx.waker(), now) {
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

    /// Whether an armed timer fired, without a waker; `None` while degraded (decided at a
    /// pending poll). Panics if poisoned. Inlined: the phases that cannot have fired.
    #[inline(always)]
    pub(crate) fn has_fired(&mut self) -> Option<Fired> {
        match self.state.phase() {
            Phase::Idle | Phase::Degraded | Phase::Never | Phase::Done => None,
            Phase::Armed | Phase::Fired | Phase::Poisoned => self.has_fired_slow(),
        }
    }

    #[cfg_attr(target_pointer_width = "64", inline)]
    #[cfg_attr(not(target_pointer_width = "64"), inline(never))]
    fn has_fired_slow(&mut self) -> Option<Fired> {
        match self.state.phase() {
            Phase::Armed => self.on_copy(|copy| {
                let fired = copy.wheel.get().has_fired(&copy.handle());
                fired.then(|| copy.fired(copy.state.capped()))
            }),
            Phase::Fired => Some(self.fired(self.state.capped())),
            _ => poisoned(),
        }
    }

    /// [`Timer::has_fired`], and whether a degraded timer's target passed (for streams).
    pub(crate) fn has_passed(&mut self) -> Option<Fired> {
        if self.state.phase() != Phase::Degraded {
            return self.has_fired();
        }
        // No copy: a degraded timer holds no entry.
        (self.now() >= self.state.target()).then(|| self.fired(self.state.capped()))
    }

    /// Fires: lets go of the entry and reports the requested limit and whether a cap ended it.
    fn fired(&mut self, capped: bool) -> Fired {
        let (requested, at) = if self.state.is_instant() && !capped {
            (Duration::ZERO, Some(Reading::from_nanos(self.span)))
        } else {
            (duration_of(self.span), None)
        };
        // The instant the cap cut the deadline to, read while the entry is still held.
        let cap_end = match capped {
            false => CapEnd::Own,
            true => self.due_at().map_or(CapEnd::AtStart, CapEnd::At),
        };
        // How long past its time the fire is seen: for the `tracing` event, and for an
        // overrun report when one is asked for (one relaxed load when not).
        let threshold = overrun_threshold();
        let late = match cfg!(feature = "tracing") || threshold.is_some() {
            true => self.due_at().map_or(Duration::ZERO, |due| self.now() - due),
            false => Duration::ZERO,
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
        Fired {
            requested,
            at,
            cap_end,
            wheel: self.wheel.id(),
            #[cfg(feature = "tracing")]
            late,
            #[cfg(feature = "tracing")]
            overran,
        }
    }

    /// When a started timer (armed, degraded, or `Fired`) is due, on the chosen wheel's clock.
    fn due_at(&self) -> Option<Reading> {
        match self.state.phase() {
            Phase::Armed => Some(self.wheel.get().deadline_of(&self.handle())),
            Phase::Degraded | Phase::Fired => Some(self.state.target()),
            _ => None,
        }
    }

    /// Lets go of the entry, if armed. Idempotent.
    #[cfg_attr(target_pointer_width = "64", inline)]
    #[cfg_attr(not(target_pointer_width = "64"), inline(never))]
    pub(crate) fn release(&mut self) {
        self.let_go(Phase::Done);
    }

    /// Releases an armed entry, `meanwhile` in that phase (`Poisoned` for a reset: a
    /// panicking waker drop must not leave a timer that waits for nothing); whether it fired.
    #[inline]
    fn let_go(&mut self, meanwhile: Phase) -> bool {
        if self.state.phase() != Phase::Armed {
            return false;
        }
        self.state.set_phase(meanwhile);
        release_armed(self.wheel, self.handle())
    }

    #[inline]
    pub(crate) fn inner_dropped(&self) -> bool {
        self.state.inner_dropped()
    }

    /// Marks the inner future dropped, once no phase change is left (a new state clears it).
    #[inline]
    pub(crate) fn set_inner_dropped(&mut self) {
        self.state.set_inner_dropped();
    }

    #[cfg_attr(target_pointer_width = "64", inline(always))]
    #[cfg_attr(not(target_pointer_width = "64"), inline(never))]
    fn handle(&self) -> Armed {
        Armed {
            index: self.state.index(),
            span: self.state.start_and_span().then_some(self.span),
        }
    }

    /// The limit a report shows while not fired: as [`Fired::limit`], `None` for never.
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

    /// [`Timer::reset`], letting the wheel be chosen anew ([`WheelRef::forget_choice`]).
    pub(crate) fn restart(&mut self, limit: Limit) {
        self.reset(limit);
        self.wheel.forget_choice();
    }

    /// Releases the entry, if any, and starts over with `limit` at the next poll, on the
    /// same wheel. A fire that wins the release is kept only by `reset_unless_fired`.
    pub(crate) fn reset(&mut self, limit: Limit) {
        self.let_go(Phase::Poisoned);
        self.idle(limit);
    }

    /// [`Timer::reset`] to `at`, a reading of the chosen wheel's own clock (no
    /// [`WheelRef::reading_at`]). For owners that settled the wheel first.
    pub(crate) fn reset_on_wheel(&mut self, at: Reading) {
        self.let_go(Phase::Poisoned);
        self.span = at.as_nanos();
        self.state = State::idle_on_wheel();
    }

    /// [`Timer::reset`] unless the timer has fired: returns whether `limit` is in force.
    pub(crate) fn reset_unless_fired(&mut self, limit: Limit) -> bool {
        match self.state.phase() {
            Phase::Armed => {
                let (capped, instant) = (self.state.capped(), self.state.is_instant());
                // Read while the entry is still held: the fire reports it.
                let due = self.wheel.get().deadline_of(&self.handle());
                if self.let_go(Phase::Poisoned) {
                    self.state = State::fired_at(due, capped).marked_instant(instant);
                    return false;
                }
            }
            Phase::Fired | Phase::Done => return false,
            Phase::Poisoned => poisoned(),
            Phase::Idle | Phase::Degraded | Phase::Never => {}
        }
        self.idle(limit);
        true
    }

    fn idle(&mut self, limit: Limit) {
        let (span, instant) = kept(limit);
        self.span = span;
        self.state = State::idle(instant);
    }

    /// The handle to the wheel, as kept (settled once the timer started).
    #[inline]
    pub(crate) fn wheel_ref(&self) -> &W {
        &self.wheel
    }

    /// When an armed timer's entry is due, on the chosen wheel's clock.
    #[inline]
    pub(crate) fn armed_due(&self) -> Option<Reading> {
        (self.state.phase() == Phase::Armed).then(|| self.wheel.get().deadline_of(&self.handle()))
    }

    /// When the timer is due on `wheel`, this timer's handle once chosen: [`Reading::END`]
    /// for never; the reading now once done or poisoned.
    pub(crate) fn due(&self, wheel: W) -> Reading {
        let span = Reading::from_nanos(self.span);
        match self.state.phase() {
            Phase::Never => Reading::END,
            Phase::Idle if self.state.own_reading() => span,
            Phase::Idle if self.state.is_instant() => wheel.reading_at(span),
            Phase::Idle => wheel
                .get()
                .target(Limit::After(duration_of(self.span)))
                .unwrap_or(Reading::END),
            _ => self.due_at().unwrap_or_else(|| wheel.get().now()),
        }
    }

    /// Whether the wheel has fired the entry (or a degraded timer's target passed),
    /// without taking the fire: the next poll completes.
    #[inline]
    pub(crate) fn peek_fired(&self) -> bool {
        match self.state.phase() {
            Phase::Armed => self.wheel.get().has_fired(&self.handle()),
            Phase::Degraded => self.now() >= self.state.target(),
            Phase::Fired | Phase::Done => true,
            Phase::Idle | Phase::Never | Phase::Poisoned => false,
        }
    }

    /// The chosen wheel's clock now. For a started timer.
    #[inline]
    pub(crate) fn now(&self) -> Reading {
        self.wheel.get().now()
    }
}

/// Releases an armed entry, returning whether it had fired; out of line and by value.
#[inline(never)]
fn release_armed<W: WheelRef>(wheel: W, armed: Armed) -> bool {
    wheel.get().release(&armed)
}

/// Releases an entry seen fired; out of line and by value.
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
