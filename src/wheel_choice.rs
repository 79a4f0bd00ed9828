//! [`WheelChoice`]: a wheel a default deadline may choose, as `DefaultWheel` holds it; and
//! how per-thread ones (a tokio runtime thread's, a paused thread's) are shelved
//! ([`Shelf`]).
//! * A per-thread wheel is leaked: deadlines may outlive its thread. Let go, it goes on a
//!   shelf; a claim takes a shelved wheel that starts over (none still armed) first.
//! * So a process holds as many of them as it used at once: one per paused thread, and
//!   one per thread and live runtime it started default deadlines in.

use core::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Mutex, MutexGuard};

use punctual_core::{RawWheel, Reading};

/// A wheel a default deadline may choose (the global wheel, a tokio runtime's or a paused
/// thread's), with how its clock reads the global clock's readings.
pub(crate) struct WheelChoice {
    pub(crate) wheel: &'static dyn RawWheel,
    /// A runtime's clock, which reads behind the global clock by a fraction of a tick.
    /// `None` when the wheel reads the global clock's readings.
    #[cfg(feature = "tokio")]
    pub(crate) runtime_clock: Option<&'static crate::tokio_wheels::runtime_clock::RuntimeClock>,
    /// The wheel's clock reads what the global wheel's reads, at every moment. Budgets
    /// started on either then apply on the other.
    pub(crate) on_global_timeline: bool,
}

impl WheelChoice {
    /// `at`, a reading of the global clock, as a reading of this wheel's clock.
    #[inline]
    pub(crate) fn reading_at(&self, at: Reading) -> Reading {
        #[cfg(feature = "tokio")]
        if let Some(clock) = self.runtime_clock {
            if at != Reading::END {
                return at - clock.behind();
            }
        }
        at
    }
}

/// Per-thread wheels let go, for the next claim (a lock: a claim is rare, once per thread
/// and runtime), and how many were ever made.
pub(crate) struct Shelf<T: 'static> {
    wheels: Mutex<Vec<&'static T>>,
    made: AtomicUsize,
}

impl<T> Shelf<T> {
    pub(crate) const fn new() -> Self {
        Self {
            wheels: Mutex::new(Vec::new()),
            made: AtomicUsize::new(0),
        }
    }

    fn wheels(&self) -> MutexGuard<'_, Vec<&'static T>> {
        self.wheels.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// A shelved wheel that `restart` starts over, else a new one from `make`.
    pub(crate) fn claim(
        &self,
        restart: impl Fn(&T) -> bool,
        make: impl FnOnce() -> &'static T,
    ) -> &'static T {
        let mut wheels = self.wheels();
        // One that cannot start over yet (an entry still held) stays for a later claim.
        if let Some(at) = wheels.iter().rposition(|wheel| restart(wheel)) {
            return wheels.swap_remove(at);
        }
        drop(wheels);
        self.made.fetch_add(1, Ordering::Relaxed);
        make()
    }

    /// Puts a wheel let go on the shelf.
    pub(crate) fn put(&self, wheel: &'static T) {
        self.wheels().push(wheel);
    }

    /// How many wheels were ever made: the most in use at once.
    pub(crate) fn made(&self) -> usize {
        self.made.load(Ordering::Relaxed)
    }
}
