//! `RuntimeWheel`: a default wheel for one thread of a tokio runtime, and its shelving.
//!
//! ```text
//!   new ──claim──▶ owned + driven ──owner leaves──▶ driven ──drained──▶ shelved ──claim──▶ …
//!                        │                               ▲
//!                        └──runtime shuts down──▶ orphan driver (real time) ──drained──▶ shelved
//! ```
//!
//! * A claim takes a shelved wheel of the runtime's flavour first, else makes one
//!   ([`Shelf`](crate::wheel_choice::Shelf)).
//! * A claimed wheel starts over (`Wheel::restart`) and reads its new runtime's clock.
//! * The owner leaves when its thread exits, or when its runtime is gone.
//! * The last of the owner and the driver to leave shelves the wheel ([`Holders`]).
//! * A shelved wheel has nothing armed, no driver, and nothing left that can turn it.

use core::time::Duration;
use std::sync::OnceLock;

use punctual_core::{Growable, RawWheel, Wheel};
use tokio::runtime::{Handle, RuntimeFlavor};

use super::holders::Holders;
use super::{RuntimeClock, SHELVES};
use crate::wheel_choice::WheelChoice;

pub(super) const DEFAULT_TICK: Duration = Duration::from_millis(1);

/// A default wheel for one thread of a tokio runtime.
pub(super) struct RuntimeWheel {
    pub(super) wheel: Wheel<RuntimeClock, Growable>,
    /// How default deadlines reach the wheel (set once leaked).
    choice: OnceLock<WheelChoice>,
    state: Holders,
    /// Made for a runtime whose clock tokio may pause (a `current_thread` one): serves
    /// runtimes of that flavour only, since `choice` depends on it.
    pausable: bool,
}

impl RuntimeWheel {
    /// How default deadlines reach the wheel.
    pub(super) fn choice(&self) -> &WheelChoice {
        self.choice.get().expect("set when the wheel was made")
    }

    /// A wheel for the calling thread, in the runtime of `handle`: a shelved one started
    /// over, or a new one. The caller spawns its driver task.
    pub(super) fn claim(handle: &Handle) -> &'static Self {
        // tokio pauses the clock of a `current_thread` runtime only (`pause` and
        // `start_paused` refuse the others).
        let pausable = !matches!(handle.runtime_flavor(), RuntimeFlavor::MultiThread);
        let rw =
            SHELVES[usize::from(pausable)].claim(|rw| rw.wheel.restart(), || Self::make(pausable));
        rw.wheel.clock().switch_to_tokio(DEFAULT_TICK, pausable);
        rw.state.claim();
        rw
    }

    /// A new wheel, leaked.
    fn make(pausable: bool) -> &'static Self {
        // Precise fires are set by each driver task, for the timer it sleeps on.
        let clock = RuntimeClock::new(crate::global::std_clock());
        let wheel = Wheel::growable(clock, DEFAULT_TICK);
        let rw: &'static Self = Box::leak(Box::new(Self {
            // SAFETY: leaked just below, so the wheel never moves nor is dropped.
            wheel: unsafe { wheel.with_thread_spares() },
            choice: OnceLock::new(),
            state: Holders::new(),
            pausable,
        }));
        rw.choice.get_or_init(|| WheelChoice {
            wheel: &rw.wheel,
            runtime_clock: Some(rw.wheel.clock()),
            // Settles the global wheel's clock: a budget started here may then end a
            // deadline on the global wheel.
            on_global_timeline: !pausable && crate::global::reads_std_clock(),
        });
        rw
    }

    /// The owner lets go. Wakes the driver, which lets go once the wheel is drained;
    /// shelves the wheel now if no driver is left.
    pub(super) fn disown(&'static self) {
        if self.state.release_owner() {
            self.shelve();
        } else {
            // The driver may be idle, waiting for an arm: let it look at the state.
            RawWheel::wake_drivers(&self.wheel);
        }
    }

    /// A driver stops driving the drained wheel, after letting go of everything that
    /// reaches it; shelves the wheel if the owner has left too.
    pub(super) fn stop_driving(&'static self) {
        if self.state.release_driver() {
            self.shelve();
        }
    }

    /// The last holder shelves the wheel: no owner, no driver, nothing armed.
    fn shelve(&'static self) {
        debug_assert_eq!(self.wheel.occupied(), 0);
        SHELVES[usize::from(self.pausable)].put(self);
    }

    /// Whether the driver task may stop: the owner has left and nothing is armed.
    pub(super) fn driver_may_stop(&self) -> bool {
        self.state.owner_left() && self.wheel.occupied() == 0
    }
}

/// `at` rounded up to a whole number of `tick`s (saturating).
pub(super) fn on_tick_grid(at: Duration, tick: Duration) -> Duration {
    let tick = tick.as_nanos().max(1);
    let rounded = at.as_nanos().div_ceil(tick).saturating_mul(tick);
    u64::try_from(rounded).map_or(Duration::MAX, Duration::from_nanos)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn wakes_round_up_to_the_tick_grid() {
        let ms = Duration::from_millis;
        assert_eq!(on_tick_grid(ms(3), ms(1)), ms(3));
        assert_eq!(on_tick_grid(ms(3) + Duration::from_nanos(1), ms(1)), ms(4));
        assert_eq!(on_tick_grid(Duration::ZERO, ms(1)), Duration::ZERO);
        assert_eq!(on_tick_grid(Duration::MAX, ms(1)), Duration::MAX);
    }
}
