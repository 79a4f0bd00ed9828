//! The minimal firmware that `ci/firmware_sizes.sh` measures, with punctual: one deadline
//! that fires and one that completes, on an `EmbassyWheel` of 8 entries (16 with the
//! `wheel-16` feature, which gives the cost of an entry). `size-with-timeout` is the same
//! firmware with `embassy_time::with_timeout`.
//!
//! Prints fixed strings only: formatting `Elapsed` with `{:?}` would add its formatting
//! code to what is measured.

#![no_std]
#![no_main]

#[path = "../handlers.rs"]
mod handlers;
#[allow(dead_code)]
#[path = "../time_driver.rs"]
mod time_driver;

use core::future::pending;
use core::time::Duration;

use cortex_m_semihosting::{debug, hprintln};
use embassy_executor::Spawner;
use embassy_time::Timer;
use punctual::adapters::embassy::EmbassyWheel;

/// Entries of the measured wheel.
#[cfg(not(feature = "wheel-16"))]
const ENTRIES: usize = 8;
/// Entries of the measured wheel.
#[cfg(feature = "wheel-16")]
const ENTRIES: usize = 16;

/// The measured wheel: `ci/firmware_sizes.sh` reads this symbol's size and section.
static WHEEL: EmbassyWheel<ENTRIES> = punctual::adapters::embassy::wheel();

/// Turns the wheel, forever.
#[embassy_executor::task]
async fn punctual_driver() -> ! {
    match punctual::adapters::embassy::run(&WHEEL).await {}
}

#[embassy_executor::main]
async fn main(spawner: Spawner) {
    let peripherals = cortex_m::Peripherals::take().expect("peripherals taken once");
    time_driver::init(peripherals.SYST);
    spawner.spawn(punctual_driver().expect("one driver task"));

    let fired = WHEEL
        .deadline(Duration::from_millis(5), pending::<()>())
        .await
        .is_err();
    let completed = WHEEL
        .deadline(Duration::from_millis(50), Timer::after_millis(1))
        .await
        .is_ok();
    if fired && completed {
        hprintln!("size-punctual: ok");
        debug::exit(debug::EXIT_SUCCESS);
    } else {
        hprintln!("size-punctual: FAIL");
        debug::exit(debug::EXIT_FAILURE);
    }
}
