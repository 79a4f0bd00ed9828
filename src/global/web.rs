//! The global wheel on `wasm32-unknown-unknown`, on the host's timers: `thread.rs`'s items
//! but `GlobalClock::select`.
//! * The first reading of the clock spawns the driver task (`punctual_wasm::spawn_driver`),
//!   which lives as long as the program.
//! * One clock ([`HostClock`]) and no other default wheel: instants (`web_time::Instant`)
//!   read the same everywhere.

use core::sync::atomic::{AtomicBool, Ordering};
use core::time::Duration;

use punctual_core::{Clock, Growable, Reading, Wheel};
use punctual_wasm::HostClock;
pub(crate) use web_time::Instant;

const TICK: Duration = Duration::from_millis(1);

// SAFETY: a static stays at its address for the rest of the program. No batched wakes:
// the driver and the tasks it wakes share the one thread.
pub(super) static GLOBAL: Wheel<GlobalClock, Growable> =
    unsafe { Wheel::growable(GlobalClock, TICK).with_thread_spares() };
/// Whether this program's driver task has been spawned.
static DRIVEN: AtomicBool = AtomicBool::new(false);

/// The clock of the global wheel: the host's monotonic clock ([`HostClock`],
/// `performance.now()`) from an hour before its first reading, which spawns the driver.
///
/// # Panics
///
/// A reading panics if the host has no global `performance` object.
#[derive(Debug, Clone, Copy, Default)]
pub struct GlobalClock;

impl GlobalClock {
    /// The reading of `instant` on this clock: exact, so a deadline at it never ends before
    /// `instant`. Zero for instants more than an hour before the clock's first reading.
    pub fn reading_of(instant: Instant) -> Reading {
        HostClock::new().reading_of(instant)
    }

    /// The instant at which this clock reads `reading` ([`HostClock::instant_of`]).
    pub fn instant_of(reading: Reading) -> Option<Instant> {
        HostClock::new().instant_of(reading)
    }
}

impl Clock for GlobalClock {
    #[inline]
    fn now(&self) -> Duration {
        // The driver task, spawned once per program.
        if !DRIVEN.load(Ordering::Acquire) && !DRIVEN.swap(true, Ordering::AcqRel) {
            punctual_wasm::spawn_driver(&GLOBAL);
        }
        HostClock::new().now()
    }
}

/// `at`, a reading of the instants' clock, on the global wheel's clock: the same one.
pub(crate) fn reading_at(at: Reading) -> Reading {
    at
}

/// `at`, a reading of the global wheel's clock, on the instants' clock: the same one.
pub(crate) fn std_reading(at: Reading) -> Reading {
    at
}
