//! A SysTick time driver for embassy-time.
//!
//! SysTick counts the core clock (25 MHz on the MPS2 AN385, 16 MHz on the micro:bit's
//! nRF51 as QEMU models it) down from [`RELOAD`], so its exception fires once a
//! millisecond: one embassy tick at `tick-hz-1_000`. The handler adds one to a 64-bit tick
//! counter (which [`Driver::now`] reads) and, once the earliest registered wake-up is due,
//! asks the timer queue to wake every waker whose time has come.
//!
//! The state sits behind a `critical_section::Mutex`: the target has no 64-bit atomics, and
//! on a single core a critical section is only a masked interrupt.
//!
//! [`true_now_cycles`] reads the time between ticks too, from SysTick's counter: the true
//! time that embassy's `Instant::now()` rounds down to a millisecond. The scenarios time
//! deadlines with it.

use core::cell::RefCell;
use core::task::Waker;
use core::time::Duration;

use cortex_m::peripheral::syst::SystClkSource;
use cortex_m::peripheral::{SCB, SYST};
use cortex_m_rt::exception;
use critical_section::Mutex;
use embassy_time_driver::Driver;
use embassy_time_queue_utils::Queue;

/// The system clock, which SysTick counts with `CLKSOURCE` set to the core: the MPS2
/// AN385's 25 MHz.
#[cfg(board = "mps2_an385")]
const CORE_CLOCK_HZ: u64 = 25_000_000;
/// The system clock, which SysTick counts with `CLKSOURCE` set to the core: 16 MHz in
/// QEMU's nRF51 model. (Real nRF51 silicon may have no SysTick: a port to the board would
/// count TIMER0 or the RTC instead.)
#[cfg(board = "microbit")]
const CORE_CLOCK_HZ: u64 = 16_000_000;

/// SysTick counts from `RELOAD` down to 0, so a period is `RELOAD + 1` core cycles: 1 ms.
const RELOAD: u32 = (CORE_CLOCK_HZ / 1_000) as u32 - 1;

/// Core cycles in a microsecond.
pub const CYCLES_PER_US: u64 = CORE_CLOCK_HZ / 1_000_000;

const _: () = assert!(
    (RELOAD as u64 + 1) * embassy_time_driver::TICK_HZ == CORE_CLOCK_HZ,
    "one SysTick period must be exactly one embassy tick: enable embassy-time's tick-hz-1_000"
);

struct SysTickDriver {
    state: Mutex<RefCell<State>>,
}

struct State {
    /// Ticks since [`init`]. Only the SysTick handler writes it.
    ticks: u64,
    /// The earliest wake-up in `queue`, `u64::MAX` when the queue is empty.
    next_wake: u64,
    queue: Queue,
}

embassy_time_driver::time_driver_impl!(static DRIVER: SysTickDriver = SysTickDriver {
    state: Mutex::new(RefCell::new(State {
        ticks: 0,
        next_wake: u64::MAX,
        queue: Queue::new(),
    })),
});

/// Starts the 1 ms tick. Call once, before anything reads the time.
pub fn init(mut syst: SYST) {
    syst.set_clock_source(SystClkSource::Core);
    syst.set_reload(RELOAD);
    syst.clear_current();
    syst.enable_interrupt();
    syst.enable_counter();
}

/// Whole ticks since [`init`], and SysTick's current count into the next one, read
/// together. A wrap whose interrupt is held off (interrupts masked, or a handler of the same
/// priority running) is a tick that has passed and is counted here: a clock that missed it
/// would read a deadline's start too early, and the deadline would end early by as much.
fn ticks_and_count(cs: critical_section::CriticalSection<'_>) -> (u64, u32) {
    let ticks = DRIVER.state.borrow_ref(cs).ticks;
    let current = SYST::get_current();
    // Interrupts are masked: a wrap the SysTick handler has not counted yet shows as a
    // pending exception. If the counter read came after that wrap (it is still high), the
    // tick is not in `ticks`; if it came before (it is low), it must not be added.
    let uncounted = SCB::is_pendst_pending() && current > RELOAD / 2;
    (ticks + u64::from(uncounted), current)
}

/// The true time since [`init`], in core cycles: whole ticks from the tick counter, plus
/// how far SysTick has counted into the current one.
pub fn true_now_cycles() -> u64 {
    critical_section::with(|cs| {
        let (ticks, current) = ticks_and_count(cs);
        ticks * u64::from(RELOAD + 1) + u64::from(RELOAD - current)
    })
}

/// The true time since [`init`].
pub fn true_now() -> Duration {
    // Whole microseconds first: 1 000 cycles of 16 MHz are not a whole number of ns.
    let cycles = true_now_cycles();
    let us = cycles / CYCLES_PER_US;
    let rest_ns = (cycles % CYCLES_PER_US) * 1_000 / CYCLES_PER_US;
    Duration::from_micros(us) + Duration::from_nanos(rest_ns)
}

/// Spins until the true time is between `from` and `to` into a tick (`from < to`, both
/// under a tick).
pub fn spin_until_phase(from: Duration, to: Duration) {
    let period = u64::from(RELOAD + 1);
    let cycles = |d: Duration| d.as_nanos() as u64 * CYCLES_PER_US / 1_000;
    let (from, to) = (cycles(from), cycles(to));
    while !(from..to).contains(&(true_now_cycles() % period)) {}
}

/// Spins until the true time is between `from_us` and `to_us` microseconds into a tick.
pub fn spin_until_into_tick(from_us: u32, to_us: u32) {
    let period = u64::from(RELOAD + 1);
    let (from, to) = (
        u64::from(from_us) * CYCLES_PER_US,
        u64::from(to_us) * CYCLES_PER_US,
    );
    while !(from..to).contains(&(true_now_cycles() % period)) {}
}

impl Driver for SysTickDriver {
    fn now(&self) -> u64 {
        critical_section::with(|cs| ticks_and_count(cs).0)
    }

    fn schedule_wake(&self, at: u64, waker: &Waker) {
        critical_section::with(|cs| {
            let state = &mut *self.state.borrow_ref_mut(cs);
            if state.queue.schedule_wake(at, waker) {
                // Recomputes the earliest wake-up, and wakes at once a waker whose time came
                // between its caller's reading of `now` and this call.
                state.next_wake = state.queue.next_expiration(state.ticks);
            }
        });
    }
}

#[exception]
fn SysTick() {
    critical_section::with(|cs| {
        let state = &mut *DRIVER.state.borrow_ref_mut(cs);
        state.ticks += 1;
        if state.ticks >= state.next_wake {
            state.next_wake = state.queue.next_expiration(state.ticks);
        }
    });
}
