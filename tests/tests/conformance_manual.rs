//! The conformance suite on a wheel with a manual clock, turned by the test itself: when
//! every task is idle, the clock moves one tick and the wheel turns, like tokio's paused
//! clock auto-advancing. Exact: lateness is checked to the tick.
//!
//! The suite runs on a wheel that grows; a full wheel's degraded mode, on one of 8 entries
//! (where a task that polls busily sees the clock move a tick every 1 000 polls,
//! as time passes on a real clock while it spins).

#[path = "../conformance/mod.rs"]
mod conformance;

use core::future::Future;
use core::time::Duration;

use punctual::wheel::{Fixed, Growable, ManualClock, Storage, Wheel};

const TICK: Duration = Duration::from_millis(1);

struct Manual<S: Storage + 'static> {
    wheel: &'static Wheel<ManualClock, S>,
    fixed_capacity: Option<usize>,
}

impl Manual<Growable> {
    fn new() -> Self {
        let wheel = Box::leak(Box::new(Wheel::growable(ManualClock::new(), TICK)));
        Self {
            wheel,
            fixed_capacity: None,
        }
    }
}

impl Manual<Fixed<8>> {
    fn fixed() -> Self {
        let wheel = Box::leak(Box::new(Wheel::fixed(ManualClock::new(), TICK)));
        Self {
            wheel,
            fixed_capacity: Some(wheel.capacity()),
        }
    }
}

impl<S: Storage + 'static> conformance::Harness for Manual<S> {
    const EXACT: bool = true;

    fn wheel_view(&self) -> &'static dyn conformance::WheelView {
        self.wheel
    }
    fn fixed_capacity(&self) -> Option<usize> {
        self.fixed_capacity
    }
    fn degraded_polls(&self) -> Option<usize> {
        Some(self.wheel.degraded_polls())
    }
    fn run(&self, body: impl Future<Output = ()>) {
        let wheel = self.wheel;
        conformance::run_on_virtual_time(
            body,
            || self.now(),
            || {
                wheel.advance(wheel.tick());
            },
        );
    }
}

conformance_suite!(Manual::new());

/// The full-wheel scenario on a wheel that can fill (the suite's own grows).
#[test]
fn full_wheel_degrades_on_a_fixed_wheel() {
    conformance::full_wheel_degrades(&Manual::fixed());
}
