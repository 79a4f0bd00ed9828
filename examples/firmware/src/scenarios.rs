//! The deadline scenarios, written against [`Bound`].
//!
//! The operation under test is a type parameter: to check another way of bounding a future,
//! implement [`Bound`] for it and pass it to [`run`]; no scenario changes.
//!
//! Elapsed times are true times, read from SysTick's counter to the core cycle
//! ([`time_driver::true_now_cycles`]), not from embassy's `Instant`, which rounds down to a
//! millisecond.

use core::fmt::Debug;
use core::future::Future;
use core::pin::Pin;
use core::sync::atomic::{AtomicBool, Ordering};
use core::task::{Context, Poll};
use core::time::Duration;

use cortex_m_semihosting::hprintln;
use embassy_time::Timer;

use crate::time_driver::{self, CYCLES_PER_US};

/// Bounds how long a future may run: the operation that the scenarios check.
pub trait Bound {
    /// Names the operation in the output.
    const NAME: &'static str;

    /// What the operation returns when the limit passes first.
    type Elapsed: Debug;

    /// What the operation promises about when a limit that passes ends it, in true time:
    /// `Some(late)`, never before `limit` and at most `late` microseconds after it (the
    /// scenarios check it); `None`, nothing (they report the timing without checking it).
    const LATE_BOUND_US: Option<u64>;

    /// Runs `fut` for at most `limit`: `Ok` with its output if it completes in time,
    /// else `Err` once `limit` has passed, with `fut` dropped.
    fn bound<F: Future>(
        limit: Duration,
        fut: F,
    ) -> impl Future<Output = Result<F::Output, Self::Elapsed>>;
}

/// How many scenarios passed and failed.
#[derive(Debug, Default, Clone, Copy)]
pub struct Tally {
    pub passed: u32,
    pub failed: u32,
}

impl Tally {
    pub fn record(&mut self, passed: bool) {
        if passed {
            self.passed += 1;
        } else {
            self.failed += 1;
        }
    }
}

/// Runs every scenario against `B`, printing one line for each.
pub async fn run<B: Bound>() -> Tally {
    let mut tally = Tally::default();
    tally.record(never_completes::<B>().await);
    tally.record(completes_in_time::<B>().await);
    if let Some(passed) = started_mid_tick::<B>().await {
        tally.record(passed);
    }
    tally
}

impl core::ops::Add for Tally {
    type Output = Tally;

    fn add(self, other: Tally) -> Tally {
        Tally {
            passed: self.passed + other.passed,
            failed: self.failed + other.failed,
        }
    }
}

/// The true time since boot, in microseconds.
fn true_now_us() -> u64 {
    time_driver::true_now_cycles() / CYCLES_PER_US
}

/// Whether `elapsed_us` keeps `B`'s promise for `limit_us`; `None` if it promises nothing.
fn keeps_promise<B: Bound>(limit_us: u64, elapsed_us: u64) -> Option<bool> {
    B::LATE_BOUND_US.map(|late| (limit_us..=limit_us + late).contains(&elapsed_us))
}

fn verdict(passed: bool) -> &'static str {
    if passed { "pass" } else { "FAIL" }
}

/// Set by [`NeverReady`]'s destructor.
static NEVER_READY_DROPPED: AtomicBool = AtomicBool::new(false);

/// A future that is never ready and never wakes its task.
struct NeverReady;

impl Future for NeverReady {
    type Output = ();

    fn poll(self: Pin<&mut Self>, _cx: &mut Context<'_>) -> Poll<()> {
        Poll::Pending
    }
}

impl Drop for NeverReady {
    fn drop(&mut self) {
        NEVER_READY_DROPPED.store(true, Ordering::SeqCst);
    }
}

/// A future that never completes, bounded by 50 ms: the bound fires, on time if the
/// operation promises it, and the inner future has been dropped by the time the result is
/// seen.
async fn never_completes<B: Bound>() -> bool {
    const LIMIT_MS: u64 = 50;
    NEVER_READY_DROPPED.store(false, Ordering::SeqCst);

    let start = true_now_us();
    let result = B::bound(Duration::from_millis(LIMIT_MS), NeverReady).await;
    let elapsed_us = true_now_us() - start;
    let dropped = NEVER_READY_DROPPED.load(Ordering::SeqCst);

    let on_time = keeps_promise::<B>(LIMIT_MS * 1_000, elapsed_us);
    let passed = result.is_err() && dropped && on_time != Some(false);
    hprintln!(
        "[{}] {} never_completes: {:?} after {} us (limit {} ms), inner future dropped: {}",
        verdict(passed),
        B::NAME,
        result,
        elapsed_us,
        LIMIT_MS,
        dropped,
    );
    passed
}

/// A future that completes after 10 ms, bounded by 200 ms: its output comes back as `Ok`.
async fn completes_in_time<B: Bound>() -> bool {
    const LIMIT_MS: u64 = 200;
    const WORK_MS: u64 = 10;
    const OUTPUT: u32 = 42;

    let start = true_now_us();
    let work = async {
        Timer::after_millis(WORK_MS).await;
        OUTPUT
    };
    let result = B::bound(Duration::from_millis(LIMIT_MS), work).await;
    let elapsed_us = true_now_us() - start;

    // `Timer::after` is embassy's, and may itself end up to a tick early.
    let passed = matches!(result, Ok(OUTPUT)) && elapsed_us + 1_000 >= WORK_MS * 1_000;
    hprintln!(
        "[{}] {} completes_in_time: {:?} after {} us (work {} ms, limit {} ms)",
        verdict(passed),
        B::NAME,
        result,
        elapsed_us,
        WORK_MS,
        LIMIT_MS,
    );
    passed
}

/// A future that never completes, bounded by 5 ms, started 0.9 ms into a 1 ms embassy
/// tick. `Instant::now()` reads the start as the tick's beginning; an operation that
/// measures from that reading ends 0.9 ms early in true time. `None`: the operation
/// promises nothing, and the result is only reported.
async fn started_mid_tick<B: Bound>() -> Option<bool> {
    const LIMIT_US: u64 = 5_000;
    NEVER_READY_DROPPED.store(false, Ordering::SeqCst);

    time_driver::spin_until_into_tick(880, 920);
    let start = true_now_us();
    let result = B::bound(Duration::from_micros(LIMIT_US), NeverReady).await;
    let elapsed_us = true_now_us() - start;
    let dropped = NEVER_READY_DROPPED.load(Ordering::SeqCst);

    let on_time = keeps_promise::<B>(LIMIT_US, elapsed_us);
    let passed = result.is_err() && dropped && on_time != Some(false);
    let label = match on_time {
        Some(_) => verdict(passed),
        None if elapsed_us < LIMIT_US => "info: early",
        None => "info",
    };
    hprintln!(
        "[{}] {} started_mid_tick: {:?} after {} us of true time (limit {} us, started {} us into a tick)",
        label,
        B::NAME,
        result,
        elapsed_us,
        LIMIT_US,
        start % 1_000,
    );
    on_time.map(|_| passed)
}
