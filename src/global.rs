//! The global wheel: what `fut.deadline(d)` uses when nothing was set up.
//!
//! A growable wheel with a 1 ms tick, on [`GlobalClock`] (`std::time::Instant`), driven by
//! one thread that starts the first time a deadline actually needs the wheel (a deadline
//! whose inner future is ready at its first poll never starts it). The thread sleeps until
//! the next expiration, not every tick (waking early by the oversleep it has measured, at
//! most 50 µs, and spinning the rest, so that a turn is not late by the system's wake-up
//! latency; see `wake_lead`), and lives as long as the process.

use core::time::Duration;
use std::sync::{Once, OnceLock};
use std::time::Instant;

use punctual_core::{Clock, Growable, StdClock, Wheel, WheelRef};

/// The global wheel's tick.
const TICK: Duration = Duration::from_millis(1);

static GLOBAL: Wheel<GlobalClock, Growable> = Wheel::growable(GlobalClock, TICK);
static DRIVER: Once = Once::new();
/// The clock behind [`GlobalClock`], made at its first reading.
static CLOCK: OnceLock<StdClock> = OnceLock::new();

/// The clock of the global wheel: a [`StdClock`] (`std::time::Instant`'s clock, on Linux
/// `CLOCK_MONOTONIC` read directly), counted from an hour before the first time any
/// deadline read it (or from as early as the system's clock allows, if later).
/// Reading it makes sure the global driver thread runs.
///
/// # Panics
///
/// A reading panics if the driver thread has not started yet and the operating system
/// refuses to start it ("could not start the timer thread", with the system's error): the
/// wheel's deadlines could never fire. The next reading tries to start it again.
#[derive(Debug, Clone, Copy, Default)]
pub struct GlobalClock;

impl GlobalClock {
    /// The reading of `instant` on this clock (zero for instants before its origin).
    pub fn reading_of(instant: Instant) -> Duration {
        std_clock().reading_of(instant).as_duration()
    }
}

/// The clock behind [`GlobalClock`], without starting the timer thread: the reference
/// every default wheel's readings are taken against, so that an instant is the same
/// reading on each of them.
///
/// Backdated by an hour ([`StdClock::backdated`]): a paused tokio runtime's virtual time
/// starts when the runtime was built, often before the first deadline made this clock, and
/// its instants must not all read zero.
pub(crate) fn std_clock() -> &'static StdClock {
    CLOCK.get_or_init(|| StdClock::backdated(BACKDATE))
}

/// How far before its first reading the global clock counts from (see [`std_clock`]).
const BACKDATE: Duration = Duration::from_secs(3600);

impl Clock for GlobalClock {
    fn now(&self) -> Duration {
        // `call_once_force`: if the operating system refuses the thread, the panic
        // ("could not start the timer thread") reaches this reader, and the next reading
        // tries again (a poisoned `call_once` would panic with a message that names no
        // cause, at every reading from then on).
        DRIVER.call_once_force(|_| {
            GLOBAL.enable_thread_spares();
            crate::thread_driver::spawn_named(&GLOBAL, "punctual-timer");
        });
        std_clock().now()
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
