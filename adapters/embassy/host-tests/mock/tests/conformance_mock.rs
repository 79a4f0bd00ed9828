//! The conformance suite on punctual-embassy under embassy-time's mock driver: a wheel on
//! [`EmbassyClock`](punctual_embassy::EmbassyClock) (1 µs embassy ticks, the recommended
//! 1 ms wheel tick) turned by `punctual_embassy::run`, whose sleeps are `embassy_time::Timer`s.
//! When every task is idle, `MockDriver::advance` moves time by one embassy tick. Exact:
//! lateness is checked to the wheel tick.
//!
//! Run with `--test-threads=1`: the mock clock is global to this binary.

#[path = "../../../../../tests/conformance/mod.rs"]
mod conformance;
#[path = "../../support/harness.rs"]
mod harness;

use core::time::Duration;

use embassy_time::{Instant, MockDriver};
use harness::{EmbassyHarness, VirtualTime};

/// embassy-time's mock driver.
struct Mock;

impl VirtualTime for Mock {
    const STEP: Duration = Duration::from_micros(1);

    fn reset() {
        MockDriver::get().reset();
    }

    fn advance(by: Duration) {
        let by = embassy_time::Duration::try_from(by).expect("a step fits embassy's range");
        MockDriver::get().advance(by);
    }

    fn true_now() -> Duration {
        // The mock's time moves in whole ticks: its reading is the true time.
        Duration::from_micros(Instant::now().as_micros())
    }
}

conformance_suite!(EmbassyHarness::<Mock>::new());
