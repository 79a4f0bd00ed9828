//! One free entry per thread, kept for its next deadline on a wheel with
//! [`Wheel::with_thread_spares`](crate::Wheel::with_thread_spares): plain loads and
//! stores, not a free list's pop.
//!
//! * A slot holds at most one entry, of one wheel (by address): free, recycled, on no
//!   list, reachable by no other thread, and not [`occupied`](crate::Wheel::occupied).
//! * A release keeps its entry unless the slot holds one of the same wheel already;
//!   keeping gives back another wheel's. At thread exit the entry goes back by address.

use core::cell::Cell;

use crate::wheel::entry::Index;

/// An entry kept in a thread's slot.
#[derive(Clone, Copy)]
struct Kept {
    wheel: *const (),
    index: Index,
    /// Typed by the wheel that kept the entry.
    give_back: unsafe fn(*const (), Index),
}

impl Kept {
    /// Returns the entry to its wheel's free list.
    fn give_back(self) {
        // SAFETY: a wheel with spares never moves (`with_thread_spares`), and `give_back`
        // is typed for it; the entry is this thread's alone.
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

/// Takes this thread's kept entry if it is `wheel`'s (not while the thread exits).
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

/// Keeps `index` of `wheel`, giving back another wheel's entry. `false`: the caller frees
/// it as usual.
///
/// # Safety
///
/// * `wheel` has spares, and `give_back(wheel, i)` frees its entry `i`.
/// * The caller owns the entry alone, free and recycled; keeping hands that over.
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
