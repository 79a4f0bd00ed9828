//! Runs the deadline scenarios on a Cortex-M3 under QEMU and reports through semihosting.
//!
//! Prints one line per scenario, then `punctual-firmware: N passed, N failed`, then exits
//! QEMU with success only if every scenario passed.

#![no_std]
#![no_main]

mod scenarios;
mod time_driver;

use core::future::Future;
use core::panic::PanicInfo;
use core::time::Duration;

use cortex_m_rt::{ExceptionFrame, exception};
use cortex_m_semihosting::{debug, hprintln};
use embassy_executor::Spawner;

/// The operation under test: embassy-time's own `with_timeout`.
struct EmbassyTimeout;

impl scenarios::Bound for EmbassyTimeout {
    const NAME: &'static str = "embassy_time::with_timeout";
    type Elapsed = embassy_time::TimeoutError;

    fn bound<F: Future>(
        limit: Duration,
        fut: F,
    ) -> impl Future<Output = Result<F::Output, Self::Elapsed>> {
        let limit = embassy_time::Duration::try_from(limit).expect("limit fits embassy's range");
        embassy_time::with_timeout(limit, fut)
    }
}

#[embassy_executor::main]
async fn main(_spawner: Spawner) {
    let peripherals = cortex_m::Peripherals::take().expect("peripherals taken once");
    time_driver::init(peripherals.SYST);

    let tally = scenarios::run::<EmbassyTimeout>().await;

    let (passed, failed) = (tally.passed, tally.failed);
    hprintln!("punctual-firmware: {passed} passed, {failed} failed");
    let status = if failed == 0 {
        debug::EXIT_SUCCESS
    } else {
        debug::EXIT_FAILURE
    };
    debug::exit(status);
}

/// Reports the panic and fails the run, instead of hanging until the runner's timeout.
#[panic_handler]
fn panic(info: &PanicInfo) -> ! {
    hprintln!("punctual-firmware: panicked: {}", info);
    debug::exit(debug::EXIT_FAILURE);
    loop {
        cortex_m::asm::wfi();
    }
}

/// Reports the fault and fails the run; cortex-m-rt's default handler loops forever.
#[exception]
unsafe fn HardFault(frame: &ExceptionFrame) -> ! {
    hprintln!("punctual-firmware: hard fault at pc {:#010x}", frame.pc());
    debug::exit(debug::EXIT_FAILURE);
    loop {
        cortex_m::asm::wfi();
    }
}
