//! Driving a wheel from a plain thread: turn, sleep until shortly before the next turn,
//! spin the rest (see `wake_lead`), repeat.

use core::sync::atomic::{AtomicBool, Ordering};
use core::task::Waker;
use std::panic::{self, AssertUnwindSafe};
use std::sync::Arc;
use std::task::Wake;
use std::thread::{self, JoinHandle, Thread};

use punctual_core::{Clock, Reading, Storage, Wheel};

use crate::wake_lead::{WakeEarly, spin_until};

/// Wakes the driver thread: the wheel's way to say "turn sooner". `woken` ends a spin
/// before a planned turn (a thread that spins is not parked, so the unpark alone would
/// reach it only at its next park).
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

/// Asks Linux to wake this thread's timed sleeps on time: the default timer slack lets the
/// kernel delay them by up to 50 µs to batch wake-ups, which is half a tick of a 100 µs
/// wheel. Best effort: an error leaves the default.
fn tighten_timer_slack() {
    #[cfg(target_os = "linux")]
    // SAFETY: PR_SET_TIMERSLACK takes one integer argument and only changes a property of
    // the calling thread; it reads or writes no memory of ours.
    unsafe {
        libc::prctl(libc::PR_SET_TIMERSLACK, 1 as libc::c_ulong);
    }
}

/// Turns `wheel` on the current thread, forever.
fn run<C: Clock, S: Storage>(wheel: &Wheel<C, S>) -> ! {
    tighten_timer_slack();
    let unpark = Arc::new(Unpark {
        thread: thread::current(),
        woken: AtomicBool::new(false),
    });
    let waker = Waker::from(Arc::clone(&unpark));
    // A place of its own for the waker: other drivers of the same wheel (a second thread,
    // a runtime's task) keep theirs.
    let mut slot = wheel.driver_slot();
    let mut early = WakeEarly::default();
    loop {
        // Cleared before the turn: a wake from here on is for an arm this turn may not
        // have taken in, and ends the spin below. (It only ends a spin early; the unpark
        // token is what no wake can lose.)
        unpark.woken.store(false, Ordering::Relaxed);
        let has_place = slot.register(&waker);
        // A waker that panics must not stop the timer thread (every deadline on the wheel
        // depends on it): the hook has reported the panic, the wheel let go of its role and
        // keeps the remaining wakes for the next turn.
        let Ok(mut next) = panic::catch_unwind(AssertUnwindSafe(|| slot.turn())) else {
            continue;
        };
        if !has_place {
            // No place left for our waker (three other drivers hold theirs): nothing
            // unparks us, so turn again within a tick, and never park without a timeout.
            next = next.min(wheel.now() + wheel.tick());
        }
        if next == Reading::END {
            // Idle: nothing armed. The next arm unparks us.
            thread::park();
            continue;
        }
        let now = wheel.clock().now();
        let Some(wait) = early.plan(now, next.as_duration(), wheel.tick()) else {
            continue;
        };
        if !wait.sleep.is_zero() {
            thread::park_timeout(wait.sleep);
            // Ended early (unparked for an earlier deadline, a leftover unpark token, a
            // spurious return, or a clock that runs slower than the sleep): turn now.
            if !early.slept(now.saturating_add(wait.sleep), wheel.clock().now()) {
                continue;
            }
        }
        if !wait.spin.is_zero() {
            spin_until(wheel.clock(), next.as_duration(), &unpark.woken, wait.spin);
        }
    }
}

/// Starts a thread that drives `wheel` for the rest of the process: it sleeps until the
/// next expiration and is woken when an earlier deadline is armed.
///
/// So that deadlines fire on time rather than late by the operating system's wake-up
/// latency, the thread asks to wake a little before each planned turn, by the oversleep it
/// has measured (at most 50 µs, and at most half a tick), and spins until the turn: on a
/// clock that keeps real time, about that long per planned turn, and never more than
/// twice that, once per planned turn. It fires nothing early: the turn reads the clock.
///
/// ```
/// use std::time::Duration;
/// use punctual::{DeadlineExt, Growable, StdClock, Wheel};
///
/// static WHEEL: std::sync::LazyLock<Wheel<StdClock, Growable>> =
///     std::sync::LazyLock::new(|| Wheel::growable(StdClock::new(), Duration::from_micros(100)));
/// punctual::spawn_driver(&WHEEL);
/// # futures_executor::block_on(async {
/// let r = std::future::pending::<()>().deadline_on(&*WHEEL, Duration::from_millis(2)).await;
/// assert!(r.is_err());
/// # });
/// ```
///
/// # Panics
///
/// If the operating system refuses to start a thread.
pub fn spawn_driver<C: Clock + 'static, S: Storage + 'static>(
    wheel: &'static Wheel<C, S>,
) -> JoinHandle<()> {
    spawn_named(wheel, "punctual-driver")
}

pub(crate) fn spawn_named<C: Clock + 'static, S: Storage + 'static>(
    wheel: &'static Wheel<C, S>,
    name: &str,
) -> JoinHandle<()> {
    thread::Builder::new()
        .name(name.into())
        .spawn(move || run(wheel))
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
