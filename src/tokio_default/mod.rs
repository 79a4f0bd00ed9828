//! The default wheel inside a tokio runtime (feature `tokio`).
//!
//! A default deadline (`fut.deadline(d)` and the other default entry points) that starts
//! on a thread inside a tokio runtime runs on that runtime's clock: tokio's
//! `Instant::now()`, which is the real time, or the runtime's virtual time when it is
//! paused (`#[tokio::test(start_paused = true)]`, `tokio::time::pause`). The wheel is
//! turned by a task on that runtime. On virtual time the task sleeps with
//! `tokio::time::sleep_until`, so a paused runtime auto-advances to the next deadline
//! when it has nothing else to do, and `tokio::time::advance` fires what it passes,
//! exactly as with tokio's own timers. On real time it sleeps on the global wheel
//! instead and makes no tokio timer, which would panic on a runtime without a time
//! driver (tokio offers no way to ask; see `home`'s `DriverTask`).
//!
//! # How a deadline finds its wheel
//!
//! tokio has no runtime-local storage and no stable runtime identity, so the wheels are
//! per thread: each thread that starts a default deadline inside a runtime gets a wheel
//! (a [`Home`]) of its own at its first such deadline, reading the clock of the runtime it
//! is in then, with a driver task spawned on that runtime. A worker thread belongs to one
//! runtime for life, so its wheel does too; the arms and cancels of a worker's tasks stay
//! on that worker's wheel, as in tokio's own per-worker timers.
//!
//! The lookup happens at the first pending poll only (the ready path never looks), and
//! costs a thread-local read when the thread already has a live wheel and is running a
//! task; elsewhere (the future of `block_on`, a thread inside `Handle::enter`) it also
//! asks tokio for the current runtime (`Handle::try_current`). Outside every runtime the
//! global wheel is used.
//!
//! # Edges
//!
//! * **Runtime shutdown.** tokio drops every task, the driver task included, and with
//!   them every deadline inside them. A deadline still pending elsewhere (held by a
//!   future polled outside the runtime) is not lost: the wheel switches to real time,
//!   continuing from the runtime's last reading, and an orphan driver thread fires it
//!   (never early; after a paused clock that ran ahead, late by as much as it ran ahead).
//!   The thread's next deadline takes a new wheel.
//! * **Several runtimes.** Each thread's wheel serves the runtime it was made in. A
//!   thread that runs several runtimes one after the other (each dropped before the next
//!   starts) gets a new wheel for each; a thread that *alternates* between two live
//!   runtimes keeps the first one's wheel, whose driver runs on the first runtime: on a
//!   `current_thread` first runtime, its deadlines then fire only while that runtime runs.
//! * **`spawn_blocking` threads** are inside the runtime: they get wheels of their own on
//!   the runtime's clock, like any of its threads. When such a thread exits, its wheel's
//!   driver task ends once the wheel is drained, and the wheel is shelved for the next
//!   thread that needs one. **`block_in_place`** keeps the worker's wheel; its driver task
//!   runs on the other workers meanwhile.
//! * **No time driver.** A runtime built without `enable_time` is served as any other:
//!   on real time the driver task asks tokio for no timer. (A runtime whose clock tokio
//!   paused needs its time driver, as tokio's own timers do.)
//! * **A clock paused later.** The driver task sees that tokio paused or moved a
//!   `current_thread` runtime's clock at its next wake, and sleeps on tokio's timer from
//!   then on; until then tokio's auto-advance does not stop at the wheel's deadlines.
//!
//! # Memory
//!
//! A wheel (a few kilobytes, and the entries it grew to hold) per thread using default
//! deadlines inside a runtime at once. Worker threads live as long as their runtime, so a
//! server holds one per worker. A wheel is never freed (`'static` references to it are
//! handed out, see `home`), but a wheel whose thread has gone and that has drained is
//! shelved and taken over by the next thread that claims one, of a runtime of the same
//! flavour: a process that keeps creating threads that use deadlines inside runtimes (a
//! blocking pool that churns, a thread per short-lived runtime) holds as many wheels as
//! such threads live at once.

mod clock;
mod home;
mod home_state;
mod orphans;

use core::cell::Cell;

use tokio::runtime::Handle;

pub use clock::RuntimeClock;
use home::Home;

use crate::default_wheel::DefaultWheel;

/// The thread's home: given up when the thread exits.
struct Lease(Cell<Option<&'static Home>>);

impl Drop for Lease {
    fn drop(&mut self) {
        if let Some(home) = self.0.take() {
            home.disown();
        }
    }
}

std::thread_local! {
    static LEASE: Lease = const { Lease(Cell::new(None)) };
}

/// The wheel of the tokio runtime this thread is in, claiming one for the thread if
/// needed; `None` outside every runtime (or while the thread exits).
pub(crate) fn current() -> Option<&'static DefaultWheel> {
    LEASE
        .try_with(|lease| {
            let held = lease.0.get().filter(|home| !home.runtime_gone());
            if let Some(home) = held {
                if tokio::task::try_id().is_some() {
                    return Some(home.chosen());
                }
            }
            let handle = Handle::try_current().ok()?;
            if let Some(home) = held {
                return Some(home.chosen());
            }
            if let Some(gone) = lease.0.take() {
                gone.disown();
            }
            let home = Home::claim(&handle);
            lease.0.set(Some(home));
            Some(home.chosen())
        })
        .ok()
        .flatten()
}

/// The wheel default deadlines started on this thread now would use, inside a tokio
/// runtime: for the conformance suite, which checks that wheel and its driver task.
pub fn runtime_wheel()
-> Option<&'static punctual_core::Wheel<RuntimeClock, punctual_core::Growable>> {
    current()?;
    LEASE.with(|lease| lease.0.get().map(|home| &home.wheel))
}

/// How many runtime wheels (homes) this process has made: each claim takes a shelved one
/// first, so this stays at the most in use at once. For the tests of their reuse.
pub fn runtime_wheels_made() -> usize {
    home::made()
}
