//! Memory per armed deadline, beside the peers: the deadline future's size beyond its inner
//! future's, plus the heap its driver holds per armed timer.
//!
//! A counting global allocator (this binary's own, so that no timing bench pays for it)
//! tracks the bytes live. For each peer, `N` deadlines around `pending()` are made and
//! boxed first (not counted), then each is polled once with a waker of its own, the drivers
//! are given time to take them in, and the growth in live bytes is divided by `N`.
//! `N = 16 320` fills a growable punctual wheel's segments (64, 128, ... 8 192 entries)
//! exactly, so punctual's figure is its slab entry's size, with no doubling slack.
//!
//! `cargo bench --bench memory` prints the table; `-- --tsv PATH` also writes it for the
//! report (`ci/bench_report.sh`). Without `--bench` it does nothing.

#[macro_use]
mod common;

use std::alloc::{GlobalAlloc, Layout, System};
use std::future::{Future, pending};
use std::pin::Pin;
use std::sync::atomic::{AtomicIsize, Ordering};
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
/// Time for the drivers to take new timers in (async-io's reactor thread files them then).
const SETTLE: Duration = Duration::from_millis(200);

/// `(future overhead, heap bytes per armed timer)`.
fn measure<T: Timeouts>() -> (usize, f64) {
    T::context(|| {
        let mut futures: Vec<Pin<Box<_>>> = (0..N)
            .map(|_| Box::pin(T::bound(pending::<()>(), Duration::from_secs(600))))
            .collect();
        let wakers: Vec<_> = (0..N).map(|_| common::distinct_waker()).collect();
        let size = std::mem::size_of_val(&*futures[0]) - std::mem::size_of_val(&pending::<()>());
        std::thread::sleep(SETTLE);
        let before = LIVE.load(Ordering::SeqCst);
        for (fut, waker) in futures.iter_mut().zip(&wakers) {
            let _ = fut.as_mut().poll(&mut Context::from_waker(waker));
        }
        std::thread::sleep(SETTLE);
        let heap = (LIVE.load(Ordering::SeqCst) - before) as f64 / N as f64;
        drop(futures);
        std::thread::sleep(SETTLE);
        (size, heap.max(0.0))
    })
}

fn main() {
    let args: Vec<String> = std::env::args().collect();
    if !args.iter().any(|a| a == "--bench") {
        println!("memory: not run without --bench (use `cargo bench --bench memory`)");
        return;
    }
    let mut tsv = String::from("# peer\tfuture overhead (bytes)\theap per armed timer (bytes)\n");
    println!(
        "{:<16} {:>16} {:>16} {:>8}",
        "", "future overhead", "heap per timer", "total"
    );
    for peer in Peer::TIMERS {
        let (size, heap) = with_peer!(peer, T => measure::<T>());
        println!(
            "{:<16} {:>16} {:>16.1} {:>8.1}",
            peer.name(),
            size,
            heap,
            size as f64 + heap
        );
        tsv.push_str(&format!("{}\t{size}\t{heap:.1}\n", peer.name()));
    }
    if let Some(i) = args.iter().position(|a| a == "--tsv") {
        std::fs::write(&args[i + 1], tsv).expect("write the memory table");
    }
}
