//! Firing entries and waking their tasks.
//!
//! * An entry fires by a CAS adding `FIRED`; a cancel that came first makes it fail.
//! * A fired entry waits on the driver's to-wake list (through `slot_next`), first in,
//!   first out: tasks wake in firing order.
//! * The wheel keeps `WHEEL` until it has taken the waker out. A panicking waker leaves
//!   the rest queued.
//! * With batched wakes, the driver wakes the first entry and hands the rest off.

use super::Wheel;
use super::entry::{CANCELLED, Entry, FIRED, HANDLE, Index, NIL, UNLINKED, WHEEL};
use super::link::PlainLink;
use super::storage::Storage;
use super::turn::DriverState;
use crate::clock::Clock;
use crate::sync::Ordering;
use crate::time::Tick;

/// How many ticks late an entry of tick `when` fires in tick `now` (for the stats).
pub(super) fn late(now: Tick, when: Tick) -> u64 {
    now.get().saturating_sub(when.get())
}

impl<C: Clock, S: Storage> Wheel<C, S> {
    /// Fires `index` unless cancelled, and queues its task to be woken.
    pub(super) fn fire(
        &self,
        state: &mut DriverState,
        index: Index,
        entry: &Entry,
        late_ticks: u64,
    ) {
        debug_assert_eq!(entry.slot_prev.load(Ordering::Relaxed), UNLINKED);
        let word = entry.state.load(Ordering::Acquire);
        if word & CANCELLED != 0 {
            return; // the cancel inbox will reclaim it
        }
        if entry
            .state
            .compare_exchange(word, word | FIRED, Ordering::AcqRel, Ordering::Acquire)
            .is_err()
        {
            return; // cancelled meanwhile
        }
        self.counters.fired(late_ticks);
        entry.slot_next.store(NIL, Ordering::Relaxed);
        if state.to_wake.get() == NIL {
            state.to_wake = PlainLink::new(index);
        } else {
            self.storage
                .entry(state.to_wake_tail.get())
                .slot_next
                .store(index, Ordering::Relaxed);
        }
        state.to_wake_tail = PlainLink::new(index);
    }

    /// Wakes fired entries' tasks at tick `now`: a hand-off list left since an earlier
    /// tick, then the queue (with batched wakes, its first entry, handing off the rest).
    pub(super) fn wake_fired(&self, state: &mut DriverState, now: Tick) {
        if self.take_back(state, now) {
            self.wake_queued(state);
        }
        self.hand_off(state, now);
        self.wake_queued(state);
    }

    /// Wakes the queued fired entries' tasks, letting go of each entry first.
    fn wake_queued(&self, state: &mut DriverState) {
        while state.to_wake.get() != NIL {
            let index = state.to_wake.get();
            let entry = self.storage.entry(index);
            state.to_wake = PlainLink::new(self.next_ahead(&entry.slot_next));
            entry.slot_next.store(NIL, Ordering::Relaxed);
            let waker = entry.waker.take();
            let before = entry.state.fetch_and(!WHEEL, Ordering::AcqRel);
            if before & HANDLE == 0 {
                self.free_entry(index, entry);
            }
            if let Some(waker) = waker {
                waker.wake();
            }
        }
    }
}
