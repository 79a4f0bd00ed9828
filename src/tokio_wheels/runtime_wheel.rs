//! `RuntimeWheel`: a default wheel for one thread of a tokio runtime, and the shelves
//! of wheels let go, which later claims take again.
//!
//! ```text
//!   new ──claim──▶ owned + driven ──owner leaves──▶ driven ──drained──▶ shelved ──claim──▶ …
//!                        │                               ▲
//!                        └──runtime shuts down──▶ orphan driver (real time) ──drained──▶ shelved
//! ```
//!
//! * A claim takes a shelved wheel of the runtime's flavour first, else makes one.
//! * A claimed wheel starts over (`Wheel::restart`) and reads its new runtime's clock.
//! * The owner leaves when its thread exits, or when its runtime is gone.
//! * The last of the owner and the driver to leave shelves the wheel ([`Holders`]).
//! * A shelved wheel has nothing armed, no driver, and nothing left that can turn it.
//! * A wheel is never freed: `'static` references to it are handed out.
//! * A claim refuses a shelved wheel in use again; that wheel stays off the shelf.

use core::sync::atomic::{AtomicUsize, Ordering};
use core::time::Duration;
use std::sync::{Mutex, OnceLock};

use punctual_core::{Growable, RawWheel, Wheel};
use punctual_tokio::RuntimeClock;
use tokio::runtime::Handle;

use super::holders::Holders;
use crate::wheel_choice::WheelChoice;

/// The tick of every runtime's default wheel: tokio's own timer resolution, and the
/// global wheel's tick.
pub(crate) const TICK: Duration = Duration::from_millis(1);

/// A default wheel for one thread of a runtime.
pub(crate) struct RuntimeWheel {
    pub(crate) wheel: Wheel<RuntimeClock, Growable>,
    /// How default deadlines reach `wheel` (set once leaked).
    pub(crate) choice: OnceLock<WheelChoice>,
    state: Holders,
    /// Made for a runtime whose clock tokio may pause (a `current_thread` one): serves
    /// runtimes of that flavour only, since `choice` depends on it.
    pausable: bool,
}

/// Wheels let go, with nothing armed, for the next claim of their flavour:
/// `[multi-thread, pausable]`. A lock is enough: a claim comes once per thread and runtime.
static SHELVES: [Mutex<Vec<&'static RuntimeWheel>>; 2] =
    [Mutex::new(Vec::new()), Mutex::new(Vec::new())];

/// Runtime wheels ever made: the most in use at once.
static MADE: AtomicUsize = AtomicUsize::new(0);

/// How many runtime wheels this process has made: for the tests of their reuse.
pub(crate) fn made() -> usize {
    MADE.load(Ordering::Relaxed)
}

fn shelf(pausable: bool) -> std::sync::MutexGuard<'static, Vec<&'static RuntimeWheel>> {
    SHELVES[usize::from(pausable)]
        .lock()
        .unwrap_or_else(|poisoned| poisoned.into_inner())
}

impl RuntimeWheel {
    /// A wheel for the calling thread, in the runtime of `handle`: a shelved one started
    /// over, or a new one. The caller spawns its driver task.
    pub(crate) fn claim(handle: &Handle) -> &'static RuntimeWheel {
        // tokio pauses the clock of a `current_thread` runtime only (`pause` and
        // `start_paused` refuse the others).
        let pausable = !matches!(
            handle.runtime_flavor(),
            tokio::runtime::RuntimeFlavor::MultiThread
        );
        let rw = Self::unshelve(pausable).unwrap_or_else(|| Self::make(pausable));
        rw.wheel.clock().switch_to_tokio(TICK, pausable);
        rw.state.claim();
        rw
    }

    /// A shelved wheel of the flavour, started over; `None` if the shelf is empty.
    fn unshelve(pausable: bool) -> Option<&'static RuntimeWheel> {
        loop {
            let rw = shelf(pausable).pop()?;
            // In use again: a deadline that outlived its thread armed there after a
            // reset. It stays off the shelf, holding that deadline.
            if rw.wheel.restart() {
                return Some(rw);
            }
        }
    }

    /// A new wheel, leaked.
    fn make(pausable: bool) -> &'static RuntimeWheel {
        // Early looks: its driver sleeps on a coarse grid (tokio's millisecond, or ticks).
        let clock = RuntimeClock::new(crate::global::std_clock());
        let wheel = Wheel::growable(clock, TICK).with_early_looks();
        let rw: &'static RuntimeWheel = Box::leak(Box::new(RuntimeWheel {
            // SAFETY: leaked just below, so the wheel never moves nor is dropped.
            wheel: unsafe { wheel.with_thread_spares() },
            choice: OnceLock::new(),
            state: Holders::new(),
            pausable,
        }));
        MADE.fetch_add(1, Ordering::Relaxed);
        rw.choice.get_or_init(|| WheelChoice {
            wheel: &rw.wheel,
            reads_behind: Some(rw.wheel.clock()),
            // Settles the global wheel's clock: a budget started here may then end a
            // deadline on the global wheel.
            on_global_timeline: !pausable && crate::global::reads_std_clock(),
        });
        rw
    }

    /// How default deadlines reach this wheel.
    pub(crate) fn choice(&'static self) -> &'static WheelChoice {
        self.choice.get().expect("set when the wheel was made")
    }

    /// Whether the runtime this wheel served has shut down.
    pub(crate) fn runtime_gone(&self) -> bool {
        self.wheel.clock().runtime_gone()
    }

    /// The owner lets go. Wakes the driver, which lets go once the wheel is drained;
    /// shelves the wheel now if no driver is left.
    pub(crate) fn disown(&'static self) {
        if self.state.release_owner() {
            self.shelve();
        } else {
            // The driver may be idle, waiting for an arm: let it look at the state.
            RawWheel::wake_drivers(&self.wheel);
        }
    }

    /// A driver stops driving the drained wheel, after letting go of everything that
    /// reaches it; shelves the wheel if the owner has left too.
    pub(super) fn undrive(&'static self) {
        if self.state.release_driver() {
            self.shelve();
        }
    }

    /// The last holder shelves the wheel: no owner, no driver, nothing armed.
    fn shelve(&'static self) {
        debug_assert_eq!(self.wheel.occupied(), 0);
        shelf(self.pausable).push(self);
    }

    /// Whether the driver task may stop: the owner has left and nothing is armed.
    pub(super) fn retirable(&self) -> bool {
        self.state.owner_left() && self.wheel.occupied() == 0
    }

    /// The orphan driver is done with this wheel (drained).
    pub(crate) fn orphan_drained(&'static self) {
        self.undrive();
    }
}

/// `at` rounded up to a whole number of `tick`s (saturating).
pub(crate) fn on_tick_grid(at: Duration, tick: Duration) -> Duration {
    let tick = tick.as_nanos().max(1);
    let rounded = at.as_nanos().div_ceil(tick).saturating_mul(tick);
    u64::try_from(rounded).map_or(Duration::MAX, Duration::from_nanos)
}
