//! Each scenario written once, generic over the peer ([`Timeouts`]).

#[allow(unused_imports)]
use super::*;

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

/// Deadlines kept armed while another scenario runs, each polled once with a waker of its
/// own (as if each belonged to a task), and the count of their wakes.
pub(crate) struct Armed(
    Vec<Pin<Box<dyn Future<Output = ()> + Send>>>,
    Arc<AtomicUsize>,
);

impl Armed {
    /// How many of the deadlines their timer still holds: those whose waker was never
    /// woken (none is due within a run).
    pub(crate) fn held(&self) -> usize {
        self.0.len().saturating_sub(self.1.load(Ordering::Relaxed))
    }
}

/// Arms `n` deadlines of 60 to 120 s, to hold while measuring.
pub(crate) fn prearm<T: Timeouts>(n: usize) -> Armed {
    T::context(move || {
        let mut rng = Rng::new(n as u64);
        let wakes = Arc::new(AtomicUsize::new(0));
        let (lo, hi) = (Duration::from_secs(60), Duration::from_secs(120));
        let arm = |_| {
            let d = rng.duration(lo, hi);
            let mut fut: Pin<Box<dyn Future<Output = ()> + Send>> =
                Box::pin(async move { drop(T::bound(pending::<()>(), d).await) });
            let _ = fut
                .as_mut()
                .poll(&mut Context::from_waker(&distinct_waker(&wakes)));
            fut
        };
        Armed((0..n).map(arm).collect(), wakes)
    })
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

/// Awaits deadlines of `durations` around pending futures in one `FuturesUnordered`
/// until all fired or `give_up` passed; how many fired.
pub(crate) async fn fire_all<T: Timeouts>(durations: Vec<Duration>, give_up: Instant) -> usize {
    let mut set: FuturesUnordered<_> = durations
        .iter()
        .map(|&d| T::timed_out(pending::<()>(), d))
        .collect();
    let mut fired = 0;
    while let Some(timed_out) = set.next().await {
        assert!(timed_out, "a deadline around pending() ended unfired");
        fired += 1;
        if fired % 1024 == 0 && Instant::now() > give_up {
            break;
        }
    }
    fired
}

/// `n` deadlines over 1 to 100 ms in one `FuturesUnordered` on the peer's executor, until
/// all fired and were seen; `None` if they had not after `give_up`.
pub(crate) fn fire<T: Timeouts>(n: usize, give_up: Duration) -> Option<FireCost> {
    let durations = fire_durations(n);
    timed_fire(n, give_up, |end| T::block_on(fire_all::<T>(durations, end)))
}

/// [`fire`] in a task of the current-thread tokio runtime with its cooperative budget on.
pub(crate) fn fire_budget_on<T: Timeouts>(n: usize, give_up: Duration) -> Option<FireCost> {
    let durations = fire_durations(n);
    timed_fire(n, give_up, |end| {
        tokio_current().block_on(fire_all::<T>(durations, end))
    })
}

/// The cost of `run(end)` firing `n` deadlines, if all fired before `end`.
fn timed_fire(n: usize, give_up: Duration, run: impl FnOnce(Instant) -> usize) -> Option<FireCost> {
    let (cpu, start) = (process_cpu(), Instant::now());
    let fired = run(start + give_up);
    let cost = FireCost {
        wall: start.elapsed(),
        cpu: process_cpu() - cpu,
    };
    (fired == n).then_some(cost)
}

/// The peers of the lateness scenario, with the tick each is said to have.
pub(crate) fn lateness_peers() -> impl Iterator<Item = (Peer, &'static str)> {
    const PEERS: [(Peer, &str); 11] = [
        (Peer::Punctual, "1 ms"),
        (Peer::PunctualInTokio, "1 ms"),
        (Peer::PunctualTokio, "1 ms"),
        (Peer::Punctual100us, "100 µs"),
        (Peer::PunctualSmol100us, "100 µs"),
        (Peer::Tokio, "1 ms"),
        (Peer::TokioAlt, "1 ms"),
        (Peer::AsyncIo, "none (epoll)"),
        (Peer::FuturesTimer, "none (park)"),
        (Peer::FuturesTime, "none (async-io)"),
        (Peer::Embassy, "1 µs"),
    ];
    PEERS.into_iter().filter(|(p, _)| p.available())
}

/// On the real clock: `n` deadlines of 1 to 50 ms (to the nanosecond) started together;
/// for each, when its `Err` was seen minus when it was asked for, in nanoseconds
/// (negative: early). Measured from just before the deadline is made and first polled.
pub(crate) fn lateness<T: Timeouts>(n: usize, seed: u64) -> Vec<i64> {
    let mut rng = Rng::new(seed);
    let (lo, hi) = (Duration::from_millis(1), Duration::from_millis(50));
    let durations: Vec<Duration> = (0..n).map(|_| rng.duration(lo, hi)).collect();
    T::block_on(async move {
        let deadline = |d: Duration| async move {
            let start = Instant::now();
            let timed_out = T::timed_out(pending::<()>(), d).await;
            assert!(timed_out, "a deadline around pending() ended unfired");
            start.elapsed().as_nanos() as i64 - d.as_nanos() as i64
        };
        let set: FuturesUnordered<_> = durations.into_iter().map(deadline).collect();
        set.collect().await
    })
}

/// Early count, median, p99 and max of a lateness sample.
#[derive(Clone, Copy, Debug)]
pub(crate) struct LatenessSummary {
    pub(crate) early: usize,
    pub(crate) median: i64,
    pub(crate) p99: i64,
    pub(crate) max: i64,
}

pub(crate) fn summarize(mut sample: Vec<i64>) -> LatenessSummary {
    sample.sort_unstable();
    let at = |q| quantile(&sample, q);
    LatenessSummary {
        early: sample.iter().filter(|&&x| x < 0).count(),
        median: at(0.5),
        p99: at(0.99),
        max: *sample.last().expect("empty sample"),
    }
}
