//! Where degraded deadlines leave their wakers until the next tick.
//!
//! A deadline that finds the storage full runs *degraded*: it holds no entry, so no fire
//! wakes it. It leaves its task's waker in one of [`PLACES`] places instead. The driver's
//! first turn at a later tick wakes it, and the deadline then checks the clock itself.
//!
//! * A place holds one waker per task: a task whose waker is in a place takes no other.
//! * With every place taken by other tasks, the deadline asks to be polled again at once.
//! * While any place is taken, the driver plans a turn by the next tick.
//!
//! # Protocol
//!
//! `word` holds two bits per place: `LOCK` (a thread is in the place) and `FULL` (it
//! holds a waker).
//!
//! * A thread owns a place from the `fetch_or` setting `LOCK` to the write clearing it.
//! * Nobody waits for a locked place: they pass it by, so no thread spins here.
//! * The waker is cloned before any place is locked, so a panicking `clone` locks nothing.
//! * Leaving: lock a place. If empty, store the waker and tick, then swap `LOCK` for
//!   `FULL` in one `fetch_xor`. If it holds a waker of the same task, unlock and stop.
//! * Waking, by the driver only: lock each full place. Wake and empty it if its tick is
//!   before the turn's; otherwise unlock it and count it as waiting.
//!
//! # Not losing the wake: the plan word
//!
//! A waker left here is seen by a turn after the next tick begins, or the driver is woken.
//!
//! * Leaving ends with a `fetch_or` of [`DEGRADED`] into the plan word (AcqRel).
//! * If the plan it returns is idle, or later than the next tick, the deadline wakes the
//!   drivers.
//! * The driver clears `DEGRADED` before it looks at the places.
//! * It publishes its plan with a read-modify-write of the same word (see the wheel's
//!   "Waking the driver").
//! * Read-modify-writes of one word are totally ordered. If the plan comes first, the
//!   deadline reads it and wakes the driver if needed. If the mark comes first, the
//!   publication returns `DEGRADED`, and the driver looks at the places again.
//!   The mark's release sequence makes the left waker visible to that look.
//!
//! [`DEGRADED`]: super::plan::DEGRADED

use core::task::Waker;

use crate::sync::{AtomicU32, Ordering, UnsafeCell};
use crate::time::Tick;

/// Places per wheel for degraded deadlines' wakers: one each for this many tasks at once.
pub(crate) const PLACES: usize = 4;

const fn lock(place: usize) -> u32 {
    1 << (2 * place)
}

const fn full(place: usize) -> u32 {
    2 << (2 * place)
}

/// The places of degraded deadlines' wakers, and the word that locks them.
pub(crate) struct DegradedWakers {
    /// Per place `k`: bit `2k` locked, bit `2k + 1` full.
    word: AtomicU32,
    places: [Place; PLACES],
}

struct Place {
    waker: UnsafeCell<Option<Waker>>,
    /// The tick the waker was left at. Under the place's lock, so a plain `u64` on every
    /// target.
    tick: UnsafeCell<Tick>,
}

// SAFETY: a place's cells are touched only by the thread that holds its LOCK bit, taken
// with an Acquire read-modify-write and given back with a Release one, which orders every
// access; `Waker` is `Send + Sync`, so a waker left by one thread may be taken and woken
// by another.
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

    /// Leaves `waker` to be woken by the first turn at a tick after `tick`. Returns `false`
    /// when every place is taken by other tasks (the caller must then ask to be polled
    /// again itself). The caller then tells the driver (see the module docs).
    pub(crate) fn leave(&self, waker: &Waker, tick: Tick) -> bool {
        let mut mine = Some(waker.clone());
        for (index, place) in self.places.iter().enumerate() {
            let (lock, full) = (lock(index), full(index));
            let word = self.word.fetch_or(lock, Ordering::Acquire);
            if word & lock != 0 {
                // Someone else is in this place: pass it by.
                continue;
            }
            if word & full != 0 {
                // SAFETY: this thread holds the place's lock (see `DegradedWakers`' `Sync`).
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

    /// Wakes every waker left at a tick before `now`, for the driver's turn at tick `now`.
    /// Returns whether any place still holds a waker (or is being filled), so that the
    /// driver plans a turn for the next tick.
    ///
    /// A waker whose `wake` panics unwinds out of here; the places after it keep their
    /// wakers, which the next turn wakes.
    pub(crate) fn wake_before(&self, now: Tick) -> bool {
        let mut waiting = false;
        for (index, place) in self.places.iter().enumerate() {
            let (lock, full) = (lock(index), full(index));
            if self.word.load(Ordering::Relaxed) & (lock | full) == 0 {
                continue;
            }
            let word = self.word.fetch_or(lock, Ordering::Acquire);
            if word & lock != 0 {
                // Being filled, or looked at by a task of its own: it waits.
                waiting = true;
                continue;
            }
            if word & full == 0 {
                self.word.fetch_and(!lock, Ordering::Release);
                continue;
            }
            // SAFETY: this thread holds the place's lock.
            let left_at = place.tick.with(|tick| unsafe { *tick });
            // A waker left at this tick, or at a later one by a clock read after the
            // turn's, waits.
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
