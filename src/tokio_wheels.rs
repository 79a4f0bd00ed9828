//! The default wheels inside tokio runtimes (feature `tokio`): a wheel per thread, on its
//! runtime's clock, turned by a task of that runtime (docs/design.md, "The default wheels
//! inside tokio").
//!
//! ```text
//!   new ──claim──▶ owned + driven ──owner leaves──▶ driven ──drained──▶ shelved ──claim──▶ …
//!                        │                               ▲
//!                        └──runtime shuts down──▶ orphan driver (real time) ──drained──▶ shelved
//! ```
//!
//! * A thread claims a wheel ([`RuntimeWheel`]) at its first default deadline in a runtime,
//!   a shelved one of the runtime's flavour first, and keeps it for that runtime's life: a
//!   thread in several live runtimes holds a wheel for each ([`Claims`]).
//! * In a task of a multi-thread runtime, on a thread whose latest claim was made in one,
//!   the lookup is thread-local reads; elsewhere it asks tokio which runtime it is in.
//! * The owner leaves when its thread exits or its runtime is gone; the last of the owner
//!   and the driver to leave shelves the wheel ([`Holders`]), drained and undriven.
//! * A multi-thread runtime's wheel is on the global timeline while the global wheel reads
//!   the std clock.

mod driver_task;
mod holders;
mod probe;
pub(crate) mod runtime_clock;
#[cfg(target_os = "linux")]
mod timer_fd;

use core::cell::RefCell;
use core::time::Duration;

use punctual_core::{Growable, RawWheel, Wheel};
use tokio::runtime::{Handle, Id, RuntimeFlavor};

use driver_task::DriverTask;
use holders::Holders;
pub use runtime_clock::RuntimeClock;

use crate::wheel_choice::{Shelf, WheelChoice};

/// Runtime wheels let go, for the next claim of their flavour: `[multi-thread, pausable]`.
static SHELVES: [Shelf<RuntimeWheel>; 2] = [Shelf::new(), Shelf::new()];

std::thread_local! {
    /// The wheels this thread claimed, one per runtime, the latest first.
    static CLAIMS: Claims = const { Claims(RefCell::new(Vec::new())) };
}

/// The wheel of the tokio runtime this thread is in, claiming one for the thread if
/// needed; `None` outside every runtime, in one shutting down, or while the thread exits.
fn current_wheel() -> Option<&'static RuntimeWheel> {
    CLAIMS.try_with(Claims::current).ok().flatten()
}

/// A thread's runtime wheels: each kept while its runtime lives (its timers may re-arm
/// there), and disowned once the runtime is gone or the thread exits.
struct Claims(RefCell<Vec<Claim>>);

#[derive(Clone, Copy)]
struct Claim {
    runtime: Id,
    /// Claimed in a task of a multi-thread runtime: on a worker, which polls that
    /// runtime's tasks only (or on its blocking pool).
    worker: bool,
    rw: &'static RuntimeWheel,
}

impl Claims {
    fn current(&self) -> Option<&'static RuntimeWheel> {
        let in_task = tokio::task::try_id().is_some();
        if let Some(latest) = self.0.borrow().first() {
            if in_task && latest.worker && !latest.rw.wheel.clock().runtime_gone() {
                return Some(latest.rw);
            }
        }
        let handle = Handle::try_current().ok()?;
        let runtime = handle.id();
        // Nothing is called while the list is borrowed: a claim runs tokio's code (and its
        // hooks), which may start a default deadline.
        let mut gone = Vec::new();
        let found = {
            let mut claims = self.0.borrow_mut();
            claims.retain(|claim| {
                let live = !claim.rw.wheel.clock().runtime_gone();
                if !live {
                    gone.push(claim.rw);
                }
                live
            });
            let found = claims.iter().position(|claim| claim.runtime == runtime);
            found.map(|at| {
                let claim = claims.remove(at);
                claims.insert(0, claim);
                claim.rw
            })
        };
        gone.into_iter().for_each(RuntimeWheel::disown);
        if found.is_some() {
            return found;
        }
        let rw = RuntimeWheel::claim(&handle);
        handle.spawn(DriverTask::new(rw, handle.clone()));
        if rw.wheel.clock().runtime_gone() {
            // The runtime is shutting down: tokio dropped the driver task at once. The
            // global wheel serves instead.
            rw.disown();
            return None;
        }
        let worker = in_task && !rw.pausable;
        let claim = Claim {
            runtime,
            worker,
            rw,
        };
        self.0.borrow_mut().insert(0, claim);
        Some(rw)
    }
}

impl Drop for Claims {
    fn drop(&mut self) {
        self.0
            .get_mut()
            .drain(..)
            .for_each(|claim| claim.rw.disown());
    }
}

/// The choice of `current_wheel`, for default deadlines.
pub(crate) fn current() -> Option<&'static WheelChoice> {
    current_wheel().map(|rw| &rw.choice)
}

/// The wheel of the tokio runtime this thread is in, which default deadlines started here
/// now would use; `None` outside every runtime, or in one shutting down.
pub fn runtime_wheel() -> Option<&'static Wheel<RuntimeClock, Growable>> {
    current_wheel().map(|rw| rw.wheel)
}

/// How many runtime wheels this process has made: the most in use at once.
pub fn runtime_wheels_made() -> usize {
    SHELVES.iter().map(Shelf::made).sum()
}

const DEFAULT_TICK: Duration = Duration::from_millis(1);

/// A default wheel for one thread of a tokio runtime.
struct RuntimeWheel {
    wheel: &'static Wheel<RuntimeClock, Growable>,
    choice: WheelChoice,
    state: Holders,
    /// Made for a runtime whose clock tokio may pause (a `current_thread` one): serves
    /// runtimes of that flavour only, since `choice` depends on it.
    pausable: bool,
}

impl RuntimeWheel {
    /// A wheel for the calling thread, in the runtime of `handle`: a shelved one started
    /// over, or a new one. The caller spawns its driver task.
    fn claim(handle: &Handle) -> &'static Self {
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
        let wheel = Wheel::growable(clock, DEFAULT_TICK).leak();
        Box::leak(Box::new(Self {
            wheel,
            choice: WheelChoice {
                wheel,
                runtime_clock: Some(wheel.clock()),
                // Settles the global wheel's clock: a budget started here may then end a
                // deadline on the global wheel.
                on_global_timeline: !pausable && crate::global::reads_std_clock(),
            },
            state: Holders::default(),
            pausable,
        }))
    }

    /// The owner lets go. Wakes the driver, which lets go once the wheel is drained;
    /// shelves the wheel now if no driver is left.
    fn disown(&'static self) {
        if self.state.release_owner() {
            self.shelve();
        } else {
            // The driver may be idle, waiting for an arm: let it look at the state.
            RawWheel::wake_drivers(self.wheel);
        }
    }

    /// A driver stops driving the drained wheel, after letting go of everything that
    /// reaches it; shelves the wheel if the owner has left too.
    fn stop_driving(&'static self) {
        if self.state.release_driver() {
            self.shelve();
        }
    }

    /// The last holder shelves the wheel: no owner, no driver. A deadline that armed while
    /// its runtime shut down may still hold an entry; the shelf lends the wheel again only
    /// once it can start over.
    fn shelve(&'static self) {
        SHELVES[usize::from(self.pausable)].put(self);
    }
}

/// `at` rounded up to a whole number of `tick`s (saturating).
fn on_tick_grid(at: Duration, tick: Duration) -> Duration {
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
