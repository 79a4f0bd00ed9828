//! What the benches share: the implementations measured side by side ("peers"), and each
//! scenario written once, generic over the peer.
//!
//! Every peer bounds the same inner future the way its users would write it:
//!
//! | peer            | a deadline of `d` around `f`                                           |
//! |-----------------|------------------------------------------------------------------------|
//! | `punctual`      | `f.deadline(d)`: the global wheel (1 ms tick) and its thread           |
//! | `punctual in tokio` | `f.deadline(d)` polled inside a tokio runtime: the runtime's wheel (1 ms tick), turned by a task of the runtime, as tokio's scenarios run |
//! | `punctual-100us`| `f.deadline_on(&WHEEL, d)`: a 100 µs wheel driven by `spawn_driver`   |
//! | `punctual-smol` | `f.deadline_on(&wheel, d)` on a 1 ms wheel driven inside the executor by `punctual_smol::with_driver` (fire only) |
//! | `punctual-smol-100us` | the same on a 100 µs wheel driven inside the executor by `punctual_smol::with_driver` (lateness only) |
//! | `punctual-tokio` | `f.deadline_on(wheel, d)` on the wheel of `punctual::adapters::tokio::start()`: a 1 ms wheel driven by a task of the current-thread runtime (fire and lateness only) |
//! | `tokio`         | `tokio::time::timeout(d, f)`, always inside `tokio::task::unconstrained` |
//! | `tokio alt timer` | the same on a 2-worker multi-thread runtime built with `enable_alt_timer()` (per-worker wheels), every scenario in a task on a worker; only when built with `--cfg tokio_unstable` (see [`tokio_alt`]) |
//! | `async-io`      | `f` raced against `async_io::Timer::after(d)` (made when `f` is pending, as `f.or(async { Timer::after(d).await; .. })` does) |
//! | `futures-timer` | `f` raced against `futures_timer::Delay::new(d)` (made when `f` is pending) |
//! | `futures-time`  | `f.timeout(d)` (`futures_time::future::FutureExt`, async-io underneath) |
//! | `embassy-time`  | `embassy_time::with_timeout(d, f)`: the `std` driver, generic queue of 128 |
//! | `no timer`      | no deadline at all: `f` and a future woken once, in order of `d`, by a bare loop (fire only: the harness's own cost, below any timer's) |
//! | `floor: clock + 2 CAS` | the least any deadline that starts at its first poll and hands itself to a driver on another thread must do: one clock reading, a kept waker, one compare-and-swap to publish and one to take back (arm + cancel only: a floor under every such timer's cost; see [`ArmFloor`]) |
//!
//! Micro benches poll by hand with a no-op waker, so that only the deadline is measured.
//! Tokio's part of every scenario runs inside `tokio::task::unconstrained` (its cooperative
//! budget would otherwise make its timers stop registering after 128 polls in one task);
//! the fire scenario also has a row with the budget on.

#![allow(dead_code)]
// each bench binary uses a part of this module
// `-> impl Future + Send` in the trait, so that the futures can move to other threads; the
// `async fn` that clippy suggests would drop the `Send` bound.
#![allow(clippy::manual_async_fn)]

use std::future::{Future, pending};
use std::hint::black_box;
use std::pin::{Pin, pin};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, LazyLock, Once};
use std::task::{Context, Poll, Wake, Waker};
use std::time::{Duration, Instant};

use futures_util::StreamExt;
use futures_util::stream::FuturesUnordered;
use punctual::{DeadlineExt, Growable, StdClock, Wheel};

/// The deadline of the micro benches: far enough never to fire while measured.
pub(crate) const LONG: Duration = Duration::from_secs(2);

/// The peers, in the order tables show them.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub(crate) enum Peer {
    /// The inner future alone (the `ready` baseline).
    Bare,
    Punctual,
    /// The default deadline inside a tokio runtime (see [`PunctualInTokio`]).
    PunctualInTokio,
    Punctual100us,
    PunctualSmol,
    PunctualSmol100us,
    /// The tokio adapter's wheel (see [`PunctualTokio`]).
    PunctualTokio,
    Tokio,
    /// tokio's alternative timer (see [`TokioAlt`]).
    TokioAlt,
    AsyncIo,
    FuturesTimer,
    FuturesTime,
    Embassy,
    /// No timer: the fire harness alone (see [`NoTimer`]).
    NoTimer,
    /// The floor under an arm + cancel (see [`ArmFloor`]).
    ArmFloor,
}

impl Peer {
    /// Every peer that bounds a future, punctual first, tokio's alternative timer included
    /// (see [`Peer::timers`] for the ones this build can run).
    const ALL_TIMERS: [Peer; 8] = [
        Peer::Punctual,
        Peer::PunctualInTokio,
        Peer::Tokio,
        Peer::TokioAlt,
        Peer::AsyncIo,
        Peer::FuturesTimer,
        Peer::FuturesTime,
        Peer::Embassy,
    ];

    /// Every peer that bounds a future and that this build can run: tokio's alternative
    /// timer only when built with `--cfg tokio_unstable`.
    pub(crate) fn timers() -> impl Iterator<Item = Peer> + Clone {
        Self::ALL_TIMERS.into_iter().filter(|p| p.available())
    }

    /// Whether this build can run the peer.
    pub(crate) fn available(self) -> bool {
        self != Peer::TokioAlt || cfg!(tokio_unstable)
    }

    /// Every peer, by its name (for the benches' command lines).
    pub(crate) fn named(name: &str) -> Option<Peer> {
        [
            Peer::Bare,
            Peer::Punctual,
            Peer::PunctualInTokio,
            Peer::Punctual100us,
            Peer::PunctualSmol,
            Peer::PunctualSmol100us,
            Peer::PunctualTokio,
            Peer::Tokio,
            Peer::TokioAlt,
            Peer::AsyncIo,
            Peer::FuturesTimer,
            Peer::FuturesTime,
            Peer::Embassy,
            Peer::NoTimer,
            Peer::ArmFloor,
        ]
        .into_iter()
        .find(|p| p.name() == name)
    }

    pub(crate) fn name(self) -> &'static str {
        match self {
            Peer::Bare => "bare future",
            Peer::Punctual => "punctual",
            Peer::PunctualInTokio => "punctual in tokio",
            Peer::Punctual100us => "punctual-100us",
            Peer::PunctualSmol => "punctual-smol",
            Peer::PunctualSmol100us => "punctual-smol-100us",
            Peer::PunctualTokio => "punctual-tokio",
            Peer::Tokio => "tokio",
            Peer::TokioAlt => "tokio alt timer",
            Peer::AsyncIo => "async-io",
            Peer::FuturesTimer => "futures-timer",
            Peer::FuturesTime => "futures-time",
            Peer::Embassy => "embassy-time",
            Peer::NoTimer => "no timer",
            Peer::ArmFloor => "floor: clock + 2 CAS",
        }
    }
}

/// Runs `$body` with `$t` bound to the [`Timeouts`] type of `$peer`.
macro_rules! with_peer {
    ($peer:expr, $t:ident => $body:expr) => {{
        use $crate::common::*;
        match $peer {
            Peer::Bare => {
                type $t = BareFuture;
                $body
            }
            Peer::Punctual => {
                type $t = PunctualGlobal;
                $body
            }
            Peer::PunctualInTokio => {
                type $t = PunctualInTokio;
                $body
            }
            Peer::Punctual100us => {
                type $t = Punctual100us;
                $body
            }
            Peer::PunctualSmol => {
                type $t = PunctualSmol;
                $body
            }
            Peer::PunctualSmol100us => {
                type $t = PunctualSmol100us;
                $body
            }
            Peer::PunctualTokio => {
                type $t = PunctualTokio;
                $body
            }
            Peer::Tokio => {
                type $t = TokioTimeout;
                $body
            }
            Peer::TokioAlt => {
                type $t = TokioAlt;
                $body
            }
            Peer::AsyncIo => {
                type $t = AsyncIoRace;
                $body
            }
            Peer::FuturesTimer => {
                type $t = FuturesTimerRace;
                $body
            }
            Peer::FuturesTime => {
                type $t = FuturesTimeTimeout;
                $body
            }
            Peer::Embassy => {
                type $t = EmbassyTimeout;
                $body
            }
            Peer::NoTimer => {
                type $t = NoTimer;
                $body
            }
            Peer::ArmFloor => {
                type $t = ArmFloor;
                $body
            }
        }
    }};
}

/// One way of bounding a future by a deadline.
pub(crate) trait Timeouts: 'static {
    /// The peer's own deadline future around `f`, as its users write it (by default, the
    /// one of [`Timeouts::timed_out`]).
    fn bound<F: Future + Unpin + Send + 'static>(
        f: F,
        d: Duration,
    ) -> impl Future + Send + 'static {
        Self::timed_out(f, d)
    }

    /// The same, resolving to whether the deadline fired.
    fn timed_out<F: Future + Unpin + Send + 'static>(
        f: F,
        d: Duration,
    ) -> impl Future<Output = bool> + Send + 'static;

    /// Runs `f` where the peer's deadlines can be made and polled (tokio: inside its runtime
    /// and `unconstrained`).
    /// (`Send + 'static`: tokio's alternative timer runs it in a task on a worker.)
    fn context<R: Send + 'static>(f: impl FnOnce() -> R + Send + 'static) -> R {
        f()
    }

    /// Runs `fut` to completion on the executor the peer's users would use.
    fn block_on<R: Send + 'static>(fut: impl Future<Output = R> + Send + 'static) -> R {
        futures_executor::block_on(fut)
    }

    /// `threads` threads each do `iters` arm + cancel; the wall time until all are done.
    fn contention(threads: usize, iters: u64) -> Duration
    where
        Self: Sized,
    {
        let start = Instant::now();
        std::thread::scope(|s| {
            for _ in 0..threads {
                s.spawn(move || Self::context(move || arm_cancel_loop::<Self>(iters)));
            }
        });
        start.elapsed()
    }
}

/// The inner future with no deadline at all.
pub(crate) struct BareFuture;

impl Timeouts for BareFuture {
    fn bound<F: Future + Unpin + Send + 'static>(
        f: F,
        _: Duration,
    ) -> impl Future + Send + 'static {
        f
    }

    fn timed_out<F: Future + Unpin + Send + 'static>(
        f: F,
        _: Duration,
    ) -> impl Future<Output = bool> + Send + 'static {
        async move {
            f.await;
            false
        }
    }
}

/// No timer at all: what the fire scenario costs besides the timers' own work, a floor
/// under every timer's cost. Each "deadline" polls `f` and, at its first poll, leaves its waker and
/// duration on a thread-local list and is pending; [`NoTimer::block_on`] is a bare loop
/// that polls the whole future, sorts the wakers left into one bucket per millisecond of
/// duration, and wakes them bucket by bucket, polling the future after each (as a 1 ms
/// wheel would, but with no clock, no sleep and no other thread). So each future is made,
/// pushed into the `FuturesUnordered`, polled twice and woken once, in the order of its
/// deadline, as with any timer: any timer adds its own work to this.
pub(crate) struct NoTimer;

std::thread_local! {
    static LEFT_WAKERS: std::cell::RefCell<Vec<(Duration, Waker)>> =
        const { std::cell::RefCell::new(Vec::new()) };
}

/// The future of [`NoTimer`]: pending at its first poll (its waker left to be woken), done
/// at the next.
struct WokenOnce<F> {
    inner: F,
    duration: Duration,
    polled: bool,
}

impl<F: Future + Unpin> Future for WokenOnce<F> {
    type Output = bool;

    fn poll(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<bool> {
        if Pin::new(&mut self.inner).poll(cx).is_ready() {
            return Poll::Ready(false);
        }
        if self.polled {
            return Poll::Ready(true);
        }
        self.polled = true;
        let left = (self.duration, cx.waker().clone());
        LEFT_WAKERS.with(|wakers| wakers.borrow_mut().push(left));
        Poll::Pending
    }
}

impl Timeouts for NoTimer {
    fn timed_out<F: Future + Unpin + Send + 'static>(
        f: F,
        d: Duration,
    ) -> impl Future<Output = bool> + Send + 'static {
        WokenOnce {
            inner: f,
            duration: d,
            polled: false,
        }
    }

    fn block_on<R: Send + 'static>(fut: impl Future<Output = R> + Send + 'static) -> R {
        let mut fut = pin!(fut);
        let mut cx = Context::from_waker(Waker::noop());
        loop {
            if let Poll::Ready(out) = fut.as_mut().poll(&mut cx) {
                return out;
            }
            let left = LEFT_WAKERS.with(|left| std::mem::take(&mut *left.borrow_mut()));
            assert!(
                !left.is_empty(),
                "no timer: pending with nothing left to wake"
            );
            let mut buckets: Vec<Vec<Waker>> = Vec::new();
            for (d, waker) in left {
                let ms = d.as_millis() as usize;
                if buckets.len() <= ms {
                    buckets.resize_with(ms + 1, Vec::new);
                }
                buckets[ms].push(waker);
            }
            for bucket in buckets {
                if bucket.is_empty() {
                    continue;
                }
                for waker in bucket {
                    waker.wake();
                }
                if let Poll::Ready(out) = fut.as_mut().poll(&mut cx) {
                    return out;
                }
            }
        }
    }
}

/// The floor under an arm + cancel: what any deadline must do that starts at its first
/// poll (docs/design.md, rule 4) and hands itself to a driver on another thread without a lock,
/// and nothing more. At its first pending poll it reads the clock the global wheel reads
/// (a [`StdClock`] made once, behind a `LazyLock` as the global wheel keeps its own), keeps a
/// clone of the waker and its due time, publishes itself with one compare-and-swap on a
/// list head and reads the driver's plan; dropped, it takes itself back with a second
/// compare-and-swap. It fires nothing and has no driver: it measures the clock reading and
/// the two locked operations on this machine, in the same run as the timers, so that a
/// ratio to tokio's time can be read against what no such design goes below.
pub(crate) struct ArmFloor;

/// The list head [`ArmFloor`] publishes onto, on a line of its own.
#[repr(align(128))]
struct FloorList {
    head: AtomicUsize,
    plan: AtomicUsize,
}

static FLOOR_LIST: FloorList = FloorList {
    head: AtomicUsize::new(0),
    plan: AtomicUsize::new(usize::MAX),
};

static FLOOR_CLOCK: LazyLock<StdClock> = LazyLock::new(StdClock::new);

/// The future of [`ArmFloor`].
struct FloorDeadline<F> {
    inner: F,
    duration: Duration,
    /// The due time and waker kept while published.
    armed: Option<(Duration, Waker)>,
    /// Set once published: the value pushed, to take back on drop.
    token: usize,
}

impl<F: Future + Unpin> Future for FloorDeadline<F> {
    type Output = bool;

    fn poll(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<bool> {
        if Pin::new(&mut self.inner).poll(cx).is_ready() {
            return Poll::Ready(false);
        }
        if self.armed.is_none() {
            let due = punctual::Clock::now(&*FLOOR_CLOCK) + self.duration;
            self.armed = Some((due, cx.waker().clone()));
            let token = &self.armed as *const _ as usize;
            let list = &FLOOR_LIST;
            let mut head = list.head.load(Ordering::Relaxed);
            while let Err(now) =
                list.head
                    .compare_exchange_weak(head, token, Ordering::AcqRel, Ordering::Relaxed)
            {
                head = now;
            }
            self.token = token;
            // A timer would wake its driver if the deadline came before its plan.
            if due.as_nanos() as usize > list.plan.load(Ordering::Acquire) {
                black_box(due);
            }
        }
        Poll::Pending
    }
}

impl<F> Drop for FloorDeadline<F> {
    fn drop(&mut self) {
        if self.token != 0 {
            // Take back: succeeds when nothing was pushed since (always, on one thread).
            let _ = FLOOR_LIST.head.compare_exchange(
                self.token,
                0,
                Ordering::AcqRel,
                Ordering::Relaxed,
            );
        }
    }
}

impl Timeouts for ArmFloor {
    fn timed_out<F: Future + Unpin + Send + 'static>(
        f: F,
        d: Duration,
    ) -> impl Future<Output = bool> + Send + 'static {
        FloorDeadline {
            inner: f,
            duration: d,
            armed: None,
            token: 0,
        }
    }
}

/// `punctual`'s global wheel: a 1 ms tick, driven by its own thread.
pub(crate) struct PunctualGlobal;

impl Timeouts for PunctualGlobal {
    fn bound<F: Future + Unpin + Send + 'static>(
        f: F,
        d: Duration,
    ) -> impl Future + Send + 'static {
        f.deadline(d)
    }

    fn timed_out<F: Future + Unpin + Send + 'static>(
        f: F,
        d: Duration,
    ) -> impl Future<Output = bool> + Send + 'static {
        async move { f.deadline(d).await.is_err() }
    }
}

/// A wheel with a 100 µs tick, driven by `punctual::spawn_driver`.
pub(crate) fn wheel_100us() -> &'static Wheel<StdClock, Growable> {
    static WHEEL: LazyLock<Wheel<StdClock, Growable>> =
        LazyLock::new(|| Wheel::growable(StdClock::new(), Duration::from_micros(100)));
    static DRIVER: Once = Once::new();
    DRIVER.call_once(|| {
        punctual::spawn_driver(&WHEEL);
    });
    &WHEEL
}

/// `punctual` on a wheel of 100 µs ticks.
pub(crate) struct Punctual100us;

impl Timeouts for Punctual100us {
    fn bound<F: Future + Unpin + Send + 'static>(
        f: F,
        d: Duration,
    ) -> impl Future + Send + 'static {
        f.deadline_on(wheel_100us(), d)
    }

    fn timed_out<F: Future + Unpin + Send + 'static>(
        f: F,
        d: Duration,
    ) -> impl Future<Output = bool> + Send + 'static {
        async move { f.deadline_on(wheel_100us(), d).await.is_err() }
    }
}

/// A `punctual` peer on a wheel of its own whose driver runs in the executor's own task
/// (`punctual_smol::with_driver` in `async_io::block_on`), as async-io's timers do: no
/// timer thread, so no deadline crosses between cores.
macro_rules! smol_peer {
    ($(#[$doc:meta])* $name:ident, $tick:expr) => {
        $(#[$doc])*
        pub(crate) struct $name;

        impl $name {
            /// The peer's wheel (leaked: deadlines need it `'static`).
            fn wheel() -> &'static punctual_smol::SmolWheel {
                static WHEEL: LazyLock<&'static punctual_smol::SmolWheel> =
                    LazyLock::new(|| punctual_smol::leak_wheel($tick));
                &WHEEL
            }
        }

        impl Timeouts for $name {
            fn bound<F: Future + Unpin + Send + 'static>(
                f: F,
                d: Duration,
            ) -> impl Future + Send + 'static {
                f.deadline_on(Self::wheel(), d)
            }

            fn timed_out<F: Future + Unpin + Send + 'static>(
                f: F,
                d: Duration,
            ) -> impl Future<Output = bool> + Send + 'static {
                async move { f.deadline_on(Self::wheel(), d).await.is_err() }
            }

            fn block_on<R: Send + 'static>(fut: impl Future<Output = R> + Send + 'static) -> R {
                async_io::block_on(punctual_smol::with_driver(Self::wheel(), fut))
            }
        }
    };
}

smol_peer!(
    /// `punctual` on a wheel of 1 ms ticks driven in the executor (see `smol_peer!`).
    PunctualSmol,
    punctual_smol::DEFAULT_TICK
);
smol_peer!(
    /// `punctual` on a wheel of 100 µs ticks driven in the executor (see `smol_peer!`).
    PunctualSmol100us,
    Duration::from_micros(100)
);

/// A current-thread tokio runtime (timers enabled): where tokio's single-thread scenarios run.
pub(crate) fn tokio_current() -> &'static tokio::runtime::Runtime {
    static RT: LazyLock<tokio::runtime::Runtime> = LazyLock::new(|| {
        tokio::runtime::Builder::new_current_thread()
            .enable_time()
            .build()
            .expect("tokio runtime")
    });
    &RT
}

/// A multi-thread tokio runtime with one worker per core (2 here): the contention scenario.
pub(crate) fn tokio_multi() -> &'static tokio::runtime::Runtime {
    static RT: LazyLock<tokio::runtime::Runtime> = LazyLock::new(|| {
        tokio::runtime::Builder::new_multi_thread()
            .worker_threads(2)
            .enable_time()
            .build()
            .expect("tokio runtime")
    });
    &RT
}

/// A 2-worker multi-thread tokio runtime built with tokio's alternative timer
/// (`Builder::enable_alt_timer`: a wheel per worker, timers registered by a worker's own
/// tasks go to its own wheel). Only with `--cfg tokio_unstable`, as tokio requires;
/// `bash ci/bench_report.sh` builds so.
///
/// # Panics
///
/// Built without `--cfg tokio_unstable` (the peer is then left out of every list, see
/// [`Peer::timers`]).
pub(crate) fn tokio_alt() -> &'static tokio::runtime::Runtime {
    #[cfg(tokio_unstable)]
    {
        static RT: LazyLock<tokio::runtime::Runtime> = LazyLock::new(|| {
            tokio::runtime::Builder::new_multi_thread()
                .worker_threads(2)
                .enable_alt_timer()
                .build()
                .expect("tokio runtime")
        });
        &RT
    }
    #[cfg(not(tokio_unstable))]
    panic!("tokio's alternative timer: build with RUSTFLAGS=\"--cfg tokio_unstable\"")
}

/// Runs `fut` in a task on `rt`'s workers (`unconstrained`) and waits for it: where a
/// multi-thread runtime's users run their code.
pub(crate) fn on_worker<R: Send + 'static>(
    rt: &'static tokio::runtime::Runtime,
    fut: impl Future<Output = R> + Send + 'static,
) -> R {
    let task = rt.spawn(tokio::task::unconstrained(fut));
    rt.block_on(task)
        .unwrap_or_else(|e| std::panic::resume_unwind(e.into_panic()))
}

/// The contention scenario of a timer that runs inside tokio: `threads` tasks on the
/// 2-worker runtime, each an arm + cancel loop of `iters`.
fn tokio_tasks_contention<T: Timeouts>(threads: usize, iters: u64) -> Duration {
    tokio_tasks_contention_on::<T>(tokio_multi(), threads, iters)
}

/// [`tokio_tasks_contention`] on the runtime `rt`.
fn tokio_tasks_contention_on<T: Timeouts>(
    rt: &'static tokio::runtime::Runtime,
    threads: usize,
    iters: u64,
) -> Duration {
    rt.block_on(async move {
        let start = Instant::now();
        let tasks: Vec<_> = (0..threads)
            .map(|_| {
                tokio::spawn(tokio::task::unconstrained(async move {
                    arm_cancel_loop::<T>(iters)
                }))
            })
            .collect();
        for task in tasks {
            task.await.expect("contention task");
        }
        start.elapsed()
    })
}

/// `tokio::time::timeout`.
pub(crate) struct TokioTimeout;

impl Timeouts for TokioTimeout {
    fn bound<F: Future + Unpin + Send + 'static>(
        f: F,
        d: Duration,
    ) -> impl Future + Send + 'static {
        tokio::time::timeout(d, f)
    }

    fn timed_out<F: Future + Unpin + Send + 'static>(
        f: F,
        d: Duration,
    ) -> impl Future<Output = bool> + Send + 'static {
        async move { tokio::time::timeout(d, f).await.is_err() }
    }

    fn context<R: Send + 'static>(f: impl FnOnce() -> R + Send + 'static) -> R {
        tokio_current().block_on(tokio::task::unconstrained(async move { f() }))
    }

    fn block_on<R: Send + 'static>(fut: impl Future<Output = R> + Send + 'static) -> R {
        tokio_current().block_on(tokio::task::unconstrained(fut))
    }

    /// Tasks on the 2-worker runtime instead of threads.
    fn contention(threads: usize, iters: u64) -> Duration {
        tokio_tasks_contention::<Self>(threads, iters)
    }
}

/// `f.deadline(d)` inside a tokio runtime: the default deadline on the runtime's own wheel,
/// run exactly as [`TokioTimeout`]'s scenarios are (the same runtimes, `unconstrained`).
pub(crate) struct PunctualInTokio;

impl Timeouts for PunctualInTokio {
    fn timed_out<F: Future + Unpin + Send + 'static>(
        f: F,
        d: Duration,
    ) -> impl Future<Output = bool> + Send + 'static {
        async move { f.deadline(d).await.is_err() }
    }

    fn bound<F: Future + Unpin + Send + 'static>(
        f: F,
        d: Duration,
    ) -> impl Future + Send + 'static {
        f.deadline(d)
    }

    fn context<R: Send + 'static>(f: impl FnOnce() -> R + Send + 'static) -> R {
        TokioTimeout::context(f)
    }

    fn block_on<R: Send + 'static>(fut: impl Future<Output = R> + Send + 'static) -> R {
        TokioTimeout::block_on(fut)
    }

    /// Tasks on the 2-worker runtime instead of threads, as tokio's.
    fn contention(threads: usize, iters: u64) -> Duration {
        tokio_tasks_contention::<Self>(threads, iters)
    }
}

/// `tokio::time::timeout` on tokio's alternative timer: every scenario in a task on a
/// worker of [`tokio_alt`]'s runtime (a timer made there goes to that worker's wheel; one
/// made outside the workers would take the remote path, which users' tasks do not).
pub(crate) struct TokioAlt;

impl Timeouts for TokioAlt {
    fn bound<F: Future + Unpin + Send + 'static>(
        f: F,
        d: Duration,
    ) -> impl Future + Send + 'static {
        tokio::time::timeout(d, f)
    }

    fn timed_out<F: Future + Unpin + Send + 'static>(
        f: F,
        d: Duration,
    ) -> impl Future<Output = bool> + Send + 'static {
        async move { tokio::time::timeout(d, f).await.is_err() }
    }

    fn context<R: Send + 'static>(f: impl FnOnce() -> R + Send + 'static) -> R {
        on_worker(tokio_alt(), async move { f() })
    }

    fn block_on<R: Send + 'static>(fut: impl Future<Output = R> + Send + 'static) -> R {
        on_worker(tokio_alt(), fut)
    }

    /// Tasks on the 2-worker runtime instead of threads, as tokio's.
    fn contention(threads: usize, iters: u64) -> Duration {
        tokio_tasks_contention_on::<Self>(tokio_alt(), threads, iters)
    }
}

/// The tokio adapter: `f.deadline_on(wheel, d)` on the wheel of `punctual::adapters::tokio::start()`
/// (1 ms ticks), whose driver is a task of the current-thread runtime that tokio's
/// scenarios run on; those scenarios run as [`TokioTimeout`]'s do.
pub(crate) struct PunctualTokio;

impl PunctualTokio {
    /// The adapter's wheel, started once on the current-thread runtime.
    fn wheel() -> &'static punctual::adapters::tokio::TokioWheel {
        static WHEEL: LazyLock<&'static punctual::adapters::tokio::TokioWheel> =
            LazyLock::new(|| {
                let _runtime = tokio_current().enter();
                punctual::adapters::tokio::start()
            });
        &WHEEL
    }
}

impl Timeouts for PunctualTokio {
    fn bound<F: Future + Unpin + Send + 'static>(
        f: F,
        d: Duration,
    ) -> impl Future + Send + 'static {
        f.deadline_on(Self::wheel(), d)
    }

    fn timed_out<F: Future + Unpin + Send + 'static>(
        f: F,
        d: Duration,
    ) -> impl Future<Output = bool> + Send + 'static {
        async move { f.deadline_on(Self::wheel(), d).await.is_err() }
    }

    fn context<R: Send + 'static>(f: impl FnOnce() -> R + Send + 'static) -> R {
        TokioTimeout::context(f)
    }

    fn block_on<R: Send + 'static>(fut: impl Future<Output = R> + Send + 'static) -> R {
        TokioTimeout::block_on(fut)
    }
}

/// `f` raced against a timer that is made only once `f` is pending (what
/// `futures_lite::FutureExt::or` with an `async { Timer::after(d).await; .. }` block does).
pub(crate) struct Race<F, T, M> {
    future: F,
    make: Option<M>,
    timer: Option<T>,
}

impl<F, T, M> Race<F, T, M> {
    pub(crate) fn new(future: F, make: M) -> Self {
        Self {
            future,
            make: Some(make),
            timer: None,
        }
    }
}

impl<F, T, M> Future for Race<F, T, M>
where
    F: Future + Unpin,
    T: Future + Unpin,
    M: FnOnce() -> T + Unpin,
{
    type Output = Result<F::Output, ()>;

    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Self::Output> {
        let this = self.get_mut();
        if let Poll::Ready(output) = Pin::new(&mut this.future).poll(cx) {
            return Poll::Ready(Ok(output));
        }
        let timer = match &mut this.timer {
            Some(timer) => timer,
            None => {
                let make = this.make.take().expect("Race polled after completion");
                this.timer.insert(make())
            }
        };
        Pin::new(timer).poll(cx).map(|_| Err(()))
    }
}

/// An `async_io::Timer` race.
pub(crate) struct AsyncIoRace;

impl Timeouts for AsyncIoRace {
    fn bound<F: Future + Unpin + Send + 'static>(
        f: F,
        d: Duration,
    ) -> impl Future + Send + 'static {
        Race::new(f, move || async_io::Timer::after(d))
    }

    fn timed_out<F: Future + Unpin + Send + 'static>(
        f: F,
        d: Duration,
    ) -> impl Future<Output = bool> + Send + 'static {
        async move {
            Race::new(f, move || async_io::Timer::after(d))
                .await
                .is_err()
        }
    }

    fn block_on<R: Send + 'static>(fut: impl Future<Output = R> + Send + 'static) -> R {
        async_io::block_on(fut)
    }
}

/// A `futures_timer::Delay` race.
pub(crate) struct FuturesTimerRace;

impl Timeouts for FuturesTimerRace {
    fn bound<F: Future + Unpin + Send + 'static>(
        f: F,
        d: Duration,
    ) -> impl Future + Send + 'static {
        Race::new(f, move || futures_timer::Delay::new(d))
    }

    fn timed_out<F: Future + Unpin + Send + 'static>(
        f: F,
        d: Duration,
    ) -> impl Future<Output = bool> + Send + 'static {
        async move {
            Race::new(f, move || futures_timer::Delay::new(d))
                .await
                .is_err()
        }
    }
}

/// `futures_time::future::FutureExt::timeout`.
pub(crate) struct FuturesTimeTimeout;

impl Timeouts for FuturesTimeTimeout {
    fn bound<F: Future + Unpin + Send + 'static>(
        f: F,
        d: Duration,
    ) -> impl Future + Send + 'static {
        futures_time::future::FutureExt::timeout(f, futures_time::time::Duration::from(d))
    }

    fn timed_out<F: Future + Unpin + Send + 'static>(
        f: F,
        d: Duration,
    ) -> impl Future<Output = bool> + Send + 'static {
        async move {
            futures_time::future::FutureExt::timeout(f, futures_time::time::Duration::from(d))
                .await
                .is_err()
        }
    }

    fn block_on<R: Send + 'static>(fut: impl Future<Output = R> + Send + 'static) -> R {
        async_io::block_on(fut)
    }
}

/// `embassy_time::with_timeout` on the `std` driver (1 MHz) with a generic queue.
pub(crate) struct EmbassyTimeout;

/// `d` in embassy's whole microseconds, rounded up (so that the conversion itself never
/// shortens a deadline).
fn embassy_duration(d: Duration) -> embassy_time::Duration {
    embassy_time::Duration::from_micros(d.as_nanos().div_ceil(1000) as u64)
}

impl Timeouts for EmbassyTimeout {
    fn bound<F: Future + Unpin + Send + 'static>(
        f: F,
        d: Duration,
    ) -> impl Future + Send + 'static {
        embassy_time::with_timeout(embassy_duration(d), f)
    }

    fn timed_out<F: Future + Unpin + Send + 'static>(
        f: F,
        d: Duration,
    ) -> impl Future<Output = bool> + Send + 'static {
        async move {
            embassy_time::with_timeout(embassy_duration(d), f)
                .await
                .is_err()
        }
    }
}

// ---- helpers ---------------------------------------------------------------------------

/// A waker that only counts its wakes, with an identity of its own (unlike
/// `Waker::noop()`, which every timer queue keyed by waker would merge into one).
struct Distinct(Arc<AtomicUsize>);

impl Wake for Distinct {
    fn wake(self: Arc<Self>) {
        self.wake_by_ref();
    }

    fn wake_by_ref(self: &Arc<Self>) {
        self.0.fetch_add(1, Ordering::Relaxed);
    }
}

/// A waker of its own whose wakes add to `wakes`. A deadline held armed far from its time
/// is never woken: a wake means its timer let go of it (embassy-time's queue of 128 wakes
/// a timer at once when it is full, for its task to poll again and re-register).
pub(crate) fn distinct_waker(wakes: &Arc<AtomicUsize>) -> Waker {
    Waker::from(Arc::new(Distinct(wakes.clone())))
}

/// The time (user + system) this process has run on any CPU, its threads included.
pub(crate) fn process_cpu() -> Duration {
    // SAFETY: `getrusage` fills the `rusage` we pass; all-zero bytes are a valid `rusage`.
    let usage = unsafe {
        let mut usage: libc::rusage = std::mem::zeroed();
        let rc = libc::getrusage(libc::RUSAGE_SELF, &mut usage);
        assert_eq!(rc, 0, "getrusage failed");
        usage
    };
    let tv = |t: libc::timeval| Duration::new(t.tv_sec as u64, t.tv_usec as u32 * 1000);
    tv(usage.ru_utime) + tv(usage.ru_stime)
}

/// Load average over the last minute (from `/proc/loadavg`), if readable.
pub(crate) fn load_average() -> Option<f64> {
    std::fs::read_to_string("/proc/loadavg")
        .ok()?
        .split_whitespace()
        .next()?
        .parse()
        .ok()
}

/// A small deterministic generator (xorshift64*), so runs are comparable.
pub(crate) struct Rng(u64);

impl Rng {
    pub(crate) fn new(seed: u64) -> Self {
        Self(seed.max(1))
    }

    pub(crate) fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_F491_4F6C_DD1D)
    }

    /// Uniform in `lo..hi`, to the nanosecond.
    pub(crate) fn duration(&mut self, lo: Duration, hi: Duration) -> Duration {
        let span = (hi - lo).as_nanos() as u64;
        lo + Duration::from_nanos(self.next() % span)
    }
}

// ---- scenarios -------------------------------------------------------------------------

/// `iters` times: a deadline around a future that is ready at its first poll, polled once.
pub(crate) fn ready<T: Timeouts>(iters: u64) -> Duration {
    T::context(move || {
        let mut cx = Context::from_waker(Waker::noop());
        let start = Instant::now();
        for i in 0..iters {
            let fut = pin!(T::bound(std::future::ready(black_box(i)), LONG));
            black_box(fut.poll(&mut cx).is_ready());
        }
        start.elapsed()
    })
}

/// `iters` times: a deadline around a pending future, polled once (so it arms), dropped.
pub(crate) fn arm_cancel<T: Timeouts>(iters: u64) -> Duration {
    T::context(move || arm_cancel_loop::<T>(iters))
}

pub(crate) fn arm_cancel_loop<T: Timeouts>(iters: u64) -> Duration {
    let mut cx = Context::from_waker(Waker::noop());
    let start = Instant::now();
    for _ in 0..iters {
        let fut = pin!(T::bound(pending::<()>(), LONG));
        black_box(fut.poll(&mut cx).is_pending());
    }
    start.elapsed()
}

/// Deadlines kept armed while another scenario runs: each polled once with a waker of its
/// own (as if each belonged to a task), none due within the run.
pub(crate) struct Armed {
    futures: Vec<Pin<Box<dyn Future<Output = ()> + Send>>>,
    /// Wakes of their wakers (see [`distinct_waker`]).
    wakes: Arc<AtomicUsize>,
}

/// Arms `n` deadlines of 60 to 120 s, to hold while measuring.
pub(crate) fn prearm<T: Timeouts>(n: usize) -> Armed {
    T::context(move || {
        let mut rng = Rng::new(n as u64);
        let wakes = Arc::new(AtomicUsize::new(0));
        let futures = (0..n)
            .map(|_| {
                let d = rng.duration(Duration::from_secs(60), Duration::from_secs(120));
                let mut fut: Pin<Box<dyn Future<Output = ()> + Send>> = Box::pin(async move {
                    T::bound(pending::<()>(), d).await;
                });
                let waker = distinct_waker(&wakes);
                let _ = fut.as_mut().poll(&mut Context::from_waker(&waker));
                fut
            })
            .collect();
        Armed { futures, wakes }
    })
}

impl Armed {
    pub(crate) fn len(&self) -> usize {
        self.futures.len()
    }

    /// How many of the deadlines their timer still holds: those whose waker was never
    /// woken (none is due within a run).
    pub(crate) fn held(&self) -> usize {
        self.len()
            .saturating_sub(self.wakes.load(Ordering::Relaxed))
    }
}

/// `threads` threads (tokio: tasks on its 2-worker runtime) each do `iters` arm + cancel;
/// returns the wall time until all are done.
pub(crate) fn contention<T: Timeouts>(threads: usize, iters: u64) -> Duration {
    T::contention(threads, iters)
}

/// The durations of the fire scenario: `n` deadlines spread evenly over 1 to 100 ms, in a
/// scattered order.
pub(crate) fn fire_durations(n: usize) -> Vec<Duration> {
    let lo = Duration::from_millis(1);
    let span = Duration::from_millis(99);
    (0..n)
        .map(|i| {
            let k = (i * 7919) % n;
            lo + span.mul_f64(k as f64 / n as f64)
        })
        .collect()
}

/// What one fire run cost.
#[derive(Clone, Copy, Debug)]
pub(crate) struct FireCost {
    pub(crate) wall: Duration,
    pub(crate) cpu: Duration,
}

async fn fire_all<T: Timeouts>(durations: Vec<Duration>, give_up: Instant) -> usize {
    let mut set: FuturesUnordered<_> = durations
        .iter()
        .map(|&d| T::timed_out(pending::<()>(), d))
        .collect();
    let mut fired = 0;
    while let Some(timed_out) = set.next().await {
        assert!(
            timed_out,
            "a deadline around a pending future ended without firing"
        );
        fired += 1;
        if fired % 1024 == 0 && Instant::now() > give_up {
            break;
        }
    }
    fired
}

/// `n` deadlines over 1 to 100 ms in one `FuturesUnordered`, until all fired and were seen.
/// `None` if they had not after `give_up`.
pub(crate) fn fire<T: Timeouts>(n: usize, give_up: Duration) -> Option<FireCost> {
    let durations = fire_durations(n);
    let cpu = process_cpu();
    let start = Instant::now();
    let fired = T::block_on(fire_all::<T>(durations, start + give_up));
    let cost = FireCost {
        wall: start.elapsed(),
        cpu: process_cpu() - cpu,
    };
    (fired == n).then_some(cost)
}

/// The fire scenario inside a tokio task with its cooperative budget on (no
/// `unconstrained`), on the current-thread runtime.
pub(crate) fn fire_budget_on<T: Timeouts>(n: usize, give_up: Duration) -> Option<FireCost> {
    let durations = fire_durations(n);
    let cpu = process_cpu();
    let start = Instant::now();
    let fired = tokio_current().block_on(fire_all::<T>(durations, start + give_up));
    let cost = FireCost {
        wall: start.elapsed(),
        cpu: process_cpu() - cpu,
    };
    (fired == n).then_some(cost)
}

/// On the real clock: `n` deadlines of 1 to 50 ms (to the nanosecond) started together;
/// for each, when its `Err` was seen minus when it was asked for, in nanoseconds
/// (negative: early). Measured from just before the deadline is made and first polled.
pub(crate) fn lateness<T: Timeouts>(n: usize, seed: u64) -> Vec<i64> {
    lateness_traced::<T>(n, seed)
        .into_iter()
        .map(|(_, _, late)| late)
        .collect()
}

/// [`lateness`], with each deadline's start (since the run began) and duration.
pub(crate) fn lateness_traced<T: Timeouts>(n: usize, seed: u64) -> Vec<(Duration, Duration, i64)> {
    let mut rng = Rng::new(seed);
    let durations: Vec<Duration> = (0..n)
        .map(|_| rng.duration(Duration::from_millis(1), Duration::from_millis(50)))
        .collect();
    let origin = Instant::now();
    T::block_on(async move {
        let mut set: FuturesUnordered<_> = durations
            .into_iter()
            .map(|d| async move {
                let start = Instant::now();
                let timed_out = T::timed_out(pending::<()>(), d).await;
                let took = start.elapsed();
                assert!(
                    timed_out,
                    "a deadline around a pending future ended without firing"
                );
                (
                    start - origin,
                    d,
                    took.as_nanos() as i64 - d.as_nanos() as i64,
                )
            })
            .collect();
        let mut out = Vec::with_capacity(n);
        while let Some(late) = set.next().await {
            out.push(late);
        }
        out
    })
}

/// Early count, median, p99 and max of a lateness sample.
#[derive(Clone, Copy, Debug)]
pub(crate) struct LatenessSummary {
    pub(crate) early: usize,
    pub(crate) min: i64,
    pub(crate) median: i64,
    pub(crate) p99: i64,
    pub(crate) max: i64,
}

pub(crate) fn summarize(mut sample: Vec<i64>) -> LatenessSummary {
    sample.sort_unstable();
    let at = |q: f64| sample[((sample.len() - 1) as f64 * q).round() as usize];
    LatenessSummary {
        early: sample.iter().filter(|&&x| x < 0).count(),
        min: sample[0],
        median: at(0.5),
        p99: at(0.99),
        max: *sample.last().expect("empty sample"),
    }
}

/// The median of some durations.
pub(crate) fn median(mut xs: Vec<Duration>) -> Duration {
    xs.sort_unstable();
    xs[xs.len() / 2]
}
