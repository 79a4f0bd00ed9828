//! Stress of the two-tick bound: threads run deadlines (with inner sleeps they may finish
//! by) on a full fixed wheel, degraded, and on growable wheels, while one thread drives all
//! the wheels on a shared manual clock.
//!
//! * The driver turns the wheels all the time, concurrently with the polls, arms, cancels
//!   and degraded waits of the other threads.
//! * It moves the clock (half a tick at a time) only when no thread is polling or woken
//!   and not yet polled. So a thread's reading after its last poll is the reading of the
//!   turn that woke it, whatever the machine's load: the bound is checked in clock time,
//!   never in wall-clock time.
//! * Each future ends never before the earlier of its two times, and less than two ticks
//!   after it. A lost wake shows as a late end, or as a hang the watchdog reports.
//! * At most four threads run on the full wheel: each waits in a place of its own.
#![cfg(all(feature = "alloc", feature = "stats"))]

mod support;

use core::future::Future;
use core::pin::pin;
use core::sync::atomic::{AtomicBool, Ordering::SeqCst};
use core::task::{Context, Poll, Waker};
use core::time::Duration;
use std::sync::{Arc, mpsc};
use std::task::Wake;
use std::thread::{self, Thread};

use punctual_core::{Clock, Fixed, Growable, ManualClock, Wheel};
use support::{Rng, TICK, ns, ticks};

/// Deadlines per thread: a few seconds on two cores, in a debug build.
const PER_THREAD: u64 = if cfg!(miri) { 4 } else { 2_000 };
/// Threads on the full fixed wheel (at most the wheel's four degraded places).
const ON_FULL: usize = 3;
/// Threads on the growable wheel.
const ON_GROWABLE: usize = 2;
const THREADS: usize = ON_FULL + ON_GROWABLE;
/// A run that has not finished after this long has hung.
const WATCHDOG: Duration = Duration::from_secs(300);

static CLOCK: ManualClock = ManualClock::new();
/// Held full by the main thread's sleeps for the whole run.
static FULL: Wheel<&ManualClock, Fixed<2>> = Wheel::fixed(&CLOCK, TICK);
static GROWABLE: Wheel<&ManualClock, Growable> = Wheel::growable(&CLOCK, TICK);
/// Where the threads' inner sleeps run.
static INNER: Wheel<&ManualClock, Growable> = Wheel::growable(&CLOCK, TICK);

/// A thread's state as the driver sees it.
struct Worker {
    thread: Thread,
    /// Woken since its last poll began.
    woken: AtomicBool,
    /// Inside a poll (or between deadlines).
    polling: AtomicBool,
    /// Its deadlines are over (or it panicked).
    done: AtomicBool,
}

impl Wake for Worker {
    fn wake(self: Arc<Self>) {
        self.wake_by_ref();
    }

    fn wake_by_ref(self: &Arc<Self>) {
        self.woken.store(true, SeqCst);
        self.thread.unpark();
    }
}

impl Worker {
    /// Whether the driver may move the clock: not polling, and no wake to act on.
    fn settled(&self) -> bool {
        self.done.load(SeqCst) || !(self.polling.load(SeqCst) || self.woken.load(SeqCst))
    }

    /// Polls `future` to its end, parking between polls; returns the clock at the end.
    fn block_on<F: Future>(self: &Arc<Self>, future: F) -> (F::Output, Duration) {
        let waker = Waker::from(self.clone());
        let mut future = pin!(future);
        loop {
            self.polling.store(true, SeqCst);
            self.woken.store(false, SeqCst);
            if let Poll::Ready(out) = future.as_mut().poll(&mut Context::from_waker(&waker)) {
                // Still `polling`: the clock has not moved since the poll.
                return (out, CLOCK.now());
            }
            self.polling.store(false, SeqCst);
            while !self.woken.load(SeqCst) {
                thread::park();
            }
        }
    }
}

/// One thread's deadlines on `wheel`; returns the violations it saw.
fn run_deadlines<S: punctual_core::Storage>(
    worker: &Arc<Worker>,
    wheel: &Wheel<&ManualClock, S>,
    seed: u64,
) -> Vec<String> {
    /// Marks the worker done however it ends, so that the driver stops.
    struct Done<'a>(&'a Worker);
    impl Drop for Done<'_> {
        fn drop(&mut self) {
            self.0.done.store(true, SeqCst);
        }
    }
    let _done = Done(worker);
    let mut rng = Rng(seed);
    let mut violations = Vec::new();
    for _ in 0..PER_THREAD {
        worker.polling.store(true, SeqCst);
        let d = ticks(TICK, rng.below(9)) + ns(rng.below(1_000_000));
        let inner = match rng.below(4) {
            0 => d.saturating_sub(TICK),
            1 => d,
            2 => d + ns(1),
            _ => d + 3 * TICK,
        };
        let start = CLOCK.now();
        let (out, end) = worker.block_on(wheel.deadline(d, INNER.sleep(inner)));
        let first = start + d.min(inner);
        let own = start + if out.is_ok() { inner } else { d };
        if end < own {
            violations.push(format!(
                "early: {out:?}, {d:?} and {inner:?} from {start:?}, at {end:?}"
            ));
        }
        if end >= first + 2 * TICK {
            violations.push(format!(
                "late: {out:?}, {d:?} and {inner:?} from {start:?}, at {end:?}"
            ));
        }
    }
    violations
}

#[test]
fn deadlines_end_within_two_ticks_on_full_and_growable_wheels() {
    let task = support::CountingWaker::new();
    let mut blockers: Vec<_> = (0..2)
        .map(|_| Box::pin(FULL.sleep(Duration::from_secs(3600))))
        .collect();
    for blocker in &mut blockers {
        assert!(task.poll(blocker.as_mut()).is_pending());
    }
    assert_eq!(FULL.occupied(), FULL.capacity());

    let (done_tx, done_rx) = mpsc::channel();
    let runner = thread::spawn(move || {
        let violations = run_all();
        let _ = done_tx.send(());
        violations
    });
    let violations = match done_rx.recv_timeout(WATCHDOG) {
        Ok(()) | Err(mpsc::RecvTimeoutError::Disconnected) => match runner.join() {
            Ok(violations) => violations,
            Err(panic) => std::panic::resume_unwind(panic),
        },
        Err(mpsc::RecvTimeoutError::Timeout) => panic!(
            "still running after {WATCHDOG:?}: clock {:?}; full wheel: {}; growable: {}",
            CLOCK.now(),
            FULL.stats(),
            GROWABLE.stats()
        ),
    };
    assert!(
        violations.is_empty(),
        "{}\nfull wheel: {}; growable: {}",
        violations.join("\n"),
        FULL.stats(),
        GROWABLE.stats()
    );
    let stats = FULL.stats();
    assert!(
        stats.degraded_polls > 0,
        "no poll found the wheel full: {stats}"
    );
    assert_eq!(FULL.occupied(), FULL.capacity(), "{stats}");
    drop(blockers);
    let _ = FULL.turn();
    let _ = GROWABLE.turn();
    let _ = INNER.turn();
    assert_eq!(FULL.occupied(), 0, "{}", FULL.stats());
    assert_eq!(GROWABLE.occupied(), 0, "{}", GROWABLE.stats());
    assert_eq!(INNER.occupied(), 0, "{}", INNER.stats());
}

/// The threads and their driver; returns every violation seen.
fn run_all() -> Vec<String> {
    thread::scope(|s| {
        let (workers_tx, workers_rx) = mpsc::channel();
        let threads: Vec<_> = (0..THREADS)
            .map(|t| {
                let workers_tx = workers_tx.clone();
                s.spawn(move || {
                    let worker = Arc::new(Worker {
                        thread: thread::current(),
                        woken: AtomicBool::new(false),
                        polling: AtomicBool::new(true),
                        done: AtomicBool::new(false),
                    });
                    workers_tx.send(worker.clone()).unwrap();
                    let seed = 0x5eed_0000 + t as u64;
                    if t < ON_FULL {
                        run_deadlines(&worker, &FULL, seed)
                    } else {
                        run_deadlines(&worker, &GROWABLE, seed)
                    }
                })
            })
            .collect();
        let workers: Vec<Arc<Worker>> = workers_rx.iter().take(THREADS).collect();
        while !workers.iter().all(|w| w.done.load(SeqCst)) {
            let _ = FULL.turn();
            let _ = GROWABLE.turn();
            let _ = INNER.turn();
            if workers.iter().all(|w| w.settled()) {
                CLOCK.advance(TICK / 2);
            } else {
                thread::yield_now();
            }
        }
        threads
            .into_iter()
            .flat_map(|t| {
                t.join()
                    .unwrap_or_else(|panic| std::panic::resume_unwind(panic))
            })
            .collect()
    })
}
