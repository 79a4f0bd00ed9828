//! The default wheels inside tokio runtimes (feature `tokio`): a wheel per thread, on its
//! runtime's clock, turned by a task of that runtime (docs/design.md, "The default wheels
//! inside tokio", says why).
//!
//! * A thread claims its wheel ([`RuntimeWheel`]) at its first default deadline inside a
//!   runtime, and spawns its driver task there; it serves that runtime for life (a thread
//!   alternating between two live runtimes keeps the first one's).
//! * Nothing outside the runtime fires a deadline, unless it has neither a time nor an I/O
//!   driver (`driver_task`).
//! * The lookup is a thread-local read on a task with a live wheel; elsewhere it also asks
//!   tokio for the current runtime.
//! * A runtime that shuts down drops its driver task; what is still armed goes on at real
//!   time on the orphan driver thread, never early.
//! * A thread that exits gives its wheel up; claims take shelved wheels first.
//! * Instants are readings of the global wheel's std clock, as every default wheel's. A
//!   multi-thread runtime's wheel is on the global timeline while the global wheel reads
//!   the std clock.

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
            let held = claim.0.get().filter(|rw| !rw.wheel.clock().runtime_gone());
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

/// The wheel of the tokio runtime this thread is in, which default deadlines started here
/// now would use; `None` outside every runtime.
pub fn runtime_wheel() -> Option<&'static Wheel<RuntimeClock, Growable>> {
    current_wheel().map(|rw| &rw.wheel)
}

/// How many runtime wheels this process has made: the most in use at once, since a
/// thread that exits gives its wheel to the next.
pub fn runtime_wheels_made() -> usize {
    SHELVES.iter().map(Shelf::made).sum()
}
