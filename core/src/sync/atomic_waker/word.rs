//! The slot's state word: the held waker's vtable pointer, with the state in its low bits.
//! * `word`: the vtable pointer (null: no waker); its two low bits hold the state
//!   (a [`RawWakerVTable`] is at least 4-aligned, checked at compile time).
//! * `data`: the waker's data pointer, meaningful only while the vtable is not null.
//!
//! | value                   | meaning                                                 |
//! |-------------------------|---------------------------------------------------------|
//! | `WAITING` (0)           | idle: the slot may hold a waker, nobody is touching it |
//! | `REGISTERING` (1)       | `register` owns the slot and is replacing the waker     |
//! | `WAKING` (2)            | `take` owns the slot and is moving the waker out        |
//! | `REGISTERING \| WAKING` | a `take` arrived during `register`: `register` wakes    |

use core::ptr;
use core::task::RawWakerVTable;

pub(super) const WAITING: usize = 0;
pub(super) const REGISTERING: usize = 0b01;
pub(super) const WAKING: usize = 0b10;
const STATE: usize = REGISTERING | WAKING;

const _: () = assert!(core::mem::align_of::<RawWakerVTable>() > STATE);

/// The vtable pointer (possibly null) and state bits of a slot.
pub(super) type Word = *mut RawWakerVTable;

/// The state bits of `word`.
#[inline(always)]
pub(super) fn state(word: Word) -> usize {
    word.addr() & STATE
}

/// `word` with its state bits replaced by `bits`, keeping its provenance.
#[inline(always)]
pub(super) fn with_state(word: Word, bits: usize) -> Word {
    word.map_addr(|addr| (addr & !STATE) | bits)
}

/// The vtable `word` holds, if any.
#[inline(always)]
pub(super) fn vtable(word: Word) -> Option<&'static RawWakerVTable> {
    let vtable = with_state(word, WAITING);
    // SAFETY: stored from a `&'static RawWakerVTable`, provenance kept (`map_addr`).
    (!vtable.is_null()).then(|| unsafe { &*vtable })
}

/// The word of a slot holding a waker with `vtable`, in state `WAITING`.
#[inline(always)]
pub(super) fn word_of(vtable: &'static RawWakerVTable) -> Word {
    ptr::from_ref(vtable).cast_mut()
}
