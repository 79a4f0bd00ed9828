//! What a fired timer reports: how it ended, and whether a cap (a budget) ended it.

use core::time::Duration;

use super::state::State;
use crate::Elapsed;
use crate::time::Reading;

/// A limit from outside a deadline (a budget's): an instant on one wheel's clock, and the
/// duration an `Elapsed` reports when it is what ends the deadline. A timer given a cap
/// at its start ends at the earlier of its own limit and the cap's (on the cap's wheel
/// only: readings of two clocks cannot be compared).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Cap {
    /// The wheel's address ([`WheelRef::id`]), only compared, never dereferenced.
    pub(crate) wheel: usize,
    pub(crate) at: Reading,
    pub(crate) duration: Duration,
}

/// Whether a cap ended a timer, and where it cut the timer to.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum CapEnd {
    /// The timer's own limit ended it.
    Own,
    /// A cap ended it at the poll that started it (that poll's cap is the one).
    AtStart,
    /// A cap ended it at this instant, as the timer kept it (exactly, or as a degraded
    /// timer keeps it).
    At(Reading),
}

/// How a timer ended: what its owner's `Elapsed` reports. A timer keeps no name (an
/// unnamed deadline pays no bytes for one): the owner adds its own, or a budget's.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Fired {
    /// The requested duration: the deadline's own, or the cap's when a cap ended it;
    /// zero for a limit at an instant that no cap ended.
    pub(crate) requested: Duration,
    /// The instant a limit at an instant was given, as its owner gave it: set when no cap
    /// ended the timer.
    pub(crate) at: Option<Reading>,
    /// Whether a cap ended the timer.
    pub(super) cap_end: CapEnd,
    /// The wheel's address ([`WheelRef::id`]).
    pub(super) wheel: usize,
    /// How late the fire was seen, for the `tracing` event.
    #[cfg(feature = "tracing")]
    pub(crate) late: Duration,
}

impl Fired {
    /// Whether a cap ended the timer.
    pub(crate) fn by_cap(&self) -> bool {
        self.cap_end != CapEnd::Own
    }

    /// The `Elapsed` of a timer no cap ended, named `name`; with the `tracing` event.
    pub(crate) fn elapsed(&self, name: Option<&'static str>) -> Elapsed {
        debug_assert!(!self.by_cap());
        let elapsed = match self.at {
            Some(at) => Elapsed::at_instant(at, name),
            None => Elapsed::new(self.requested, name),
        };
        self.trace(&elapsed);
        elapsed
    }

    /// Emits the `tracing` event of the fire, which `elapsed` reports (with `tracing`).
    #[inline]
    pub(crate) fn trace(&self, elapsed: &Elapsed) {
        #[cfg(feature = "tracing")]
        tracing::debug!(
            target: "punctual",
            name = elapsed.name().unwrap_or(""),
            duration = ?elapsed.duration(),
            budget = elapsed.is_budget(),
            late = ?self.late,
            "deadline elapsed"
        );
        #[cfg(not(feature = "tracing"))]
        let _ = elapsed;
    }

    /// Whether `cap` is the one that ended the timer: on its wheel, and ending at the
    /// instant the timer was cut to. A later cap of the same length, say, is not.
    pub(crate) fn ended_by(&self, cap: &Cap) -> bool {
        let at_the_cut = match self.cap_end {
            CapEnd::Own => return false,
            CapEnd::AtStart => true,
            CapEnd::At(at) => at == cap.at || at == State::degraded(cap.at, false).target(),
        };
        cap.wheel == self.wheel && at_the_cut
    }
}
