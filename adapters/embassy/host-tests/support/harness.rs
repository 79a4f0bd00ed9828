//! The conformance harness for punctual-embassy on a virtual embassy clock, shared by the
//! host test crates (`mock/`: embassy-time's mock driver; `coarse/`: a 100 Hz driver of our
//! own whose true time runs between its ticks).
//!
//! Include it next to the suite, in a test target whose build selects exactly one embassy
//! time driver and a `generic-queue-N` feature (the harness polls the driver future with a
//! waker of its own, not an embassy task's):
//!
//! ```ignore
//! #[path = "../../../../../tests/conformance/mod.rs"]
//! mod conformance;
//! #[path = "../../support/harness.rs"]
//! mod harness;
//! ```
//!
//! Time is virtual and global to the test binary: run the tests with `--test-threads=1`.
//! Each harness resets the clock and makes a fresh wheel.
#![allow(dead_code)]

use core::future::Future;
use core::marker::PhantomData;
use core::pin::pin;
use core::sync::atomic::{AtomicBool, Ordering};
use core::task::{Context, Poll, Waker};
use core::time::Duration;
use std::sync::Arc;
use std::task::Wake;

use punctual_embassy::EmbassyWheel;

use crate::conformance;

/// Entries of each test's wheel: more than the suite ever holds at once (500).
pub const CAPACITY: usize = 1024;

/// A wheel for one test, alive for the rest of the process: `u16` slot heads, since it
/// holds more than the 255 entries of the default `u8` ones.
pub type TestWheel = EmbassyWheel<CAPACITY, u16>;

/// A virtual embassy time driver that a test moves by hand.
pub trait VirtualTime {
    /// How far the harness moves time when every task is idle.
    const STEP: Duration;

    /// Back to time zero, forgetting every scheduled wake.
    fn reset();

    /// Moves time forward by `by`, waking every embassy timer that came due.
    fn advance(by: Duration);

    /// The true time since zero: what the driver's tick counter rounds down.
    fn true_now() -> Duration;
}

/// Resets the clock and leaks a fresh wheel on it.
pub fn fresh_wheel<T: VirtualTime>() -> &'static TestWheel {
    T::reset();
    Box::leak(Box::new(punctual_embassy::wheel()))
}

struct Flag(AtomicBool);

impl Wake for Flag {
    fn wake(self: Arc<Self>) {
        self.0.store(true, Ordering::SeqCst);
    }
}

/// Runs `body` to completion while a punctual-embassy driver turns `wheel`, on one thread:
/// the body and the driver are polled whenever they were woken, and when neither was, time
/// moves by [`VirtualTime::STEP`], like tokio's paused clock auto-advancing.
///
/// # Panics
///
/// If the clock passes `limit` of true time (a lost wakeup), or if `body` panics.
pub fn run_driven<T: VirtualTime, R>(
    wheel: &TestWheel,
    limit: Duration,
    body: impl Future<Output = R>,
) -> R {
    let body_flag = Arc::new(Flag(AtomicBool::new(true)));
    let body_waker = Waker::from(body_flag.clone());
    let driver_flag = Arc::new(Flag(AtomicBool::new(true)));
    let driver_waker = Waker::from(driver_flag.clone());
    let mut body = pin!(body);
    let mut driver = pin!(punctual_embassy::run(wheel));
    loop {
        let mut idle = true;
        if driver_flag.0.swap(false, Ordering::SeqCst) {
            idle = false;
            let Poll::Pending = driver
                .as_mut()
                .poll(&mut Context::from_waker(&driver_waker));
        }
        if body_flag.0.swap(false, Ordering::SeqCst) {
            idle = false;
            if let Poll::Ready(output) = body.as_mut().poll(&mut Context::from_waker(&body_waker)) {
                return output;
            }
        }
        if idle {
            assert!(
                T::true_now() < limit,
                "no progress after {limit:?} of virtual time: lost wakeup"
            );
            T::advance(T::STEP);
        }
    }
}

/// The conformance suite's view of a punctual-embassy wheel on virtual time `T`.
pub struct EmbassyHarness<T> {
    wheel: &'static TestWheel,
    time: PhantomData<T>,
}

impl<T: VirtualTime> EmbassyHarness<T> {
    /// A fresh wheel at time zero.
    pub fn new() -> Self {
        Self {
            wheel: fresh_wheel::<T>(),
            time: PhantomData,
        }
    }
}

impl<T: VirtualTime> conformance::Harness for EmbassyHarness<T> {
    const EXACT: bool = true;

    fn wheel_view(&self) -> &'static dyn conformance::WheelView {
        self.wheel
    }

    fn run(&self, body: impl Future<Output = ()>) {
        // The manual-clock harness allows an hour; stepping finely, a minute is plenty and
        // fails a lost wakeup in seconds.
        run_driven::<T, ()>(self.wheel, Duration::from_secs(60), body);
    }
}
