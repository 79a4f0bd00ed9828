//! A waker slot that one task registers into and any thread takes out of, lock-free.
//!
//! The `AtomicWaker` algorithm of `futures-util`, on [`crate::sync`]'s atomics so loom
//! checks it. The slot is two words; their layout and states are in `word`.
//!
//! * At most one thread calls `register` at a time: the deadline's owner through `&mut`,
//!   or a driver through its slot (see `driver_wakers`).
//! * Any number of threads may call `take`.
//! * The thread whose transition leaves `WAITING` owns the slot until it returns to it.
//! * Only the owner changes the vtable bits or the `data` word; others only set `WAKING`.
//! * A `take` that finds the slot owned only sets `WAKING`.
//!   A `register` that sees `WAKING` wakes its waker itself, so no wakeup is lost.
//! * A `Waker` is split into its data and vtable, and rebuilt only from parts of one.
//!   So the slot owns exactly the waker it was given.

use core::ptr;
use core::task::{RawWaker, RawWakerVTable, Waker};

use crate::sync::{AtomicPtr, Ordering, UnsafeCell};
use word::{REGISTERING, WAITING, WAKING, Word, state, vtable, with_state, word_of};

mod word;

pub(crate) struct AtomicWaker {
    word: AtomicPtr<RawWakerVTable>,
    data: UnsafeCell<*const ()>,
}

// SAFETY: the `data` cell, and the waker the two words make up, are only touched by the
// thread that won the state transition out of `WAITING` (see the table in `word`), so never
// from two threads at once; a `Waker` is `Send + Sync`.
unsafe impl Send for AtomicWaker {}
// SAFETY: as for `Send`.
unsafe impl Sync for AtomicWaker {}

impl AtomicWaker {
    crate::sync::const_fn! {
        pub(crate) fn new() -> Self {
            Self { word: AtomicPtr::new(ptr::null_mut()), data: UnsafeCell::new(ptr::null()) }
        }
    }

    /// Sets state bits `bits` with a compare-and-swap loop, as `fetch_or` would (a
    /// read-modify-write even when the bits were set already); returns the previous word.
    #[inline(always)]
    fn set_bits(&self, bits: usize, success: Ordering) -> Word {
        let mut current = self.word.load(Ordering::Relaxed);
        loop {
            let new = current.map_addr(|addr| addr | bits);
            match self
                .word
                .compare_exchange_weak(current, new, success, Ordering::Relaxed)
            {
                Ok(previous) => return previous,
                Err(actual) => current = actual,
            }
        }
    }

    /// The waker the slot holds under `word`, taken out of the two words' keeping.
    ///
    /// # Safety
    ///
    /// * The caller owns the slot (it won the transition out of `WAITING`, or has
    ///   exclusive access), `word` is the slot's current vtable part, and the caller
    ///   then empties the slot (stores a null vtable) before anyone else may own it: the
    ///   waker returned is the slot's, not a copy.
    #[inline(always)]
    unsafe fn take_held(&self, word: Word) -> Option<Waker> {
        let vtable = vtable(word)?;
        // SAFETY: owned slot, by the caller's contract.
        let data = self.data.with(|data| unsafe { *data });
        // SAFETY: `data` and `vtable` are the parts of a waker given to this slot (taken
        // apart in `register` or `set_exclusive` and forgotten there), and the caller's
        // emptying the slot hands its ownership back to exactly one `Waker`.
        Some(unsafe { Waker::from_raw(RawWaker::new(data, vtable)) })
    }

    /// Keeps `waker` in the slot: writes its data word and returns the vtable word to
    /// publish (state `WAITING`). The caller owns the slot, and publishes the word next.
    ///
    /// # Safety
    ///
    /// * The caller owns the slot, and whatever waker it held has been taken out.
    #[inline(always)]
    unsafe fn keep(&self, waker: Waker) -> Word {
        let waker = core::mem::ManuallyDrop::new(waker);
        // SAFETY: owned slot, by the caller's contract.
        self.data.with_mut(|data| unsafe { *data = waker.data() });
        word_of(waker.vtable())
    }

    /// Stores `waker` to be woken by the next [`take`](Self::take). If a `take` races with
    /// this call, `waker` is woken here instead, so the wakeup is never lost.
    ///
    /// Returns whether the slot was *untouched*: it still held the waker of the last
    /// registration, so no `take` came since then (and none came during this one). `false`
    /// at the first registration.
    pub(crate) fn register(&self, waker: &Waker) -> bool {
        let mut current = self.word.load(Ordering::Acquire);
        loop {
            match state(current) {
                WAITING => match self.word.compare_exchange_weak(
                    current,
                    with_state(current, REGISTERING),
                    Ordering::Acquire,
                    Ordering::Acquire,
                ) {
                    Ok(_) => break,
                    Err(actual) => current = actual,
                },
                WAKING => {
                    // A `take` is moving the previous waker out right now; it may or may
                    // not be ours, so wake the new one directly.
                    waker.wake_by_ref();
                    return false;
                }
                _ => {
                    // REGISTERING: a second registrant, which the module rules exclude.
                    // Waking is the safe answer: the caller polls again and registers then.
                    debug_assert!(false, "AtomicWaker::register called concurrently");
                    waker.wake_by_ref();
                    return false;
                }
            }
        }
        // Winning WAITING -> REGISTERING gives this thread the slot: `take` only touches
        // it after its own WAITING -> WAKING transition. `current` is its vtable part.
        let registering = with_state(current, REGISTERING);
        // SAFETY: owned slot.
        let held = vtable(current).map(|vtable| (self.data.with(|data| unsafe { *data }), vtable));
        let (word, old) = match held {
            Some((data, vtable)) if data == waker.data() && ptr::eq(vtable, waker.vtable()) => {
                // The same waker (what `Waker::will_wake` compares): keep it.
                (current, None)
            }
            _ => {
                // A `clone` that panics must not leave the slot REGISTERING for good
                // (every later `take` would find it busy and return nothing, a lost
                // wakeup for whoever registers next): give the slot back as it unwinds.
                // The slot is unchanged then (the clone comes before anything is
                // replaced), and a `take` that came meanwhile found nothing to wake,
                // which the panicking poll no longer needs.
                let unwind = ReleaseOnUnwind(self);
                let new = waker.clone();
                core::mem::forget(unwind);
                // SAFETY: owned slot; `current` is its vtable part, and the slot is
                // filled again just below, before anyone else may own it.
                let old = unsafe { self.take_held(current) };
                // SAFETY: owned slot, its old waker taken out above.
                (unsafe { self.keep(new) }, old)
            }
        };
        match self
            .word
            .compare_exchange(registering, word, Ordering::AcqRel, Ordering::Acquire)
        {
            Ok(_) => {
                drop(old);
                held.is_some()
            }
            Err(_) => {
                // A `take` set WAKING while we held the slot and left without the waker:
                // it is ours to wake.
                // SAFETY: the state is still REGISTERING | WAKING, so the slot is still
                // ours (`take` does not touch it in that state); `word` is the vtable
                // part of what it holds now, and the swap below empties it.
                let current = unsafe { self.take_held(word) };
                self.word.swap(ptr::null_mut(), Ordering::AcqRel);
                // The wake first: a replaced waker whose drop panics must not cost the
                // new one its wake (`old` is dropped as the wake unwinds, if it panics).
                if let Some(current) = current {
                    current.wake();
                }
                drop(old);
                false
            }
        }
    }

    /// Stores `waker` without the registration protocol, for a slot nobody else can reach.
    /// Takes it by value, so that the caller clones it before taking anything (a `clone`
    /// that panics then leaves nothing half done).
    ///
    /// # Safety
    ///
    /// * The caller owns the slot exclusively (its entry is off every list and owned by no
    ///   one else), the state is `WAITING` and the slot is empty (a recycled entry's);
    ///   whatever later publishes the entry to another thread is a Release operation.
    pub(crate) unsafe fn set_exclusive(&self, waker: Waker) {
        debug_assert!(
            self.word.load(Ordering::Relaxed).is_null(),
            "a free entry held a waker"
        );
        // SAFETY: exclusive access to an empty slot, by the caller's contract.
        let word = unsafe { self.keep(waker) };
        self.word.store(word, Ordering::Relaxed);
    }

    /// Takes the waker out without the protocol, for a slot nobody else can reach.
    ///
    /// # Safety
    ///
    /// * The caller owns the slot exclusively, and every other thread's access to it
    ///   happened before (the caller acquired what they released).
    pub(crate) unsafe fn take_exclusive(&self) -> Option<Waker> {
        let word = self.word.load(Ordering::Relaxed);
        debug_assert_eq!(state(word), WAITING);
        // SAFETY: exclusive access, by the caller's contract; emptied just below.
        let waker = unsafe { self.take_held(word) };
        self.word.store(ptr::null_mut(), Ordering::Relaxed);
        waker
    }

    /// Moves the registered waker out, if any, for the caller to wake.
    pub(crate) fn take(&self) -> Option<Waker> {
        let previous = self.set_bits(WAKING, Ordering::AcqRel);
        if state(previous) != WAITING {
            // A register holds the slot and will see WAKING, or another take is moving
            // the waker out: either way the waker is taken care of.
            return None;
        }
        // SAFETY: WAITING -> WAKING gives this thread the slot until it clears WAKING,
        // which the swap below does as it empties the slot; only WAKING may be set
        // meanwhile (by other takes), so `previous` is still the vtable part.
        let waker = unsafe { self.take_held(previous) };
        self.word.swap(ptr::null_mut(), Ordering::Release);
        waker
    }
}

impl Drop for AtomicWaker {
    fn drop(&mut self) {
        // Not a load: loom counts each one, and a wheel drops thousands of slots.
        #[cfg(punctual_loom)]
        let word = self.word.with_mut(|word| *word);
        #[cfg(not(punctual_loom))]
        let word = *self.word.get_mut();
        // SAFETY: `&mut self`: nobody else can reach the slot, and it is not used again.
        drop(unsafe { self.take_held(word) });
    }
}

/// Gives the slot back if dropped: armed while `register` holds the slot, and forgotten
/// once it is done with it. The slot is unchanged then (the waker of the last
/// registration), unless a `take` came meanwhile and left without it: then the waker is
/// taken out and woken here, as `register` would have, so that the slot is empty and the
/// next registration does not read as untouched.
struct ReleaseOnUnwind<'a>(&'a AtomicWaker);

impl Drop for ReleaseOnUnwind<'_> {
    fn drop(&mut self) {
        let slot = self.0;
        let mut current = slot.word.load(Ordering::Relaxed);
        loop {
            if state(current) & WAKING != 0 {
                // A take came and left without the waker (takes only ever add WAKING
                // meanwhile).
                // SAFETY: REGISTERING is still set, so the slot is still ours; `current`
                // is its vtable part, and the swap below empties it.
                let waker = unsafe { slot.take_held(current) };
                slot.word.swap(ptr::null_mut(), Ordering::AcqRel);
                if let Some(waker) = waker {
                    waker.wake();
                }
                return;
            }
            match slot.word.compare_exchange_weak(
                current,
                with_state(current, WAITING),
                Ordering::AcqRel,
                Ordering::Relaxed,
            ) {
                Ok(_) => return,
                Err(actual) => current = actual,
            }
        }
    }
}

impl core::fmt::Debug for AtomicWaker {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.debug_struct("AtomicWaker").finish_non_exhaustive()
    }
}

#[cfg(all(test, not(punctual_loom)))]
mod tests;
