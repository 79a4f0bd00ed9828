//! A waker slot that one task registers into and another thread takes out of, lock-free.
//!
//! This is the well-known `AtomicWaker` algorithm of `futures-util` and `atomic-waker`,
//! written against [`crate::sync`] so that loom explores it together with the wheel: the
//! crates' versions use `core` atomics, which loom cannot see, and the hand-off "register a
//! waker, then check the entry" against "mark the entry fired, then take the waker" is the
//! one that must never lose a wakeup.
//!
//! # State field
//!
//! | value                   | meaning                                                  |
//! |-------------------------|----------------------------------------------------------|
//! | `WAITING` (0)           | idle: the slot may hold a waker, nobody is touching it  |
//! | `REGISTERING` (1)       | `register` owns the slot and is replacing the waker      |
//! | `WAKING` (2)            | `take` owns the slot and is moving the waker out         |
//! | `REGISTERING \| WAKING` | a `take` arrived during `register`: `register` wakes     |
//!
//! Ground rules: at most one thread calls `register` at a time (the owner of the deadline,
//! through `&mut`, or of a driver's slot: see `driver_wakers`); any number may call `take`.

use core::task::Waker;

use crate::sync::{AtomicU32, Ordering, UnsafeCell};

const WAITING: u32 = 0;
const REGISTERING: u32 = 0b01;
const WAKING: u32 = 0b10;

pub(crate) struct AtomicWaker {
    /// A `u32` (two bits are used), so that an entry packs it with its other 32-bit fields.
    state: AtomicU32,
    waker: UnsafeCell<Option<Waker>>,
}

// SAFETY: the waker cell is only touched by the thread that won the `state` transition out of
// `WAITING` (see the table above), so it is never accessed from two threads at once; `Waker`
// is `Send + Sync`.
unsafe impl Send for AtomicWaker {}
// SAFETY: as for `Send`.
unsafe impl Sync for AtomicWaker {}

impl AtomicWaker {
    crate::sync::const_fn! {
        pub(crate) fn new() -> Self {
            Self { state: AtomicU32::new(WAITING), waker: UnsafeCell::new(None) }
        }
    }

    /// Stores `waker` to be woken by the next [`take`](Self::take). If a `take` races with
    /// this call, `waker` is woken here instead, so the wakeup is never lost.
    pub(crate) fn register(&self, waker: &Waker) {
        match self
            .state
            .compare_exchange(WAITING, REGISTERING, Ordering::Acquire, Ordering::Acquire)
            .unwrap_or_else(|actual| actual)
        {
            WAITING => {
                // A `clone` that panics must not leave the slot REGISTERING for good (every
                // later `take` would find it busy and return nothing, a lost wakeup for
                // whoever registers next): give the slot back as it unwinds. The slot is
                // unchanged then (the clone comes before the replace), and a `take` that
                // came meanwhile found nothing to wake, which the panicking poll no
                // longer needs.
                let unwind = ReleaseOnUnwind(&self.state);
                // SAFETY: winning WAITING -> REGISTERING gives this thread the slot: `take`
                // only touches it after its own WAITING -> WAKING transition.
                let old = self.waker.with_mut(|slot| unsafe {
                    match &*slot {
                        Some(current) if current.will_wake(waker) => None,
                        _ => (*slot).replace(waker.clone()),
                    }
                });
                core::mem::forget(unwind);
                match self.state.compare_exchange(
                    REGISTERING,
                    WAITING,
                    Ordering::AcqRel,
                    Ordering::Acquire,
                ) {
                    Ok(_) => drop(old),
                    Err(_) => {
                        // A `take` set WAKING while we held the slot and left without the
                        // waker: it is ours to wake.
                        // SAFETY: the state is still REGISTERING | WAKING, so the slot is
                        // still ours; `take` does not touch it in that state.
                        let current = self.waker.with_mut(|slot| unsafe { (*slot).take() });
                        self.state.swap(WAITING, Ordering::AcqRel);
                        drop(old);
                        if let Some(current) = current {
                            current.wake();
                        }
                    }
                }
            }
            WAKING => {
                // A `take` is moving the previous waker out right now; it may or may not be
                // ours, so wake the new one directly.
                waker.wake_by_ref();
            }
            _ => {
                // REGISTERING: a second registrant, which the ground rules exclude. Waking is
                // the safe answer: the caller polls again and registers then.
                debug_assert!(false, "AtomicWaker::register called concurrently");
                waker.wake_by_ref();
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
        debug_assert_eq!(self.state.load(Ordering::Relaxed), WAITING);
        // SAFETY: exclusive access, by the caller's contract.
        let old = self
            .waker
            .with_mut(|slot| unsafe { (*slot).replace(waker) });
        debug_assert!(old.is_none(), "a free entry held a waker");
        drop(old);
    }

    /// Takes the waker out without the protocol, for a slot nobody else can reach.
    ///
    /// # Safety
    ///
    /// * The caller owns the slot exclusively, and every other thread's access to it
    ///   happened before (the caller acquired what they released).
    pub(crate) unsafe fn take_exclusive(&self) -> Option<Waker> {
        debug_assert_eq!(self.state.load(Ordering::Relaxed), WAITING);
        // SAFETY: exclusive access, by the caller's contract.
        self.waker.with_mut(|slot| unsafe { (*slot).take() })
    }

    /// Moves the registered waker out, if any, for the caller to wake.
    pub(crate) fn take(&self) -> Option<Waker> {
        match self.state.fetch_or(WAKING, Ordering::AcqRel) {
            WAITING => {
                // SAFETY: WAITING -> WAKING gives this thread the slot until it clears WAKING.
                let waker = self.waker.with_mut(|slot| unsafe { (*slot).take() });
                self.state.fetch_and(!WAKING, Ordering::Release);
                waker
            }
            // A register holds the slot and will see WAKING, or another take is moving the
            // waker out: either way the waker is taken care of.
            _ => None,
        }
    }
}

/// Puts the state back to `WAITING` if dropped: armed while `register` holds the slot, and
/// forgotten once it is done with it.
struct ReleaseOnUnwind<'a>(&'a AtomicU32);

impl Drop for ReleaseOnUnwind<'_> {
    fn drop(&mut self) {
        self.0.swap(WAITING, Ordering::AcqRel);
    }
}

impl core::fmt::Debug for AtomicWaker {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.debug_struct("AtomicWaker").finish_non_exhaustive()
    }
}
