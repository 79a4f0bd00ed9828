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
use core::task::{Context, Poll, Waker};
use std::panic::{AssertUnwindSafe, catch_unwind};
use std::sync::Arc;
use std::task::Wake;

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

impl Wake for Counter {
    fn wake(self: Arc<Self>) {
        self.0.fetch_add(1, SeqCst);
    }

    fn wake_by_ref(self: &Arc<Self>) {
        self.0.fetch_add(1, SeqCst);
    }
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
        let waker = Waker::from(counter.clone());
        Self { counter, waker }
    }

    /// How many times it was woken.
    pub(crate) fn wakes(&self) -> usize {
        self.counter.0.load(SeqCst)
    }

    /// Tells this waker apart from every other `CountingWaker`, clones of its `waker`
    /// included: unlike `Waker::will_wake`, which Miri may answer `false` for two clones
    /// of one waker (it does not keep vtables unique), this never errs.
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
