//! The default wheels inside tokio runtimes (feature `tokio`): a wheel per thread, on its
//! runtime's clock, turned by a task of that runtime.
//!
//! * A default deadline first polled inside a runtime runs on that runtime's clock.
//! * Each thread that starts one gets a wheel of its own ([`RuntimeWheel`]), claimed at
//!   its first such deadline, with a driver task spawned on that runtime.
//! * The driver sleeps inside the runtime (`driver_task`): nothing outside it fires a
//!   deadline, unless the runtime has neither a time nor an I/O driver.
//! * A worker's wheel serves its runtime for life; a thread that alternates between two
//!   live runtimes keeps the first one's wheel.
//! * The lookup is a thread-local read on a task with a live wheel; elsewhere it also
//!   asks tokio for the current runtime. Outside every runtime: `None`.
//! * A runtime that shuts down drops its driver task; what is still armed goes on at
//!   real time on the orphan driver thread, never early.
//! * A thread that exits gives its wheel up; memory is bounded by the wheels in use at
//!   once, since claims take shelved wheels first.
//! * Their instants are readings of the global wheel's std clock, as every default
//!   wheel's. A multi-thread runtime's wheel is on the global timeline while the global
//!   wheel reads the std clock.
//!
//! docs/design.md, "The default wheels inside tokio", says why.

mod driver_task;
mod holders;
mod orphans;
mod probe;
pub(crate) mod runtime_clock;
mod runtime_wheel;
#[cfg(target_os = "linux")]
mod timer_fd;

use core::cell::Cell;

use punctual_core::{Growable, Wheel};
use tokio::runtime::Handle;

use driver_task::DriverTask;
pub use runtime_clock::RuntimeClock;
use runtime_wheel::RuntimeWheel;

use crate::wheel_choice::{Shelf, WheelChoice};

/// Runtime wheels let go, for the next claim of their flavour: `[multi-thread, pausable]`.
static SHELVES: [Shelf<RuntimeWheel>; 2] = [Shelf::new(), Shelf::new()];

/// A thread's runtime wheel: given up when the thread exits.
struct Claim(Cell<Option<&'static RuntimeWheel>>);

impl Drop for Claim {
    fn drop(&mut self) {
        if let Some(rw) = self.0.take() {
            rw.disown();
        }
    }
}

std::thread_local! {
    static CLAIM: Claim = const { Claim(Cell::new(None)) };
}

/// The wheel of the tokio runtime this thread is in, claiming one for the thread if
/// needed; `None` outside every runtime (or while the thread exits).
fn current_wheel() -> Option<&'static RuntimeWheel> {
    CLAIM
        .try_with(|claim| {
            let held = claim.0.get().filter(|rw| !rw.runtime_gone());
            if let Some(rw) = held {
                if tokio::task::try_id().is_some() {
                    return Some(rw);
                }
            }
            let handle = Handle::try_current().ok()?;
            if held.is_some() {
                return held;
            }
            if let Some(gone) = claim.0.take() {
                gone.disown();
            }
            let rw = RuntimeWheel::claim(&handle);
            handle.spawn(DriverTask::new(rw, handle.clone()));
            claim.0.set(Some(rw));
            Some(rw)
        })
        .ok()
        .flatten()
}

/// How default deadlines reach the wheel of the tokio runtime this thread is in; `None`
/// outside every runtime (or while the thread exits).
pub(crate) fn current() -> Option<&'static WheelChoice> {
    current_wheel().map(RuntimeWheel::choice)
}

/// The wheel default deadlines started on this thread now would use, inside a tokio
/// runtime: for the conformance suite, which checks that wheel and its driver task.
pub(crate) fn runtime_wheel() -> Option<&'static Wheel<RuntimeClock, Growable>> {
    current_wheel().map(RuntimeWheel::wheel)
}

/// How many runtime wheels this process has made: the most in use at once. For the tests
/// of their reuse.
pub(crate) fn runtime_wheels_made() -> usize {
    SHELVES.iter().map(Shelf::made).sum()
}
