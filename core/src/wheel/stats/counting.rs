//! The counters, kept (`stats`): atomics the driver bumps, any thread reads.

use super::Stats;
use crate::sync::{AtomicUsize, Ordering};

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
#[inline]
fn bump(counter: &AtomicUsize) {
    counter.store(
        counter.load(Ordering::Relaxed).wrapping_add(1),
        Ordering::Relaxed,
    );
}

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
