//! The rows that are not timers: the bare future, the fire harness with no timer, and
//! the floors under an arm + cancel and under a million timers.

#[allow(unused_imports)]
use super::*;

/// The inner future with no deadline at all.
pub(crate) struct Bare;

impl Timeouts for Bare {
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

/// No timer: what the fire scenario costs besides any timer's own work. Each "deadline"
/// leaves its waker at its first poll; [`NoTimer::block_on`] wakes them a millisecond of
/// duration at a time, polling between, with no clock, no sleep and no other thread.
pub(crate) struct NoTimer;

std::thread_local! {
    static LEFT_WAKERS: std::cell::RefCell<Vec<(Duration, Waker)>> =
        const { std::cell::RefCell::new(Vec::new()) };
}

/// The future of [`NoTimer`]: pending at its first poll (its waker and duration left to
/// be woken), done at the next.
struct WokenOnce<F>(F, Option<Duration>);

impl<F: Future + Unpin> Future for WokenOnce<F> {
    type Output = bool;

    fn poll(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<bool> {
        if Pin::new(&mut self.0).poll(cx).is_ready() {
            return Poll::Ready(false);
        }
        let Some(duration) = self.1.take() else {
            return Poll::Ready(true);
        };
        LEFT_WAKERS.with(|wakers| wakers.borrow_mut().push((duration, cx.waker().clone())));
        Poll::Pending
    }
}

impl Timeouts for NoTimer {
    fn timed_out<F: Future + Unpin + Send + 'static>(
        f: F,
        d: Duration,
    ) -> impl Future<Output = bool> + Send + 'static {
        WokenOnce(f, Some(d))
    }

    fn block_on<R: Send + 'static>(fut: impl Future<Output = R> + Send + 'static) -> R {
        let mut fut = pin!(fut);
        let mut cx = Context::from_waker(Waker::noop());
        loop {
            if let Poll::Ready(out) = fut.as_mut().poll(&mut cx) {
                return out;
            }
            let left = LEFT_WAKERS.with(|left| std::mem::take(&mut *left.borrow_mut()));
            assert!(!left.is_empty(), "no timer: pending, nothing to wake");
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

/// The floors: not timers, but the least a deadline does that starts at its first poll.
/// Each reads the global wheel's clock and keeps the waker; it fires nothing.
pub(crate) struct Floor<const SHARED: bool>;

/// The floor under an arm + cancel, for a deadline that hands itself to a driver on
/// another thread without a lock: it publishes itself with one compare-and-swap and reads
/// the driver's plan; dropped, it takes itself back with a second.
pub(crate) type ArmFloor = Floor<true>;

/// The floor under a million timers (`benches/million.rs`): a deadline that touches
/// nothing shared. It marks its own state word armed; dropped, it cancels with one
/// compare-and-swap on that word.
pub(crate) type OwnFloor = Floor<false>;

/// The list head [`ArmFloor`] publishes onto, and the driver's plan, on a line of their own.
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

/// The future of [`Floor`].
struct FloorDeadline<F, const SHARED: bool> {
    inner: F,
    duration: Duration,
    /// The due time and waker kept once armed.
    armed: Option<(Duration, Waker)>,
    /// Once armed: the value published ([`ArmFloor`]), or 1 ([`OwnFloor`]'s state word,
    /// which its drop swaps to 2).
    token: AtomicUsize,
}

impl<F: Future + Unpin, const SHARED: bool> Future for FloorDeadline<F, SHARED> {
    type Output = bool;

    fn poll(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<bool> {
        let this = &mut *self;
        if Pin::new(&mut this.inner).poll(cx).is_ready() {
            return Poll::Ready(false);
        }
        if this.armed.is_some() {
            return Poll::Pending;
        }
        let due = punctual::wheel::Clock::now(&*FLOOR_CLOCK) + this.duration;
        this.armed = Some((due, cx.waker().clone()));
        if !SHARED {
            this.token.store(1, Ordering::Release);
            return Poll::Pending;
        }
        let token = &this.armed as *const _ as usize;
        let head = &FLOOR_LIST.head;
        let mut now = head.load(Ordering::Relaxed);
        while let Err(seen) =
            head.compare_exchange_weak(now, token, Ordering::AcqRel, Ordering::Relaxed)
        {
            now = seen;
        }
        this.token.store(token, Ordering::Relaxed);
        // A timer would wake its driver if the deadline came before its plan.
        if due.as_nanos() as usize > FLOOR_LIST.plan.load(Ordering::Acquire) {
            black_box(due);
        }
        Poll::Pending
    }
}

impl<F, const SHARED: bool> Drop for FloorDeadline<F, SHARED> {
    fn drop(&mut self) {
        let token = self.token.load(Ordering::Relaxed);
        let (word, from, to) = match SHARED {
            // Take back: succeeds when nothing was pushed since (always, on one thread).
            true if token != 0 => (&FLOOR_LIST.head, token, 0),
            true => return,
            // The cancel a lock-free timer makes against its driver's fire, with no driver.
            false => (&self.token, 1, 2),
        };
        black_box(
            word.compare_exchange(from, to, Ordering::AcqRel, Ordering::Acquire)
                .is_ok(),
        );
    }
}

impl<const SHARED: bool> Timeouts for Floor<SHARED> {
    fn timed_out<F: Future + Unpin + Send + 'static>(
        inner: F,
        duration: Duration,
    ) -> impl Future<Output = bool> + Send + 'static {
        let (armed, token) = (None, AtomicUsize::new(0));
        FloorDeadline::<F, SHARED> {
            inner,
            duration,
            armed,
            token,
        }
    }
}
