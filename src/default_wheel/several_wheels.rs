//! `DefaultWheel` with `tokio` or `test-util`: a reference to the wheel chosen at the first
//! pending poll.
//!
//! * `choose` sets `chosen` once; only `forget_choice` clears it.
//! * Budgets on a wheel on the global timeline name the global wheel ([`DefaultWheel::budget_wheel`]).

use punctual_core::{RawWheel, Reading, WheelRef};

use super::DefaultWheel;
use crate::wheel_choice::WheelChoice;

impl core::fmt::Debug for DefaultWheel {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        let chosen = self
            .chosen
            .map(|chosen| (chosen.wheel as *const dyn RawWheel).cast::<()>());
        f.debug_struct("DefaultWheel")
            .field("chosen", &chosen)
            .finish()
    }
}

// SAFETY: `choose` settles `chosen` (the global wheel included, stored as any other) and
// a repeated `choose` keeps it; only `forget_choice` clears it. So from a `choose` to the
// next `forget_choice`, `get` returns the one wheel chosen, on every copy. `reading_at`
// only ever moves an instant later on the chosen wheel's clock (it reads behind), or
// carries it over to the global wheel's clock (`global::reading_at`).
unsafe impl WheelRef for DefaultWheel {
    type Target = dyn RawWheel;
    type Instant = crate::instant::Now;

    #[inline]
    fn get(&self) -> &Self::Target {
        match self.chosen {
            Some(chosen) => chosen.wheel,
            None => crate::global::global_wheel(),
        }
    }

    #[inline]
    fn instant_of(&self, at: Reading) -> Self::Instant {
        crate::instant::instant_of(self.global_reading(at))
    }

    #[inline]
    fn choose(&mut self) {
        if self.chosen.is_none() {
            self.chosen = Some(choose());
        }
    }

    #[inline]
    fn reading_at(&self, at: Reading) -> Reading {
        match self.chosen {
            // The global wheel's clock may be `BootClock` (`global::reading_at`).
            Some(chosen) if core::ptr::eq(chosen, &GLOBAL_DEFAULT) => crate::global::reading_at(at),
            Some(chosen) => chosen.reading_at(at),
            None => crate::global::reading_at(at),
        }
    }

    #[inline]
    fn forget_choice(&mut self) {
        self.chosen = None;
    }

    /// Wheels on the global timeline answer the global wheel's address, so budgets apply
    /// across them (`WheelChoice::on_global_timeline`).
    #[inline]
    fn id(&self) -> usize {
        (self.budget_wheel() as *const dyn RawWheel).cast::<()>() as usize
    }
}

impl DefaultWheel {
    /// A handle that has not chosen yet.
    pub const fn new() -> Self {
        Self { chosen: None }
    }

    /// The wheel a budget made for this handle names (`Budget::new`): the chosen one, or the
    /// global wheel for a wheel on the global timeline (see [`WheelRef::id`]).
    pub(crate) fn budget_wheel(&self) -> &'static dyn RawWheel {
        match self.chosen {
            Some(chosen) if !chosen.on_global_timeline => chosen.wheel,
            _ => crate::global::global_wheel(),
        }
    }

    /// `at`, a reading of the chosen wheel's clock, as a reading of the global clock.
    /// The inverse of `reading_at`: it moves an instant between default wheels.
    pub(crate) fn global_reading(&self, at: Reading) -> Reading {
        let chosen = self
            .chosen
            .filter(|chosen| !core::ptr::eq(*chosen, &GLOBAL_DEFAULT));
        let Some(chosen) = chosen else {
            // The global wheel's clock may be another than the std reference.
            return crate::global::std_reading(at);
        };
        #[cfg(feature = "tokio")]
        if let Some(clock) = chosen.runtime_clock {
            return clock.reference_reading(at);
        }
        let _ = chosen;
        at
    }
}

/// The global wheel, as a default deadline chooses it.
static GLOBAL_DEFAULT: WheelChoice = WheelChoice {
    wheel: crate::global::global_wheel_static(),
    #[cfg(feature = "tokio")]
    runtime_clock: None,
    on_global_timeline: true,
};

/// The wheel for a deadline that starts now on this thread.
#[inline(never)]
fn choose() -> &'static WheelChoice {
    #[cfg(feature = "test-util")]
    if let Some(wheel) = crate::virtual_time::current() {
        return wheel;
    }
    #[cfg(feature = "tokio")]
    if let Some(wheel) = crate::tokio_wheels::current() {
        return wheel;
    }
    &GLOBAL_DEFAULT
}
