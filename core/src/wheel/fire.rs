//! Firing entries and waking their tasks.
//!
//! * An entry fires by a CAS adding `FIRED`; a cancel that came first makes it fail.
//! * A fired entry waits on the driver's to-wake list (through `slot_next`), first in,
//!   first out. The wheel keeps `WHEEL` until it has taken the waker out. A panicking
//!   waker leaves the rest queued (or, off the driver, pushes them back on unwind).
//!
//! # Batched wakes ([`Wheel::with_batched_wakes`])
//!
//! * A pass with two or more entries to wake wakes only the first, the *lead*, and pushes
//!   the rest onto the hand-off list, an [`Inbox`](super::lists::Inbox) through
//!   `slot_next` (pushes and takes of all, never `unpush`: the head's ABA is harmless).
//!   The lead's deadline, seen fired, takes the list and wakes it.
//! * An entry on the list is `FIRED`, still `WHEEL`'s, with its waker.
//! * While the list is not empty, the driver plans a turn by the next tick. A turn at a
//!   later tick than the last push takes the list back: a batch waits at most a tick.

use super::entry::PlainLink;
use super::entry::{CANCELLED, Entry, FIRED, HANDLE, Index, NIL, UNLINKED, WHEEL};
use super::storage::Storage;
use super::turn::DriverState;
use super::{Wheel, lists, stats};
use crate::clock::Clock;
use crate::sync::Ordering;
use crate::time::Tick;

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
        self.counters.bump(stats::FIRED, true);
        self.counters
            .bump(stats::LATENESS + late_ticks.min(3) as usize, true);
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
            self.wake_entry(index, entry);
        }
    }

    /// Takes a fired entry's waker out, lets go of the entry (freeing it if its handle
    /// has), then wakes the task. The caller holds `WHEEL` for the wheel.
    #[inline]
    fn wake_entry(&self, index: Index, entry: &Entry) {
        let waker = entry.waker.take();
        let before = entry.state.fetch_and(!WHEEL, Ordering::AcqRel);
        if before & HANDLE == 0 {
            // SAFETY: this AcqRel cleared the last ownership bit: ours until the push.
            unsafe { Self::free_to(&self.shards[lists::current()], index, entry) };
        }
        if let Some(waker) = waker {
            waker.wake();
        }
    }

    /// Takes back a list left since before tick `now` onto the front of `to_wake` (it
    /// fired first). Returns whether it did: the caller then wakes it without hand-off.
    pub(super) fn take_back(&self, state: &mut DriverState, now: Tick) -> bool {
        if !self.handed_off() || now <= state.handed_at {
            return false;
        }
        let first = self.handoff.take_all();
        if first == NIL {
            return false;
        }
        let tail = self.tail_of(first);
        self.storage
            .entry(tail)
            .slot_next
            .store(state.to_wake.get(), Ordering::Relaxed);
        if state.to_wake.get() == NIL {
            state.to_wake_tail = PlainLink::new(tail);
        }
        state.to_wake = PlainLink::new(first);
        true
    }

    /// With batched wakes and two or more entries queued, pushes all but the first.
    pub(super) fn hand_off(&self, state: &mut DriverState, now: Tick) {
        let lead = state.to_wake.get();
        if lead == NIL || lead == state.to_wake_tail.get() || !self.batched() {
            return;
        }
        let lead_entry = self.storage.entry(lead);
        let first = lead_entry.slot_next.load(Ordering::Relaxed);
        lead_entry.slot_next.store(NIL, Ordering::Relaxed);
        let tail = state.to_wake_tail.get();
        state.to_wake_tail = PlainLink::new(lead);
        state.handed_at = now;
        self.handoff
            .push(&self.storage.entry(tail).slot_next, first);
    }

    #[inline]
    pub(super) fn handed_off(&self) -> bool {
        cfg!(feature = "std") && !self.handoff.is_empty()
    }

    /// For a handle that saw its entry fired: takes the list and wakes it.
    #[inline(never)]
    pub(super) fn wake_handed_off(&self) {
        let first = self.handoff.take_all();
        // Pushes back what is left if a waker panics.
        struct Rest<'a, C: Clock, S: Storage> {
            wheel: &'a Wheel<C, S>,
            next: Index,
        }
        impl<C: Clock, S: Storage> Drop for Rest<'_, C, S> {
            fn drop(&mut self) {
                if self.next != NIL {
                    let tail = self.wheel.storage.entry(self.wheel.tail_of(self.next));
                    self.wheel.handoff.push(&tail.slot_next, self.next);
                }
            }
        }
        let mut rest = Rest {
            wheel: self,
            next: first,
        };
        while rest.next != NIL {
            let index = rest.next;
            let entry = self.storage.entry(index);
            rest.next = self.next_ahead(&entry.slot_next);
            entry.slot_next.store(NIL, Ordering::Relaxed);
            // This thread holds `WHEEL` for the wheel since the swap.
            self.wake_entry(index, entry);
        }
    }

    /// The last entry of a list this thread owns.
    fn tail_of(&self, first: Index) -> Index {
        let mut tail = first;
        loop {
            let next = self.storage.entry(tail).slot_next.load(Ordering::Relaxed);
            if next == NIL {
                return tail;
            }
            tail = next;
        }
    }
}
