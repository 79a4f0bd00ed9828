//! The conformance suite on `punctual::virtual_time`: the calling thread's paused wheel,
//! moved by `virtual_time::advance` a tick at a time whenever every task is idle, under a
//! plain `block_on`-style loop (any executor on the paused thread). Exact: lateness is
//! checked to the tick.

#[path = "../conformance/mod.rs"]
mod conformance;

use core::future::Future;
use core::pin::pin;
use core::sync::atomic::{AtomicBool, Ordering};
use core::task::{Context, Poll, Waker};
use core::time::Duration;
use std::sync::Arc;
use std::task::Wake;

use punctual::virtual_time;

/// Polls in a row without the body going idle after which the clock moves anyway.
const BUSY_POLLS: u32 = 1_000;

/// The paused wheel of the test's thread (each test runs on a thread of its own).
struct Paused;

impl Paused {
    fn new() -> Self {
        virtual_time::pause();
        Self
    }
}

struct Flag(AtomicBool);
impl Wake for Flag {
    fn wake(self: Arc<Self>) {
        self.0.store(true, Ordering::SeqCst);
    }
}

impl conformance::Harness for Paused {
    const EXACT: bool = true;

    fn wheel_view(&self) -> &'static dyn conformance::WheelView {
        virtual_time::paused_wheel()
    }
    fn run(&self, body: impl Future<Output = ()>) {
        let flag = Arc::new(Flag(AtomicBool::new(true)));
        let waker = Waker::from(flag.clone());
        let mut cx = Context::from_waker(&waker);
        let mut body = pin!(body);
        // A bound on virtual time, so a lost wakeup fails instead of hanging.
        let limit = self.now() + Duration::from_secs(3600);
        let mut busy = 0;
        loop {
            if busy < BUSY_POLLS && flag.0.swap(false, Ordering::SeqCst) {
                if let Poll::Ready(()) = body.as_mut().poll(&mut cx) {
                    return;
                }
                busy += 1;
                continue;
            }
            // Idle, or busy for `BUSY_POLLS` polls (then still woken: polled after the tick).
            busy = 0;
            assert!(
                self.now() < limit,
                "no progress after an hour of virtual time: lost wakeup"
            );
            virtual_time::advance(self.tick());
        }
    }
}

conformance_suite!(Paused::new());
