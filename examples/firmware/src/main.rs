//! Runs the conformance scenarios on a Cortex-M3 or a Cortex-M0 under QEMU and reports
//! through semihosting.
//!
//! The deadlines under test are punctual's, on a static wheel driven by
//! `punctual::adapters::embassy::run` from an embassy task. First the scenarios shared with
//! the host suite (`tests/conformance/portable.rs`: cancel on fire, never early from every
//! phase of a tick, at most two ticks late, a full wheel, budgets, stream deadlines...,
//! `timers.rs`: intervals and resets, and `delay_queue.rs`: the keyed timer set),
//! checked in true time (SysTick's counter, finer than embassy's `Instant`); then a few
//! that embassy-time's own `with_timeout` runs too, for comparison ([`scenarios`]). Prints
//! one line per scenario, then `punctual-firmware: N passed, N failed`, then exits QEMU with
//! success only if every scenario passed.

#![no_std]
#![no_main]

#[path = "../../../tests/conformance/delay_queue.rs"]
mod delay_queue;
mod handlers;
#[path = "../../../tests/conformance/portable.rs"]
mod portable;
mod scenarios;
mod time_driver;
#[path = "../../../tests/conformance/timers.rs"]
mod timers;

use core::future::Future;
use core::time::Duration;

use cortex_m_semihosting::{debug, hprintln};
use embassy_executor::Spawner;
use embassy_time::Timer;
use punctual::adapters::embassy::EmbassyWheel;
use punctual::wheel::{Clock, RawWheel};

/// The deadlines: at most 8 pending at once, on the recommended tick (one 1 ms embassy tick).
static WHEEL: EmbassyWheel<8> = punctual::adapters::embassy::wheel();

/// Turns the wheel, forever.
#[embassy_executor::task]
async fn punctual_driver() -> ! {
    match punctual::adapters::embassy::run(&WHEEL).await {}
}

/// The core and board, for the output.
#[cfg(board = "mps2_an385")]
const BOARD: &str = "Cortex-M3 (QEMU mps2-an385)";
/// The core and board, for the output.
#[cfg(board = "microbit")]
const BOARD: &str = "Cortex-M0 (QEMU microbit, portable-atomic)";

/// [`WHEEL`] as the shared scenarios see it, timed on SysTick's counter.
struct OnTarget;

impl portable::Target for OnTarget {
    /// QEMU counts instructions (`-icount`): time is deterministic, whatever the host.
    const EXACT: bool = true;

    fn wheel(&self) -> &'static dyn RawWheel {
        &WHEEL
    }
    fn tick(&self) -> Duration {
        WHEEL.tick()
    }
    fn now(&self) -> Duration {
        WHEEL.clock().now()
    }
    fn true_now(&self) -> Duration {
        time_driver::true_now()
    }
    /// From the fire to the scenario's clock reading: a few hundred instructions.
    fn slack(&self) -> Duration {
        Duration::from_micros(200)
    }
    fn occupied(&self) -> usize {
        WHEEL.occupied()
    }
    fn fixed_capacity(&self) -> Option<usize> {
        Some(WHEEL.capacity())
    }
    /// Counted only with the core's `stats` feature.
    fn degraded_polls(&self) -> Option<usize> {
        #[cfg(feature = "stats")]
        return Some(WHEEL.degraded_polls());
        #[cfg(not(feature = "stats"))]
        None
    }
    fn to_phase(&self, phase: Duration) -> bool {
        let window = WHEEL.tick() / (2 * portable::PHASES);
        time_driver::spin_until_phase(phase, phase + window);
        true
    }
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
    hprintln!("punctual-firmware: on a {BOARD}");

    let mut tally = scenarios::Tally::default();
    // Prints each shared scenario's outcome and counts it.
    let mut report = |name: &'static str, outcome: portable::Outcome| {
        match outcome {
            Ok(()) => hprintln!("[pass] conformance {name}"),
            Err(failure) => hprintln!("[FAIL] conformance {name}: {failure}"),
        }
        tally.record(outcome.is_ok());
    };
    portable::run_all(&OnTarget, &mut report).await;
    timers::run_all(&OnTarget, &mut report).await;
    delay_queue::run_all(&OnTarget, &mut report).await;
    tally = tally + scenarios::run::<Punctual>().await;
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
