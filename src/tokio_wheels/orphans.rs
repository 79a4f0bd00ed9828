//! The orphan driver: one thread that fires, on real time, the deadlines left on the
//! wheels of runtimes that shut down, and lets go of each wheel once it has drained.
//!
//! Started at the first shutdown that leaves a deadline armed; it then lives as long as
//! the process, parked while it has nothing to drive. It is a timer thread like the
//! global wheel's (`punctual_thread::run`), over the set of orphaned wheels, each turn's
//! next reading rounded up to the wheel's tick.
//!
//! The rounding keeps the wheels' early looks cheap: they were turned on for tokio's
//! timer, which wakes at most once a millisecond, and a crowded tick is walked at each
//! look. A thread woken at each deadline's own time would walk it once per deadline.
//! Woken on the tick grid, a deadline fires by the end of its tick, as the contract
//! allows.

use core::time::Duration;
use std::sync::{Mutex, OnceLock};
use std::thread::{self, Thread};

use punctual_core::{DriverSlot, Growable, Reading, Wheel};
use punctual_tokio::RuntimeClock;

use super::runtime_wheel::{RuntimeWheel, on_tick_grid};
use punctual_thread::Driven;

/// Runtime wheels handed over and not yet taken in by the thread.
static INBOX: Mutex<Vec<&'static RuntimeWheel>> = Mutex::new(Vec::new());
static THREAD: OnceLock<Thread> = OnceLock::new();

/// Hands `rw` (its clock already on real time) to the orphan driver.
pub(crate) fn hand_over(rw: &'static RuntimeWheel) {
    INBOX
        .lock()
        .unwrap_or_else(|poisoned| poisoned.into_inner())
        .push(rw);
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

/// A runtime wheel, driven until it drains. The slot is `None` once it is let go.
struct Orphan {
    rw: &'static RuntimeWheel,
    slot: Option<DriverSlot<'static, RuntimeClock, Growable>>,
}

impl Driven for Orphan {
    type Clock = RuntimeClock;
    type Storage = Growable;

    fn wheel(&self) -> &'static Wheel<RuntimeClock, Growable> {
        &self.rw.wheel
    }

    fn slot(&mut self) -> &mut DriverSlot<'static, RuntimeClock, Growable> {
        self.slot
            .as_mut()
            .expect("a runtime wheel is not driven after it is let go")
    }

    /// On the tick grid (see the module docs).
    fn next_turn(&self, next: Reading) -> Reading {
        Reading::since_origin(on_tick_grid(next.as_duration(), self.rw.wheel.tick()))
    }

    fn finished(&mut self) -> bool {
        if self.rw.wheel.occupied() != 0 {
            return false;
        }
        // The place for the waker first: the wheel may serve another runtime as soon as
        // it is let go.
        self.slot = None;
        self.rw.orphan_drained();
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
                    .map(|rw| Orphan {
                        rw,
                        slot: Some(rw.wheel.driver_slot()),
                    }),
            );
        },
        Duration::MAX,
    )
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
