//! embassy on the host, with punctual's deadlines.
//!
//! One embassy task drives a punctual wheel (`punctual::adapters::embassy::run`); another bounds two
//! operations with deadlines on it: a slow one that is cut off (and dropped before the error
//! is seen) and a quick one that completes in time. Prints what happened and exits 0, or 1
//! if anything went otherwise, in about 60 ms.

use std::process::ExitCode;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use embassy_executor::Executor;
use embassy_time::{Instant, Timer};
use punctual::adapters::embassy::EmbassyWheel;

/// Up to 8 pending deadlines, on the recommended tick (1 ms at embassy's 1 MHz `std` rate).
static WHEEL: EmbassyWheel<8> = punctual::adapters::embassy::wheel();

static DONE: AtomicBool = AtomicBool::new(false);
static PASSED: AtomicBool = AtomicBool::new(false);
static SLOW_DROPPED: AtomicBool = AtomicBool::new(false);

/// Turns the wheel for as long as the program runs.
#[embassy_executor::task]
async fn punctual_driver() -> ! {
    match punctual::adapters::embassy::run(&WHEEL).await {}
}

/// Notes that the slow query was dropped.
struct DropFlag;

impl Drop for DropFlag {
    fn drop(&mut self) {
        SLOW_DROPPED.store(true, Ordering::SeqCst);
        println!("embassy_host:   (the slow query was dropped)");
    }
}

/// A query that takes ten seconds.
async fn slow_query() -> u32 {
    let _flag = DropFlag;
    Timer::after_secs(10).await;
    7
}

/// A query that takes 5 ms.
async fn quick_query() -> u32 {
    Timer::after_millis(5).await;
    42
}

#[embassy_executor::task]
async fn demo() {
    let limit = Duration::from_millis(50);
    let start = Instant::now();
    let slow = WHEEL
        .deadline(limit, slow_query())
        .named("slow query")
        .await;
    let took = start.elapsed();
    let dropped = SLOW_DROPPED.load(Ordering::SeqCst);
    match &slow {
        Ok(v) => println!("embassy_host: slow query: Ok({v})?"),
        Err(e) => println!(
            "embassy_host: slow query: Err({e}) after {} µs",
            took.as_micros()
        ),
    }
    let slow_ok = slow.is_err() && dropped && Duration::from(took) >= limit;

    let start = Instant::now();
    let quick = WHEEL
        .deadline(Duration::from_millis(500), quick_query())
        .await;
    let took = start.elapsed();
    println!(
        "embassy_host: quick query: {quick:?} after {} µs",
        took.as_micros()
    );
    let quick_ok = quick == Ok(42);

    PASSED.store(slow_ok && quick_ok, Ordering::SeqCst);
    DONE.store(true, Ordering::SeqCst);
}

fn main() -> ExitCode {
    // The executor lives for the rest of the program, as `run_until` requires.
    let executor: &'static mut Executor = Box::leak(Box::new(Executor::new()));
    executor.run_until(
        |spawner| {
            spawner.spawn(punctual_driver().expect("one driver task"));
            spawner.spawn(demo().expect("one demo task"));
        },
        || DONE.load(Ordering::SeqCst),
    );
    if PASSED.load(Ordering::SeqCst) {
        println!("embassy_host: ok");
        ExitCode::SUCCESS
    } else {
        println!("embassy_host: FAILED");
        ExitCode::FAILURE
    }
}
