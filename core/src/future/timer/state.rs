//! A deadline's timer state in one word: the phase, three flags and a payload.
//!
//! ```text
//!    63..6       5          4          3       2..0
//! +---------+---------+------------+--------+-------+
//! | payload | INSTANT | INNER_GONE | CAPPED | PHASE |
//! +---------+---------+------------+--------+-------+
//!
//! Idle payload:     bit 0 OWN_READING (an instant already on the wheel's own clock).
//! Armed payload:    bit 32 REARMED, bits 0..32 the entry's index.
//! Degraded payload: bit 0 clear: the target in nanoseconds in the rest;
//!                   bit 0 set: the target in COARSE_UNITs, rounded up.
//! Fired payload:    the entry's deadline, as a degraded target.
//! ```
//!
//! * Each change is one store; a new state clears flags and payload, `set_phase` keeps them.
//! * `CAPPED` is never set while `Idle`; `INSTANT` stays until `Never` or `Done`.
//! * `INNER_GONE` is set only once the timer makes no further change but `set_phase`.

use crate::time::Reading;
use crate::wheel::entry::Index;

/// What a deadline's timer is doing.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[repr(u8)]
pub(super) enum Phase {
    /// Not polled yet: `span` is the limit (with [`INSTANT`], an instant).
    Idle = 0,
    /// Armed: the payload is the entry's index.
    Armed = 1,
    /// The wheel was full: the payload is the target ([`State::degraded`]).
    Degraded = 2,
    /// Never fires.
    Never = 3,
    /// Fired or released.
    Done = 4,
    /// A poll panicked; its copy released the entry. Polling again panics.
    Poisoned = 5,
    /// Fired, its entry let go by a reset that lost the race: the next poll reports the
    /// fire. The payload is the entry's deadline.
    Fired = 6,
}

impl Phase {
    pub(super) const fn of(bits: u64) -> Self {
        match bits & PHASE {
            0 => Self::Idle,
            1 => Self::Armed,
            2 => Self::Degraded,
            3 => Self::Never,
            4 => Self::Done,
            6 => Self::Fired,
            _ => Self::Poisoned,
        }
    }
}

/// The bits of [`State`] that hold the [`Phase`].
pub(super) const PHASE: u64 = 0b111;
/// The limit in force is the cap's.
pub(super) const CAPPED: u64 = 1 << 3;
/// The owner's inner future is dropped. Never cleared.
pub(super) const INNER_GONE: u64 = 1 << 4;
/// The limit is an instant, not a duration.
pub(super) const INSTANT: u64 = 1 << 5;
/// Where the payload starts: 58 bits of it.
pub(super) const PAYLOAD: u32 = 6;
/// In an `Idle` payload: the instant is a reading of the chosen wheel's own clock.
pub(super) const OWN_READING: u64 = 1;
/// In an `Armed` payload: the entry is due at its target, not at start plus span.
pub(super) const REARMED: u64 = 1 << 32;
/// From this reading on (about 4.5 years), a degraded target is kept in [`COARSE_UNIT`]s.
pub(super) const COARSE_FROM: u64 = 1 << (u64::BITS - PAYLOAD - 1);
/// The unit of a coarse target: any reading fits the payload in it.
pub(super) const COARSE_UNIT: u64 = 1 << (PAYLOAD + 1);
/// The last coarse unit, which stands for the targets up to `u64::MAX - 1` ns.
pub(super) const LAST_COARSE: u64 = (1 << (u64::BITS - PAYLOAD - 1)) - 1;

/// A deadline's timer state, one word (layout in the module docs).
#[derive(Clone, Copy)]
pub(super) struct State(u64);

impl State {
    pub(super) const fn idle(instant: bool) -> Self {
        Self(Phase::Idle as u64 | if instant { INSTANT } else { 0 })
    }

    /// An idle state whose instant is a reading of the wheel's own clock ([`OWN_READING`]).
    pub(super) const fn idle_on_wheel() -> Self {
        Self::with_payload(Phase::Idle, false, OWN_READING).marked_instant(true)
    }

    /// Whether an `Idle` state's instant is a reading of the wheel's own clock.
    #[inline(always)]
    pub(super) const fn own_reading(self) -> bool {
        (self.0 >> PAYLOAD) & OWN_READING != 0
    }

    /// A `Fired` state: the entry fired at `due` and was let go before the fire was seen.
    pub(super) fn fired_at(due: Reading, capped: bool) -> Self {
        let mut state = Self::degraded(due, capped);
        state.set_phase(Phase::Fired);
        state
    }

    pub(super) const fn of(phase: Phase, capped: bool) -> Self {
        Self::with_payload(phase, capped, 0)
    }

    #[inline(always)]
    pub(super) const fn with_payload(phase: Phase, capped: bool, payload: u64) -> Self {
        Self(phase as u64 | if capped { CAPPED } else { 0 } | payload << PAYLOAD)
    }

    /// An armed state; `rearmed`: due at its target (an instant, or after running degraded).
    #[inline(always)]
    pub(super) const fn armed(index: Index, capped: bool, rearmed: bool) -> Self {
        let rearmed = if rearmed { REARMED } else { 0 };
        Self::with_payload(Phase::Armed, capped, index as u64 | rearmed)
    }

    /// Whether an `Armed` state's entry is due at the deadline's start plus its span.
    #[inline(always)]
    pub(super) const fn start_and_span(self) -> bool {
        !self.capped() && (self.0 >> PAYLOAD) & REARMED == 0
    }

    /// Whether the limit is an instant ([`INSTANT`]).
    #[inline(always)]
    pub(super) const fn is_instant(self) -> bool {
        self.0 & INSTANT != 0
    }

    /// This state, with [`INSTANT`] if `instant`.
    #[inline(always)]
    pub(super) const fn marked_instant(self, instant: bool) -> Self {
        Self(self.0 | if instant { INSTANT } else { 0 })
    }

    /// A degraded state with `target`: exact below [`COARSE_FROM`], then in
    /// [`COARSE_UNIT`]s rounded up (254 ns late at most, in the last unit). `Never` for
    /// `u64::MAX` ns or more.
    pub(super) fn degraded(target: Reading, capped: bool) -> Self {
        let payload = match target.as_nanos() {
            nanos if nanos < COARSE_FROM => nanos << 1,
            nanos if nanos < u64::MAX => (nanos.div_ceil(COARSE_UNIT).min(LAST_COARSE) << 1) | 1,
            _ => return Self::of(Phase::Never, capped),
        };
        Self::with_payload(Phase::Degraded, capped, payload)
    }

    #[inline(always)]
    pub(super) const fn phase(self) -> Phase {
        Phase::of(self.0)
    }

    /// Changes the phase, keeping the flags and the payload.
    #[inline(always)]
    pub(super) fn set_phase(&mut self, phase: Phase) {
        self.0 = self.0 & !PHASE | phase as u64;
    }

    #[inline(always)]
    pub(super) const fn capped(self) -> bool {
        self.0 & CAPPED != 0
    }

    #[inline(always)]
    pub(super) const fn inner_dropped(self) -> bool {
        self.0 & INNER_GONE != 0
    }

    #[inline(always)]
    pub(super) fn set_inner_dropped(&mut self) {
        self.0 |= INNER_GONE;
    }

    /// The entry's index of an `Armed` state.
    #[inline(always)]
    pub(super) const fn index(self) -> Index {
        (self.0 >> PAYLOAD) as u32 as Index
    }

    /// The target of a `Degraded` state, or the deadline of a `Fired` one.
    #[cfg_attr(not(target_pointer_width = "64"), inline(never))]
    pub(super) fn target(self) -> Reading {
        let payload = self.0 >> PAYLOAD;
        let nanos = match (payload & 1, payload >> 1) {
            (0, nanos) => nanos,
            // The last unit ends at the last reading that comes (`u64::MAX` never does).
            (_, LAST_COARSE) => u64::MAX - 1,
            (_, units) => units * COARSE_UNIT,
        };
        Reading::from_nanos(nanos)
    }
}

impl core::fmt::Debug for State {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.debug_struct("State")
            .field("phase", &self.phase())
            .field("capped", &self.capped())
            .field("instant", &self.is_instant())
            .field("inner_dropped", &self.inner_dropped())
            .field("payload", &(self.0 >> PAYLOAD))
            .finish()
    }
}

/// Layouts and the degraded target.
#[cfg(target_pointer_width = "64")]
#[cfg(test)]
mod tests {
    use super::super::{RawWheel, Timer};
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

    #[test]
    fn degraded_target_exact_then_rounded_up() {
        let round_trip = |nanos: u64| {
            let state = State::degraded(Reading::from_nanos(nanos), true);
            assert!(state.capped());
            (state.phase(), state.target().as_nanos())
        };
        for nanos in [0, 1, 12_345_678_901, COARSE_FROM - 1] {
            assert_eq!(
                round_trip(nanos),
                (Phase::Degraded, nanos),
                "exact below 2^57 ns"
            );
        }
        for nanos in [COARSE_FROM, COARSE_FROM + 1, u64::MAX - 400, u64::MAX - 256] {
            let (phase, target) = round_trip(nanos);
            assert_eq!(phase, Phase::Degraded);
            assert!(
                target >= nanos && target - nanos < COARSE_UNIT,
                "{nanos} ns kept as {target}"
            );
        }
        // The last unit: up to the last reading that comes.
        for nanos in [u64::MAX - 254, u64::MAX - 126, u64::MAX - 1] {
            assert_eq!(round_trip(nanos), (Phase::Degraded, u64::MAX - 1));
        }
        assert_eq!(State::degraded(Reading::END, false).phase(), Phase::Never);
    }
}
