//! Where degraded deadlines wait for the next tick.
//!
//! A deadline that finds its wheel's storage full runs *degraded*: it holds no entry, so no
//! fire will wake it, and it must look at the clock and try to arm again until its time
//! comes. Asking to be polled again at once would do on real time, but it keeps the
//! executor busy for as long as the wheel stays full, and a runtime that moves a paused
//! clock only once it is idle (tokio's auto-advance) would then never reach the deadline:
//! the task would spin and no time would pass. So a wheel keeps [`PLACES`] places where a
//! degraded deadline leaves its task's waker, and the driver, on each turn at a later tick
//! than the one the waker was left at, wakes it. While any place is taken the driver plans
//! a turn for the next tick, so a degraded deadline is polled about once a tick: it still
//! never ends early (it checks the clock), and a freed entry or its passed target is seen
//! within a tick.
//!
//! A deadline that finds every place taken by other tasks asks to be polled again at once,
//! as before; the places hold one waker per task (a task whose waker is in a place already
//! takes none more), so that happens only with more than [`PLACES`] tasks waiting on one
//! full wheel at the same moment.
//!
//! # Protocol
//!
//! `word` holds two bits per place: `LOCK` (a thread is reading or writing the place) and
//! `FULL` (the place holds a waker). A thread owns a place from the `fetch_or` that sets
//! its `LOCK` bit to the read-modify-write that clears it; nobody waits for a locked
//! place, they pass it by, so no thread ever spins here. The waker is cloned before any
//! place is locked: a `clone` that panics then keeps no place locked.
//!
//! * Parking: lock a place; if it is empty, put the waker and the tick in and flip `LOCK`
//!   off and `FULL` on in one `fetch_xor`; if it holds a waker of the same task, unlock
//!   and stop there.
//! * Waking (the driver, which holds the driver role, so one thread at a time): lock each
//!   full place; if its tick is earlier than the turn's, take the waker out, clear both
//!   bits, and wake it; otherwise unlock it and count it as still waiting.
//!
//! # Not losing the wake: the plan word
//!
//! A parked waker must be seen by a turn that comes after the next tick begins, or the
//! driver must be woken. Parking ends with a `fetch_or` of [`PARKED`] into the wheel's plan
//! word, and reads the plan it returns: if the driver is idle or plans no turn by the next
//! tick, the parker wakes the drivers. The driver, for its part, clears `PARKED` before it
//! looks at the places, and publishes its plan with a read-modify-write of the same word
//! (see the wheel's "Waking the driver"). The read-modify-writes of one word are totally
//! ordered, so either the driver's publication comes first, and the parker reads that plan
//! and wakes the driver if it is too far, or the parker's mark comes first, and the
//! driver's publication returns `PARKED`: it then looks at the places again before it
//! settles on a plan (and the mark's release sequence makes the parked waker visible to
//! it).
//!
//! [`PARKED`]: super::plan::PARKED

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

pub(crate) struct Parked {
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
unsafe impl Sync for Parked {}

impl Parked {
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
    pub(crate) fn park(&self, waker: &Waker, tick: Tick) -> bool {
        let mut mine = Some(waker.clone());
        for (index, place) in self.places.iter().enumerate() {
            let (lock, full) = (lock(index), full(index));
            let word = self.word.fetch_or(lock, Ordering::Acquire);
            if word & lock != 0 {
                // Someone else is in this place: pass it by.
                continue;
            }
            if word & full != 0 {
                // SAFETY: this thread holds the place's lock (see `Parked`'s `Sync`).
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
