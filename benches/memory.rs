//! Memory per armed deadline, beside the peers: the deadline future's size beyond its inner
//! future's, plus the heap its driver holds per armed timer.
//!
//! A counting global allocator (this binary's own, so that no timing bench pays for it)
//! tracks the bytes live. Each measurement runs in a process of its own ([`measure_apart`]).
//! For each peer, `N` deadlines around `pending()` are made and
//! boxed first (not counted), then each is polled once with a waker of its own, the drivers
//! are given time to take them in, and the growth in live bytes is divided by `N`.
//! `N = 16 320` fills a growable punctual wheel's segments (64, 128, ... 8 192 entries)
//! exactly, so punctual's figure is its slab entry's size, with no doubling slack. The
//! heap per timer at other counts ([`MORE_N`]) is measured too: a growable wheel's segments
//! double, so its heap per timer runs from the entry's size up to about twice that, as the
//! peers' containers have slack of their own.
//!
//! Each waker counts its wakes: a deadline 10 minutes away that is woken was let go of by
//! its timer (embassy-time's queue holds 128 wakers and wakes a task at once when full),
//! so the count of deadlines actually held is reported beside the bytes.
//!
//! `cargo bench -p punctual-benches --bench memory` prints the table; `-- --tsv PATH` also
//! writes it for the report (`ci/bench_report.sh`). Without `--bench` it does nothing.

#[macro_use]
mod common;

use std::alloc::{GlobalAlloc, Layout, System};
use std::future::{Future, pending};
use std::pin::Pin;
use std::sync::Arc;
use std::sync::atomic::{AtomicIsize, AtomicUsize, Ordering};
use std::task::Context;
use std::time::Duration;

use common::{Peer, Timeouts};

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

    unsafe fn alloc_zeroed(&self, layout: Layout) -> *mut u8 {
        // SAFETY: forwarded with the caller's layout.
        let ptr = unsafe { System.alloc_zeroed(layout) };
        if !ptr.is_null() {
            LIVE.fetch_add(layout.size() as isize, Ordering::Relaxed);
        }
        ptr
    }

    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        // SAFETY: forwarded: `ptr` was allocated by `System` with `layout`.
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

/// Deadlines armed per peer.
const N: usize = 16_320;
/// Other counts of deadlines, for the heap per timer as more are armed.
const MORE_N: [usize; 3] = [1_000, 10_000, 100_000];
/// Time for the drivers to take new timers in (async-io's reactor thread files them then).
const SETTLE: Duration = Duration::from_millis(200);

/// What arming `n` deadlines cost one peer.
struct Measured {
    /// The deadline future's size beyond its inner future's.
    future: usize,
    /// Net heap bytes live after arming, per deadline.
    heap: f64,
    /// Deadlines the peer still held (never woken).
    held: usize,
}

fn measure<T: Timeouts>(n: usize) -> Measured {
    T::context(move || {
        let mut futures: Vec<Pin<Box<_>>> = (0..n)
            .map(|_| Box::pin(T::bound(pending::<()>(), Duration::from_secs(600))))
            .collect();
        let wakes = Arc::new(AtomicUsize::new(0));
        let wakers: Vec<_> = (0..n).map(|_| common::distinct_waker(&wakes)).collect();
        let size = std::mem::size_of_val(&*futures[0]) - std::mem::size_of_val(&pending::<()>());
        std::thread::sleep(SETTLE);
        let before = LIVE.load(Ordering::SeqCst);
        for (fut, waker) in futures.iter_mut().zip(&wakers) {
            let _ = fut.as_mut().poll(&mut Context::from_waker(waker));
        }
        std::thread::sleep(SETTLE);
        let heap = (LIVE.load(Ordering::SeqCst) - before) as f64 / n as f64;
        let held = n.saturating_sub(wakes.load(Ordering::Relaxed));
        drop(futures);
        std::thread::sleep(SETTLE);
        Measured {
            future: size,
            heap: heap.max(0.0),
            held,
        }
    })
}

/// Measures `n` deadlines of `peer` in a process of its own (this binary, run with
/// `--one`): a timer's driver keeps the capacity it grew to (a growable wheel never
/// shrinks, a reactor's map keeps its nodes), so a second measurement in one process would
/// see only the growth beyond the first, and futures-time would reuse async-io's reactor.
fn measure_apart(peer: Peer, n: usize) -> Measured {
    let exe = std::env::current_exe().expect("this benchmark's path");
    let out = std::process::Command::new(exe)
        .args(["--bench", "--one", peer.name(), &n.to_string()])
        .output()
        .expect("run a measurement");
    assert!(out.status.success(), "measuring {} failed", peer.name());
    let text = String::from_utf8(out.stdout).expect("a measurement in UTF-8");
    let cols: Vec<&str> = text.trim().split('\t').collect();
    let [future, heap, held] = cols[..] else {
        panic!("a measurement, not {text:?}");
    };
    Measured {
        future: future.parse().expect("a size"),
        heap: heap.parse().expect("bytes"),
        held: held.parse().expect("a count"),
    }
}

fn main() {
    let args: Vec<String> = std::env::args().collect();
    if !args.iter().any(|a| a == "--bench") {
        println!(
            "memory: not run without --bench (use `cargo bench -p punctual-benches --bench memory`)"
        );
        return;
    }
    if let Some(i) = args.iter().position(|a| a == "--one") {
        let peer = Peer::named(&args[i + 1]).expect("a peer's name");
        let n: usize = args[i + 2].parse().expect("a number of deadlines");
        let m = with_peer!(peer, T => measure::<T>(n));
        println!("{}\t{:.1}\t{}", m.future, m.heap, m.held);
        return;
    }
    let mut tsv = String::from(
        "# peer\tfuture overhead (bytes)\theap per armed timer (bytes)\theld\tarmed\n",
    );
    println!(
        "{:<16} {:>16} {:>16} {:>8} {:>14}",
        "", "future overhead", "heap per timer", "total", "held"
    );
    for peer in Peer::timers() {
        let m = measure_apart(peer, N);
        println!(
            "{:<16} {:>16} {:>16.1} {:>8.1} {:>14}",
            peer.name(),
            m.future,
            m.heap,
            m.future as f64 + m.heap,
            format!("{} of {N}", m.held)
        );
        tsv.push_str(&format!(
            "{}\t{}\t{:.1}\t{}\t{N}\n",
            peer.name(),
            m.future,
            m.heap,
            m.held
        ));
    }
    println!("\nheap per armed timer (bytes), as more are armed:");
    for peer in Peer::timers() {
        let mut line = format!("{:<16}", peer.name());
        for n in MORE_N {
            let m = measure_apart(peer, n);
            line.push_str(&format!(" {n:>7}: {:>6.1}", m.heap));
            tsv.push_str(&format!(
                "{}\t{}\t{:.1}\t{}\t{n}\n",
                peer.name(),
                m.future,
                m.heap,
                m.held
            ));
        }
        println!("{line}");
    }
    if let Some(i) = args.iter().position(|a| a == "--tsv") {
        std::fs::write(&args[i + 1], tsv).expect("write the memory table");
    }
}
