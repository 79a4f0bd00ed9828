//! The deadline scenarios, written against [`Bound`].
//!
//! The operation under test is a type parameter: to check another way of bounding a future,
//! implement [`Bound`] for it and pass it to [`run`]; no scenario changes.

use core::fmt::Debug;
use core::future::Future;
use core::pin::Pin;
use core::sync::atomic::{AtomicBool, Ordering};
use core::task::{Context, Poll};
use core::time::Duration;

use cortex_m_semihosting::hprintln;
use embassy_time::{Instant, Timer};

/// Bounds how long a future may run: the operation that the scenarios check.
pub trait Bound {
    /// Names the operation in the output.
    const NAME: &'static str;

    /// What the operation returns when the limit passes first.
    type Elapsed: Debug;

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
    fn record(&mut self, passed: bool) {
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
    tally
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

/// A future that never completes, bounded by 50 ms: the bound fires, not early, and the
/// inner future has been dropped by the time the result is seen.
async fn never_completes<B: Bound>() -> bool {
    const LIMIT_MS: u64 = 50;
    NEVER_READY_DROPPED.store(false, Ordering::SeqCst);

    let start = Instant::now();
    let result = B::bound(Duration::from_millis(LIMIT_MS), NeverReady).await;
    let elapsed_ms = start.elapsed().as_millis();
    let dropped = NEVER_READY_DROPPED.load(Ordering::SeqCst);

    let passed = result.is_err() && dropped && elapsed_ms >= LIMIT_MS;
    hprintln!(
        "[{}] {} never_completes: {:?} after {} ms (limit {} ms), inner future dropped: {}",
        verdict(passed),
        B::NAME,
        result,
        elapsed_ms,
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

    let start = Instant::now();
    let work = async {
        Timer::after_millis(WORK_MS).await;
        OUTPUT
    };
    let result = B::bound(Duration::from_millis(LIMIT_MS), work).await;
    let elapsed_ms = start.elapsed().as_millis();

    let passed = matches!(result, Ok(OUTPUT)) && elapsed_ms >= WORK_MS;
    hprintln!(
        "[{}] {} completes_in_time: {:?} after {} ms (work {} ms, limit {} ms)",
        verdict(passed),
        B::NAME,
        result,
        elapsed_ms,
        WORK_MS,
        LIMIT_MS,
    );
    passed
}
