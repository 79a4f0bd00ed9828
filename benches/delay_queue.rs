//! A keyed timer set at a million keys: `punctual::DelayQueue` beside tokio-util's, and a
//! slab as the floor (criterion). Phases: insert, reset, refresh (each key to its own
//! timeout again), remove, and expire (drain a million values all due). First it prints
//! the heap held per key, full and with all but 1 000 removed (a counting allocator).
//!
//! `cargo bench -p punctual-benches --bench delay_queue`.

mod common;
mod counting_alloc;

use std::future::poll_fn;
use std::task::{Context, Poll, Waker};
use std::time::{Duration, Instant};

use common::Rng;
use counting_alloc::live;
use criterion::{BenchmarkId, Criterion, Throughput};
use tokio::runtime::Runtime;

const N: usize = 1_000_000;

/// `n` deadlines of `lo..=hi` ms, from `seed`.
fn random_ms(seed: u64, n: usize, lo: u64, hi: u64) -> Vec<Duration> {
    let mut rng = Rng::new(seed);
    (0..n)
        .map(|_| Duration::from_millis(lo + rng.next() % (hi - lo + 1)))
        .collect()
}

/// A keyed timer set as the bench drives it: filled with values `0..` due after
/// `durations`, each key reset or removed in turn, and drained once all are due.
/// tokio-util's calls are made inside the runtime `rt`.
trait Queue: Sized {
    const NAME: &str;
    type Key;
    fn fill(rt: &Runtime, durations: &[Duration]) -> (Self, Vec<Self::Key>);
    fn reset_key(&mut self, rt: &Runtime, key: &Self::Key, to: Duration);
    fn remove_key(&mut self, rt: &Runtime, key: &Self::Key) -> u64;
    /// Waits until every value is due (60 ms), then drains them all; the drain's time.
    fn expire(self, rt: &Runtime) -> Duration;
}

/// `act`'s result and wall time.
fn timed<R>(act: impl FnOnce() -> R) -> (R, Duration) {
    let start = Instant::now();
    (act(), start.elapsed())
}

/// The wall time of `drain`, which must drain all [`N`] values.
fn timed_drain(drain: impl FnOnce() -> usize) -> Duration {
    let (count, took) = timed(drain);
    assert_eq!(count, N);
    took
}

const DUE: Duration = Duration::from_millis(60);

impl Queue for punctual::DelayQueue<u64> {
    const NAME: &str = "punctual";
    type Key = punctual::delay_queue::Key;

    fn fill(_: &Runtime, durations: &[Duration]) -> (Self, Vec<Self::Key>) {
        let mut queue = Self::new();
        let keys = (0..)
            .zip(durations)
            .map(|(i, d)| queue.insert(i, *d))
            .collect();
        (queue, keys)
    }

    fn reset_key(&mut self, _: &Runtime, key: &Self::Key, to: Duration) {
        self.reset(*key, to).expect("a live key");
    }

    fn remove_key(&mut self, _: &Runtime, key: &Self::Key) -> u64 {
        self.remove(*key).expect("a live key")
    }

    fn expire(mut self, _: &Runtime) -> Duration {
        std::thread::sleep(DUE);
        let mut cx = Context::from_waker(Waker::noop());
        timed_drain(|| {
            let mut count = 0;
            while let Poll::Ready(Some(_)) = self.poll_expired(&mut cx) {
                count += 1;
            }
            count
        })
    }
}

impl Queue for tokio_util::time::DelayQueue<u64> {
    const NAME: &str = "tokio-util";
    type Key = tokio_util::time::delay_queue::Key;

    fn fill(rt: &Runtime, durations: &[Duration]) -> (Self, Vec<Self::Key>) {
        let _in = rt.enter();
        let mut queue = Self::new();
        let keys = (0..)
            .zip(durations)
            .map(|(i, d)| queue.insert(i, *d))
            .collect();
        (queue, keys)
    }

    fn reset_key(&mut self, rt: &Runtime, key: &Self::Key, to: Duration) {
        let _in = rt.enter();
        self.reset(key, to);
    }

    fn remove_key(&mut self, rt: &Runtime, key: &Self::Key) -> u64 {
        let _in = rt.enter();
        self.remove(key).into_inner()
    }

    // Unconstrained: tokio's cooperative budget would stop the drain every 128 values.
    fn expire(mut self, rt: &Runtime) -> Duration {
        rt.block_on(tokio::task::unconstrained(async move {
            // Lets the runtime's timer fire the queue's sleep.
            tokio::time::sleep(DUE).await;
            let start = Instant::now();
            let mut count = 0;
            while let Poll::Ready(Some(_)) = poll_fn(|cx| Poll::Ready(self.poll_expired(cx))).await
            {
                count += 1;
            }
            let took = start.elapsed();
            assert_eq!(count, N);
            took
        }))
    }
}

/// The floor: a slab of values and deadlines, in no order by deadline.
impl Queue for slab::Slab<(u64, Instant)> {
    const NAME: &str = "floor: slab";
    type Key = usize;

    fn fill(_: &Runtime, durations: &[Duration]) -> (Self, Vec<Self::Key>) {
        let mut slab = Self::new();
        let keys = (0..)
            .zip(durations)
            .map(|(i, d)| slab.insert((i, Instant::now() + *d)))
            .collect();
        (slab, keys)
    }

    fn reset_key(&mut self, _: &Runtime, key: &usize, to: Duration) {
        self[*key].1 = Instant::now() + to;
    }

    fn remove_key(&mut self, _: &Runtime, key: &usize) -> u64 {
        self.remove(*key).0
    }

    fn expire(mut self, _: &Runtime) -> Duration {
        std::thread::sleep(DUE);
        timed_drain(|| self.drain().count())
    }
}

/// Runs `$body` for each queue, `$q` bound to its type.
macro_rules! each_queue {
    ($q:ident => $body:expr) => {{
        {
            type $q = punctual::DelayQueue<u64>;
            $body
        }
        {
            type $q = tokio_util::time::DelayQueue<u64>;
            $body
        }
        {
            type $q = slab::Slab<(u64, Instant)>;
            $body
        }
    }};
}

/// Heap bytes per key after the million inserts, and what is left held once all but
/// 1 000 keys are removed.
fn print_memory<Q: Queue>(rt: &Runtime) {
    let durations = random_ms(7, N, 1_000, 60_000);
    let order = Rng::new(11).order(N);
    let before = live();
    let (mut queue, keys) = Q::fill(rt, &durations);
    // Not the queue's: the keys the bench keeps.
    let kept = (keys.capacity() * size_of::<Q::Key>()) as isize;
    let full = live() - before - kept;
    for &i in &order[..N - 1_000] {
        queue.remove_key(rt, &keys[i]);
    }
    let left = live() - before - kept;
    let (name, per_key, per_left) = (Q::NAME, full as f64 / N as f64, left as f64 / 1_000.0);
    println!("  {name:<12} {per_key:>6.1} B/key   {left:>9} B held ({per_left:.1} B per key left)");
}

fn main() {
    if common::Args::bench("delay_queue").is_none() {
        return;
    }
    let mut c = Criterion::default().configure_from_args();
    let rt = common::tokio_current();
    println!("heap per key at 1 000 000 keys; held after removing all but 1 000:");
    each_queue!(Q => print_memory::<Q>(rt));
    let durations = &random_ms(1, N, 1_000, 60_000);
    let resets = &random_ms(2, N, 1_000, 60_000);
    let soon = &random_ms(3, N, 1, 50);
    let order = &Rng::new(4).order(N);
    let own: &Vec<_> = &order.iter().map(|&i| durations[i]).collect();
    let mut group = c.benchmark_group("delay_queue_1m");
    group
        .sample_size(10)
        .warm_up_time(Duration::from_millis(200))
        .measurement_time(Duration::from_secs(2))
        .throughput(Throughput::Elements(N as u64));
    each_queue!(Q => {
        let reset = |to: &[Duration]| {
            let (mut queue, keys) = Q::fill(rt, durations);
            timed(|| order.iter().zip(to).for_each(|(&i, d)| queue.reset_key(rt, &keys[i], *d))).1
        };
        let phases: [(&str, &dyn Fn() -> Duration); 5] = [
            ("insert", &|| timed(|| Q::fill(rt, durations)).1),
            ("reset", &|| reset(resets)),
            ("refresh", &|| reset(own)),
            ("remove", &|| {
                let (mut queue, keys) = Q::fill(rt, durations);
                let remove = |&i: &usize| queue.remove_key(rt, &keys[i]);
                timed(|| std::hint::black_box(order.iter().map(remove).sum::<u64>())).1
            }),
            ("expire", &|| Q::fill(rt, soon).0.expire(rt)),
        ];
        for (phase, run) in phases {
            group.bench_function(BenchmarkId::new(phase, Q::NAME), |b| {
                b.iter_custom(|iters| (0..iters).map(|_| run()).sum());
            });
        }
    });
    group.finish();
    c.final_summary();
}
