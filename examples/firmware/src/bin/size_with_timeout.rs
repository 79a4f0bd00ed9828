//! The minimal firmware that `ci/firmware_sizes.sh` measures, with embassy-time's own
//! `with_timeout`: one timeout that fires and one that completes. `size-punctual` is the
//! same firmware with punctual.

#![no_std]
#![no_main]

#[path = "../handlers.rs"]
mod handlers;
#[allow(dead_code)]
#[path = "../time_driver.rs"]
mod time_driver;

use core::future::pending;

use cortex_m_semihosting::{debug, hprintln};
use embassy_executor::Spawner;
use embassy_time::{Duration, Timer, with_timeout};

#[embassy_executor::main]
async fn main(_spawner: Spawner) {
    let peripherals = cortex_m::Peripherals::take().expect("peripherals taken once");
    time_driver::init(peripherals.SYST);

    let fired = with_timeout(Duration::from_millis(5), pending::<()>())
        .await
        .is_err();
    let completed = with_timeout(Duration::from_millis(50), Timer::after_millis(1))
        .await
        .is_ok();
    if fired && completed {
        hprintln!("size-with-timeout: ok");
        debug::exit(debug::EXIT_SUCCESS);
    } else {
        hprintln!("size-with-timeout: FAIL");
        debug::exit(debug::EXIT_FAILURE);
    }
}
