//! What a wheel has done: counts kept by the driver, readable from any thread.
//!
//! * Only the driver writes the counters, by plain load and store, except
//!   `degraded_polls` (degraded path), `refused` and `overruns`.
//! * Without the `stats` feature the counters are not kept: [`Counters`] has no bytes, its
//!   counts do nothing, and `Wheel::stats` and `Wheel::degraded_polls` do not exist.

use core::fmt;

#[cfg(feature = "stats")]
use crate::sync::{AtomicUsize, Ordering};

/// A snapshot of a wheel's counters, from `Wheel::stats` (feature `stats`, on with `std`).
///
/// Counters wrap around at `usize::MAX`.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
#[non_exhaustive]
pub struct Stats {
    /// Deadlines the driver took in. One released before that (most short-lived ones)
    /// counts neither here nor in `cancelled`.
    pub armed: usize,
    /// Deadlines that fired.
    pub fired: usize,
    /// Deadlines released unfired after the driver took them in.
    pub cancelled: usize,
    /// How many whole ticks late deadlines fired, after their tick's boundary:
    /// `[0, 1, 2, 3 or more]`.
    pub lateness: [usize; 4],
    /// Polls that found the wheel full and fell back to checking the clock.
    pub degraded_polls: usize,
    /// Requests refused before any work, their deadline leaving too little time
    /// ([`RawWheel::count_refused`](crate::RawWheel::count_refused)).
    pub refused: usize,
    /// Fired deadlines seen by their task later than the overrun threshold
    /// ([`report_overruns`](crate::report_overruns)): tasks that do not yield. Zero with
    /// no threshold.
    pub overruns: usize,
    /// Entries ever handed out (taken in blocks per shard with `std`).
    pub high_water: usize,
    /// Entries in use now (armed, or released and not yet reclaimed).
    pub occupied: usize,
}

impl fmt::Display for Stats {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "armed {}, fired {}, cancelled {}, ",
            self.armed, self.fired, self.cancelled
        )?;
        let [l0, l1, l2, more] = self.lateness;
        write!(
            f,
            "lateness in ticks [0: {l0}, 1: {l1}, 2: {l2}, more: {more}], degraded polls {}, \
             refused {}, overruns {}, occupied {} (high water {})",
            self.degraded_polls, self.refused, self.overruns, self.occupied, self.high_water
        )
    }
}

/// The counters, indexed by the constants below; no bytes without `stats`.
pub(crate) struct Counters {
    #[cfg(feature = "stats")]
    counts: [AtomicUsize; COUNTS],
}

pub(crate) const ARMED: usize = 0;
pub(crate) const FIRED: usize = 1;
pub(crate) const CANCELLED: usize = 2;
/// The first of `Stats::lateness`'s four.
pub(crate) const LATENESS: usize = 3;
pub(crate) const DEGRADED_POLLS: usize = 7;
pub(crate) const REFUSED: usize = 8;
pub(crate) const OVERRUNS: usize = 9;
#[cfg(feature = "stats")]
const COUNTS: usize = 10;

impl Counters {
    crate::sync::const_fn! {
        pub(crate) fn new() -> Self {
            Self {
                #[cfg(feature = "stats")]
                counts: crate::sync::array_of![AtomicUsize::new(0); COUNTS],
            }
        }
    }

    /// Adds one to counter `k`: by plain load and store if only the driver writes it.
    #[inline(always)]
    pub(crate) fn bump(&self, k: usize, driver_only: bool) {
        #[cfg(feature = "stats")]
        if driver_only {
            let count = self.get(k);
            self.counts[k].store(count.wrapping_add(1), Ordering::Relaxed);
        } else {
            self.counts[k].fetch_add(1, Ordering::Relaxed);
        }
        #[cfg(not(feature = "stats"))]
        let _ = (k, driver_only);
    }

    #[cfg(feature = "stats")]
    pub(crate) fn get(&self, k: usize) -> usize {
        self.counts[k].load(Ordering::Relaxed)
    }

    #[cfg(feature = "stats")]
    pub(crate) fn snapshot(&self, high_water: usize, occupied: usize) -> Stats {
        Stats {
            armed: self.get(ARMED),
            fired: self.get(FIRED),
            cancelled: self.get(CANCELLED),
            lateness: core::array::from_fn(|late| self.get(LATENESS + late)),
            degraded_polls: self.get(DEGRADED_POLLS),
            refused: self.get(REFUSED),
            overruns: self.get(OVERRUNS),
            high_water,
            occupied,
        }
    }
}
