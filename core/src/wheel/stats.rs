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

#[cfg(feature = "stats")]
pub(crate) struct Counters {
    armed: AtomicUsize,
    fired: AtomicUsize,
    cancelled: AtomicUsize,
    lateness: [AtomicUsize; 4],
    pub(crate) degraded_polls: AtomicUsize,
    refused: AtomicUsize,
    overruns: AtomicUsize,
}

/// Adds one to a counter only the driver writes.
#[cfg(feature = "stats")]
#[inline]
fn bump(counter: &AtomicUsize) {
    counter.store(
        counter.load(Ordering::Relaxed).wrapping_add(1),
        Ordering::Relaxed,
    );
}

#[cfg(feature = "stats")]
impl Counters {
    crate::sync::const_fn! {
        pub(crate) fn new() -> Self {
            Self {
                armed: AtomicUsize::new(0),
                fired: AtomicUsize::new(0),
                cancelled: AtomicUsize::new(0),
                lateness: [
                    AtomicUsize::new(0),
                    AtomicUsize::new(0),
                    AtomicUsize::new(0),
                    AtomicUsize::new(0),
                ],
                degraded_polls: AtomicUsize::new(0),
                refused: AtomicUsize::new(0),
                overruns: AtomicUsize::new(0),
            }
        }
    }

    pub(crate) fn armed(&self) {
        bump(&self.armed);
    }

    pub(crate) fn fired(&self, late_ticks: u64) {
        bump(&self.fired);
        bump(&self.lateness[late_ticks.min(3) as usize]);
    }

    pub(crate) fn cancelled(&self) {
        bump(&self.cancelled);
    }

    pub(crate) fn degraded_poll(&self) {
        self.degraded_polls.fetch_add(1, Ordering::Relaxed);
    }

    /// Any thread may count a refusal.
    pub(crate) fn refused(&self) {
        self.refused.fetch_add(1, Ordering::Relaxed);
    }

    /// Any thread may count an overrun (the polling task's).
    pub(crate) fn overrun(&self) {
        self.overruns.fetch_add(1, Ordering::Relaxed);
    }

    pub(crate) fn snapshot(&self, high_water: usize, occupied: usize) -> Stats {
        let load = |c: &AtomicUsize| c.load(Ordering::Relaxed);
        Stats {
            armed: load(&self.armed),
            fired: load(&self.fired),
            cancelled: load(&self.cancelled),
            lateness: [
                load(&self.lateness[0]),
                load(&self.lateness[1]),
                load(&self.lateness[2]),
                load(&self.lateness[3]),
            ],
            degraded_polls: load(&self.degraded_polls),
            refused: load(&self.refused),
            overruns: load(&self.overruns),
            high_water,
            occupied,
        }
    }
}

/// Without `stats`: nothing kept, nothing counted.
#[cfg(not(feature = "stats"))]
pub(crate) struct Counters;

#[cfg(not(feature = "stats"))]
impl Counters {
    pub(crate) const fn new() -> Self {
        Self
    }

    #[inline(always)]
    pub(crate) fn armed(&self) {}

    #[inline(always)]
    pub(crate) fn fired(&self, _late_ticks: u64) {}

    #[inline(always)]
    pub(crate) fn cancelled(&self) {}

    #[inline(always)]
    pub(crate) fn degraded_poll(&self) {}

    #[inline(always)]
    pub(crate) fn refused(&self) {}

    #[inline(always)]
    pub(crate) fn overrun(&self) {}
}
