//! The global wheel on every target but the web, driven by a timer thread that the first
//! reading of its clock starts and that lives as long as the process.
//! * The clock is [`StdClock`], or [`BootClock`] if [`GlobalClock::select`] chose it first;
//!   settled for good by the first reading. Each reading loads the state word once.
//! * Instants are readings of [`std_clock`]; [`reading_at`] carries them to `BootClock`.
//! * A forked child has no timer thread: the fork handler clears `RUNNING` there, so its
//!   first reading starts one. Entries armed before a fork fire in both processes.

use core::sync::atomic::{AtomicU32, Ordering};
use core::time::Duration;
use std::sync::OnceLock;
pub(crate) use std::time::Instant;

use punctual_core::{BootClock, Clock, Growable, Reading, StdClock, Wheel};

use super::state::{self, BOOT, RUNNING, STARTING, STD, Start};

const TICK: Duration = Duration::from_millis(1);

// SAFETY: a static stays at its address for the rest of the process. Its tasks are polled
// on other threads than the timer thread's: batched wakes.
pub(super) static GLOBAL: Wheel<GlobalClock, Growable> = unsafe {
    Wheel::growable(GlobalClock, TICK)
        .with_batched_wakes()
        .with_thread_spares()
};
/// The state word: see [`state`].
static STATE: AtomicU32 = AtomicU32::new(0);
/// The clocks behind [`GlobalClock`], made at their first reading.
static CLOCK: OnceLock<StdClock> = OnceLock::new();
static BOOT_CLOCK: OnceLock<BootClock> = OnceLock::new();

/// The clock of the global wheel: a [`StdClock`] from an hour before its first reading, or
/// a [`BootClock`] (which counts suspended time) if [`select`](GlobalClock::select)ed
/// first. Reading it starts this process's timer thread if none runs.
///
/// # Panics
///
/// A reading panics if the system refuses to start the timer thread; the next tries again.
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

/// [`GlobalClock::select`] came too late: the global wheel already counts on the other clock.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct GlobalClockInUse {
    /// The clock the global wheel counts on, for the rest of the process.
    pub in_use: GlobalClockKind,
}

impl core::fmt::Display for GlobalClockInUse {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        let in_use = self.in_use;
        write!(
            f,
            "the global wheel's clock is already in use, on {in_use:?}"
        )
    }
}

impl std::error::Error for GlobalClockInUse {}

impl GlobalClock {
    /// The reading of `instant` on this clock; zero before the clock's origin. On
    /// [`BootClock`], the reading by which the time from now to `instant` will have passed,
    /// suspends included.
    pub fn reading_of(instant: Instant) -> Reading {
        reading_at(std_clock().reading_of(instant))
    }

    /// Chooses the global wheel's clock (not a runtime's or a paused thread's), first thing
    /// in `main`: the first default deadline inside a multi-thread runtime settles it too.
    ///
    /// ```
    /// use punctual::wheel::{GlobalClock, GlobalClockKind};
    ///
    /// GlobalClock::select(GlobalClockKind::Boot).expect("nothing read the global clock yet");
    /// assert_eq!(GlobalClock::kind(), GlobalClockKind::Boot);
    /// // Chosen for good: asking again for the same clock is fine, for another is not.
    /// assert!(GlobalClock::select(GlobalClockKind::Boot).is_ok());
    /// assert!(GlobalClock::select(GlobalClockKind::Std).is_err());
    /// ```
    ///
    /// # Errors
    ///
    /// [`GlobalClockInUse`] if the other clock was selected or read already (by a deadline
    /// on the global wheel, or by [`reading_of`](Self::reading_of)). The wheel keeps it.
    pub fn select(kind: GlobalClockKind) -> Result<(), GlobalClockInUse> {
        let bit = match kind {
            GlobalClockKind::Std => STD,
            GlobalClockKind::Boot => BOOT,
        };
        if state::select(&STATE, bit) == bit {
            return Ok(());
        }
        Err(GlobalClockInUse {
            in_use: Self::kind(),
        })
    }

    /// The clock the global wheel counts on: the one [`select`](Self::select)ed, or
    /// [`StdClock`]. Asking chooses nothing.
    pub fn kind() -> GlobalClockKind {
        if STATE.load(Ordering::Acquire) & BOOT != 0 {
            GlobalClockKind::Boot
        } else {
            GlobalClockKind::Std
        }
    }
}

/// The `StdClock` behind [`GlobalClock`], read without starting the timer thread: every
/// default wheel takes instants as its readings. Backdated an hour, so that instants from
/// shortly before (a paused tokio runtime's start) do not all read zero.
pub(crate) fn std_clock() -> &'static StdClock {
    CLOCK.get_or_init(|| StdClock::backdated(Duration::from_secs(3600)))
}

fn boot_clock() -> &'static BootClock {
    BOOT_CLOCK.get_or_init(BootClock::new)
}

/// Whether the global wheel reads [`std_clock`]. Settles the clock, as a first reading does.
#[cfg(feature = "tokio")]
pub(crate) fn reads_std_clock() -> bool {
    state::select(&STATE, STD) == STD
}

/// `at`, a reading of [`std_clock`], on the global wheel's clock: on `BootClock`, the boot
/// reading now plus the time from the std reading now to `at`, so a suspend counts.
pub(crate) fn reading_at(at: Reading) -> Reading {
    shift(at, true)
}

/// The inverse of [`reading_at`], for an instant that moves to another default wheel (a
/// carried budget's end).
pub(crate) fn std_reading(at: Reading) -> Reading {
    shift(at, false)
}

/// `at` moved by the boot clock's lead on the std clock, forward `to_boot`, else back.
/// Std is read first: a reading moved to boot is never early, and one moved back never
/// late (a carried budget never gets longer).
fn shift(at: Reading, to_boot: bool) -> Reading {
    if at == Reading::END || state::select(&STATE, STD) != BOOT {
        return at;
    }
    let std_now = std_clock().now();
    let boot_now = boot_clock().now();
    let lead = boot_now.abs_diff(std_now);
    if (boot_now >= std_now) == to_boot {
        at.checked_add(lead).unwrap_or(Reading::END)
    } else {
        Reading::since_origin(at.as_duration().saturating_sub(lead))
    }
}

/// The fork handler in a child (async-signal-safe: one atomic read-modify-write).
#[cfg(all(target_os = "linux", not(miri)))]
extern "C" fn forget_timer_thread() {
    state::forget_timer_thread(&STATE);
}

/// Registers the fork handlers, once per process, before the timer thread starts.
///
/// # Panics
///
/// If the system cannot register them (out of memory).
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
            // Sleeps stop during a suspend: on `BootClock`, look at the clock regularly.
            let max_sleep = if claimed & BOOT != 0 {
                punctual_thread::BOOT_MAX_SLEEP
            } else {
                Duration::MAX
            };
            punctual_thread::spawn_named(&GLOBAL, "punctual-timer", max_sleep);
            core::mem::forget(unclaim);
            state::started(&STATE)
        }
    }
}

impl Clock for GlobalClock {
    #[inline]
    fn now(&self) -> Duration {
        let mut state = STATE.load(Ordering::Acquire);
        if state & (RUNNING | STARTING) != RUNNING {
            // Not started in this process, or being started. A failed start panics here.
            state = start_timer_thread();
        }
        if state & BOOT != 0 {
            boot_clock().now()
        } else {
            std_clock().now()
        }
    }
}
