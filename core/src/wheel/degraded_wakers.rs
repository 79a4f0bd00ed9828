//! Where degraded deadlines (the storage was full: no entry, no fire) leave their wakers
//! in one of [`PLACES`] places, for the driver's first turn at a later tick to wake.
//!
//! * A place holds one waker per task, and a task takes one place at most. With none
//!   free, the deadline asks to be polled again at once.
//! * While any place is taken, the driver plans a turn by the next tick.
//! * `word` holds two bits per place: `LOCK` (a thread is in it), `FULL` (a waker).
//!
//! * A thread owns a place from the `fetch_or` setting `LOCK` to the write clearing it;
//!   a locked place is passed by. The waker is cloned before any place is locked.
//! * The tick left with is that of the reading the deadline found before its target: a
//!   turn at a later tick, as any at or after the target's is, wakes it.
//! * Leaving: if the place is empty, store the waker and tick, then swap `LOCK` for
//!   `FULL` in one `fetch_xor`; if it holds the same task's waker, unlock and stop.
//! * Waking (driver only): wake and empty each full place left before the turn's tick.
//!
//! # Not losing the wake
//!
//! * Leaving ends with a `fetch_or` of [`DEGRADED`] into the plan word (AcqRel), and
//!   wakes the drivers if the plan is idle or later than the next tick.
//! * The driver clears `DEGRADED` before it looks, and publishes by read-modify-write of
//!   the same word: it reads `DEGRADED` and looks again, or the deadline reads the plan.
//!
//! [`DEGRADED`]: super::plan::DEGRADED

use core::task::Waker;

use crate::sync::{AtomicU32, Ordering, UnsafeCell};
use crate::time::Tick;

/// Places per wheel for degraded deadlines' wakers.
pub(crate) const PLACES: usize = 4;

const fn lock(place: usize) -> u32 {
    1 << (2 * place)
}

const fn full(place: usize) -> u32 {
    2 << (2 * place)
}

pub(crate) struct DegradedWakers {
    /// Place `k`: bit `2k` locked, bit `2k + 1` full.
    word: AtomicU32,
    places: [Place; PLACES],
}

struct Place {
    waker: UnsafeCell<Option<Waker>>,
    /// The tick the waker was left at.
    tick: UnsafeCell<Tick>,
}

// SAFETY: a place's cells are touched only under its LOCK bit (Acquire to take, Release
// to give back); `Waker` is `Send + Sync`.
unsafe impl Sync for DegradedWakers {}

impl DegradedWakers {
    crate::sync::const_fn! {
        pub(crate) fn new() -> Self {
            #[cfg(not(punctual_loom))]
            let places = [const { Place::new() }; PLACES];
            #[cfg(punctual_loom)]
            let places = core::array::from_fn(|_| Place::new());
            Self { word: AtomicU32::new(0), places }
        }
    }

    /// Leaves `waker` for the first turn after tick `tick`. `false`: no place free.
    pub(crate) fn leave(&self, waker: &Waker, tick: Tick) -> bool {
        let mut mine = Some(waker.clone());
        for (index, place) in self.places.iter().enumerate() {
            let (lock, full) = (lock(index), full(index));
            let word = self.word.fetch_or(lock, Ordering::Acquire);
            if word & lock != 0 {
                continue;
            }
            if word & full != 0 {
                // SAFETY: this thread holds the place's lock.
                let same_task = place.waker.with(|held| unsafe {
                    (*held).as_ref().is_some_and(|held| held.will_wake(waker))
                });
                self.word.fetch_and(!lock, Ordering::Release);
                if same_task {
                    return true;
                }
                continue;
            }
            // SAFETY: as above; the place is empty, so nothing is overwritten but `None`.
            place.waker.with_mut(|held| unsafe { *held = mine.take() });
            // SAFETY: as above.
            place.tick.with_mut(|held| unsafe { *held = tick });
            self.word.fetch_xor(lock | full, Ordering::Release);
            return true;
        }
        false
    }

    /// Wakes every waker left before tick `now`. Returns whether any place still holds
    /// one or is being filled. A panicking `wake` leaves the later places to the next turn.
    pub(crate) fn wake_before(&self, now: Tick) -> bool {
        let mut waiting = false;
        for (index, place) in self.places.iter().enumerate() {
            let (lock, full) = (lock(index), full(index));
            if self.word.load(Ordering::Relaxed) & (lock | full) == 0 {
                continue;
            }
            let word = self.word.fetch_or(lock, Ordering::Acquire);
            if word & lock != 0 {
                waiting = true;
                continue;
            }
            if word & full == 0 {
                self.word.fetch_and(!lock, Ordering::Release);
                continue;
            }
            // SAFETY: this thread holds the place's lock.
            let left_at = place.tick.with(|tick| unsafe { *tick });
            if left_at >= now {
                self.word.fetch_and(!lock, Ordering::Release);
                waiting = true;
                continue;
            }
            // SAFETY: as above.
            let waker = place.waker.with_mut(|held| unsafe { (*held).take() });
            self.word.fetch_and(!(lock | full), Ordering::Release);
            if let Some(waker) = waker {
                waker.wake();
            }
        }
        waiting
    }
}

impl Place {
    crate::sync::const_fn! {
        fn new() -> Self {
            Self {
                waker: UnsafeCell::new(None),
                tick: UnsafeCell::new(Tick::new(0)),
            }
        }
    }
}
