//! The peers that run inside tokio: its two timers, punctual's default inside a runtime,
//! and the tokio adapter; and the runtimes they share.

#[allow(unused_imports)]
use super::*;

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

    /// In a task on a worker of the 2-worker runtime, where a server's handlers run (and
    /// where tokio's timer takes the path users' tasks take).
    fn context<R: Send + 'static>(f: impl FnOnce() -> R + Send + 'static) -> R {
        on_worker(tokio_multi(), async move { f() })
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

/// The tokio adapter: `wheel.deadline(d, f)` on the wheel of `punctual::adapters::tokio::start()`
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
        Self::wheel().deadline(d, f)
    }

    fn timed_out<F: Future + Unpin + Send + 'static>(
        f: F,
        d: Duration,
    ) -> impl Future<Output = bool> + Send + 'static {
        async move { Self::wheel().deadline(d, f).await.is_err() }
    }

    fn context<R: Send + 'static>(f: impl FnOnce() -> R + Send + 'static) -> R {
        TokioTimeout::context(f)
    }

    fn block_on<R: Send + 'static>(fut: impl Future<Output = R> + Send + 'static) -> R {
        TokioTimeout::block_on(fut)
    }
}
