//! Resets of a timer, and what an owner reads to choose one.
//! * A reset lets go of the entry and starts over, on the same wheel, at the next poll.
//! * A fire that wins the release is kept (`Fired`) if the owner asks; else it is dropped.

use super::state::{Phase, State};
use super::{RawWheel, Timer, WheelRef, kept, poisoned, release_armed_fired};
use crate::time::{Limit, Reading};

impl<W: WheelRef> Timer<W> {
    /// [`Timer::reset`], letting the wheel be chosen anew ([`WheelRef::forget_choice`]).
    pub(crate) fn restart(&mut self, limit: Limit) {
        self.reset(limit);
        self.wheel.forget_choice();
    }

    /// Releases the entry, if any, and starts over with `limit` at the next poll.
    pub(crate) fn reset(&mut self, limit: Limit) {
        self.let_go_for_reset();
        let (span, instant) = kept(limit);
        self.span = span;
        self.state = State::idle(instant);
    }

    /// [`Timer::reset`] to `at`, a reading of the chosen wheel's own clock (not the
    /// handle's: no [`WheelRef::reading_at`]). For owners that settled the wheel first.
    pub(crate) fn reset_on_wheel(&mut self, at: Reading) {
        self.let_go_for_reset();
        self.span = at.as_nanos();
        self.state = State::idle_on_wheel();
    }

    /// [`Timer::reset`] unless the timer has fired: returns whether `limit` is in force.
    /// A fire that wins the race with the release is kept (`Fired`) for the next poll.
    pub(crate) fn reset_unless_fired(&mut self, limit: Limit) -> bool {
        match self.state.phase() {
            Phase::Armed => {
                let capped = self.state.capped();
                let instant = self.state.is_instant();
                // Read while the entry is still held: the fire reports it.
                let due = self.wheel.get().deadline_of(&self.handle());
                if self.let_go_for_reset() {
                    self.state = State::fired_at(due, capped).marked_instant(instant);
                    return false;
                }
            }
            Phase::Fired | Phase::Done => return false,
            Phase::Poisoned => poisoned(),
            Phase::Idle | Phase::Degraded | Phase::Never => {}
        }
        let (span, instant) = kept(limit);
        self.span = span;
        self.state = State::idle(instant);
        true
    }

    /// Releases the entry of an armed timer for a reset; returns whether it had fired.
    /// `Poisoned` meanwhile, and after a panic (a dropped waker's): polling again panics
    /// rather than waiting for nothing.
    #[inline]
    fn let_go_for_reset(&mut self) -> bool {
        if self.state.phase() != Phase::Armed {
            return false;
        }
        self.state.set_phase(Phase::Poisoned);
        release_armed_fired(self.wheel, self.handle())
    }

    /// The handle to the wheel, as kept (settled once the timer started).
    #[inline]
    pub(crate) fn wheel_ref(&self) -> &W {
        &self.wheel
    }

    /// When the entry of an armed timer is due, on the chosen wheel's clock; `None` unless
    /// armed.
    #[inline]
    pub(crate) fn armed_due(&self) -> Option<Reading> {
        (self.state.phase() == Phase::Armed).then(|| self.wheel.get().deadline_of(&self.handle()))
    }

    /// `at`, an instant as owners give them ([`WheelRef::reading_at`]), on the chosen
    /// wheel's clock. For a started timer.
    #[inline]
    pub(crate) fn on_chosen_wheel(&self, at: Reading) -> Reading {
        self.wheel.reading_at(at)
    }

    /// The limit of a timer not started (idle): `Limit::At` holds an instant as owners
    /// give them, or (`true`) a reading of the chosen wheel's own clock.
    #[inline]
    pub(crate) fn idle_limit(&self) -> Option<(Limit, bool)> {
        (self.state.phase() == Phase::Idle).then(|| {
            if self.state.is_instant() {
                let at = Limit::At(Reading::from_nanos(self.span));
                (at, self.state.own_reading())
            } else {
                (Limit::After(crate::time::duration_of(self.span)), false)
            }
        })
    }

    /// When a started timer is due, on the chosen wheel's clock: armed, degraded (a full
    /// wheel) or never ([`Reading::END`]); `None` otherwise.
    #[inline]
    pub(crate) fn started_due(&self) -> Option<Reading> {
        match self.state.phase() {
            Phase::Armed => self.armed_due(),
            Phase::Degraded => Some(self.state.target()),
            Phase::Never => Some(Reading::END),
            _ => None,
        }
    }

    /// Whether the wheel has fired the entry (or a degraded timer's target passed),
    /// without taking the fire: the next poll completes.
    #[inline]
    pub(crate) fn peek_fired(&self) -> bool {
        match self.state.phase() {
            Phase::Armed => self.wheel.get().has_fired(&self.handle()),
            Phase::Degraded => self.wheel.get().now() >= self.state.target(),
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
