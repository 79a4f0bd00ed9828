//! What a fired timer reports: how it ended, and whether a cap (a budget) ended it.

use core::time::Duration;

use super::state::State;
use crate::Elapsed;
use crate::future::budget::{Budget, ambient};
use crate::time::Reading;

/// A limit from outside a deadline (a budget's): an instant on one wheel's clock, and the
/// duration to report if it ends the deadline. It applies only on its own wheel.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Cap {
    /// The wheel's address ([`WheelRef::id`](crate::WheelRef::id)), only compared, never dereferenced.
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
    /// A cap ended it at this instant, as the timer kept it.
    At(Reading),
}

/// How a timer ended. It keeps no name: the owner adds its own, or a budget's.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Fired {
    /// The deadline's own duration, or the cap's if it ended it; zero for an instant.
    pub(crate) requested: Duration,
    /// The instant as given, for a limit at an instant that no cap ended.
    pub(crate) at: Option<Reading>,
    /// Whether a cap ended the timer, and where.
    pub(super) cap_end: CapEnd,
    /// The wheel's address ([`WheelRef::id`](crate::WheelRef::id)).
    pub(super) wheel: usize,
    /// How late the fire was seen, for the `tracing` event.
    #[cfg(feature = "tracing")]
    pub(crate) late: Duration,
    /// How late the fire was seen, if past the overrun threshold (already counted).
    #[cfg(feature = "tracing")]
    pub(crate) overran: Option<Duration>,
}

impl Fired {
    /// The limit a report shows: the requested duration, `None` for an instant.
    pub(crate) fn limit(&self) -> Option<Duration> {
        self.at.is_none().then_some(self.requested)
    }

    /// The `Elapsed` of the fire, named `name`, with the `tracing` event. If a cap ended
    /// it, the budget's: named after `budget` (else the ambient one) if that one cut it,
    /// on the same wheel at the same instant.
    #[inline(never)]
    pub(crate) fn elapsed(&self, name: Option<&'static str>, budget: Option<&Budget>) -> Elapsed {
        let elapsed = match (self.cap_end, self.at) {
            (CapEnd::Own, Some(at)) => Elapsed::at_instant(at, name),
            (CapEnd::Own, None) => Elapsed::new(self.requested, name),
            (cut, _) => {
                let ambient = budget.is_none().then(ambient).flatten();
                let cut_by = |cap: &Cap| match cut {
                    CapEnd::At(at) => at == cap.at || at == State::degraded(cap.at, false).target(),
                    _ => true,
                };
                let budget = budget.or(ambient.as_ref());
                let budget = budget.filter(|b| b.cap.wheel == self.wheel && cut_by(&b.cap));
                Elapsed::budget(self.requested, budget.and_then(Budget::name))
            }
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
        #[cfg(feature = "tracing")]
        if let Some(overran) = self.overran {
            tracing::warn!(
                target: "punctual",
                name = elapsed.name().unwrap_or(""),
                duration = ?elapsed.duration(),
                overran = ?overran,
                "deadline overran: its task polled it late (code that does not yield?)"
            );
        }
        #[cfg(not(feature = "tracing"))]
        let _ = elapsed;
    }
}
