//! A waker slot that one task registers into and another thread takes out of, lock-free.
//!
//! This is the well-known `AtomicWaker` algorithm of `futures-util` and `atomic-waker`,
//! written against [`crate::sync`] so that loom explores it together with the wheel: the
//! crates' versions use `core` atomics, which loom cannot see, and the hand-off "register a
//! waker, then check the entry" against "mark the entry fired, then take the waker" is the
//! one that must never lose a wakeup.
//!
//! # Layout: two words
//!
//! The crates keep a state word beside an `Option<Waker>`: 24 bytes on 64-bit targets. Here
//! the slot is two pointer-sized words, 16 bytes, which is what lets a wheel entry fit 40
//! (see `entry`):
//!
//! * `word`: the held waker's vtable pointer, with the slot's state in its two low bits
//!   (a [`RawWakerVTable`] holds function pointers, so its address is a multiple of at
//!   least four; a compile-time check says so). A null vtable means no waker is held.
//! * `data`: the held waker's data pointer, meaningful only while the vtable is not null.
//!
//! A [`Waker`] is taken apart into these two ([`Waker::data`], [`Waker::vtable`]) and put
//! back together only from parts that came from one, so the slot owns exactly the waker it
//! was given. The state bits are changed with compare-and-swap loops (an atomic pointer has
//! no stable `fetch_or`), each one read-modify-write like the crates' `fetch_or` and
//! `fetch_and`; the pointer keeps its provenance through `map_addr`, so Miri's
//! strict provenance checks it.
//!
//! # State bits
//!
//! | value                   | meaning                                                  |
//! |-------------------------|----------------------------------------------------------|
//! | `WAITING` (0)           | idle: the slot may hold a waker, nobody is touching it  |
//! | `REGISTERING` (1)       | `register` owns the slot and is replacing the waker      |
//! | `WAKING` (2)            | `take` owns the slot and is moving the waker out         |
//! | `REGISTERING \| WAKING` | a `take` arrived during `register`: `register` wakes     |
//!
//! Only the owner of the slot (the thread whose transition left `WAITING`) changes the
//! vtable bits or the `data` word; everyone else only sets `WAKING`.
//!
//! Ground rules: at most one thread calls `register` at a time (the owner of the deadline,
//! through `&mut`, or of a driver's slot: see `driver_wakers`); any number may call `take`.

use core::ptr;
use core::task::{RawWaker, RawWakerVTable, Waker};

use crate::sync::{AtomicPtr, Ordering, UnsafeCell};

const WAITING: usize = 0;
const REGISTERING: usize = 0b01;
const WAKING: usize = 0b10;
const STATE: usize = REGISTERING | WAKING;

// The state bits live in the vtable pointer's low bits: it must be aligned enough.
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
    // SAFETY: a non-null vtable part of a word was stored from a `&'static RawWakerVTable`
    // (`Waker::vtable`) with its provenance kept (`map_addr`), so it points to a live,
    // aligned vtable for the rest of the program.
    (!vtable.is_null()).then(|| unsafe { &*vtable })
}

/// The word of a slot holding a waker with `vtable`, in state `WAITING`.
#[inline(always)]
fn word_of(vtable: &'static RawWakerVTable) -> Word {
    ptr::from_ref(vtable).cast_mut()
}

pub(crate) struct AtomicWaker {
    word: AtomicPtr<RawWakerVTable>,
    data: UnsafeCell<*const ()>,
}

// SAFETY: the `data` cell, and the waker the two words make up, are only touched by the
// thread that won the state transition out of `WAITING` (see the table above), so never
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
                    // REGISTERING: a second registrant, which the ground rules exclude.
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
mod tests {
    extern crate std;

    use super::*;
    use core::cell::Cell;
    use core::task::RawWaker;
    use std::sync::Arc;
    use std::task::Wake;

    /// A waker that counts its wakes; `Arc::strong_count` counts its clones. (Wakers are
    /// told apart by what they wake, not by `will_wake`: Miri may give one vtable several
    /// addresses.)
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
    fn registering_the_same_waker_keeps_it_and_another_replaces_it() {
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
    fn register_tells_whether_anything_took_the_waker_since_the_last_one() {
        let slot = AtomicWaker::new();
        let (_first, first_waker) = counter();
        let (_second, second_waker) = counter();
        assert!(!slot.register(&first_waker), "the first registration");
        assert!(slot.register(&first_waker), "the same waker, nothing taken");
        assert!(slot.register(&second_waker), "another waker, nothing taken");
        drop(slot.take());
        assert!(!slot.register(&second_waker), "taken since");
        assert!(slot.register(&second_waker));
        // A take in progress: the registration wakes its waker itself.
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
    fn a_busy_slot_is_not_taken_from_and_a_register_during_a_take_wakes() {
        let slot = AtomicWaker::new();
        let (count, waker) = counter();
        // The state a `take` leaves when it arrives while `register` holds the slot.
        let registering = slot.set_bits(REGISTERING, Ordering::Relaxed);
        assert!(registering.is_null());
        assert!(slot.take().is_none(), "the slot is busy");
        slot.word.store(ptr::null_mut(), Ordering::Relaxed);
        // A register that finds a take in progress wakes its waker itself.
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
    fn a_clone_that_panics_during_a_take_leaves_the_slot_empty_and_wakes_its_waker() {
        let slot = AtomicWaker::new();
        let (count, waker) = counter();
        assert!(!slot.register(&waker));
        TAKE_FROM.set(&slot);
        // SAFETY: the vtable's functions ignore the data pointer.
        let panicking = unsafe { Waker::from_raw(RawWaker::new(ptr::null(), &PANICKING_CLONE)) };
        let unwound =
            std::panic::catch_unwind(core::panic::AssertUnwindSafe(|| slot.register(&panicking)));
        assert!(unwound.is_err());
        // The take's wake reached the waker the slot held, and the slot is empty: the next
        // registration does not read as untouched.
        assert_eq!(wakes(&count), 1);
        assert_eq!(Arc::strong_count(&count), 2);
        assert!(!slot.register(&waker));
        assert!(slot.take().is_some());
    }

    /// A waker whose first `clone` pauses: it tells `started`, then waits for `go`, so
    /// that another thread can act while a `register` holds the slot.
    struct PausingClone {
        started: std::sync::Mutex<Option<std::sync::mpsc::Sender<()>>>,
        go: std::sync::Mutex<Option<std::sync::mpsc::Receiver<()>>>,
        wakes: core::sync::atomic::AtomicUsize,
    }

    static PAUSING_CLONE: RawWakerVTable = RawWakerVTable::new(
        |data| {
            // SAFETY: every `PAUSING_CLONE` waker's data is an `Arc<PausingClone>` of its
            // own, made by `Arc::into_raw` (see the test), and not yet dropped.
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
    fn a_take_while_a_register_holds_the_slot_wakes_the_new_waker() {
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
        // The take was for whoever is registered: the register woke its new waker in the
        // take's stead, and dropped the one it replaced without waking it.
        assert_eq!(pausing.wakes.load(Ordering::Relaxed), 1);
        assert_eq!(wakes(&old), 0);
        assert_eq!(Arc::strong_count(&old), 2, "the replaced waker is dropped");
        assert!(slot.take().is_none(), "the slot is empty after the wake");
        drop(waker);
        assert_eq!(Arc::strong_count(&pausing), 1, "every clone is dropped");
    }
}
