//! A virtual embassy time driver at 100 Hz whose **true** time is kept in nanoseconds and
//! moves by any amount: its tick counter, what `embassy_time::Instant::now()` reads, is the
//! true time rounded down to a 10 ms tick, like a hardware timer's counter between two of
//! its ticks. The tests move the true time with [`advance`] and compare deadlines against
//! [`true_now`].
//!
//! The state is global (one time driver per binary): run tests with `--test-threads=1`.

use core::cell::RefCell;
use core::task::Waker;
use core::time::Duration;

use critical_section::Mutex;
use embassy_time_driver::{Driver, TICK_HZ};
use embassy_time_queue_utils::Queue;

const _: () = assert!(TICK_HZ == 100, "this crate is about a 100 Hz tick");

struct TrueTimeDriver {
    state: Mutex<RefCell<State>>,
}

struct State {
    /// The true time since zero.
    nanos: u64,
    queue: Queue,
}

impl State {
    const fn new() -> Self {
        Self {
            nanos: 0,
            queue: Queue::new(),
        }
    }

    /// The tick counter: the true time rounded down to a tick.
    fn ticks(&self) -> u64 {
        (self.nanos as u128 * TICK_HZ as u128 / 1_000_000_000) as u64
    }
}

embassy_time_driver::time_driver_impl!(static DRIVER: TrueTimeDriver = TrueTimeDriver {
    state: Mutex::new(RefCell::new(State::new())),
});

impl Driver for TrueTimeDriver {
    fn now(&self) -> u64 {
        critical_section::with(|cs| self.state.borrow_ref(cs).ticks())
    }

    fn schedule_wake(&self, at: u64, waker: &Waker) {
        critical_section::with(|cs| {
            let state = &mut *self.state.borrow_ref_mut(cs);
            state.queue.schedule_wake(at, waker);
            // Wakes at once a waker whose time has already come.
            let now = state.ticks();
            state.queue.next_expiration(now);
        });
    }
}

/// Back to true time zero, forgetting every scheduled wake.
pub fn reset() {
    critical_section::with(|cs| *DRIVER.state.borrow_ref_mut(cs) = State::new());
}

/// Moves the true time forward by `by`, waking every timer whose tick came.
pub fn advance(by: Duration) {
    critical_section::with(|cs| {
        let state = &mut *DRIVER.state.borrow_ref_mut(cs);
        let by = u64::try_from(by.as_nanos()).expect("virtual time fits 584 years");
        state.nanos = state.nanos.checked_add(by).expect("virtual time overflow");
        let now = state.ticks();
        state.queue.next_expiration(now);
    });
}

/// The true time since zero (the tick counter rounds it down).
pub fn true_now() -> Duration {
    Duration::from_nanos(critical_section::with(|cs| {
        DRIVER.state.borrow_ref(cs).nanos
    }))
}
