//! Helpers shared by the core's tests, in one place: the counting waker every test polls
//! with (here), the clock and wheel shorthands ([`time`]), the inner future that records
//! its polls and its drop ([`probe`]), a reproducible random generator ([`rng`]), driving
//! a wheel by hand ([`driving`]), and a catch for the panics a test provokes
//! ([`quietly`]).
//!
//! The fuzz target includes this file with `#[path]` too, for [`CountingWaker`]; so
//! nothing here needs more than `std` and `punctual_core`. Under `cfg(punctual_loom)` the
//! waker counts with a loom atomic, so that loom sees the hand-off of every wake.
#![allow(
    dead_code,
    unused_imports,
    unexpected_cfgs,
    clippy::new_without_default
)]

mod driving;
mod probe;
mod rng;
mod time;

use core::future::Future;
use core::pin::Pin;
use core::sync::atomic::Ordering::SeqCst;
use core::task::{Context, Poll, RawWaker, RawWakerVTable, Waker};
use std::panic::{AssertUnwindSafe, catch_unwind};
use std::sync::Arc;

#[cfg(not(punctual_loom))]
use core::sync::atomic::AtomicUsize;
#[cfg(punctual_loom)]
use loom::sync::atomic::AtomicUsize;

pub(crate) use driving::{NeverSleeper, TestWheel, drive_until_woken, idle_wheel, poll_until_idle};
pub(crate) use probe::{Probe, ProbeState};
pub(crate) use rng::Rng;
pub(crate) use time::{
    AdvanceToManual, CLOCK_END, SPREAD, TICK, duration_of, fixed, growable, is_elapsed, ms, ns,
    ticks, us,
};

struct Counter(AtomicUsize);

/// The vtable of every `CountingWaker`'s waker and of its clones, in a `static`: one
/// address, which `Waker::will_wake` compares, under Miri too. (`Waker::from` an
/// `Arc<impl Wake>` names a constant vtable, and Miri may give each use of a constant an
/// address of its own: two clones of one such waker may then not "will wake" each other,
/// and the wheel, which keeps a waker once where it compares them, would keep it twice.)
static COUNTING: RawWakerVTable = RawWakerVTable::new(
    clone_counting,
    wake_counting,
    wake_counting_by_ref,
    drop_counting,
);

/// A raw waker over one strong count of the `Arc<Counter>` behind `data`.
fn raw_counting(data: *const ()) -> RawWaker {
    RawWaker::new(data, &COUNTING)
}

/// # Safety
///
/// `data` is an `Arc<Counter>`'s pointer (`Arc::into_raw`) whose waker holds one count.
unsafe fn clone_counting(data: *const ()) -> RawWaker {
    // SAFETY: the waker being cloned holds a count of this `Arc`, so it is alive.
    unsafe { Arc::increment_strong_count(data.cast::<Counter>()) };
    raw_counting(data)
}

/// # Safety
///
/// As for `clone_counting`; the waker's count is given up.
unsafe fn wake_counting(data: *const ()) {
    // SAFETY: takes back the count the waker held.
    let counter = unsafe { Arc::from_raw(data.cast::<Counter>()) };
    counter.0.fetch_add(1, SeqCst);
}

/// # Safety
///
/// As for `clone_counting`.
unsafe fn wake_counting_by_ref(data: *const ()) {
    // SAFETY: the waker holds a count, so the counter is alive while it is borrowed.
    let counter = unsafe { &*data.cast::<Counter>() };
    counter.0.fetch_add(1, SeqCst);
}

/// # Safety
///
/// As for `wake_counting`.
unsafe fn drop_counting(data: *const ()) {
    // SAFETY: takes back the count the waker held, and drops it.
    drop(unsafe { Arc::from_raw(data.cast::<Counter>()) });
}

/// A waker that counts its wakes.
pub(crate) struct CountingWaker {
    counter: Arc<Counter>,
    /// The waker to poll with.
    pub waker: Waker,
}

impl CountingWaker {
    /// A waker not woken yet.
    pub(crate) fn new() -> Self {
        let counter = Arc::new(Counter(AtomicUsize::new(0)));
        let data = Arc::into_raw(counter.clone()).cast::<()>();
        // SAFETY: `COUNTING`'s functions keep the contract of `RawWakerVTable` for a
        // `data` that is an `Arc<Counter>` holding one count, as this one does.
        let waker = unsafe { Waker::from_raw(raw_counting(data)) };
        Self { counter, waker }
    }

    /// How many times it was woken.
    pub(crate) fn wakes(&self) -> usize {
        self.counter.0.load(SeqCst)
    }

    /// Tells this waker apart from every other `CountingWaker`, clones of its `waker`
    /// included, without a `Waker` at hand.
    #[allow(dead_code)]
    pub(crate) fn id(&self) -> usize {
        Arc::as_ptr(&self.counter) as usize
    }

    /// Polls `future` with this waker.
    pub(crate) fn poll<F: Future + ?Sized>(&self, future: Pin<&mut F>) -> Poll<F::Output> {
        future.poll(&mut Context::from_waker(&self.waker))
    }
}

/// Polls `future` once with a waker that does nothing.
pub(crate) fn poll<F: Future + ?Sized>(future: Pin<&mut F>) -> Poll<F::Output> {
    future.poll(&mut Context::from_waker(Waker::noop()))
}

/// Polls `future` once with `cx`: it must stay pending.
pub(crate) fn poll_pending<F: Future + Unpin>(future: &mut F, cx: &mut Context<'_>) {
    assert!(Pin::new(future).poll(cx).is_pending());
}

/// Runs `f`, catching its panic (which the test provoked on purpose).
pub(crate) fn quietly<R>(f: impl FnOnce() -> R) -> std::thread::Result<R> {
    catch_unwind(AssertUnwindSafe(f))
}
