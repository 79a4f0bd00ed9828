//! Stress: many threads arm deadlines on one wheel while others complete or
//! cancel them at random times, and nothing is lost.
//!
//! Three scenarios, each its own test on its own wheel:
//!
//! * `thread_driver_with_std_threads`: a wheel driven by [`punctual::wheel::spawn_driver`] (the
//!   default thread driver), deadlines run as tasks of a small executor with two worker
//!   threads; two spawner threads poll each new task once themselves, so deadlines are
//!   armed from four threads at once.
//! * `tokio_multi_thread_on_the_global_wheel`: `fut.deadline(d)` with no setup (the global
//!   wheel and its thread) on tokio's multi-thread runtime; tasks spawned from two
//!   threads outside the runtime.
//! * `tokio_multi_thread_on_the_tokio_driver`: the same on a wheel driven by
//!   `punctual_tokio` as a task of that runtime.
//!
//! Every deadline gets a random duration (zero for some, most under 20 ms, some up to
//! 300 ms) and one of these plans, carried out by two scheduler threads (a completer and a
//! canceller) at the planned real time:
//!
//! * **fire**: the inner future never completes; the deadline must fire;
//! * **complete before / at / after**: the inner future is completed 2 ms or 0.2 ms
//!   before, exactly at, or 0.2 ms or 2 ms after the deadline's time;
//! * **cancel**: the task is dropped (from the canceller thread, or aborted on tokio) at a
//!   random moment between its start and twice its duration.
//!
//! What is checked:
//!
//! * **Exactly once**: every deadline ends exactly once, counted per deadline id: fired
//!   (`Err`), completed (`Ok`) or cancelled (its task dropped while pending). Never two
//!   outcomes, never none.
//! * **Nothing hangs**: the test thread is a watchdog; if the outcomes are not all in after
//!   a generous bound, it fails, naming the deadlines that hung (their plan, duration,
//!   age, and whether their inner future was completed or their cancel attempted) and the
//!   wheel's stats.
//! * **Never early**: a fired deadline's `Err` is observed no sooner than its duration
//!   after a clock reading taken just before its first poll, on the wheel's own clock.
//! * **Fire plans fire**: a deadline whose inner future never completes ends `Err`.
//!   Completions and cancels race their deadlines, so how many win is reported only.
//! * **Cancel on fire**: the inner future has been dropped when `Err` is seen. `Ok` only
//!   comes from an inner future that was completed.
//! * **Nothing leaks**: the wheel's `occupied()` is back to zero soon after the last
//!   outcome (the driver is allowed a bounded moment to reclaim), and every entry the
//!   driver took in was either fired or reclaimed as cancelled.
//!
//! # Sizes
//!
//! With optimisations (`cargo test --release --test stress`, as `ci/stress.sh` runs it),
//! each scenario runs 300 000 deadlines, 900 000 in all, in well under a minute on two
//! cores. Unoptimised (`cargo test`), 2 000 each, in seconds. `PUNCTUAL_STRESS_SCALE`
//! multiplies these (a decimal number); the longer soak is
//!
//! ```text
//! PUNCTUAL_STRESS_SCALE=20 cargo test --release --test stress -- --nocapture
//! ```
//!
//! `--nocapture` shows a summary line per scenario: outcomes, time, and the wheel's stats
//! (including the lateness histogram, which is reported, not asserted, on real time).

use core::future::Future;
use core::pin::Pin;
use core::sync::atomic::{AtomicBool, AtomicU8, AtomicU64, AtomicUsize, Ordering};
use core::task::{Context, Poll, Waker};
use core::time::Duration;
use std::cmp::Reverse;
use std::collections::{BinaryHeap, VecDeque};
use std::sync::mpsc::{self, RecvTimeoutError};
use std::sync::{Arc, Condvar, LazyLock, Mutex, OnceLock};
use std::task::Wake;
use std::thread;
use std::time::Instant;

use futures_util::task::AtomicWaker;
use punctual::DeadlineExt;
use punctual::wheel::{Clock, Growable, StdClock, Storage, Wheel};

const SEQ: Ordering = Ordering::SeqCst;

/// Deadlines per scenario at scale 1.
fn scenario_size() -> usize {
    let base = if cfg!(debug_assertions) {
        2_000.0
    } else {
        300_000.0
    };
    let scale: f64 = std::env::var("PUNCTUAL_STRESS_SCALE")
        .ok()
        .map(|s| {
            s.parse()
                .unwrap_or_else(|_| panic!("PUNCTUAL_STRESS_SCALE={s:?} is not a number"))
        })
        .unwrap_or(1.0);
    ((base * scale) as usize).max(100)
}

/// How long all of a scenario's deadlines may take before the watchdog fails the test.
fn watchdog_limit(total: usize) -> Duration {
    // Far more than the deadlines need (about 25 ms each, thousands at once); a sanitizer
    // or a loaded machine may be 20 times slower.
    Duration::from_secs(120) + Duration::from_millis(total as u64)
}

/// Deadlines alive at once, at most.
const IN_FLIGHT: usize = 10_000;

// ---- the plans --------------------------------------------------------------------------

#[derive(Debug, Clone, Copy, PartialEq)]
enum Plan {
    Fire,
    /// Complete the inner future this long after the deadline's time (negative: before).
    Complete {
        offset_us: i64,
    },
    /// Drop the task this long after its spawn.
    Cancel {
        after: Duration,
    },
}

#[derive(Debug, Clone, Copy)]
struct Job {
    duration: Duration,
    plan: Plan,
}

/// A small xorshift generator: random but reproducible.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }

    fn below(&mut self, n: u64) -> u64 {
        self.next() % n
    }
}

fn jobs(total: usize, seed: u64) -> Vec<Job> {
    let mut rng = Rng(seed | 1);
    (0..total)
        .map(|_| {
            let duration = match rng.below(100) {
                0 => Duration::ZERO,
                1..=90 => Duration::from_micros(rng.below(20_000)),
                _ => Duration::from_micros(20_000 + rng.below(280_000)),
            };
            let plan = match rng.below(8) {
                0..=1 => Plan::Fire,
                2 => Plan::Complete { offset_us: -2_000 },
                3 => Plan::Complete { offset_us: -200 },
                4 => Plan::Complete { offset_us: 0 },
                5 => Plan::Complete {
                    offset_us: [200, 2_000][rng.below(2) as usize],
                },
                _ => Plan::Cancel {
                    after: Duration::from_nanos(rng.below(2 * duration.as_nanos() as u64 + 1)),
                },
            };
            Job { duration, plan }
        })
        .collect()
}

// ---- what the scenario records per deadline ---------------------------------------------

const FIRED: u8 = 1;
const COMPLETED: u8 = 2;
const CANCELLED: u8 = 3;

/// Flags per deadline, for the watchdog's report.
const SPAWNED: u8 = 1;
const GATE_OPENED: u8 = 2;
const CANCEL_TRIED: u8 = 4;
const INNER_DROPPED: u8 = 8;

/// A one-shot signal that completes an inner future.
#[derive(Default)]
struct Gate {
    open: AtomicBool,
    waker: AtomicWaker,
}

/// How a task is cancelled: dropped by the canceller thread (our executor), or aborted.
enum Cancel {
    Task(Arc<Task>),
    Tokio(tokio::task::AbortHandle),
}

struct Shared {
    jobs: Vec<Job>,
    /// Outcomes recorded per deadline: must end at exactly one.
    outcomes: Vec<AtomicU8>,
    /// The last outcome recorded.
    kinds: Vec<AtomicU8>,
    flags: Vec<AtomicU8>,
    gates: Vec<Gate>,
    cancels: Vec<OnceLock<Cancel>>,
    /// Nanoseconds since `start` at which each deadline was spawned.
    spawned_at: Vec<AtomicU64>,
    start: Instant,
    done: AtomicUsize,
    violations: Mutex<Vec<String>>,
}

impl Shared {
    fn new(total: usize, seed: u64) -> Arc<Self> {
        let each = |n: usize| (0..n).map(|_| AtomicU8::new(0)).collect::<Vec<_>>();
        Arc::new(Self {
            jobs: jobs(total, seed),
            outcomes: each(total),
            kinds: each(total),
            flags: each(total),
            gates: (0..total).map(|_| Gate::default()).collect(),
            cancels: (0..total).map(|_| OnceLock::new()).collect(),
            spawned_at: (0..total).map(|_| AtomicU64::new(0)).collect(),
            start: Instant::now(),
            done: AtomicUsize::new(0),
            violations: Mutex::default(),
        })
    }

    fn total(&self) -> usize {
        self.jobs.len()
    }

    fn violation(&self, what: String) {
        let mut violations = self.violations.lock().unwrap();
        if violations.len() < 50 {
            violations.push(what);
        }
    }

    fn record(&self, id: usize, kind: u8) {
        let before = self.outcomes[id].fetch_add(1, SEQ);
        let previous = self.kinds[id].swap(kind, SEQ);
        if before == 0 {
            self.done.fetch_add(1, SEQ);
        } else {
            self.violation(format!(
                "deadline {id} ({:?}) ended twice: {} then {}",
                self.jobs[id],
                kind_name(previous),
                kind_name(kind)
            ));
        }
    }

    fn flag(&self, id: usize, flag: u8) {
        self.flags[id].fetch_or(flag, SEQ);
    }

    /// The deadlines without an outcome, described.
    fn hung(&self, limit: usize) -> Vec<String> {
        let now = self.start.elapsed();
        (0..self.total())
            .filter(|&id| self.outcomes[id].load(SEQ) == 0)
            .filter(|&id| self.flags[id].load(SEQ) & SPAWNED != 0)
            .take(limit)
            .map(|id| {
                let flags = self.flags[id].load(SEQ);
                let age = now.saturating_sub(Duration::from_nanos(self.spawned_at[id].load(SEQ)));
                format!(
                    "#{id} {:?} for {:?}, spawned {age:?} ago, gate opened {}, cancel tried {}, inner dropped {}",
                    self.jobs[id].plan,
                    self.jobs[id].duration,
                    flags & GATE_OPENED != 0,
                    flags & CANCEL_TRIED != 0,
                    flags & INNER_DROPPED != 0,
                )
            })
            .collect()
    }
}

fn kind_name(kind: u8) -> &'static str {
    match kind {
        FIRED => "fired",
        COMPLETED => "completed",
        CANCELLED => "cancelled",
        _ => "nothing",
    }
}

/// The inner future: ready once its gate opens; records its drop.
struct Inner {
    shared: Arc<Shared>,
    id: usize,
}

impl Future for Inner {
    type Output = ();

    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<()> {
        let gate = &self.shared.gates[self.id];
        if gate.open.load(SEQ) {
            return Poll::Ready(());
        }
        gate.waker.register(cx.waker());
        if gate.open.load(SEQ) {
            Poll::Ready(())
        } else {
            Poll::Pending
        }
    }
}

impl Drop for Inner {
    fn drop(&mut self) {
        self.shared.flag(self.id, INNER_DROPPED);
    }
}

/// Records `CANCELLED` if the task is dropped before it recorded an outcome.
struct Outcome {
    shared: Arc<Shared>,
    id: usize,
    recorded: bool,
}

impl Outcome {
    fn record(mut self, kind: u8) {
        self.recorded = true;
        self.shared.record(self.id, kind);
    }
}

impl Drop for Outcome {
    fn drop(&mut self) {
        if !self.recorded {
            self.shared.record(self.id, CANCELLED);
        }
    }
}

/// The task of deadline `id`: awaits a deadline of its job's duration on `wheel` around
/// an [`Inner`], and checks and records the outcome.
///
/// The outcome guard and the inner future are made before the task is, so that a task
/// cancelled before its first poll still records its outcome.
fn deadline_task<C: Clock, S: Storage>(
    wheel: &'static Wheel<C, S>,
    global: bool,
    shared: &Arc<Shared>,
    id: usize,
) -> impl Future<Output = ()> + Send + 'static {
    let outcome = Outcome {
        shared: shared.clone(),
        id,
        recorded: false,
    };
    let inner = Inner {
        shared: shared.clone(),
        id,
    };
    async move {
        let shared = outcome.shared.clone();
        run_deadline(wheel, global, &shared, id, inner, outcome).await;
    }
}

async fn run_deadline<C: Clock, S: Storage>(
    wheel: &'static Wheel<C, S>,
    global: bool,
    shared: &Shared,
    id: usize,
    inner: Inner,
    outcome: Outcome,
) {
    let job = shared.jobs[id];
    let t0 = wheel.clock().now();
    let result = if global {
        inner.deadline(job.duration).await // the facade's default path
    } else {
        wheel.deadline(job.duration, inner).await
    };
    let t1 = wheel.clock().now();
    match result {
        Ok(()) => {
            if shared.flags[id].load(SEQ) & GATE_OPENED == 0 {
                shared.violation(format!("deadline {id} ({job:?}): Ok without its gate"));
            }
            outcome.record(COMPLETED);
        }
        Err(elapsed) => {
            if t1 < t0 + job.duration {
                shared.violation(format!(
                    "deadline {id} ({job:?}) fired early: {:?} after a reading before its start",
                    t1 - t0
                ));
            }
            if elapsed.duration() != job.duration {
                shared.violation(format!("deadline {id}: Elapsed says {elapsed}"));
            }
            if shared.flags[id].load(SEQ) & INNER_DROPPED == 0 {
                shared.violation(format!(
                    "deadline {id}: Err before its inner future dropped"
                ));
            }
            outcome.record(FIRED);
        }
    }
}

// ---- the completer and canceller threads ------------------------------------------------

/// Carries out timed actions: opens gates, or cancels tasks.
fn scheduler(
    shared: Arc<Shared>,
    cancel: bool,
) -> (mpsc::Sender<(Instant, usize)>, thread::JoinHandle<()>) {
    let (tx, rx) = mpsc::channel::<(Instant, usize)>();
    let name = if cancel { "canceller" } else { "completer" };
    let handle = thread::Builder::new()
        .name(name.into())
        .spawn(move || {
            let mut heap: BinaryHeap<Reverse<(Instant, usize)>> = BinaryHeap::new();
            loop {
                let now = Instant::now();
                while let Some(&Reverse((at, id))) = heap.peek() {
                    if at > now {
                        break;
                    }
                    heap.pop();
                    if cancel {
                        shared.flag(id, CANCEL_TRIED);
                        match shared.cancels[id].get() {
                            Some(Cancel::Task(task)) => {
                                let future = task.future.lock().unwrap().take();
                                drop(future); // on this thread
                            }
                            Some(Cancel::Tokio(abort)) => abort.abort(),
                            None => {}
                        }
                    } else {
                        shared.flag(id, GATE_OPENED);
                        let gate = &shared.gates[id];
                        gate.open.store(true, SEQ);
                        gate.waker.wake();
                    }
                }
                let wait = heap
                    .peek()
                    .map_or(Duration::from_millis(50), |Reverse((at, _))| {
                        at.saturating_duration_since(now)
                    });
                match rx.recv_timeout(wait) {
                    Ok(item) => heap.push(Reverse(item)),
                    Err(RecvTimeoutError::Timeout) => {}
                    Err(RecvTimeoutError::Disconnected) => break,
                }
            }
        })
        .unwrap();
    (tx, handle)
}

// ---- a small executor ---------------------------------------------------------------------

type BoxFuture = Pin<Box<dyn Future<Output = ()> + Send>>;

struct Task {
    future: Mutex<Option<BoxFuture>>,
    queued: AtomicBool,
    executor: Arc<Executor>,
}

impl Task {
    /// Polls the task once, if it is still there.
    fn run(self: &Arc<Self>) {
        self.queued.store(false, SEQ);
        let waker = Waker::from(self.clone());
        let mut slot = self.future.lock().unwrap();
        if let Some(future) = slot.as_mut() {
            if future
                .as_mut()
                .poll(&mut Context::from_waker(&waker))
                .is_ready()
            {
                *slot = None;
            }
        }
    }
}

impl Wake for Task {
    fn wake(self: Arc<Self>) {
        self.wake_by_ref();
    }

    fn wake_by_ref(self: &Arc<Self>) {
        if !self.queued.swap(true, SEQ) {
            self.executor.push(self.clone());
        }
    }
}

#[derive(Default)]
struct Executor {
    queue: Mutex<VecDeque<Arc<Task>>>,
    ready: Condvar,
    stop: AtomicBool,
}

impl Executor {
    fn push(&self, task: Arc<Task>) {
        self.queue.lock().unwrap().push_back(task);
        self.ready.notify_one();
    }

    fn worker(self: Arc<Self>) {
        loop {
            let task = {
                let mut queue = self.queue.lock().unwrap();
                loop {
                    if let Some(task) = queue.pop_front() {
                        break task;
                    }
                    if self.stop.load(SEQ) {
                        return;
                    }
                    queue = self
                        .ready
                        .wait_timeout(queue, Duration::from_millis(10))
                        .unwrap()
                        .0;
                }
            };
            task.run();
        }
    }

    fn spawn(self: &Arc<Self>, future: BoxFuture) -> Arc<Task> {
        Arc::new(Task {
            future: Mutex::new(Some(future)),
            queued: AtomicBool::new(false),
            executor: self.clone(),
        })
    }
}

// ---- the scenario ---------------------------------------------------------------------------

/// Where tasks run.
enum Runtime {
    /// Our executor; the spawner polls each task once itself.
    Threads(Arc<Executor>),
    Tokio(tokio::runtime::Handle),
}

/// Runs one scenario on `wheel` and checks everything in the module docs.
fn run_scenario<C: Clock + 'static, S: Storage + 'static>(
    name: &'static str,
    wheel: &'static Wheel<C, S>,
    global: bool,
    runtime: Runtime,
    seed: u64,
) {
    const SPAWNERS: usize = 2;
    let total = scenario_size();
    let shared = Shared::new(total, seed);
    let (complete_tx, completer) = scheduler(shared.clone(), false);
    let (cancel_tx, canceller) = scheduler(shared.clone(), true);
    let runtime = Arc::new(runtime);
    let started = Instant::now();

    let spawners: Vec<_> = (0..SPAWNERS)
        .map(|k| {
            let (shared, runtime) = (shared.clone(), runtime.clone());
            let (complete_tx, cancel_tx) = (complete_tx.clone(), cancel_tx.clone());
            thread::Builder::new()
                .name(format!("spawner-{k}"))
                .spawn(move || {
                    for id in (k..total).step_by(SPAWNERS) {
                        let mut spins = 0;
                        while (id - shared.done.load(SEQ).min(id)) > IN_FLIGHT {
                            spins += 1;
                            thread::sleep(Duration::from_micros(if spins < 100 {
                                50
                            } else {
                                500
                            }));
                        }
                        let job = shared.jobs[id];
                        let now = Instant::now();
                        shared.spawned_at[id]
                            .store(now.duration_since(shared.start).as_nanos() as u64, SEQ);
                        shared.flag(id, SPAWNED);
                        let future = Box::pin(deadline_task(wheel, global, &shared, id));
                        match &*runtime {
                            Runtime::Threads(executor) => {
                                let task = executor.spawn(future);
                                let _ = shared.cancels[id].set(Cancel::Task(task.clone()));
                                task.run(); // arms the deadline on this thread
                            }
                            Runtime::Tokio(handle) => {
                                let abort = handle.spawn(future).abort_handle();
                                let _ = shared.cancels[id].set(Cancel::Tokio(abort));
                            }
                        }
                        match job.plan {
                            Plan::Fire => {}
                            Plan::Complete { offset_us } => {
                                let at = now + job.duration;
                                let at = if offset_us < 0 {
                                    at.checked_sub(Duration::from_micros(offset_us.unsigned_abs()))
                                        .unwrap_or(now)
                                        .max(now)
                                } else {
                                    at + Duration::from_micros(offset_us as u64)
                                };
                                complete_tx.send((at, id)).unwrap();
                            }
                            Plan::Cancel { after } => cancel_tx.send((now + after, id)).unwrap(),
                        }
                    }
                })
                .unwrap()
        })
        .collect();
    drop((complete_tx, cancel_tx));

    // The watchdog: wait for every outcome, or fail naming what hung.
    let limit = watchdog_limit(total);
    while shared.done.load(SEQ) < total {
        if started.elapsed() > limit {
            panic!(
                "{name}: {} of {total} deadlines ended after {limit:?}; hung (first 20): {:#?}\n\
                 wheel: {}\nviolations: {:#?}",
                shared.done.load(SEQ),
                shared.hung(20),
                wheel.stats(),
                shared.violations.lock().unwrap(),
            );
        }
        thread::sleep(Duration::from_millis(5));
    }
    let elapsed = started.elapsed();
    for spawner in spawners {
        spawner.join().unwrap();
    }
    completer.join().unwrap();
    canceller.join().unwrap();

    // Every entry back: allow the driver a bounded moment to reclaim.
    let give_up = Instant::now() + Duration::from_secs(10);
    loop {
        let stats = wheel.stats();
        if stats.occupied == 0 && stats.armed == stats.fired + stats.cancelled {
            break;
        }
        assert!(
            Instant::now() < give_up,
            "{name}: entries not reclaimed 10 s after the last outcome: {stats}"
        );
        thread::sleep(Duration::from_millis(1));
    }
    if let Runtime::Threads(executor) = &*runtime {
        executor.stop.store(true, SEQ);
        executor.ready.notify_all();
    }

    let violations = shared.violations.lock().unwrap();
    assert!(violations.is_empty(), "{name}: {violations:#?}");
    let mut counts = [0usize; 4];
    for id in 0..total {
        assert_eq!(shared.outcomes[id].load(SEQ), 1, "{name}: deadline {id}");
        counts[usize::from(shared.kinds[id].load(SEQ))] += 1;
    }
    let mut by_plan = std::collections::BTreeMap::<String, [usize; 4]>::new();
    for id in 0..total {
        let key = match shared.jobs[id].plan {
            Plan::Fire => "fire".to_string(),
            Plan::Complete { offset_us } => format!("complete {offset_us:+} us"),
            Plan::Cancel { .. } => "cancel".to_string(),
        };
        by_plan.entry(key).or_default()[usize::from(shared.kinds[id].load(SEQ))] += 1;
    }
    let [_, fired, completed, cancelled] = counts;
    // A deadline whose inner future never completes and is never cancelled must fire.
    // Whether a completion or a cancel beats its deadline depends on the load, so their
    // counts are reported, not asserted.
    for id in 0..total {
        if matches!(shared.jobs[id].plan, Plan::Fire) {
            let kind = shared.kinds[id].load(SEQ);
            assert_eq!(
                kind,
                FIRED,
                "{name}: deadline {id} planned to fire ended {}",
                kind_name(kind)
            );
        }
    }
    assert!(fired > 0, "{name}: {counts:?}");
    eprintln!(
        "stress {name}: {total} deadlines in {elapsed:.2?}: {fired} fired, {completed} completed, \
         {cancelled} cancelled; wheel: {}",
        wheel.stats()
    );
    for (plan, [_, fired, completed, cancelled]) in by_plan {
        eprintln!("    {plan:>17}: {fired} fired, {completed} completed, {cancelled} cancelled");
    }
}

#[test]
fn thread_driver_with_std_threads() {
    static WHEEL: LazyLock<Wheel<StdClock, Growable>> = LazyLock::new(|| {
        Wheel::growable(StdClock::new(), Duration::from_millis(1)).with_batched_wakes()
    });
    punctual::wheel::spawn_driver(&WHEEL);
    let executor = Arc::new(Executor::default());
    let workers: Vec<_> = (0..2)
        .map(|i| {
            let executor = executor.clone();
            thread::Builder::new()
                .name(format!("worker-{i}"))
                .spawn(move || executor.worker())
                .unwrap()
        })
        .collect();
    run_scenario(
        "thread driver, std threads",
        &WHEEL,
        false,
        Runtime::Threads(executor),
        0x5eed_0001,
    );
    for worker in workers {
        worker.join().unwrap();
    }
}

fn tokio_runtime() -> tokio::runtime::Runtime {
    tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_time()
        .build()
        .unwrap()
}

#[test]
fn tokio_multi_thread_on_the_global_wheel() {
    let rt = tokio_runtime();
    run_scenario(
        "tokio multi-thread, global wheel",
        punctual::wheel::global_wheel(),
        true,
        Runtime::Tokio(rt.handle().clone()),
        0x5eed_0002,
    );
    rt.shutdown_timeout(Duration::from_secs(10));
}

#[test]
fn tokio_multi_thread_on_the_tokio_driver() {
    let rt = tokio_runtime();
    let wheel = {
        let _context = rt.enter();
        punctual_tokio::start()
    };
    run_scenario(
        "tokio multi-thread, punctual-tokio driver",
        wheel,
        false,
        Runtime::Tokio(rt.handle().clone()),
        0x5eed_0003,
    );
    rt.shutdown_timeout(Duration::from_secs(10));
}
