//! Batched wakes: a turn's fired entries handed to the thread that polls their tasks.
//!
//! With batched wakes on ([`Wheel::with_batched_wakes`]), a pass with two or more
//! entries to wake wakes only the first, the *lead*. It pushes the rest onto the wheel's
//! hand-off list in one atomic operation. The lead's deadline, when polled or dropped and
//! seen fired, takes the whole list with one swap and wakes the rest on its own thread.
//!
//! # Invariants (no lost wakeup, at most one tick later)
//!
//! - An entry on the list is `FIRED` and still owned by the wheel (`WHEEL`). Its waker has
//!   not been taken, and it cannot be freed or reused.
//! - Whoever takes an entry off the list takes its waker, clears `WHEEL` and wakes it,
//!   exactly as [`Wheel::wake_fired`] does. It frees the entry if its handle let go.
//! - The list is linked through `slot_next`, which nothing else uses while an entry is
//!   fired and on it.
//! - The list is a push-and-take-all stack. A push links the batch's tail to the head it
//!   read, then publishes the batch's first entry by compare-and-swap (Release).
//! - A take swaps the head with `NIL` (Acquire) and owns every entry it got.
//! - There is no single-entry pop, so the head's ABA is harmless: a compare-and-swap that
//!   sees the head it linked to links to the right entry.
//! - While the list is not empty, the driver plans a turn by the next tick, never idle.
//! - A turn at a tick later than the last push takes the list back and wakes it. So a
//!   batch waits at most one tick after it fired, even if its lead never takes it.
//! - A waker that panics while a deadline wakes the list pushes the rest back as the panic
//!   unwinds. One that panics on the driver's side leaves them queued.

use super::Wheel;
use super::entry::{Index, NIL, NextLink};
use super::link::PlainLink;
use super::storage::Storage;
use super::turn::DriverState;
use crate::clock::Clock;
use crate::sync::Ordering;
use crate::time::Tick;

/// The wheel's hand-off list.
pub(super) struct Handoff {
    /// The first entry of the list (`NIL`: empty).
    head: NextLink,
}

impl Handoff {
    crate::sync::const_fn! {
        pub(super) fn new() -> Self {
            Self {
                head: NextLink::new(),
            }
        }
    }
}

impl<C: Clock, S: Storage> Wheel<C, S> {
    /// The driver's side, before a pass hands anything off: takes back a list left since a
    /// tick before `now` and queues it at the front of `state.to_wake` (it fired first).
    /// Returns whether it took one: the caller then wakes the queue itself, with no
    /// hand-off, so that a batch whose lead never takes it is woken by this turn.
    pub(super) fn take_back(&self, state: &mut DriverState, now: Tick) -> bool {
        if !cfg!(feature = "std")
            || self.handoff.head.load(Ordering::Relaxed) == NIL
            || now <= state.handed_at
        {
            return false;
        }
        let first = self.handoff.head.swap(NIL, Ordering::Acquire);
        if first == NIL {
            return false;
        }
        let tail = self.tail_of(first);
        // Plain links between entries this thread now owns (the swap took the list).
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

    /// The driver's side, in [`Wheel::wake_fired`]: with batched wakes on and two or more
    /// entries queued, keeps the first queued and pushes the rest onto the list.
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
        self.push(first, tail);
    }

    /// Whether the list holds entries (the driver then plans a turn by the next tick).
    #[inline]
    pub(super) fn handed_off(&self) -> bool {
        cfg!(feature = "std") && self.handoff.head.load(Ordering::Relaxed) != NIL
    }

    /// The deadline's side: a handle that saw its entry fired takes the list, if any, and
    /// wakes it on this thread.
    #[inline]
    pub(crate) fn take_handed_off(&self) {
        if cfg!(feature = "std") && self.handoff.head.load(Ordering::Relaxed) != NIL {
            self.wake_handed_off();
        }
    }

    #[inline(never)]
    fn wake_handed_off(&self) {
        let first = self.handoff.head.swap(NIL, Ordering::Acquire);
        // Pushes back what is not woken yet if a waker panics.
        struct Rest<'a, C: Clock, S: Storage> {
            wheel: &'a Wheel<C, S>,
            next: Index,
        }
        impl<C: Clock, S: Storage> Drop for Rest<'_, C, S> {
            fn drop(&mut self) {
                if self.next != NIL {
                    let tail = self.wheel.tail_of(self.next);
                    self.wheel.push(self.next, tail);
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
            // As `wake_fired`: take the waker while the wheel still owns the entry (this
            // thread, for the wheel, since the swap), then let go.
            let waker = entry.waker.take();
            let before = entry
                .state
                .fetch_and(!super::entry::WHEEL, Ordering::AcqRel);
            if before & super::entry::HANDLE == 0 {
                self.free_entry(index, entry);
            }
            if let Some(waker) = waker {
                waker.wake();
            }
        }
    }

    /// The last entry of a list that this thread owns, from its `first`.
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

    /// Pushes the list `first..=tail` (owned by this thread, `tail`'s link `NIL`) onto the
    /// hand-off list.
    fn push(&self, first: Index, tail: Index) {
        let link = &self.storage.entry(tail).slot_next;
        let mut head = self.handoff.head.load(Ordering::Relaxed);
        loop {
            link.store(head, Ordering::Relaxed);
            // Release: a take that acquires the head sees the links and the fired state
            // of every entry of the batch.
            match self.handoff.head.compare_exchange_weak(
                head,
                first,
                Ordering::Release,
                Ordering::Relaxed,
            ) {
                Ok(_) => return,
                Err(actual) => head = actual,
            }
        }
    }
}
