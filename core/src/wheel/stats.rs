//! What a wheel has done: counts kept by the driver, readable from any thread.
//!
//! * Only the driver role's holder writes the counters, with a plain load and store (no
//!   read-modify-write). So they cost the arm and cancel paths nothing.
//! * Two are exceptions. `degraded_polls` is counted on the degraded path, slow anyway.
//! * `ready_without_arming` is counted only with the `count-ready` feature, since it puts
//!   a shared atomic on a ready future's fast path.

use core::fmt;

use crate::sync::{AtomicUsize, Ordering};

/// A snapshot of a wheel's counters, from [`Wheel::stats`](crate::Wheel::stats).
///
/// Counters wrap around at `usize::MAX`.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
#[non_exhaustive]
pub struct Stats {
    /// Deadlines the driver took in from the arm inbox. A deadline released before any
    /// turn took it in (most short-lived ones) is taken back by its own thread and counted
    /// neither here nor in `cancelled`: counting it would put a shared atomic on the arm
    /// path.
    pub armed: usize,
    /// Deadlines that fired.
    pub fired: usize,
    /// Deadlines released before they fired (completed or dropped) after the driver took
    /// them in, reclaimed by the driver.
    pub cancelled: usize,
    /// Deadlines whose inner future was ready at its first poll, so nothing was armed.
    /// Counted only with the `count-ready` feature (it would add a shared atomic to the
    /// fast path); `None` without it.
    pub ready_without_arming: Option<usize>,
    /// How late deadlines fired, in whole ticks after the tick of their deadline (the first
    /// tick boundary at or after it) as the driver saw it: `[0, 1, 2, 3 or more]`. A
    /// deadline fired at its own time, before that boundary, counts as 0.
    pub lateness: [usize; 4],
    /// Polls that found the wheel full and fell back to checking the clock.
    pub degraded_polls: usize,
    /// Entries the slab has ever handed out. With `std`, each thread's shard takes
    /// untouched entries in blocks (16 on 64-bit targets, whole 128-byte pairs of lines;
    /// fewer on a small `Fixed` wheel), and a shard takes a block of its own before another
    /// shard's freed entries: this can exceed the most entries ever in use at once by a
    /// block or more per shard in use.
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
        if let Some(ready) = self.ready_without_arming {
            write!(f, "ready without arming {ready}, ")?;
        }
        let [l0, l1, l2, more] = self.lateness;
        write!(
            f,
            "lateness in ticks [0: {l0}, 1: {l1}, 2: {l2}, more: {more}], degraded polls {}, \
             occupied {} (high water {})",
            self.degraded_polls, self.occupied, self.high_water
        )
    }
}

/// The live counters inside a wheel.
pub(crate) struct Counters {
    armed: AtomicUsize,
    fired: AtomicUsize,
    cancelled: AtomicUsize,
    lateness: [AtomicUsize; 4],
    pub(crate) degraded_polls: AtomicUsize,
    #[cfg(feature = "count-ready")]
    ready: AtomicUsize,
}

/// Adds one, for a counter that only the driver writes.
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
                #[cfg(feature = "count-ready")]
                ready: AtomicUsize::new(0),
            }
        }
    }

    /// Driver only.
    pub(crate) fn armed(&self) {
        bump(&self.armed);
    }

    /// Driver only.
    pub(crate) fn fired(&self, late_ticks: u64) {
        bump(&self.fired);
        bump(&self.lateness[late_ticks.min(3) as usize]);
    }

    /// Driver only.
    pub(crate) fn cancelled(&self) {
        bump(&self.cancelled);
    }

    /// Any thread.
    pub(crate) fn degraded_poll(&self) {
        self.degraded_polls.fetch_add(1, Ordering::Relaxed);
    }

    /// Any thread, on the ready fast path.
    #[cfg(feature = "count-ready")]
    pub(crate) fn ready(&self) {
        self.ready.fetch_add(1, Ordering::Relaxed);
    }

    pub(crate) fn snapshot(&self, high_water: usize, occupied: usize) -> Stats {
        let load = |c: &AtomicUsize| c.load(Ordering::Relaxed);
        Stats {
            armed: load(&self.armed),
            fired: load(&self.fired),
            cancelled: load(&self.cancelled),
            #[cfg(feature = "count-ready")]
            ready_without_arming: Some(load(&self.ready)),
            #[cfg(not(feature = "count-ready"))]
            ready_without_arming: None,
            lateness: [
                load(&self.lateness[0]),
                load(&self.lateness[1]),
                load(&self.lateness[2]),
                load(&self.lateness[3]),
            ],
            degraded_polls: load(&self.degraded_polls),
            high_water,
            occupied,
        }
    }
}
