//! The conformance suite on punctual-embassy at a coarse embassy tick: 100 Hz, so
//! `Instant::now()` reads the true time rounded down to 10 ms, under a driver of our own
//! whose true time moves by 0.7 ms whenever every task is idle. Deadlines therefore start
//! anywhere within a tick. The wheel's tick is the recommended `TICK`, one embassy tick.
//! Exact: lateness is checked to the wheel tick, on the wheel's clock.
//!
//! Run with `--test-threads=1`: the virtual clock is global to this binary.

#[path = "../../../../../tests/conformance/mod.rs"]
mod conformance;
#[path = "../../support/harness.rs"]
mod harness;

use core::time::Duration;

use harness::{EmbassyHarness, VirtualTime};
use punctual_embassy_coarse_tests as true_time;

/// The 100 Hz driver, moved by a step that is not a divisor of its tick.
struct Coarse;

impl VirtualTime for Coarse {
    const STEP: Duration = Duration::from_micros(700);

    fn reset() {
        true_time::reset();
    }

    fn advance(by: Duration) {
        true_time::advance(by);
    }

    fn true_now() -> Duration {
        true_time::true_now()
    }
}

#[test]
fn the_wheel_ticks_with_embassy() {
    assert_eq!(punctual_embassy::TICK, Duration::from_millis(10));
    assert_eq!(punctual_embassy::RESOLUTION, Duration::from_millis(10));
}

conformance_suite!(EmbassyHarness::<Coarse>::new());
