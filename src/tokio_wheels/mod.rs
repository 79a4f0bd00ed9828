//! The default wheels inside tokio runtimes (feature `tokio`).
//!
//! * A default deadline first polled inside a runtime runs on that runtime's clock.
//! * Each thread that starts one gets a wheel of its own ([`RuntimeWheel`]), claimed at
//!   its first such deadline, with a driver task spawned on that runtime.
//! * A worker's wheel serves its runtime for life; a thread that alternates between two
//!   live runtimes keeps the first one's wheel.
//! * The lookup is a thread-local read on a task with a live wheel; elsewhere it also
//!   asks tokio for the current runtime. Outside every runtime: the global wheel.
//! * A runtime that shuts down drops its driver task; what is still armed goes on at
//!   real time on the orphan driver ([`orphans`]), never early.
//! * A thread that exits gives its wheel up; memory is bounded by the wheels in use at
//!   once, since claims take shelved wheels first.
//!
//! docs/design.md, "The default wheels inside tokio", says why.

mod driver_task;
mod holders;
mod orphans;
mod runtime_wheel;

use core::cell::Cell;

use tokio::runtime::Handle;

use driver_task::DriverTask;
pub use punctual_tokio::RuntimeClock;
use runtime_wheel::RuntimeWheel;

use crate::wheel_choice::WheelChoice;

/// The thread's runtime wheel: given up when the thread exits.
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
pub(crate) fn current() -> Option<&'static WheelChoice> {
    CLAIM
        .try_with(|claim| {
            let held = claim.0.get().filter(|rw| !rw.runtime_gone());
            if let Some(rw) = held {
                if tokio::task::try_id().is_some() {
                    return Some(rw.choice());
                }
            }
            let handle = Handle::try_current().ok()?;
            if let Some(rw) = held {
                return Some(rw.choice());
            }
            if let Some(gone) = claim.0.take() {
                gone.disown();
            }
            let rw = RuntimeWheel::claim(&handle);
            handle.spawn(DriverTask::new(rw, handle.clone()));
            claim.0.set(Some(rw));
            Some(rw.choice())
        })
        .ok()
        .flatten()
}

/// The wheel default deadlines started on this thread now would use, inside a tokio
/// runtime: for the conformance suite, which checks that wheel and its driver task.
pub fn runtime_wheel()
-> Option<&'static punctual_core::Wheel<RuntimeClock, punctual_core::Growable>> {
    current()?;
    CLAIM.with(|claim| claim.0.get().map(|rw| &rw.wheel))
}

/// How many runtime wheels this process has made: the most in use at once. For the tests
/// of their reuse.
pub fn runtime_wheels_made() -> usize {
    runtime_wheel::made()
}
