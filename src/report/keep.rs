//! Keep running: at the deadline the caller gets `Err(Elapsed)` and a [`Keeper`]'s spawner
//! gets the inner future instead of it being dropped.
//! * The deadline reports `elapsed`; the kept future's end is a later fate
//!   (`abandoned_succeeded`, `abandoned_failed`), never a second outcome.
//! * At most `cap` kept futures run at once; one more is dropped, counted as `refused`.
//! * The deadline is the core's [`KeepOnElapsed`](punctual_core::KeepOnElapsed) on the boxed
//!   future: at the fire it hands the future back instead of dropping it.

use std::fmt;
use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::task::{Context, Poll};
use std::time::{Duration, Instant};

use punctual_core::{Abandoned, Elapsed, KeepOnElapsed, NamedResult, OutcomeKind};

use crate::DeadlineExt;

/// A future handed to a [`Keeper`]'s spawner.
pub type KeptFuture = Pin<Box<dyn Future<Output = ()> + Send + 'static>>;

/// Keeps the work of elapsed deadlines running on a spawner of your choice, at most `cap`
/// at once: for work worth finishing though its caller cannot wait (a write-behind, a cache
/// refresh). Under overload kept work adds to it: keep the cap small.
///
/// ```
/// use std::time::Duration;
/// use punctual::report::Keeper;
///
/// // Any executor: here a thread per kept future.
/// let keeper = Keeper::new(8, |work| {
///     std::thread::spawn(move || futures_executor::block_on(work));
/// });
/// let (done, finished) = std::sync::mpsc::channel();
/// let refresh = async move {
///     punctual::sleep(Duration::from_millis(50)).await;
///     done.send(()).unwrap();
///     Ok::<_, std::io::Error>(())
/// };
/// let call = keeper.deadline(refresh, Duration::from_millis(10), "doc-refresh");
/// let err = futures_executor::block_on(call).unwrap_err();
/// assert_eq!(err.name(), Some("doc-refresh"));
/// finished.recv().unwrap(); // the refresh ran to its end, on its own
/// ```
#[derive(Clone)]
pub struct Keeper(Arc<Shared>);

struct Shared {
    spawner: Box<dyn Fn(KeptFuture) + Send + Sync>,
    cap: usize,
    running: AtomicUsize,
}

impl Keeper {
    /// A keeper that hands kept futures to `spawn` (`|f| { tokio::spawn(f); }`, any
    /// executor's), at most `cap` running at once.
    pub fn new(cap: usize, spawn: impl Fn(KeptFuture) + Send + Sync + 'static) -> Self {
        Self(Arc::new(Shared {
            spawner: Box::new(spawn),
            cap,
            running: AtomicUsize::new(0),
        }))
    }

    /// How many kept futures are running now.
    pub fn running(&self) -> usize {
        self.0.running.load(Ordering::Acquire)
    }

    /// Bounds `future` by `limit`, named `name`, on the default wheel. At the deadline
    /// `future` is kept running, unless `cap` are running already (then it is refused).
    ///
    /// # Errors
    ///
    /// `Err(Elapsed)` when `limit` passes first; `future` lives on (or was refused).
    ///
    /// # Panics
    ///
    /// As [`DeadlineExt::deadline`].
    pub fn deadline<F, T, E>(&self, future: F, limit: Duration, name: &'static str) -> Kept<F>
    where
        F: Future<Output = Result<T, E>> + Send + 'static,
    {
        let deadline = Box::pin(future).deadline(limit).named_result(name);
        Kept {
            deadline: deadline.keep_on_elapsed(),
            keeper: self.clone(),
            name,
        }
    }

    /// Hands `future`, whose deadline `name` elapsed, to the spawner, or refuses it.
    fn keep<F, T, E>(&self, future: Pin<Box<F>>, name: &'static str)
    where
        F: Future<Output = Result<T, E>> + Send + 'static,
    {
        let shared = &self.0;
        let admitted = shared
            .running
            .fetch_update(Ordering::AcqRel, Ordering::Acquire, |n| {
                (n < shared.cap).then_some(n + 1)
            })
            .is_ok();
        if !admitted {
            drop(future);
            super::later_fate(name, OutcomeKind::Refused, Duration::ZERO);
            return;
        }
        let running = Running(self.0.clone());
        let kept_since = Instant::now();
        (shared.spawner)(Box::pin(async move {
            let _running = running;
            let kind = match future.await {
                Ok(_) => OutcomeKind::AbandonedSucceeded,
                Err(_) => OutcomeKind::AbandonedFailed,
            };
            super::later_fate(name, kind, kept_since.elapsed());
        }));
    }
}

impl fmt::Debug for Keeper {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Keeper")
            .field("cap", &self.0.cap)
            .field("running", &self.running())
            .finish()
    }
}

/// One kept future's place in the count, given back when its task ends or is dropped.
struct Running(Arc<Shared>);

impl Drop for Running {
    fn drop(&mut self) {
        self.0.running.fetch_sub(1, Ordering::AcqRel);
    }
}

/// The future of [`Keeper::deadline`].
///
/// # Cancel safety
///
/// Dropping it before the deadline drops the inner future, as any deadline does (reported
/// as dropped); only an elapsed one is kept.
#[must_use = "futures do nothing unless you `.await` or poll them"]
pub struct Kept<F: Future> {
    // `Unpin`: the future is boxed, so the deadline needs no box of its own.
    deadline: KeptDeadline<F>,
    keeper: Keeper,
    name: &'static str,
}

type KeptDeadline<F> = KeepOnElapsed<'static, Pin<Box<F>>, crate::wheel::DefaultWheel, NamedResult>;

impl<F, T, E> Future for Kept<F>
where
    F: Future<Output = Result<T, E>> + Send + 'static,
{
    type Output = Result<Result<T, E>, Elapsed>;

    fn poll(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Self::Output> {
        let result = std::task::ready!(Pin::new(&mut self.deadline).poll(cx));
        Poll::Ready(result.map_err(|Abandoned { elapsed, future }| {
            self.keeper.keep(future, self.name);
            elapsed
        }))
    }
}

impl<F: Future> fmt::Debug for Kept<F> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Kept").field("name", &self.name).finish()
    }
}
