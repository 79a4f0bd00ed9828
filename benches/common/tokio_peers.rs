//! The peers that run inside tokio: its two timers, punctual's default inside a runtime
//! and the tokio adapter; and the runtimes they share.

#[allow(unused_imports)]
use super::*;

use tokio::runtime::{Builder, Runtime};

/// A current-thread tokio runtime with timers: where single-thread scenarios run.
pub(crate) fn tokio_current() -> &'static Runtime {
    static RT: LazyLock<Runtime> = LazyLock::new(|| build(Builder::new_current_thread(), false));
    &RT
}

/// A 2-worker multi-thread tokio runtime: micro benches and contention.
pub(crate) fn tokio_multi() -> &'static Runtime {
    static RT: LazyLock<Runtime> = LazyLock::new(|| build(two_workers(), false));
    &RT
}

/// A 2-worker runtime with tokio's alternative timer (a wheel per worker).
pub(crate) fn tokio_alt() -> &'static Runtime {
    static RT: LazyLock<Runtime> = LazyLock::new(|| build(two_workers(), true));
    &RT
}

/// A multi-thread runtime's builder, with 2 workers.
pub(crate) fn two_workers() -> Builder {
    let mut builder = Builder::new_multi_thread();
    builder.worker_threads(2);
    builder
}

/// `builder`'s runtime with timers, on tokio's alternative timer if `alt` (which needs
/// `--cfg tokio_unstable`: the peer is otherwise left out of every list, see
/// [`Peer::available`]).
pub(crate) fn build(mut builder: Builder, alt: bool) -> Runtime {
    if alt {
        #[cfg(tokio_unstable)]
        builder.enable_alt_timer();
        #[cfg(not(tokio_unstable))]
        panic!("tokio's alternative timer: build with RUSTFLAGS=\"--cfg tokio_unstable\"");
    }
    builder.enable_time().build().expect("tokio runtime")
}

/// Runs `fut` in a task on `rt`'s workers (`unconstrained`) and waits for it.
pub(crate) fn on_worker<R: Send + 'static>(
    rt: &'static Runtime,
    fut: impl Future<Output = R> + Send + 'static,
) -> R {
    let task = rt.spawn(tokio::task::unconstrained(fut));
    rt.block_on(task)
        .unwrap_or_else(|e| std::panic::resume_unwind(e.into_panic()))
}

/// Runs `f(0)`, `f(1)`, .. `f(n - 1)` at once as tasks on `rt` (`unconstrained`); their
/// outputs and the wall time until all were done.
pub(crate) fn tasks<R: Send + 'static, F: Future<Output = R> + Send + 'static>(
    rt: &'static Runtime,
    n: usize,
    f: impl Fn(usize) -> F,
) -> (Vec<R>, Duration) {
    rt.block_on(async move {
        let start = Instant::now();
        let tasks: Vec<_> = (0..n)
            .map(|i| tokio::spawn(tokio::task::unconstrained(f(i))))
            .collect();
        let mut out = Vec::with_capacity(n);
        for task in tasks {
            out.push(task.await.expect("a task of the scenario"));
        }
        (out, start.elapsed())
    })
}

/// The methods of a peer run as tokio's: micro benches in a task on a worker of `$rt`,
/// fire and lateness by `$block_on`, contention as tasks on `$rt`.
macro_rules! in_tokio {
    ($rt:ident, $block_on:expr) => {
        fn context<R: Send + 'static>(f: impl FnOnce() -> R + Send + 'static) -> R {
            on_worker($rt(), async move { f() })
        }

        fn block_on<R: Send + 'static>(fut: impl Future<Output = R> + Send + 'static) -> R {
            ($block_on)(fut)
        }

        fn contention(threads: usize, iters: u64) -> Duration {
            tasks(
                $rt(),
                threads,
                |_| async move { arm_cancel_loop::<Self>(iters) },
            )
            .1
        }
    };
}

timer!(
    /// `tokio::time::timeout(d, f)`: micro benches on a worker of the 2-worker runtime,
    /// fire and lateness on the current-thread runtime.
    Tokio,
    |f, d| tokio::time::timeout(d, f);
    in_tokio!(tokio_multi, |fut| tokio_current().block_on(tokio::task::unconstrained(fut)));
);

timer!(
    /// `f.deadline(d)` inside tokio: the runtime's own wheel, run as [`Tokio`]'s.
    PunctualInTokio,
    |f, d| f.deadline(d);
    in_tokio!(tokio_multi, |fut| tokio_current().block_on(tokio::task::unconstrained(fut)));
);

timer!(
    /// `tokio::time::timeout` on the alternative timer, every scenario on its workers (a
    /// timer made outside them would take the remote path, which users' tasks do not).
    TokioAlt,
    |f, d| tokio::time::timeout(d, f);
    in_tokio!(tokio_alt, |fut| on_worker(tokio_alt(), fut));
);

timer!(
    /// The tokio adapter: `wheel.deadline(d, f)` on `punctual::adapters::tokio::start()`'s
    /// wheel, driven by a task of the current-thread runtime; run as [`Tokio`]'s.
    PunctualTokio,
    |f, d| adapter_wheel().deadline(d, f);
    in_tokio!(tokio_multi, |fut| tokio_current().block_on(tokio::task::unconstrained(fut)));
);

/// The tokio adapter's wheel, started once on the current-thread runtime.
fn adapter_wheel() -> &'static punctual::adapters::tokio::TokioWheel {
    static WHEEL: LazyLock<&'static punctual::adapters::tokio::TokioWheel> = LazyLock::new(|| {
        let _runtime = tokio_current().enter();
        punctual::adapters::tokio::start()
    });
    &WHEEL
}
