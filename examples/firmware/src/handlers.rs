//! The panic and hard-fault handlers of every binary of this crate: report through
//! semihosting and fail the run, instead of hanging until the runner's timeout
//! (cortex-m-rt's default handlers loop forever).

use core::panic::PanicInfo;

use cortex_m_rt::{ExceptionFrame, exception};
use cortex_m_semihosting::{debug, hprintln};

#[panic_handler]
fn panic(info: &PanicInfo) -> ! {
    hprintln!("{}: panicked: {}", env!("CARGO_BIN_NAME"), info);
    debug::exit(debug::EXIT_FAILURE);
    loop {
        cortex_m::asm::wfi();
    }
}

#[exception]
unsafe fn HardFault(frame: &ExceptionFrame) -> ! {
    hprintln!(
        "{}: hard fault at pc {:#010x}",
        env!("CARGO_BIN_NAME"),
        frame.pc()
    );
    debug::exit(debug::EXIT_FAILURE);
    loop {
        cortex_m::asm::wfi();
    }
}
