#![doc = include_str!("../README.md")]
#![warn(missing_docs, missing_debug_implementations, unreachable_pub)]

use core::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use core::task::Waker;
use core::time::Duration;
use std::panic::{self, AssertUnwindSafe};
use std::sync::Arc;
use std::task::Wake;
use std::thread::{self, JoinHandle, Thread};

use punctual_core::{Clock, DriverSlot, Reading, Storage, Wheel};

use crate::wake_lead::{WakeEarly, spin_until};

mod fork_gate;
mod sync;
mod wake_lead;

/// Wakes the driver thread; `woken` ends a spin, which an unpark would not reach.
struct Unpark {
    thread: Thread,
    woken: AtomicBool,
}

impl Wake for Unpark {
    fn wake(self: Arc<Self>) {
        self.wake_by_ref();
    }

    fn wake_by_ref(self: &Arc<Self>) {
        self.woken.store(true, Ordering::Relaxed);
        self.thread.unpark();
    }
}

/// Asks Linux to wake this thread's timed sleeps on time, not up to 50 µs late (the
/// default timer slack). Best effort.
fn tighten_timer_slack() {
    #[cfg(target_os = "linux")]
    // SAFETY: PR_SET_TIMERSLACK takes one integer argument and only changes a property of
    // the calling thread; it reads or writes no memory of ours.
    unsafe {
        libc::prctl(libc::PR_SET_TIMERSLACK, 1 as libc::c_ulong);
    }
}

/// The longest sleep of a timer thread on a [`BootClock`](punctual_core::BootClock): its
/// sleeps stop during a suspend, so after a resume it turns within this much awake time.
pub const BOOT_MAX_SLEEP: Duration = Duration::from_secs(1);

/// The fork gate's word ([`fork_gate`]).
static TURNS: AtomicUsize = AtomicUsize::new(0);

std::thread_local! {
    /// Whether this thread is in a turn (a fork from its waker must not wait for it).
    static IN_TURN: core::cell::Cell<bool> = const { core::cell::Cell::new(false) };
}

/// A turn in progress, through the fork gate until dropped.
struct Turning;

impl Turning {
    fn enter() -> Self {
        fork_gate::enter(&TURNS);
        IN_TURN.with(|t| t.set(true));
        Self
    }
}

impl Drop for Turning {
    fn drop(&mut self) {
        IN_TURN.with(|t| t.set(false));
        fork_gate::leave(&TURNS);
    }
}

/// Before a fork: close the gate and wait for the turns in progress but this thread's.
#[cfg(all(target_os = "linux", not(miri)))]
extern "C" fn before_fork() {
    let own = usize::from(IN_TURN.with(core::cell::Cell::get));
    fork_gate::close(&TURNS, own);
}

#[cfg(all(target_os = "linux", not(miri)))]
extern "C" fn after_fork_in_parent() {
    fork_gate::open(&TURNS);
}

/// After a fork, in the child: only the forking thread runs. Async-signal-safe: an atomic
/// store and a thread-local `Cell`.
#[cfg(all(target_os = "linux", not(miri)))]
extern "C" fn after_fork_in_child() {
    let own = usize::from(IN_TURN.with(core::cell::Cell::get));
    fork_gate::reset_in_child(&TURNS, own);
}

/// Registers the fork handlers (see "Across fork"), once per process. Call it before your
/// own [`run`] starts; [`spawn_driver`] calls it.
///
/// # Panics
///
/// If the system cannot register them (out of memory).
pub fn handle_forks() {
    #[cfg(all(target_os = "linux", not(miri)))]
    {
        // A registration that panicked leaves the cell empty: the next call tries again.
        static REGISTERED: std::sync::OnceLock<()> = std::sync::OnceLock::new();
        REGISTERED.get_or_init(|| {
            // SAFETY: three `extern "C" fn()`s that cannot unwind (atomics, a thread-local
            // `Cell` and `sched_yield` only) and stay valid for the life of the process.
            let rc = unsafe {
                libc::pthread_atfork(
                    Some(before_fork),
                    Some(after_fork_in_parent),
                    Some(after_fork_in_child),
                )
            };
            assert_eq!(
                rc,
                0,
                "punctual: could not register the fork handlers of the timer thread: {}",
                std::io::Error::from_raw_os_error(rc)
            );
        });
    }
}

/// A wheel as a timer thread drives it ([`run`]).
pub trait Driven {
    /// The wheel's clock.
    type Clock: Clock + 'static;
    /// The wheel's storage.
    type Storage: Storage + 'static;
    /// The wheel.
    fn wheel(&self) -> &'static Wheel<Self::Clock, Self::Storage>;
    /// The thread's place on the wheel (`Wheel::driver_slot`).
    fn slot(&mut self) -> &mut DriverSlot<'static, Self::Clock, Self::Storage>;
    /// When to turn again, given the turn's answer.
    fn next_turn(&self, next: Reading) -> Reading {
        next
    }
    /// Called after each turn: whether the thread is done with the wheel (it is then
    /// dropped). A wheel driven for life answers `false`.
    fn finished(&mut self) -> bool {
        false
    }
}

struct ForLife<C: Clock + 'static, S: Storage + 'static> {
    wheel: &'static Wheel<C, S>,
    slot: DriverSlot<'static, C, S>,
}

impl<C: Clock, S: Storage> Driven for ForLife<C, S> {
    type Clock = C;
    type Storage = S;

    fn wheel(&self) -> &'static Wheel<C, S> {
        self.wheel
    }

    fn slot(&mut self) -> &mut DriverSlot<'static, C, S> {
        &mut self.slot
    }
}

/// Drives wheels on the current thread, forever: the ones `take_in` adds before each
/// round, until each is finished, sleeping at most `max_sleep` while anything is armed.
pub fn run<D: Driven>(mut take_in: impl FnMut(&mut Vec<D>), max_sleep: Duration) -> ! {
    tighten_timer_slack();
    let unpark = Arc::new(Unpark {
        thread: thread::current(),
        woken: AtomicBool::new(false),
    });
    let waker = Waker::from(Arc::clone(&unpark));
    let mut driving: Vec<D> = Vec::new();
    let mut early = WakeEarly::default();
    loop {
        take_in(&mut driving);
        // Cleared before the turns: a later wake may be for an arm they missed, and ends
        // the spin below (the unpark token is what no wake can lose).
        unpark.woken.store(false, Ordering::Relaxed);
        // The wheel to turn first, its reading and wait (only waits compare across clocks).
        let mut first: Option<(&Wheel<_, _>, Duration, Duration)> = None;
        driving.retain_mut(|wheel| {
            let has_place = wheel.slot().register(&waker);
            let turned = {
                let _turning = Turning::enter();
                panic::catch_unwind(AssertUnwindSafe(|| wheel.slot().turn()))
            };
            if wheel.finished() {
                return false;
            }
            // A waker panicked: turn again at once for the remaining wakes.
            let mut next = wheel
                .next_turn(turned.unwrap_or(Reading::ZERO))
                .as_duration();
            let now = wheel.wheel().clock().now();
            if !has_place {
                // Nothing unparks us for this wheel: turn again within a tick.
                next = next.min(now.saturating_add(wheel.wheel().tick()));
            }
            if next != Reading::END.as_duration() {
                // See `BOOT_MAX_SLEEP`.
                next = next.min(now.saturating_add(max_sleep));
                let until = next.saturating_sub(now);
                if first.is_none_or(|(_, _, soonest)| until < soonest) {
                    first = Some((wheel.wheel(), next, until));
                }
            }
            true
        });
        let Some((wheel, next, _)) = first else {
            // Idle: nothing armed. The next arm unparks us.
            thread::park();
            continue;
        };
        let now = wheel.clock().now();
        let Some(wait) = early.plan(now, next, wheel.tick()) else {
            continue;
        };
        if !wait.sleep.is_zero() {
            thread::park_timeout(wait.sleep);
            // Ended early (unparked, spurious, or a slow clock): turn now.
            if !early.slept(now.saturating_add(wait.sleep), wheel.clock().now()) {
                continue;
            }
        }
        if !wait.spin.is_zero() {
            spin_until(wheel.clock(), next, &unpark.woken, wait.spin);
        }
    }
}

/// Starts a thread that drives `wheel` for the rest of the process (see the crate docs for
/// its rules and the crate example).
///
/// # Panics
///
/// If the operating system refuses to start a thread, or (the first time, on Linux) to
/// register the fork handlers.
pub fn spawn_driver<C: Clock + 'static, S: Storage + 'static>(
    wheel: &'static Wheel<C, S>,
) -> JoinHandle<()> {
    handle_forks();
    let boot = core::any::TypeId::of::<C>() == core::any::TypeId::of::<punctual_core::BootClock>();
    let max_sleep = if boot { BOOT_MAX_SLEEP } else { Duration::MAX };
    spawn_named(wheel, "punctual-driver", max_sleep)
}

/// Starts a thread named `name` that drives `wheel`, sleeping at most `max_sleep` at a
/// time while anything is armed (`Duration::MAX`: no bound). Register the fork handlers
/// first ([`handle_forks`]).
///
/// # Panics
///
/// If the operating system refuses to start a thread.
pub fn spawn_named<C: Clock + 'static, S: Storage + 'static>(
    wheel: &'static Wheel<C, S>,
    name: &str,
    max_sleep: Duration,
) -> JoinHandle<()> {
    thread::Builder::new()
        .name(name.into())
        .spawn(move || {
            // A waker place of its own: other drivers of the wheel keep theirs.
            let slot = wheel.driver_slot();
            let mut once = Some(ForLife { wheel, slot });
            run(|driving| driving.extend(once.take()), max_sleep)
        })
        .unwrap_or_else(|err| panic!("punctual: could not start the timer thread: {err}"))
}

#[cfg(test)]
mod tests {
    use super::*;
    use core::time::Duration;

    #[test]
    fn a_wake_ends_a_spin_and_unparks_the_thread() {
        let unpark = Arc::new(Unpark {
            thread: thread::current(),
            woken: AtomicBool::new(false),
        });
        let waker = Waker::from(Arc::clone(&unpark));
        waker.wake_by_ref();
        assert!(unpark.woken.load(Ordering::Relaxed), "the spin would go on");
        // The unpark token is set: this park returns at once (a minute would fail the
        // test by its time, not hang it).
        let started = std::time::Instant::now();
        thread::park_timeout(Duration::from_secs(60));
        assert!(started.elapsed() < Duration::from_secs(30), "not unparked");
        unpark.woken.store(false, Ordering::Relaxed);
        waker.wake();
        assert!(unpark.woken.load(Ordering::Relaxed), "wake by value");
    }
}
