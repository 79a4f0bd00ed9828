//! The rows that are not timers: the bare future, the fire harness with no timer, and
//! the floors under an arm + cancel.

#[allow(unused_imports)]
use super::*;

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

/// What both floors do first: polls `inner` (`None` when it is ready) and, at its first
/// pending poll, reads the clock the global wheel reads and keeps the due time and a clone
/// of the waker in `armed` (`Some(Some(due))` then; `Some(None)` at later polls).
fn poll_and_keep<F: Future + Unpin>(
    inner: &mut F,
    duration: Duration,
    armed: &mut Option<(Duration, Waker)>,
    cx: &mut Context<'_>,
) -> Option<Option<Duration>> {
    if Pin::new(inner).poll(cx).is_ready() {
        return None;
    }
    if armed.is_some() {
        return Some(None);
    }
    let due = punctual::wheel::Clock::now(&*FLOOR_CLOCK) + duration;
    *armed = Some((due, cx.waker().clone()));
    Some(Some(due))
}

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
        let this = &mut *self;
        let Some(first) = poll_and_keep(&mut this.inner, this.duration, &mut this.armed, cx) else {
            return Poll::Ready(false);
        };
        if let Some(due) = first {
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

/// The floor under a million timers' arm and cancel (`benches/million.rs`): a deadline with
/// no timer behind it that touches nothing shared. At its first pending poll it reads the
/// clock the global wheel reads, keeps a clone of the waker and its due time, and marks its
/// own state word armed; dropped, it cancels with one compare-and-swap on that word and
/// drops the waker. Every peer's deadline does at least this much for itself (besides the
/// box and the `Vec` the scenario keeps it in, which every row pays alike), so its arm and
/// cancel times are what the scenario costs with no timer's work at all. It never fires.
pub(crate) struct OwnFloor;

/// [`OwnFloor`]'s state word: armed.
const OWN_ARMED: usize = 1;
/// [`OwnFloor`]'s state word: cancelled.
const OWN_CANCELLED: usize = 2;

/// The future of [`OwnFloor`].
struct OwnDeadline<F> {
    inner: F,
    duration: Duration,
    /// The due time and waker kept once armed.
    armed: Option<(Duration, Waker)>,
    /// 0, then [`OWN_ARMED`], then [`OWN_CANCELLED`] when dropped armed.
    state: AtomicUsize,
}

impl<F: Future + Unpin> Future for OwnDeadline<F> {
    type Output = bool;

    fn poll(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<bool> {
        let this = &mut *self;
        let Some(first) = poll_and_keep(&mut this.inner, this.duration, &mut this.armed, cx) else {
            return Poll::Ready(false);
        };
        if first.is_some() {
            this.state.store(OWN_ARMED, Ordering::Release);
        }
        Poll::Pending
    }
}

impl<F> Drop for OwnDeadline<F> {
    fn drop(&mut self) {
        // The cancel a lock-free timer makes against its driver's fire, here with no
        // driver: it always succeeds once armed.
        let cancelled = self.state.compare_exchange(
            OWN_ARMED,
            OWN_CANCELLED,
            Ordering::AcqRel,
            Ordering::Acquire,
        );
        black_box(cancelled.is_ok());
    }
}

impl Timeouts for OwnFloor {
    fn timed_out<F: Future + Unpin + Send + 'static>(
        f: F,
        d: Duration,
    ) -> impl Future<Output = bool> + Send + 'static {
        OwnDeadline {
            inner: f,
            duration: d,
            armed: None,
            state: AtomicUsize::new(0),
        }
    }
}
