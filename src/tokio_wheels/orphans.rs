//! The orphan driver: one thread that fires, on real time, the deadlines left on the
//! wheels of runtimes that shut down, and lets go of each wheel once it has drained.
//!
//! * It starts at the first shutdown that leaves a deadline armed, and then lives as
//!   long as the process, parked while it has nothing to drive.
//! * It is a timer thread like the global wheel's (`punctual_thread::run`), over the
//!   set of orphaned wheels.
//! * Each turn's next reading is rounded up to the wheel's tick: a deadline fires by the
//!   end of its tick, as the contract allows.

use core::time::Duration;
use std::sync::{Mutex, OnceLock};
use std::thread::{self, Thread};

use punctual_core::{DriverSlot, Growable, Reading, Wheel};
use punctual_thread::Driven;

use super::RuntimeClock;
use super::{RuntimeWheel, on_tick_grid};

/// Wheels handed over (their clocks already on real time), not yet taken in by the thread.
static INBOX: Mutex<Vec<&'static RuntimeWheel>> = Mutex::new(Vec::new());
static THREAD: OnceLock<Thread> = OnceLock::new();

/// Hands `orphan` (its clock already on real time) to the orphan driver.
pub(super) fn hand_over(orphan: &'static RuntimeWheel) {
    INBOX
        .lock()
        .unwrap_or_else(|poisoned| poisoned.into_inner())
        .push(orphan);
    let thread = THREAD.get_or_init(|| {
        punctual_thread::handle_forks();
        thread::Builder::new()
            .name("punctual-orphans".into())
            .spawn(run)
            .expect("punctual: could not start the thread that fires the deadlines of a runtime that shut down")
            .thread()
            .clone()
    });
    thread.unpark();
}

/// An orphaned wheel, driven until it drains. The slot is `None` once it is let go.
struct Orphan {
    orphan: &'static RuntimeWheel,
    slot: Option<DriverSlot<'static, RuntimeClock, Growable>>,
}

impl Driven for Orphan {
    type Clock = RuntimeClock;
    type Storage = Growable;

    fn wheel(&self) -> &'static Wheel<RuntimeClock, Growable> {
        &self.orphan.wheel
    }

    fn slot(&mut self) -> &mut DriverSlot<'static, RuntimeClock, Growable> {
        self.slot
            .as_mut()
            .expect("a runtime wheel is not driven after it is let go")
    }

    /// On the tick grid (see the module docs).
    fn next_turn(&self, next: Reading) -> Reading {
        let tick = self.orphan.wheel.tick();
        Reading::since_origin(on_tick_grid(next.as_duration(), tick))
    }

    fn finished(&mut self) -> bool {
        if self.orphan.wheel.occupied() != 0 {
            return false;
        }
        // The place for the waker first: the wheel may serve another runtime as soon as
        // it is let go.
        self.slot = None;
        self.orphan.stop_driving();
        true
    }
}

fn run() -> ! {
    punctual_thread::run(
        |driving: &mut Vec<Orphan>| {
            driving.extend(
                INBOX
                    .lock()
                    .unwrap_or_else(|poisoned| poisoned.into_inner())
                    .drain(..)
                    .map(|orphan| Orphan {
                        orphan,
                        slot: Some(orphan.wheel.driver_slot()),
                    }),
            );
        },
        Duration::MAX,
    )
}
