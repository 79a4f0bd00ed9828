//! One free entry per thread, kept aside for the thread's next deadline.
//!
//! On a wheel with spares ([`Wheel::with_thread_spares`](crate::Wheel::with_thread_spares)),
//! a thread keeps the entry it last freed in a thread-local slot. Its next arm takes it
//! back with plain loads and stores, instead of a free list's pop.
//!
//! # Invariants
//!
//! * A slot holds at most one entry, of one wheel (by address). It is free, recycled, on
//!   no list, and no other thread can reach it.
//! * An arm takes the entry only for the wheel it came from.
//! * A release keeps its entry unless the slot holds one of the same wheel already. Then
//!   it frees the entry onto the free list, as without spares.
//! * Keeping an entry gives back the one the slot held, if it was another wheel's. So a
//!   thread that moves on to another wheel holds nothing of the first.
//! * When the thread exits, the slot's destructor gives the entry back to its wheel.
//! * So only a wheel that lives for the rest of the process may have spares: a `static`,
//!   or one leaked on the heap. They are enabled through a `&'static` reference.
//! * A kept entry reads as free in [`Wheel::occupied`](crate::Wheel::occupied), and is
//!   on no free list. A fixed wheel lends at most one entry to each thread that used it.

use core::cell::Cell;

use crate::wheel::entry::Index;

/// An entry kept in a thread's slot.
#[derive(Clone, Copy)]
struct Kept {
    /// The wheel's address.
    wheel: *const (),
    index: Index,
    /// Returns the entry to the wheel's free list (typed by the wheel that kept it).
    give_back: unsafe fn(*const (), Index),
}

impl Kept {
    /// Returns the entry to its wheel's free list.
    fn give_back(self) {
        // SAFETY: the wheel that kept the entry has spares, so it lives at this address
        // for the rest of the process (`Wheel::with_thread_spares`'s contract),
        // with the type `give_back` was made for. The entry is this thread's alone.
        unsafe { (self.give_back)(self.wheel, self.index) };
    }
}

/// A thread's slot; gives its entry back when the thread exits.
struct Slot(Cell<Option<Kept>>);

impl Drop for Slot {
    fn drop(&mut self) {
        if let Some(kept) = self.0.take() {
            kept.give_back();
        }
    }
}

std::thread_local! {
    static SLOT: Slot = const { Slot(Cell::new(None)) };
}

/// Takes this thread's kept entry if it is `wheel`'s. `None` when the slot is empty,
/// holds another wheel's entry, or is being destroyed (the thread is exiting).
#[inline]
pub(crate) fn take(wheel: *const ()) -> Option<Index> {
    SLOT.try_with(|slot| match slot.0.get() {
        Some(kept) if kept.wheel == wheel => {
            slot.0.set(None);
            Some(kept.index)
        }
        _ => None,
    })
    .ok()
    .flatten()
}

/// Keeps `index`, a free and recycled entry of `wheel` that this thread owns alone, and
/// gives back the entry the slot held if it was another wheel's. Returns whether it kept
/// it; if not (the slot holds an entry of `wheel` already, or the thread is exiting), the
/// caller frees the entry as usual.
///
/// # Safety
///
/// * `wheel` has spares (it lives at this address for the rest of the process), and
///   `give_back(wheel, i)` returns entry `i` of it to its free list.
/// * The caller owns the entry exclusively, free and recycled; keeping hands that over.
#[inline]
pub(crate) unsafe fn keep(
    wheel: *const (),
    index: Index,
    give_back: unsafe fn(*const (), Index),
) -> bool {
    SLOT.try_with(|slot| {
        let held = slot.0.get();
        if held.is_some_and(|held| held.wheel == wheel) {
            return false;
        }
        slot.0.set(Some(Kept {
            wheel,
            index,
            give_back,
        }));
        if let Some(other) = held {
            other.give_back();
        }
        true
    })
    .unwrap_or(false)
}
