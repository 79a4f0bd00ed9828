//! The orphan driver: one thread that fires, on real time, the deadlines left on the
//! wheels of runtimes that shut down, and lets go of each wheel once it has drained.
//!
//! Started at the first shutdown that leaves a deadline armed; it then lives as long as
//! the process, parked while it has nothing to drive. It turns each wheel by hand and
//! sleeps until the earliest next turn of any of them, rounded up to the wheel's tick; a
//! wake from a wheel (an earlier arm by the thread that still holds it) unparks it.
//!
//! The rounding keeps the wheels' early looks cheap: they were turned on for tokio's
//! timer, which wakes at most once a millisecond, and a crowded tick is walked at each
//! look. A thread woken at each deadline's own time would walk it once per deadline.
//! Woken on the tick grid, a deadline fires by the end of its tick, as the contract
//! allows.

use core::time::Duration;
use std::sync::{Arc, Mutex, OnceLock};
use std::task::{Wake, Waker};
use std::thread::{self, Thread};

use punctual_core::{Clock, DriverSlot, Growable, Reading};

use super::clock::RuntimeClock;
use super::home::{Home, on_tick_grid};

/// Homes handed over and not yet taken in by the thread.
static INBOX: Mutex<Vec<&'static Home>> = Mutex::new(Vec::new());
static THREAD: OnceLock<Thread> = OnceLock::new();

/// Hands `home` (its clock already on real time) to the orphan driver.
pub(crate) fn adopt(home: &'static Home) {
    INBOX
        .lock()
        .unwrap_or_else(|poisoned| poisoned.into_inner())
        .push(home);
    let thread = THREAD.get_or_init(|| {
        thread::Builder::new()
            .name("punctual-orphans".into())
            .spawn(run)
            .expect("punctual: could not start the thread that fires the deadlines of a runtime that shut down")
            .thread()
            .clone()
    });
    thread.unpark();
}

struct Unpark(Thread);

impl Wake for Unpark {
    fn wake(self: Arc<Self>) {
        self.0.unpark();
    }
    fn wake_by_ref(self: &Arc<Self>) {
        self.0.unpark();
    }
}

fn run() {
    let waker = Waker::from(Arc::new(Unpark(thread::current())));
    // A slot is `None` once its home is let go.
    type Driving = (
        &'static Home,
        Option<DriverSlot<'static, RuntimeClock, Growable>>,
    );
    let mut driving: Vec<Driving> = Vec::new();
    loop {
        driving.extend(
            INBOX
                .lock()
                .unwrap_or_else(|poisoned| poisoned.into_inner())
                .drain(..)
                .map(|home| (home, Some(home.wheel.driver_slot()))),
        );
        let mut wait = Duration::MAX;
        driving.retain_mut(|(home, held)| {
            let Some(slot) = held.as_mut() else {
                return false;
            };
            // Without a place for the waker, turn again within a tick.
            let has_place = slot.register(&waker);
            let next = std::panic::catch_unwind(core::panic::AssertUnwindSafe(|| slot.turn()))
                .unwrap_or(Reading::ZERO);
            if home.wheel.occupied() == 0 {
                // The place for the waker first: the home may serve another runtime
                // as soon as it is let go.
                *held = None;
                home.orphan_drained();
                return false;
            }
            let now = home.wheel.clock().now();
            let tick = home.wheel.tick();
            let mut until = on_tick_grid(next.as_duration(), tick).saturating_sub(now);
            if !has_place {
                until = until.min(tick);
            }
            wait = wait.min(until);
            true
        });
        if wait == Duration::MAX {
            thread::park();
        } else {
            thread::park_timeout(wait);
        }
    }
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
