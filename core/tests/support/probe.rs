//! An inner future that records what a deadline does to it: its polls, its drop (a drop
//! flag), the order of the two; it becomes ready, or panics while polled or dropped, on
//! request.

use core::future::Future;
use core::pin::Pin;
use core::sync::atomic::{AtomicBool, AtomicUsize, Ordering::SeqCst};
use core::task::{Context, Poll};
use std::sync::{Arc, Mutex};
use std::thread;

/// What the probes made from it saw, and what they are told to do; clones share it.
#[derive(Clone, Default)]
pub(crate) struct ProbeState {
    polls: Arc<AtomicUsize>,
    drops: Arc<AtomicUsize>,
    ready: Arc<AtomicBool>,
    panic_on_poll: Arc<AtomicBool>,
    panic_on_drop: Arc<AtomicBool>,
    log: Arc<Mutex<Vec<&'static str>>>,
}

impl ProbeState {
    /// A future that reports here: pending until [`set_ready`](Self::set_ready), then
    /// ready with 7.
    pub(crate) fn probe(&self) -> Probe {
        Probe(self.clone())
    }

    /// How many times a probe was polled.
    pub(crate) fn polls(&self) -> usize {
        self.polls.load(SeqCst)
    }

    /// Whether a probe was dropped.
    pub(crate) fn dropped(&self) -> bool {
        self.drops() > 0
    }

    /// How many probes were dropped.
    pub(crate) fn drops(&self) -> usize {
        self.drops.load(SeqCst)
    }

    /// The probes are ready at their next poll.
    pub(crate) fn set_ready(&self) {
        self.ready.store(true, SeqCst);
    }

    /// The probes panic at their next poll.
    pub(crate) fn panic_on_poll(&self) {
        self.panic_on_poll.store(true, SeqCst);
    }

    /// The next probe dropped panics in its destructor (unless the thread is panicking
    /// already).
    pub(crate) fn panic_on_drop(&self) {
        self.panic_on_drop.store(true, SeqCst);
    }

    /// Adds `event` to the log, after the polls and drops logged so far.
    pub(crate) fn log(&self, event: &'static str) {
        self.log.lock().unwrap().push(event);
    }

    /// The log: `"poll"` and `"drop"` as they happened, with the events the test added.
    pub(crate) fn events(&self) -> Vec<&'static str> {
        self.log.lock().unwrap().clone()
    }
}

/// The future of a [`ProbeState`].
pub(crate) struct Probe(ProbeState);

impl Future for Probe {
    type Output = u32;

    fn poll(self: Pin<&mut Self>, _: &mut Context<'_>) -> Poll<u32> {
        assert!(!self.0.dropped(), "polled after drop");
        self.0.polls.fetch_add(1, SeqCst);
        self.0.log("poll");
        if self.0.panic_on_poll.load(SeqCst) {
            panic!("inner future exploded while polled");
        }
        if self.0.ready.load(SeqCst) {
            Poll::Ready(7)
        } else {
            Poll::Pending
        }
    }
}

impl Drop for Probe {
    fn drop(&mut self) {
        self.0.drops.fetch_add(1, SeqCst);
        self.0.log("drop");
        if self.0.panic_on_drop.swap(false, SeqCst) && !thread::panicking() {
            panic!("inner future exploded while dropped");
        }
    }
}
