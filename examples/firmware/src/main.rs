//! Runs the deadline scenarios on a Cortex-M3 under QEMU and reports through semihosting.
//!
//! The deadlines under test are punctual's, on a static wheel driven by
//! `punctual::adapters::embassy::run` from an embassy task; embassy-time's own `with_timeout` runs the
//! same scenarios for comparison. Prints one line per scenario, then
//! `punctual-firmware: N passed, N failed`, then exits QEMU with success only if every
//! scenario passed.

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
use embassy_time::Timer;
use punctual::adapters::embassy::EmbassyWheel;

/// The deadlines: at most 8 pending at once, on the recommended tick (one 1 ms embassy tick).
static WHEEL: EmbassyWheel<8> = punctual::adapters::embassy::wheel();

/// Turns the wheel, forever.
#[embassy_executor::task]
async fn punctual_driver() -> ! {
    match punctual::adapters::embassy::run(&WHEEL).await {}
}

/// The operation under test: punctual's deadline on [`WHEEL`].
struct Punctual;

impl scenarios::Bound for Punctual {
    const NAME: &'static str = "punctual";
    type Elapsed = punctual::Elapsed;
    /// Never early; at most two wheel ticks (2 ms) late, plus the few microseconds from the
    /// fire to the scenario's clock reading.
    const LATE_BOUND_US: Option<u64> = Some(2_000 + 200);

    fn bound<F: Future>(
        limit: Duration,
        fut: F,
    ) -> impl Future<Output = Result<F::Output, Self::Elapsed>> {
        WHEEL.deadline(limit, fut)
    }
}

/// For comparison: embassy-time's own `with_timeout`.
struct EmbassyTimeout;

impl scenarios::Bound for EmbassyTimeout {
    const NAME: &'static str = "embassy_time::with_timeout";
    type Elapsed = embassy_time::TimeoutError;
    /// Can end up to a tick early: `Instant::now()` rounds down.
    const LATE_BOUND_US: Option<u64> = None;

    fn bound<F: Future>(
        limit: Duration,
        fut: F,
    ) -> impl Future<Output = Result<F::Output, Self::Elapsed>> {
        let limit = embassy_time::Duration::try_from(limit).expect("limit fits embassy's range");
        embassy_time::with_timeout(limit, fut)
    }
}

#[embassy_executor::main]
async fn main(spawner: Spawner) {
    let peripherals = cortex_m::Peripherals::take().expect("peripherals taken once");
    time_driver::init(peripherals.SYST);
    spawner.spawn(punctual_driver().expect("one driver task"));

    let mut tally = scenarios::run::<Punctual>().await;
    tally = tally + scenarios::run::<EmbassyTimeout>().await;

    // Every entry back on the wheel's free list: fired ones at once, cancelled ones within
    // a tick of the driver's next turn.
    Timer::after_millis(3).await;
    let occupied = WHEEL.occupied();
    let reclaimed = occupied == 0;
    hprintln!(
        "[{}] punctual wheel entries in use after the scenarios: {} of {}",
        if reclaimed { "pass" } else { "FAIL" },
        occupied,
        WHEEL.capacity(),
    );
    tally.record(reclaimed);

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
