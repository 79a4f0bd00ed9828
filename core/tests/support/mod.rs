//! Helpers shared by the core's tests and the fuzz target (which includes this file with
//! `#[path]`): a waker that counts its wakes.
#![allow(dead_code, clippy::new_without_default)]

use core::future::Future;
use core::pin::Pin;
use core::sync::atomic::{AtomicUsize, Ordering::SeqCst};
use core::task::{Context, Poll, Waker};
use std::sync::Arc;
use std::task::Wake;

#[derive(Default)]
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
        let counter = Arc::new(Counter::default());
        let waker = Waker::from(counter.clone());
        Self { counter, waker }
    }

    /// How many times it was woken.
    pub(crate) fn wakes(&self) -> usize {
        self.counter.0.load(SeqCst)
    }

    /// Polls `future` with this waker.
    pub(crate) fn poll<F: Future + ?Sized>(&self, future: Pin<&mut F>) -> Poll<F::Output> {
        future.poll(&mut Context::from_waker(&self.waker))
    }
}
