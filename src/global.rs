//! The global wheel: what `fut.deadline(d)` uses when nothing was set up.
//!
//! A growable wheel with a 1 ms tick, on [`GlobalClock`], driven by one thread that starts
//! the first time a deadline actually needs the wheel (a deadline whose inner future is
//! ready at its first poll never starts it). The thread sleeps until the next expiration,
//! not every tick (waking early by the oversleep it has measured, at most 50 µs, and
//! spinning the rest, so that a turn is not late by the system's wake-up latency; see
//! `punctual_thread`), and lives as long as the process.
//!
//! # The clock
//!
//! [`StdClock`] (`CLOCK_MONOTONIC` on Linux), unless [`GlobalClock::select`] chose
//! [`BootClock`] (`CLOCK_BOOTTIME`, which counts suspended time) before the clock's first
//! reading. The choice is made once and kept: a wheel whose clock changed under it could
//! fire early.
//!
//! Default deadlines take instants (`deadline_at`, `sleep_until`) as readings of
//! [`std_clock`], the one reference of every default wheel; on a global wheel counting on
//! `BootClock`, [`reading_at`] carries them over (see there).
//!
//! # Across fork
//!
//! A child process has only the thread that forked: no timer thread, though its copy of
//! the wheel still looks driven. So the state word below has a bit for "the timer thread
//! was started in this process", which a fork handler of this module clears in the
//! child; the child's first reading then starts a thread of its own. The timer threads'
//! handlers (`punctual_thread`, "Across fork") keep a fork from copying a wheel in the
//! middle of a turn.
//! Entries armed before the fork stay armed in both copies of the wheel and fire in each
//! at their time, on that process's timer thread.
//!
//! # State
//!
//! One word, read once by every reading of the clock: whether the timer thread runs
//! (`RUNNING`) or is being started (`STARTING`), and which clock was chosen (`STD` or
//! `BOOT`; at most one, set once, never cleared). `RUNNING` is set only with a clock
//! chosen, so a reading that finds `RUNNING` alone needs nothing more. Its transitions
//! are in [`state`], with their loom models.

mod state;

use core::sync::atomic::{AtomicU32, Ordering};
use core::time::Duration;
use std::sync::OnceLock;
use std::time::Instant;

use punctual_core::{BootClock, Clock, ClockInstant, Growable, Reading, StdClock, Wheel, WheelRef};

/// The global wheel's tick.
const TICK: Duration = Duration::from_millis(1);

// SAFETY: a static stays at its address for the rest of the process. Its tasks are polled
// on other threads than the timer thread's: batched wakes.
static GLOBAL: Wheel<GlobalClock, Growable> = unsafe {
    Wheel::growable(GlobalClock, TICK)
        .with_batched_wakes()
        .with_thread_spares()
};
/// See the module docs, "State", and [`state`].
static STATE: AtomicU32 = AtomicU32::new(0);
use state::{BOOT, RUNNING, STARTING, STD, Start};
/// The clock behind [`GlobalClock`] on `StdClock`, made at its first reading.
static CLOCK: OnceLock<StdClock> = OnceLock::new();
/// The clock behind [`GlobalClock`] on `BootClock`, made at its first reading.
static BOOT_CLOCK: OnceLock<BootClock> = OnceLock::new();

/// The clock of the global wheel: a [`StdClock`] (`std::time::Instant`'s clock, on Linux
/// `CLOCK_MONOTONIC` read directly), counted from an hour before the first time any
/// deadline read it (or from as early as the system's clock allows, if later); or a
/// [`BootClock`], which counts suspended time, if [`select`](GlobalClock::select)ed
/// before the first reading.
/// Reading it makes sure the global driver thread runs, in a process forked from one that
/// had it too.
///
/// # Panics
///
/// A reading panics if the driver thread has not started yet and the operating system
/// refuses to start it ("could not start the timer thread", with the system's error): the
/// wheel's deadlines could never fire. The next reading tries to start it again.
#[derive(Debug, Clone, Copy, Default)]
pub struct GlobalClock;

/// Which clock the global wheel counts time on (see [`GlobalClock::select`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
#[non_exhaustive]
pub enum GlobalClockKind {
    /// [`StdClock`]: stops while the system is suspended (on Linux). The default.
    #[default]
    Std,
    /// [`BootClock`]: goes on while the system is suspended (on Linux).
    Boot,
}

/// The global wheel's clock was already in use, on another clock than the one asked
/// for: [`GlobalClock::select`] came too late.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct GlobalClockInUse {
    /// The clock the global wheel counts on, for the rest of the process.
    pub in_use: GlobalClockKind,
}

impl core::fmt::Display for GlobalClockInUse {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        write!(
            f,
            "the global wheel's clock is already in use, on {:?}",
            self.in_use
        )
    }
}

impl std::error::Error for GlobalClockInUse {}

impl GlobalClock {
    /// The reading of `instant` on this clock (zero for instants before its origin). On
    /// [`BootClock`], which `Instant`s do not count on, the reading by which as much time
    /// will have passed, suspends included, as lies between now and `instant`: so do
    /// default deadlines given an instant (`deadline_at`, `sleep_until`) end there.
    pub fn reading_of(instant: Instant) -> Reading {
        reading_at(std_clock().reading_of(instant))
    }

    /// Chooses the clock of the global wheel, before anything read it: [`BootClock`] to
    /// have its deadlines count the time the system spends suspended (see `BootClock`
    /// for when to choose which). Call it first thing in `main`.
    ///
    /// The choice applies to the global wheel only: default deadlines started inside a
    /// tokio runtime (feature `tokio`) run on that runtime's clock, which stops during a
    /// suspend, and a thread that paused virtual time (`test-util`) keeps its own. The
    /// first default deadline started inside a multi-thread tokio runtime counts as a use:
    /// budgets carry over between its workers' wheels and the global wheel when they all
    /// read `StdClock`, so it settles the choice.
    ///
    /// ```
    /// use std::time::Duration;
    /// use punctual::{DeadlineExt, GlobalClock, GlobalClockKind};
    ///
    /// GlobalClock::select(GlobalClockKind::Boot).expect("nothing read the global clock yet");
    /// assert_eq!(GlobalClock::kind(), GlobalClockKind::Boot);
    /// # futures_executor::block_on(async {
    /// let r = std::future::pending::<()>().deadline(Duration::from_millis(5)).await;
    /// assert!(r.is_err());
    /// # });
    /// // Chosen for good: asking again for the same clock is fine, for another is not.
    /// assert!(GlobalClock::select(GlobalClockKind::Boot).is_ok());
    /// assert!(GlobalClock::select(GlobalClockKind::Std).is_err());
    /// ```
    ///
    /// # Errors
    ///
    /// [`GlobalClockInUse`] if the clock was read before (a deadline on the global wheel
    /// started, or [`reading_of`](Self::reading_of) was called) on the other clock, or
    /// the other one was selected: the wheel keeps the clock it has.
    pub fn select(kind: GlobalClockKind) -> Result<(), GlobalClockInUse> {
        let bit = match kind {
            GlobalClockKind::Std => STD,
            GlobalClockKind::Boot => BOOT,
        };
        state::select(&STATE, bit);
        let in_use = Self::kind();
        if in_use == kind {
            Ok(())
        } else {
            Err(GlobalClockInUse { in_use })
        }
    }

    /// The clock the global wheel counts on: the one [`select`](Self::select)ed, or
    /// [`StdClock`] (which nothing can change once the clock has been read). Reading this
    /// chooses nothing.
    pub fn kind() -> GlobalClockKind {
        if STATE.load(Ordering::Acquire) & BOOT != 0 {
            GlobalClockKind::Boot
        } else {
            GlobalClockKind::Std
        }
    }
}

/// The clock behind [`GlobalClock`] on `StdClock`, without starting the timer thread:
/// the reference every default wheel's readings are taken against, so that an instant is
/// the same reading on each of them (the global wheel on `BootClock` carries them over:
/// [`reading_at`]).
///
/// Backdated by an hour ([`StdClock::backdated`]): a paused tokio runtime's virtual time
/// starts when the runtime was built, often before the first deadline made this clock, and
/// its instants must not all read zero.
pub(crate) fn std_clock() -> &'static StdClock {
    CLOCK.get_or_init(|| StdClock::backdated(BACKDATE))
}

/// The clock behind [`GlobalClock`] on `BootClock`.
fn boot_clock() -> &'static BootClock {
    BOOT_CLOCK.get_or_init(BootClock::new)
}

/// How far before its first reading the global clock counts from (see [`std_clock`]).
const BACKDATE: Duration = Duration::from_secs(3600);

/// Whether the global wheel reads [`std_clock`] (settling it if no clock was selected
/// yet, as a first reading would).
#[cfg(feature = "tokio")]
pub(crate) fn reads_std_clock() -> bool {
    chosen() == STD
}

/// The chosen clock's bit (`STD` or `BOOT`), choosing `StdClock` if nothing was chosen:
/// the clock is in use from here on.
fn chosen() -> u32 {
    state::chosen(&STATE)
}

/// `at`, a reading of [`std_clock`] (the instants default deadlines are given), as a
/// reading of the global wheel's clock: `at` itself on `StdClock`.
///
/// On `BootClock`, the two clocks differ by the time the system spent suspended since
/// they were made, which only grows. `at` becomes the boot reading now plus the time from
/// the std reading now to `at` (both read now, std first: the difference taken is then at
/// least the true one, so the result never comes before `at` would without a suspend).
/// A suspend before the deadline then counts towards it, as on the clock it runs on.
pub(crate) fn reading_at(at: Reading) -> Reading {
    if at == Reading::END || chosen() != BOOT {
        return at;
    }
    let std_now = std_clock().now();
    let boot_now = boot_clock().now();
    if boot_now >= std_now {
        at.checked_add(boot_now - std_now).unwrap_or(Reading::END)
    } else {
        Reading::since_origin(at.as_duration().saturating_sub(std_now - boot_now))
    }
}

/// In a child process, from the fork handler: the timer thread, and any start of it in
/// progress, stayed in the parent. Async-signal-safe: one atomic read-modify-write.
#[cfg(all(target_os = "linux", not(miri)))]
extern "C" fn forget_timer_thread() {
    state::forget_timer_thread(&STATE);
}

/// Registers [`forget_timer_thread`] to run in every child process, once per process:
/// before the timer thread starts.
///
/// # Panics
///
/// If the system cannot register it (out of memory).
fn handle_forks() {
    punctual_thread::handle_forks();
    #[cfg(all(target_os = "linux", not(miri)))]
    {
        static REGISTERED: std::sync::Once = std::sync::Once::new();
        REGISTERED.call_once(|| {
            // SAFETY: an `extern "C" fn()` that cannot unwind (one atomic operation) and
            // stays valid for the life of the process.
            let rc = unsafe { libc::pthread_atfork(None, None, Some(forget_timer_thread)) };
            assert_eq!(
                rc,
                0,
                "punctual: could not register the fork handler of the global wheel: {}",
                std::io::Error::from_raw_os_error(rc)
            );
        });
    }
}

/// How long the timer thread sleeps at most: on `BootClock`, the thread's sleeps stop
/// during a suspend, so it looks at the clock every second (see `BootClock`).
fn max_sleep(state: u32) -> Duration {
    if state & BOOT != 0 {
        punctual_thread::BOOT_MAX_SLEEP
    } else {
        Duration::MAX
    }
}

/// Starts this process's timer thread, or waits for the start another thread is making.
/// Returns the state with `RUNNING` set.
#[cold]
#[inline(never)]
fn start_timer_thread() -> u32 {
    /// Gives the claim up if the start panics: the next reading tries again.
    struct Unclaim;
    impl Drop for Unclaim {
        fn drop(&mut self) {
            state::abandon_start(&STATE);
        }
    }
    match state::claim_start(&STATE) {
        Start::Running(state) => state,
        Start::Claimed(claimed) => {
            let unclaim = Unclaim;
            // Before the thread exists: a fork from here on finds the handlers in place.
            handle_forks();
            punctual_thread::spawn_named(&GLOBAL, "punctual-timer", max_sleep(claimed));
            core::mem::forget(unclaim);
            state::started(&STATE)
        }
    }
}

impl ClockInstant<GlobalClock> for Instant {
    #[inline]
    fn reading_on(self, _: &GlobalClock) -> Reading {
        GlobalClock::reading_of(self)
    }
}

impl Clock for GlobalClock {
    #[inline]
    fn now(&self) -> Duration {
        let mut state = STATE.load(Ordering::Acquire);
        if state & (RUNNING | STARTING) != RUNNING {
            // Not started in this process yet (never, or not since a fork), or being
            // started. A start that fails panics here ("could not start the timer
            // thread") and the next reading tries again.
            state = start_timer_thread();
        }
        if state & BOOT != 0 {
            boot_clock().now()
        } else {
            std_clock().now()
        }
    }
}

/// The global wheel, for diagnostics ([`Wheel::occupied`]) and for
/// [`Deadline::new`](punctual_core::Deadline::new) with an explicit
/// [`Limit`](punctual_core::Limit).
pub fn global_wheel() -> &'static Wheel<GlobalClock, Growable> {
    &GLOBAL
}

/// [`global_wheel`], in a `const` context.
#[cfg(any(feature = "tokio", feature = "test-util"))]
pub(crate) const fn global_wheel_static() -> &'static Wheel<GlobalClock, Growable> {
    &GLOBAL
}

/// The global wheel as a deadline holds it: zero bytes, and calls that go straight to
/// the wheel (no `dyn` indirection), since the wheel is a `static`. Default deadlines
/// reach it through [`Ambient`](crate::Ambient), which picks a runtime's wheel instead
/// where one applies; `Global` always means this one.
#[derive(Debug, Clone, Copy, Default)]
pub struct Global;

// SAFETY: always the one `static` wheel.
unsafe impl WheelRef for Global {
    type Target = Wheel<GlobalClock, Growable>;

    #[inline]
    fn get(&self) -> &Self::Target {
        &GLOBAL
    }
}
