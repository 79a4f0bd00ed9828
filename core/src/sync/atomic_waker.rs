//! `futures-util`'s `AtomicWaker` on [`crate::sync`]'s atomics.
//! * One `register` at a time (a deadline's owner through `&mut`, or a driver through its
//!   slot); any number of `take`s. A `register` that sees `WAKING` wakes its waker itself.
//! * The thread whose transition leaves `WAITING` owns the slot until it returns to it.
//!   Only the owner changes the vtable or `data`; others only set `WAKING`.
//! * `word`: the waker's vtable pointer (null: none), its two low bits the state (a
//!   [`RawWakerVTable`] is at least 4-aligned); `data`: its data pointer. A `Waker` is
//!   rebuilt only from the parts of one.
//!
//! | state                   | meaning                                                 |
//! |-------------------------|---------------------------------------------------------|
//! | `WAITING` (0)           | idle: the slot may hold a waker, nobody is touching it |
//! | `REGISTERING` (1)       | `register` owns the slot and is replacing the waker     |
//! | `WAKING` (2)            | `take` owns the slot and is moving the waker out        |
//! | `REGISTERING \| WAKING` | a `take` arrived during `register`: `register` wakes    |

use core::ptr;
use core::task::{RawWaker, RawWakerVTable, Waker};

use crate::sync::{AtomicPtr, Ordering, UnsafeCell};

const WAITING: usize = 0;
const REGISTERING: usize = 0b01;
const WAKING: usize = 0b10;
const STATE: usize = REGISTERING | WAKING;

const _: () = assert!(core::mem::align_of::<RawWakerVTable>() > STATE);

/// The vtable pointer (possibly null) and state bits of a slot.
type Word = *mut RawWakerVTable;

/// The state bits of `word`.
#[inline(always)]
fn state(word: Word) -> usize {
    word.addr() & STATE
}

/// `word` with its state bits replaced by `bits`, keeping its provenance.
#[inline(always)]
fn with_state(word: Word, bits: usize) -> Word {
    word.map_addr(|addr| (addr & !STATE) | bits)
}

/// The vtable `word` holds, if any.
#[inline(always)]
fn vtable(word: Word) -> Option<&'static RawWakerVTable> {
    let vtable = with_state(word, WAITING);
    // SAFETY: stored from a `&'static RawWakerVTable`, provenance kept (`map_addr`).
    (!vtable.is_null()).then(|| unsafe { &*vtable })
}

pub(crate) struct AtomicWaker {
    word: AtomicPtr<RawWakerVTable>,
    data: UnsafeCell<*const ()>,
}

// SAFETY: `data` and the held waker are touched only by the slot's owner (see `word`),
// never by two threads at once; a `Waker` is `Send + Sync`.
unsafe impl Send for AtomicWaker {}
// SAFETY: as for `Send`.
unsafe impl Sync for AtomicWaker {}

impl AtomicWaker {
    crate::sync::const_fn! {
        pub(crate) fn new() -> Self {
            Self { word: AtomicPtr::new(ptr::null_mut()), data: UnsafeCell::new(ptr::null()) }
        }
    }

    /// Sets state `bits` by a CAS loop (a read-modify-write, as `fetch_or`); returns the old word.
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

    /// The waker the slot holds under `word`, moved out. Safety: the caller owns the slot,
    /// `word` is its vtable part, and it empties the slot next.
    #[inline(always)]
    unsafe fn take_held(&self, word: Word) -> Option<Waker> {
        let vtable = vtable(word)?;
        // SAFETY: owned slot, by the caller's contract.
        let data = self.data.with(|data| unsafe { *data });
        // SAFETY: the parts of a waker given to the slot, which the caller then empties.
        Some(unsafe { Waker::from_raw(RawWaker::new(data, vtable)) })
    }

    /// Writes `waker`'s data and returns its vtable word (`WAITING`) for the caller to publish.
    /// Safety: the caller owns the slot, whose old waker has been taken out.
    #[inline(always)]
    unsafe fn keep(&self, waker: Waker) -> Word {
        let waker = core::mem::ManuallyDrop::new(waker);
        // SAFETY: owned slot, by the caller's contract.
        self.data.with_mut(|data| unsafe { *data = waker.data() });
        ptr::from_ref(waker.vtable()).cast_mut()
    }

    /// Stores `waker` for the next [`take`](Self::take); a `take` racing with this call
    /// has it woken here instead. Returns whether no `take` came since the last
    /// registration (`false` at the first).
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
                    // A `take` is moving the old waker out: wake the new one directly.
                    waker.wake_by_ref();
                    return false;
                }
                _ => {
                    // A second registrant (excluded): wake, so the caller registers again.
                    debug_assert!(false, "AtomicWaker::register called concurrently");
                    waker.wake_by_ref();
                    return false;
                }
            }
        }
        // The slot is ours; `current` is its vtable part.
        let registering = with_state(current, REGISTERING);
        // SAFETY: owned slot.
        let held = vtable(current).map(|vtable| (self.data.with(|data| unsafe { *data }), vtable));
        let (word, old) = match held {
            Some((data, vtable)) if data == waker.data() && ptr::eq(vtable, waker.vtable()) => {
                // The same waker (what `Waker::will_wake` compares): keep it.
                (current, None)
            }
            _ => {
                // A panicking `clone` must not leave the slot REGISTERING for good:
                // give it back, unchanged, as it unwinds.
                let unwind = ReleaseOnUnwind(self);
                let new = waker.clone();
                core::mem::forget(unwind);
                // SAFETY: owned slot, `current` its vtable part; refilled just below.
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
                // A `take` set WAKING meanwhile and left without the waker: ours to wake.
                // SAFETY: still REGISTERING, so ours; `word` is its vtable part; emptied below.
                let current = unsafe { self.take_held(word) };
                self.word.swap(ptr::null_mut(), Ordering::AcqRel);
                // Wake first: a panicking drop of `old` must not cost the wake.
                if let Some(current) = current {
                    current.wake();
                }
                drop(old);
                false
            }
        }
    }

    /// Stores `waker` without the protocol (the caller clones first). Safety: the caller alone
    /// reaches the empty slot; whatever later publishes it to another thread is a Release.
    pub(crate) unsafe fn set_exclusive(&self, waker: Waker) {
        debug_assert!(
            self.word.load(Ordering::Relaxed).is_null(),
            "a free entry held a waker"
        );
        // SAFETY: exclusive access to an empty slot, by the caller's contract.
        let word = unsafe { self.keep(waker) };
        self.word.store(word, Ordering::Relaxed);
    }

    /// Takes the waker out without the protocol. Safety: the caller alone reaches the slot,
    /// and every other access to it happened before.
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
            // A register will see WAKING, or another take has the waker.
            return None;
        }
        // SAFETY: WAITING -> WAKING makes the slot ours until the swap below empties it.
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

/// Gives the slot back, unchanged, if `register` unwinds. If a `take` came meanwhile, it
/// empties the slot and wakes the waker, as `register` would have.
struct ReleaseOnUnwind<'a>(&'a AtomicWaker);

impl Drop for ReleaseOnUnwind<'_> {
    fn drop(&mut self) {
        let slot = self.0;
        let mut current = slot.word.load(Ordering::Relaxed);
        loop {
            if state(current) & WAKING != 0 {
                // SAFETY: still REGISTERING, so ours; `current` is its vtable part; emptied below.
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

#[cfg(not(punctual_loom))]
#[cfg(test)]
mod tests {
    extern crate std;

    use super::*;
    use core::cell::Cell;
    use core::task::RawWaker;
    use std::sync::Arc;
    use std::task::Wake;

    /// A waker that counts its wakes (told apart by what they wake: Miri may give one vtable
    /// several addresses).
    struct Counter(core::sync::atomic::AtomicUsize);

    impl Wake for Counter {
        fn wake(self: Arc<Self>) {
            self.wake_by_ref();
        }
        fn wake_by_ref(self: &Arc<Self>) {
            self.0.fetch_add(1, Ordering::Relaxed);
        }
    }

    fn counter() -> (Arc<Counter>, Waker) {
        let counter = Arc::new(Counter(core::sync::atomic::AtomicUsize::new(0)));
        (counter.clone(), Waker::from(counter))
    }

    fn wakes(counter: &Counter) -> usize {
        counter.0.load(Ordering::Relaxed)
    }

    #[test]
    fn a_registered_waker_is_taken_once() {
        let slot = AtomicWaker::new();
        assert!(slot.take().is_none(), "an empty slot holds nothing");
        let (count, waker) = counter();
        slot.register(&waker);
        assert_eq!(Arc::strong_count(&count), 3, "the slot holds a clone");
        let taken = slot.take().expect("the registered waker");
        assert!(slot.take().is_none(), "taken once");
        taken.wake();
        assert_eq!(wakes(&count), 1, "the taken waker is the registered one");
        assert_eq!(Arc::strong_count(&count), 2, "the taken clone is gone");
    }

    #[test]
    fn same_waker_is_kept_another_replaces_it() {
        let slot = AtomicWaker::new();
        let (first, first_waker) = counter();
        slot.register(&first_waker);
        slot.register(&first_waker.clone());
        assert_eq!(Arc::strong_count(&first), 3, "kept, not cloned again");
        let (second, second_waker) = counter();
        slot.register(&second_waker);
        assert_eq!(
            Arc::strong_count(&first),
            2,
            "the replaced waker is dropped"
        );
        assert_eq!(Arc::strong_count(&second), 3);
        slot.take().expect("the second waker").wake();
        assert_eq!((wakes(&first), wakes(&second)), (0, 1));
    }

    #[test]
    fn register_reports_untouched_since_last() {
        let slot = AtomicWaker::new();
        let (_first, first_waker) = counter();
        let (_second, second_waker) = counter();
        assert!(!slot.register(&first_waker), "the first registration");
        assert!(slot.register(&first_waker), "the same waker, nothing taken");
        assert!(slot.register(&second_waker), "another waker, nothing taken");
        drop(slot.take());
        assert!(!slot.register(&second_waker), "taken since");
        assert!(slot.register(&second_waker));
        slot.set_bits(WAKING, Ordering::Relaxed);
        assert!(!slot.register(&first_waker));
    }

    #[test]
    fn exclusive_access_and_drop_keep_the_waker_count() {
        let (count, waker) = counter();
        let slot = AtomicWaker::new();
        // SAFETY: the slot is this test's alone, empty and idle.
        unsafe { slot.set_exclusive(waker.clone()) };
        assert_eq!(Arc::strong_count(&count), 3);
        // SAFETY: as above.
        let taken = unsafe { slot.take_exclusive() }.expect("the waker set");
        // SAFETY: as above; emptied by the take.
        assert!(unsafe { slot.take_exclusive() }.is_none());
        taken.wake_by_ref();
        assert_eq!(wakes(&count), 1, "the waker taken is the one set");
        slot.register(&taken);
        drop(taken);
        drop(slot);
        assert_eq!(
            Arc::strong_count(&count),
            2,
            "dropping the slot drops its waker"
        );
    }

    #[test]
    fn busy_slot_gives_nothing_and_register_wakes() {
        let slot = AtomicWaker::new();
        let (count, waker) = counter();
        // `register` holds the slot.
        let registering = slot.set_bits(REGISTERING, Ordering::Relaxed);
        assert!(registering.is_null());
        assert!(slot.take().is_none(), "the slot is busy");
        slot.word.store(ptr::null_mut(), Ordering::Relaxed);
        slot.set_bits(WAKING, Ordering::Relaxed);
        slot.register(&waker);
        assert_eq!(wakes(&count), 1);
        assert_eq!(Arc::strong_count(&count), 2, "nothing was stored");
    }

    std::thread_local! {
        /// The slot that [`PANICKING_CLONE`] takes from before it panics.
        static TAKE_FROM: Cell<*const AtomicWaker> = const { Cell::new(ptr::null()) };
    }

    /// A waker whose clone takes from the slot in [`TAKE_FROM`] (which finds it busy), then
    /// panics: a take that comes while `register` clones.
    static PANICKING_CLONE: RawWakerVTable = RawWakerVTable::new(
        |_| {
            // SAFETY: the test sets the pointer to a slot that outlives the clone.
            let slot = unsafe { &*TAKE_FROM.get() };
            assert!(slot.take().is_none(), "the slot is registering");
            panic!("the clone panics")
        },
        |_| {},
        |_| {},
        |_| {},
    );

    #[test]
    fn panicking_clone_during_take_empties_and_wakes() {
        let slot = AtomicWaker::new();
        let (count, waker) = counter();
        assert!(!slot.register(&waker));
        TAKE_FROM.set(&slot);
        // SAFETY: the vtable's functions ignore the data pointer.
        let panicking = unsafe { Waker::from_raw(RawWaker::new(ptr::null(), &PANICKING_CLONE)) };
        let unwound =
            std::panic::catch_unwind(core::panic::AssertUnwindSafe(|| slot.register(&panicking)));
        assert!(unwound.is_err());
        // The held waker was woken and the slot is empty: the next registration is not untouched.
        assert_eq!(wakes(&count), 1);
        assert_eq!(Arc::strong_count(&count), 2);
        assert!(!slot.register(&waker));
        assert!(slot.take().is_some());
    }

    /// A waker whose first `clone` tells `started`, then waits for `go`, holding `register` up.
    struct PausingClone {
        started: std::sync::Mutex<Option<std::sync::mpsc::Sender<()>>>,
        go: std::sync::Mutex<Option<std::sync::mpsc::Receiver<()>>>,
        wakes: core::sync::atomic::AtomicUsize,
    }

    static PAUSING_CLONE: RawWakerVTable = RawWakerVTable::new(
        |data| {
            // SAFETY: each such waker's data is a live `Arc<PausingClone>` of its own (`into_raw`).
            let this = unsafe { &*data.cast::<PausingClone>() };
            let first = this.started.lock().unwrap().take();
            if let Some(started) = first {
                started.send(()).unwrap();
                let go = this.go.lock().unwrap().take().unwrap();
                go.recv().unwrap();
            }
            // SAFETY: as above; the clone owns one more count.
            unsafe { Arc::increment_strong_count(data.cast::<PausingClone>()) };
            RawWaker::new(data, &PAUSING_CLONE)
        },
        |data| {
            // SAFETY: as in `clone`; this waker's count is given up here.
            let this = unsafe { Arc::from_raw(data.cast::<PausingClone>()) };
            this.wakes.fetch_add(1, Ordering::Relaxed);
        },
        |data| {
            // SAFETY: as in `clone`.
            let this = unsafe { &*data.cast::<PausingClone>() };
            this.wakes.fetch_add(1, Ordering::Relaxed);
        },
        // SAFETY: as in `clone`; this waker's count is given up here.
        |data| drop(unsafe { Arc::from_raw(data.cast::<PausingClone>()) }),
    );

    #[test]
    fn take_during_register_wakes_new_waker() {
        use std::sync::mpsc;
        let (started_tx, started_rx) = mpsc::channel();
        let (go_tx, go_rx) = mpsc::channel();
        let pausing = Arc::new(PausingClone {
            started: std::sync::Mutex::new(Some(started_tx)),
            go: std::sync::Mutex::new(Some(go_rx)),
            wakes: core::sync::atomic::AtomicUsize::new(0),
        });
        let data = Arc::into_raw(pausing.clone()).cast::<()>();
        // SAFETY: `data` is an `Arc<PausingClone>` of this waker's own, as the vtable needs.
        let waker = unsafe { Waker::from_raw(RawWaker::new(data, &PAUSING_CLONE)) };
        let slot = AtomicWaker::new();
        let (old, old_waker) = counter();
        assert!(!slot.register(&old_waker));
        let (registered, taken) = std::thread::scope(|s| {
            let slot = &slot;
            let taker = s.spawn(move || {
                started_rx.recv().unwrap();
                // The slot is REGISTERING: the take marks it and leaves with nothing.
                let taken = slot.take();
                go_tx.send(()).unwrap();
                taken
            });
            // Pauses in `clone`, with the slot held, until the take has come and gone.
            let registered = slot.register(&waker);
            (registered, taker.join().unwrap())
        });
        assert!(taken.is_none(), "the take found the slot busy");
        assert!(
            !registered,
            "a take came: the waker does not read as untouched"
        );
        // The register woke its new waker in the take's stead, and dropped the old one unwoken.
        assert_eq!(pausing.wakes.load(Ordering::Relaxed), 1);
        assert_eq!(wakes(&old), 0);
        assert_eq!(Arc::strong_count(&old), 2, "the replaced waker is dropped");
        assert!(slot.take().is_none(), "the slot is empty after the wake");
        drop(waker);
        assert_eq!(Arc::strong_count(&pausing), 1, "every clone is dropped");
    }
}
