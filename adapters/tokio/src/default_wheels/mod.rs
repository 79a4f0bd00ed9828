//! The default wheels of `punctual` inside tokio runtimes: a wheel per thread, on its
//! runtime's clock, turned by a task of that runtime.
//!
//! * A default deadline first polled inside a runtime runs on that runtime's clock.
//! * Each thread that starts one gets a wheel of its own ([`RuntimeWheel`]), claimed at
//!   its first such deadline, with a driver task spawned on that runtime.
//! * A worker's wheel serves its runtime for life; a thread that alternates between two
//!   live runtimes keeps the first one's wheel.
//! * The lookup is a thread-local read on a task with a live wheel; elsewhere it also
//!   asks tokio for the current runtime. Outside every runtime: `None`.
//! * A runtime that shuts down drops its driver task; what is still armed goes on at
//!   real time on the orphan driver thread, never early.
//! * A thread that exits gives its wheel up; memory is bounded by the wheels in use at
//!   once, since claims take shelved wheels first.
//! * The host ([`Host`]) supplies the reference clock, the sleeps on real time, and what
//!   it keeps with each wheel. This crate never depends on the host.
//!
//! `punctual`'s docs/design.md, "The default wheels inside tokio", says why.

mod driver_task;
mod holders;
mod host;
mod orphans;
mod probe;
mod runtime_wheel;
#[cfg(target_os = "linux")]
mod timer_fd;

use core::cell::Cell;
use core::fmt;
use core::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Mutex;
use std::thread::LocalKey;

use tokio::runtime::Handle;

use driver_task::DriverTask;
pub use host::Host;
pub use runtime_wheel::RuntimeWheel;

/// The default wheels of one host: their shelves and their count. The host keeps it in
/// a `static`, beside the thread-local of its threads' claims ([`Claim`]).
///
/// `punctual` hosts them on its global wheel: its default deadlines inside a runtime
/// reach their wheel through [`current`](Self::current).
pub struct DefaultWheels<H: Host> {
    host: H,
    /// Wheels let go, with nothing armed, for the next claim of their flavour:
    /// `[multi-thread, pausable]`. A lock is enough: a claim comes once per thread and
    /// runtime.
    shelves: [Mutex<Vec<&'static RuntimeWheel<H>>>; 2],
    /// Wheels ever made: the most in use at once.
    made: AtomicUsize,
}

impl<H: Host> DefaultWheels<H> {
    /// The wheels of `host`.
    pub const fn new(host: H) -> Self {
        Self {
            host,
            shelves: [Mutex::new(Vec::new()), Mutex::new(Vec::new())],
            made: AtomicUsize::new(0),
        }
    }

    /// The wheel of the tokio runtime this thread is in, claiming one for the thread (in
    /// `claims`, the host's thread-local) if needed; `None` outside every runtime (or
    /// while the thread exits).
    pub fn current(
        &'static self,
        claims: &'static LocalKey<Claim<H>>,
    ) -> Option<&'static RuntimeWheel<H>> {
        claims
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
                let rw = RuntimeWheel::claim(self, &handle);
                handle.spawn(DriverTask::new(rw, handle.clone()));
                claim.0.set(Some(rw));
                Some(rw)
            })
            .ok()
            .flatten()
    }

    /// How many wheels these have made: the most in use at once. For the tests of their
    /// reuse.
    pub fn made(&self) -> usize {
        self.made.load(Ordering::Relaxed)
    }
}

impl<H: Host> fmt::Debug for DefaultWheels<H> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("DefaultWheels")
            .field("made", &self.made())
            .finish_non_exhaustive()
    }
}

/// A thread's runtime wheel, in a thread-local of the host's: given up when the thread
/// exits.
pub struct Claim<H: Host>(Cell<Option<&'static RuntimeWheel<H>>>);

impl<H: Host> Claim<H> {
    /// A thread that has claimed no wheel yet.
    pub const fn new() -> Self {
        Self(Cell::new(None))
    }
}

impl<H: Host> Default for Claim<H> {
    fn default() -> Self {
        Self::new()
    }
}

impl<H: Host> Drop for Claim<H> {
    fn drop(&mut self) {
        if let Some(rw) = self.0.take() {
            rw.disown();
        }
    }
}

impl<H: Host> fmt::Debug for Claim<H> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_tuple("Claim")
            .field(&self.0.get().map(core::ptr::from_ref))
            .finish()
    }
}
