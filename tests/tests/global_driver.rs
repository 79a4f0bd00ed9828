//! The default global driver on the real clock: `fut.deadline(d)` with no setup.
//!
//! Real time on a loaded machine is noisy, so these tests assert only what holds however
//! slow the machine is (docs/design.md, "Evidence"): a deadline never fires early (the time measured
//! around the `.await` is at least the requested duration), it fires eventually (a watchdog
//! fails a test that takes more than [`WATCHDOG`]), the inner future is dropped before the
//! error is seen, and the same `.deadline()` works under every executor. How late a
//! deadline fires is measured by the benches, never asserted here.
//!
//! The tests share the global wheel. The one that checks `global_wheel().occupied()` takes
//! [`WHEEL_LOCK`] for writing; every other test holds it for reading while it uses the
//! wheel, so no other test's entries are in flight during that check.

use core::future::{self, Future};
use core::pin::{Pin, pin};
use core::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use core::task::{Context, Poll, Waker};
use core::time::Duration;
use punctual_core::Reading;
use std::io;
use std::sync::mpsc;
use std::sync::{Arc, RwLock, RwLockReadGuard, RwLockWriteGuard};
use std::thread;
use std::time::Instant;

use punctual::wheel::global_wheel;
use punctual::{DeadlineExt, Elapsed};

/// A test that takes longer than this (once it holds [`WHEEL_LOCK`]) fails.
const WATCHDOG: Duration = Duration::from_secs(10);

/// Readers: tests that arm deadlines. Writer: the test that checks `occupied()`.
static WHEEL_LOCK: RwLock<()> = RwLock::new(());

fn shared() -> RwLockReadGuard<'static, ()> {
    WHEEL_LOCK
        .read()
        .unwrap_or_else(|poisoned| poisoned.into_inner())
}

fn exclusive() -> RwLockWriteGuard<'static, ()> {
    WHEEL_LOCK
        .write()
        .unwrap_or_else(|poisoned| poisoned.into_inner())
}

/// Runs `body` on its own thread and fails the test if it has not finished within
/// [`WATCHDOG`]; a panic in `body` fails the test with its message.
fn watchdog<T: Send + 'static>(body: impl FnOnce() -> T + Send + 'static) -> T {
    let (tx, rx) = mpsc::channel();
    let handle = thread::spawn(move || {
        let out = body();
        let _ = tx.send(());
        out
    });
    match rx.recv_timeout(WATCHDOG) {
        // Finished, or panicked (the sender was dropped): join to get the outcome.
        Ok(()) | Err(mpsc::RecvTimeoutError::Disconnected) => match handle.join() {
            Ok(out) => out,
            Err(panic) => std::panic::resume_unwind(panic),
        },
        Err(mpsc::RecvTimeoutError::Timeout) => {
            panic!("watchdog: the test did not finish within {WATCHDOG:?}")
        }
    }
}

/// `block_on` under the watchdog, holding the wheel for reading.
fn run<T: Send + 'static>(fut: impl Future<Output = T> + Send + 'static) -> T {
    let _shared = shared();
    watchdog(move || futures_executor::block_on(fut))
}

/// Sets its flag when dropped; counts its polls; never completes.
struct DropFlag {
    dropped: Arc<AtomicBool>,
    polls: Arc<AtomicUsize>,
}

impl DropFlag {
    fn new() -> (Self, Arc<AtomicBool>, Arc<AtomicUsize>) {
        let dropped = Arc::new(AtomicBool::new(false));
        let polls = Arc::new(AtomicUsize::new(0));
        let flag = Self {
            dropped: dropped.clone(),
            polls: polls.clone(),
        };
        (flag, dropped, polls)
    }
}

impl Future for DropFlag {
    type Output = ();

    fn poll(self: Pin<&mut Self>, _cx: &mut Context<'_>) -> Poll<()> {
        assert!(!self.dropped.load(Ordering::SeqCst), "polled after drop");
        self.polls.fetch_add(1, Ordering::SeqCst);
        Poll::Pending
    }
}

impl Drop for DropFlag {
    fn drop(&mut self) {
        self.dropped.store(true, Ordering::SeqCst);
    }
}

/// Awaits a never-completing future under a deadline of `d`; checks it fired, not early.
async fn expect_fire(d: Duration) -> Duration {
    let start = Instant::now();
    let result = future::pending::<()>().deadline(d).await;
    let took = start.elapsed();
    let err = result.expect_err("a pending future under a deadline must time out");
    assert_eq!(err.duration(), d, "Elapsed carries the requested duration");
    assert!(took >= d, "fired early: {took:?} < {d:?}");
    took
}

/// A small xorshift generator, so that the durations are random but reproducible.
struct XorShift(u64);

impl XorShift {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }
}

/// The scenario every executor runs: a deadline fires (never early, inner dropped first),
/// a deadline is met (Ok), and a sleep is never early.
async fn executor_scenario() {
    let (inner, dropped, _polls) = DropFlag::new();
    let start = Instant::now();
    let result = inner.deadline(Duration::from_millis(20)).await;
    let took = start.elapsed();
    assert!(
        dropped.load(Ordering::SeqCst),
        "inner future not dropped before Err"
    );
    assert!(result.is_err(), "a pending future must time out");
    assert!(took >= Duration::from_millis(20), "fired early: {took:?}");

    let result = async {
        punctual::sleep(Duration::from_millis(5)).await;
        7
    }
    .deadline(Duration::from_secs(5))
    .await;
    assert_eq!(result, Ok(7));

    let start = Instant::now();
    punctual::sleep(Duration::from_millis(15)).await;
    let slept = start.elapsed();
    assert!(
        slept >= Duration::from_millis(15),
        "slept too little: {slept:?}"
    );
}

#[test]
fn fires_and_never_early() {
    run(async {
        for ms in [0, 1, 2, 5, 10, 25, 100] {
            expect_fire(Duration::from_millis(ms)).await;
        }
        // Sub-tick durations are never early either.
        for us in [1, 100, 999, 1001, 1500] {
            expect_fire(Duration::from_micros(us)).await;
        }
    });
}

#[test]
fn sleep_never_early() {
    run(async {
        for ms in [0, 1, 3, 10, 40] {
            let d = Duration::from_millis(ms);
            let start = Instant::now();
            punctual::sleep(d).await;
            let slept = start.elapsed();
            assert!(slept >= d, "sleep({d:?}) returned after {slept:?}");
        }
        let at = Instant::now() + Duration::from_millis(15);
        punctual::sleep_until(at).await;
        assert!(
            Instant::now() >= at,
            "sleep_until returned before its instant"
        );
    });
}

#[test]
fn inner_future_dropped_before_error_is_seen() {
    run(async {
        let (inner, dropped, polls) = DropFlag::new();
        let mut deadline = pin!(inner.deadline(Duration::from_millis(30)));

        // Started: the inner future runs and is not dropped.
        let start = Instant::now();
        let first = deadline
            .as_mut()
            .poll(&mut Context::from_waker(Waker::noop()));
        assert!(first.is_pending());
        assert_eq!(polls.load(Ordering::SeqCst), 1);
        assert!(
            !dropped.load(Ordering::SeqCst),
            "dropped before the deadline"
        );

        let result = deadline.await;
        // The flag is read right after the error is seen: the drop came first.
        let dropped_first = dropped.load(Ordering::SeqCst);
        let err = result.expect_err("must time out");
        assert!(
            dropped_first,
            "Err(Elapsed) was returned before the inner future was dropped"
        );
        assert_eq!(err.duration(), Duration::from_millis(30));
        let took = start.elapsed();
        assert!(took >= Duration::from_millis(30), "fired early: {took:?}");
    });
}

#[test]
fn dropping_a_pending_deadline_drops_the_inner_future() {
    run(async {
        let (inner, dropped, _polls) = DropFlag::new();
        let mut deadline = Box::pin(inner.deadline(Duration::from_secs(30)));
        let first = deadline
            .as_mut()
            .poll(&mut Context::from_waker(Waker::noop()));
        assert!(first.is_pending());
        assert!(!dropped.load(Ordering::SeqCst));
        drop(deadline);
        assert!(
            dropped.load(Ordering::SeqCst),
            "dropping the Deadline must drop the inner future"
        );
    });
}

#[test]
fn ready_future_is_ok_and_arms_nothing() {
    let _exclusive = exclusive();
    watchdog(|| {
        // Wait for entries released by earlier tests to be reclaimed (within about a tick
        // on a driver that is not starved; allow two seconds).
        let wheel = global_wheel();
        let give_up = Instant::now() + Duration::from_secs(2);
        while wheel.occupied() != 0 && Instant::now() < give_up {
            thread::sleep(Duration::from_millis(1));
        }
        let before = wheel.occupied();
        futures_executor::block_on(async {
            for i in 0..1_000 {
                assert_eq!(async { i }.deadline(Duration::from_millis(1)).await, Ok(i));
                assert_eq!(future::ready(i).deadline(Duration::ZERO).await, Ok(i));
                let past = Instant::now();
                assert_eq!(future::ready(i).deadline_at(past).await, Ok(i));
            }
        });
        assert_eq!(
            wheel.occupied(),
            before,
            "a ready future must not take an entry"
        );
    });
}

#[test]
fn completes_before_its_deadline_is_ok() {
    run(async {
        let start = Instant::now();
        let result = async {
            punctual::sleep(Duration::from_millis(10)).await;
            "done"
        }
        .deadline(Duration::from_secs(5))
        .await;
        assert_eq!(result, Ok("done"));
        assert!(start.elapsed() >= Duration::from_millis(10));

        // A future completed by another thread, well before its deadline.
        let (tx, rx) = mpsc::channel::<u32>();
        let result = ThreadResult::new(rx).deadline(Duration::from_secs(5));
        let sender = thread::spawn(move || {
            thread::sleep(Duration::from_millis(5));
            tx.send(99).unwrap();
        });
        assert_eq!(result.await, Ok(99));
        sender.join().unwrap();
    });
}

/// A future that waits for a value sent from another thread (polls with a self-wake, so
/// it needs no waker plumbing from the sender).
struct ThreadResult(mpsc::Receiver<u32>);

impl ThreadResult {
    fn new(rx: mpsc::Receiver<u32>) -> Self {
        Self(rx)
    }
}

impl Future for ThreadResult {
    type Output = u32;

    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<u32> {
        match self.0.try_recv() {
            Ok(v) => Poll::Ready(v),
            Err(_) => {
                cx.waker().wake_by_ref();
                thread::yield_now();
                Poll::Pending
            }
        }
    }
}

#[test]
fn inner_and_deadline_racing_is_decided_once() {
    run(async {
        // The inner future finishes at the very tick the deadline fires: either outcome is
        // allowed, neither may come early, and a fire drops the inner future.
        for _ in 0..50 {
            let d = Duration::from_millis(2);
            let start = Instant::now();
            match punctual::sleep(d).deadline(d).await {
                Ok(()) => {} // the inner sleep was seen first
                Err(elapsed) => assert_eq!(elapsed.duration(), d),
            }
            let took = start.elapsed();
            assert!(took >= d, "finished early: {took:?} < {d:?}");
        }
    });
}

#[test]
fn deadline_at_a_past_instant_fires_at_once() {
    run(async {
        let past = Instant::now()
            .checked_sub(Duration::from_secs(1))
            .unwrap_or_else(Instant::now);
        let start = Instant::now();
        let err = future::pending::<()>().deadline_at(past).await.unwrap_err();
        let took = start.elapsed();
        assert_eq!(
            err.duration(),
            Duration::ZERO,
            "a past instant allows no time"
        );
        assert!(
            took < WATCHDOG,
            "a past deadline must fire at once, took {took:?}"
        );

        // The instant itself is passed, at least, when it fires.
        let at = Instant::now() + Duration::from_millis(20);
        let result = future::pending::<()>().deadline_at(at).await;
        assert!(result.is_err());
        assert!(Instant::now() >= at, "deadline_at fired before its instant");
    });
}

#[test]
fn named_deadline_carries_its_name() {
    run(async {
        let err = future::pending::<()>()
            .deadline(Duration::from_millis(3))
            .named("pricing")
            .await
            .unwrap_err();
        assert_eq!(err.name(), Some("pricing"));
        assert_eq!(err.duration(), Duration::from_millis(3));
        assert_eq!(err.to_string(), "deadline 'pricing' of 3ms elapsed");
    });
}

#[test]
fn elapsed_converts_into_io_error_timed_out() {
    async fn fetch() -> io::Result<u32> {
        let value = future::pending::<u32>()
            .deadline(Duration::from_millis(2))
            .await?;
        Ok(value)
    }
    run(async {
        let err = fetch().await.unwrap_err();
        assert_eq!(err.kind(), io::ErrorKind::TimedOut);
        let inner = err.get_ref().and_then(|e| e.downcast_ref::<Elapsed>());
        assert_eq!(inner.map(Elapsed::duration), Some(Duration::from_millis(2)));
    });
}

#[test]
fn many_concurrent_deadlines_all_fire_none_early() {
    const THREADS: u64 = 4;
    const PER_THREAD: u64 = 2_500;
    let _shared = shared();
    watchdog(|| {
        let threads: Vec<_> = (0..THREADS)
            .map(|t| {
                thread::spawn(move || {
                    let mut rng = XorShift(0x9E37_79B9_7F4A_7C15 ^ (t + 1));
                    let deadlines = (0..PER_THREAD).map(|_| {
                        let d = Duration::from_millis(1 + rng.next() % 50);
                        async move {
                            let start = Instant::now();
                            let result = future::pending::<()>().deadline(d).await;
                            (d, start.elapsed(), result)
                        }
                    });
                    let results =
                        futures_executor::block_on(futures_util::future::join_all(deadlines));
                    for (d, took, result) in results {
                        let err = result.expect_err("every deadline must fire");
                        assert_eq!(err.duration(), d);
                        assert!(took >= d, "fired early: {took:?} < {d:?}");
                    }
                    PER_THREAD
                })
            })
            .collect();
        let fired: u64 = threads.into_iter().map(|t| t.join().unwrap()).sum();
        assert_eq!(fired, THREADS * PER_THREAD);
    });
}

/// A turn by hand on the idle global wheel plans a turn (it lingers) that the timer
/// thread, parked with no timeout, was not woken for; arms later than that plan wake no
/// one. The turn wakes it, or every deadline on the global wheel would wait forever.
#[test]
fn turn_by_hand_on_idle_global_wheel_does_not_stop_it() {
    let _exclusive = exclusive();
    watchdog(|| {
        let one_ms = || future::pending::<()>().deadline(Duration::from_millis(1));
        // The timer thread runs; then the wheel goes idle, its lingering over.
        assert!(futures_executor::block_on(one_ms()).is_err());
        while global_wheel().next_turn() != Reading::END {
            thread::sleep(Duration::from_millis(5));
        }
        let _ = global_wheel().turn();
        // Past the turn's plan (16 ms), which only a woken driver carries out.
        thread::sleep(Duration::from_millis(100));
        assert!(futures_executor::block_on(one_ms()).is_err());
    });
}

#[test]
fn works_under_futures_executor() {
    run(executor_scenario());
}

#[test]
fn works_under_smol() {
    let _shared = shared();
    watchdog(|| {
        smol::block_on(executor_scenario());
        // And on a smol executor's spawned tasks.
        let ex = smol::Executor::new();
        let tasks: Vec<_> = (1..=20u64)
            .map(|ms| ex.spawn(expect_fire(Duration::from_millis(ms))))
            .collect();
        smol::block_on(ex.run(async {
            for task in tasks {
                task.await;
            }
        }));
    });
}

#[test]
fn works_under_tokio_current_thread() {
    let _shared = shared();
    watchdog(|| {
        let rt = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .unwrap();
        rt.block_on(async {
            executor_scenario().await;
            // Alongside tokio's own timers.
            let start = Instant::now();
            let (ours, theirs) = tokio::join!(
                future::pending::<()>().deadline(Duration::from_millis(10)),
                tokio::time::sleep(Duration::from_millis(5)),
            );
            assert!(ours.is_err());
            let () = theirs;
            assert!(start.elapsed() >= Duration::from_millis(10));
        });
    });
}

#[test]
fn works_under_tokio_multi_thread() {
    let _shared = shared();
    watchdog(|| {
        let rt = tokio::runtime::Builder::new_multi_thread()
            .worker_threads(2)
            .enable_all()
            .build()
            .unwrap();
        rt.block_on(async {
            executor_scenario().await;
            // Deadlines on spawned tasks, polled from the runtime's worker threads.
            let tasks: Vec<_> = (1..=50u64)
                .map(|ms| tokio::spawn(expect_fire(Duration::from_millis(ms))))
                .collect();
            for task in tasks {
                task.await.unwrap();
            }
            // A deadline met by a tokio timer.
            let result = tokio::time::sleep(Duration::from_millis(5))
                .deadline(Duration::from_secs(5))
                .await;
            assert_eq!(result, Ok(()));
        });
    });
}
