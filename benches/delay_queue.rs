//! A keyed timer set at a million keys: `punctual::DelayQueue` (the global wheel) beside
//! tokio-util's `DelayQueue` (a tokio runtime's timer), with a plain slab as the floor.
//!
//! Each measured phase works on 1 000 000 keys, values `u64`, deadlines 1 to 60 s:
//!
//! * **insert**: 1 000 000 relative inserts into an empty queue (each reads the clock).
//! * **reset**: each key moved to a new deadline (1 to 60 s), in a shuffled order.
//! * **refresh**: each key reset to its own timeout again, in a shuffled order, as a
//!   session or cache entry is on each use: its deadline moves by the time since insert.
//! * **remove**: each key removed, in a shuffled order.
//! * **expire**: the drain of 1 000 000 values all due (deadlines 1 to 50 ms, 60 ms
//!   after the inserts), by `poll_expired` until the queue is empty.
//!
//! The floor is `slab::Slab<(u64, Instant)>`: an insert reads the clock and stores the
//! value and its deadline, a reset rewrites the deadline, a remove frees the slot, and the
//! expire drains the slab in no order. It keeps no order by deadline, so it is a floor,
//! not a peer.
//!
//! Before the timings, the binary prints the heap held per key after the million inserts
//! (a counting allocator of its own: it adds an atomic per allocation, and no peer
//! allocates per key), and what each queue still holds once all but 1 000 keys are
//! removed, without `shrink_to_fit`.
//!
//! `cargo bench -p punctual-benches --bench delay_queue`; without `--bench` it does
//! nothing.

use std::alloc::{GlobalAlloc, Layout, System};
use std::future::poll_fn;
use std::sync::atomic::{AtomicIsize, Ordering};
use std::task::{Context, Poll, Waker};
use std::time::{Duration, Instant};

use criterion::{BenchmarkId, Criterion, Throughput};

const N: usize = 1_000_000;

struct Counting;

static LIVE: AtomicIsize = AtomicIsize::new(0);

// SAFETY: every method forwards to `System` with the caller's arguments unchanged, and only
// adds bookkeeping on the side.
unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        // SAFETY: forwarded with the caller's layout, which meets `alloc`'s contract.
        let ptr = unsafe { System.alloc(layout) };
        if !ptr.is_null() {
            LIVE.fetch_add(layout.size() as isize, Ordering::Relaxed);
        }
        ptr
    }

    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        LIVE.fetch_sub(layout.size() as isize, Ordering::Relaxed);
        // SAFETY: forwarded: `ptr` was allocated by `System` with `layout`.
        unsafe { System.dealloc(ptr, layout) }
    }

    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        // SAFETY: forwarded: `ptr` was allocated by `System` with `layout`, and the caller
        // meets `realloc`'s contract for `new_size`.
        let new = unsafe { System.realloc(ptr, layout, new_size) };
        if !new.is_null() {
            LIVE.fetch_add(
                new_size as isize - layout.size() as isize,
                Ordering::Relaxed,
            );
        }
        new
    }
}

#[global_allocator]
static ALLOCATOR: Counting = Counting;

/// The three contenders.
#[derive(Clone, Copy, Debug)]
enum Peer {
    Punctual,
    TokioUtil,
    Floor,
}

const PEERS: [Peer; 3] = [Peer::Punctual, Peer::TokioUtil, Peer::Floor];

impl Peer {
    fn name(self) -> &'static str {
        match self {
            Peer::Punctual => "punctual",
            Peer::TokioUtil => "tokio-util",
            Peer::Floor => "floor: slab",
        }
    }
}

/// A small deterministic generator (xorshift64*), so every run sees the same keys.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_f491_4f6c_dd1d)
    }

    /// `n` deadlines of `lo..=hi` ms.
    fn durations(&mut self, n: usize, lo: u64, hi: u64) -> Vec<Duration> {
        (0..n)
            .map(|_| Duration::from_millis(lo + self.next() % (hi - lo + 1)))
            .collect()
    }

    /// `0..n` shuffled.
    fn order(&mut self, n: usize) -> Vec<usize> {
        let mut order: Vec<usize> = (0..n).collect();
        for i in (1..n).rev() {
            order.swap(i, (self.next() % (i as u64 + 1)) as usize);
        }
        order
    }
}

/// One queue of a peer, filled. One lives at a time: its size does not matter.
#[allow(clippy::large_enum_variant)]
enum Filled {
    Punctual(punctual::DelayQueue<u64>, Vec<punctual::delay_queue::Key>),
    TokioUtil(
        tokio_util::time::DelayQueue<u64>,
        Vec<tokio_util::time::delay_queue::Key>,
    ),
    Floor(slab::Slab<(u64, Instant)>, Vec<usize>),
}

impl Filled {
    /// The heap the bench's own list of keys holds.
    fn keys_bytes(&self) -> usize {
        fn bytes<K>(keys: &[K], capacity: usize) -> usize {
            let _ = keys;
            capacity * size_of::<K>()
        }
        match self {
            Filled::Punctual(_, keys) => bytes(keys, keys.capacity()),
            Filled::TokioUtil(_, keys) => bytes(keys, keys.capacity()),
            Filled::Floor(_, keys) => bytes(keys, keys.capacity()),
        }
    }
}

fn tokio_runtime() -> tokio::runtime::Runtime {
    tokio::runtime::Builder::new_current_thread()
        .enable_time()
        .build()
        .expect("a tokio runtime")
}

/// Inserts `durations` into a new queue of `peer`; tokio-util's inside `rt`.
fn fill(peer: Peer, rt: &tokio::runtime::Runtime, durations: &[Duration]) -> Filled {
    match peer {
        Peer::Punctual => {
            let mut queue = punctual::DelayQueue::new();
            let keys = (0..)
                .zip(durations)
                .map(|(i, d)| queue.insert(i, *d))
                .collect();
            Filled::Punctual(queue, keys)
        }
        Peer::TokioUtil => {
            let _in = rt.enter();
            let mut queue = tokio_util::time::DelayQueue::new();
            let keys = (0..)
                .zip(durations)
                .map(|(i, d)| queue.insert(i, *d))
                .collect();
            Filled::TokioUtil(queue, keys)
        }
        Peer::Floor => {
            let mut slab = slab::Slab::new();
            let keys = (0..)
                .zip(durations)
                .map(|(i, d)| slab.insert((i, Instant::now() + *d)))
                .collect();
            Filled::Floor(slab, keys)
        }
    }
}

/// Resets each key, in `order`, to the matching duration.
fn reset(filled: &mut Filled, rt: &tokio::runtime::Runtime, order: &[usize], to: &[Duration]) {
    match filled {
        Filled::Punctual(queue, keys) => {
            for (&i, d) in order.iter().zip(to) {
                queue.reset(keys[i], *d).expect("a live key");
            }
        }
        Filled::TokioUtil(queue, keys) => {
            let _in = rt.enter();
            for (&i, d) in order.iter().zip(to) {
                queue.reset(&keys[i], *d);
            }
        }
        Filled::Floor(slab, keys) => {
            for (&i, d) in order.iter().zip(to) {
                slab[keys[i]].1 = Instant::now() + *d;
            }
        }
    }
}

/// Removes each key, in `order`; returns the sum of the values.
fn remove(filled: &mut Filled, rt: &tokio::runtime::Runtime, order: &[usize]) -> u64 {
    match filled {
        Filled::Punctual(queue, keys) => order
            .iter()
            .map(|&i| queue.remove(keys[i]).expect("a live key"))
            .sum(),
        Filled::TokioUtil(queue, keys) => {
            let _in = rt.enter();
            order
                .iter()
                .map(|&i| queue.remove(&keys[i]).into_inner())
                .sum()
        }
        Filled::Floor(slab, keys) => order.iter().map(|&i| slab.remove(keys[i]).0).sum(),
    }
}

/// Waits until every value is due, then times the drain; returns its time.
fn expire(filled: Filled, rt: &tokio::runtime::Runtime) -> Duration {
    let mut cx = Context::from_waker(Waker::noop());
    match filled {
        Filled::Punctual(mut queue, _) => {
            std::thread::sleep(Duration::from_millis(60));
            let start = Instant::now();
            let mut count = 0;
            while let Poll::Ready(Some(_)) = queue.poll_expired(&mut cx) {
                count += 1;
            }
            let took = start.elapsed();
            assert_eq!(count, N);
            took
        }
        // Unconstrained: tokio's cooperative budget would stop the drain every 128 values.
        Filled::TokioUtil(mut queue, _) => rt.block_on(tokio::task::unconstrained(async move {
            // Lets the runtime's timer fire the queue's sleep.
            tokio::time::sleep(Duration::from_millis(60)).await;
            let start = Instant::now();
            let mut count = 0;
            while let Poll::Ready(Some(_)) = poll_fn(|cx| Poll::Ready(queue.poll_expired(cx))).await
            {
                count += 1;
            }
            let took = start.elapsed();
            assert_eq!(count, N);
            took
        })),
        Filled::Floor(mut slab, _) => {
            std::thread::sleep(Duration::from_millis(60));
            let start = Instant::now();
            let count = slab.drain().count();
            let took = start.elapsed();
            assert_eq!(count, N);
            took
        }
    }
}

/// Heap bytes per key after the million inserts, and what is left held once all but
/// 1 000 keys are removed.
fn print_memory() {
    let rt = tokio_runtime();
    let durations = Rng(7).durations(N, 1_000, 60_000);
    let order = Rng(11).order(N);
    println!("heap per key at 1 000 000 keys; held after removing all but 1 000:");
    for peer in PEERS {
        let before = LIVE.load(Ordering::Relaxed);
        let mut filled = fill(peer, &rt, &durations);
        // Not the queue's: the keys the bench keeps.
        let keys = filled.keys_bytes() as isize;
        let full = LIVE.load(Ordering::Relaxed) - before - keys;
        remove(&mut filled, &rt, &order[..N - 1_000]);
        let left = LIVE.load(Ordering::Relaxed) - before - keys;
        println!(
            "  {:<12} {:>6.1} B/key   {:>9} B held ({:.1} B per key left)",
            peer.name(),
            full as f64 / N as f64,
            left,
            left as f64 / 1_000.0
        );
        drop(filled);
    }
}

fn million_keys(c: &mut Criterion) {
    print_memory();
    let rt = tokio_runtime();
    let durations = Rng(1).durations(N, 1_000, 60_000);
    let resets = Rng(2).durations(N, 1_000, 60_000);
    let soon = Rng(3).durations(N, 1, 50);
    let order = Rng(4).order(N);

    let mut group = c.benchmark_group("delay_queue_1m");
    group
        .sample_size(10)
        .warm_up_time(Duration::from_millis(200))
        .measurement_time(Duration::from_secs(2))
        .throughput(Throughput::Elements(N as u64));
    for peer in PEERS {
        group.bench_function(BenchmarkId::new("insert", peer.name()), |b| {
            b.iter_custom(|iters| {
                (0..iters)
                    .map(|_| {
                        let start = Instant::now();
                        let filled = fill(peer, &rt, &durations);
                        let took = start.elapsed();
                        drop(filled);
                        took
                    })
                    .sum()
            });
        });
        group.bench_function(BenchmarkId::new("reset", peer.name()), |b| {
            b.iter_custom(|iters| {
                (0..iters)
                    .map(|_| {
                        let mut filled = fill(peer, &rt, &durations);
                        let start = Instant::now();
                        reset(&mut filled, &rt, &order, &resets);
                        start.elapsed()
                    })
                    .sum()
            });
        });
        group.bench_function(BenchmarkId::new("refresh", peer.name()), |b| {
            b.iter_custom(|iters| {
                (0..iters)
                    .map(|_| {
                        let mut filled = fill(peer, &rt, &durations);
                        let own: Vec<_> = order.iter().map(|&i| durations[i]).collect();
                        let start = Instant::now();
                        reset(&mut filled, &rt, &order, &own);
                        start.elapsed()
                    })
                    .sum()
            });
        });
        group.bench_function(BenchmarkId::new("remove", peer.name()), |b| {
            b.iter_custom(|iters| {
                (0..iters)
                    .map(|_| {
                        let mut filled = fill(peer, &rt, &durations);
                        let start = Instant::now();
                        std::hint::black_box(remove(&mut filled, &rt, &order));
                        start.elapsed()
                    })
                    .sum()
            });
        });
        group.bench_function(BenchmarkId::new("expire", peer.name()), |b| {
            b.iter_custom(|iters| {
                (0..iters)
                    .map(|_| expire(fill(peer, &rt, &soon), &rt))
                    .sum()
            });
        });
    }
    group.finish();
}

fn main() {
    if !std::env::args().any(|arg| arg == "--bench") {
        return;
    }
    let mut c = Criterion::default().configure_from_args();
    million_keys(&mut c);
    c.final_summary();
}
