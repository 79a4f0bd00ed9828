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
