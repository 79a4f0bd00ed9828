//! Memory per armed deadline, beside the peers: the deadline future's size beyond its
//! inner future's, plus the heap its driver holds per armed timer (a counting allocator),
//! at 16 320 deadlines (a growable wheel's segments exactly full) and at [`MORE_N`]. A
//! deadline whose waker was woken was let go of by its timer, so the deadlines held are
//! counted too. Each measurement is a process of its own: a driver keeps what it grew to.
//!
//! `cargo bench -p punctual-benches --bench memory`; `-- --tsv PATH` writes the rows for
//! the report.

#[macro_use]
mod common;
mod counting_alloc;

use std::future::{Future, pending};
use std::pin::Pin;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::task::Context;
use std::time::Duration;

use common::{Args, Peer, Timeouts};
use counting_alloc::live;

/// Deadlines armed per peer.
const N: usize = 16_320;
/// Other counts of deadlines, for the heap per timer as more are armed.
const MORE_N: [usize; 3] = [1_000, 10_000, 100_000];
/// Time for the drivers to take new timers in (async-io's reactor thread files them then).
const SETTLE: Duration = Duration::from_millis(200);

/// Arms `n` deadlines; prints the future's overhead, the heap per deadline and how many
/// deadlines the peer held.
fn measure<T: Timeouts>(n: usize) -> String {
    T::context(move || {
        let mut futures: Vec<Pin<Box<_>>> = (0..n)
            .map(|_| Box::pin(T::bound(pending::<()>(), Duration::from_secs(600))))
            .collect();
        let wakes = Arc::new(AtomicUsize::new(0));
        let wakers: Vec<_> = (0..n).map(|_| common::distinct_waker(&wakes)).collect();
        let size = size_of_val(&*futures[0]) - size_of_val(&pending::<()>());
        std::thread::sleep(SETTLE);
        let before = live();
        for (fut, waker) in futures.iter_mut().zip(&wakers) {
            let _ = fut.as_mut().poll(&mut Context::from_waker(waker));
        }
        std::thread::sleep(SETTLE);
        let heap = ((live() - before) as f64 / n as f64).max(0.0);
        let held = n.saturating_sub(wakes.load(Ordering::Relaxed));
        drop(futures);
        std::thread::sleep(SETTLE);
        format!("{size}\t{heap:.1}\t{held}")
    })
}

fn main() {
    let Some(args) = Args::bench("memory") else {
        return;
    };
    if let Some([peer, n, ..]) = args.after("--one") {
        let peer = Peer::named(peer).expect("a peer's name");
        let n: usize = n.parse().expect("a number of deadlines");
        let m = with_peer!(peer, T => measure::<T>(n));
        println!("{}\t{m}\t{n}", peer.name());
        return;
    }
    println!("peer, future overhead, heap per timer and deadlines held, at each count armed");
    // Each peer's first row is the main measurement; later ones, other numbers armed.
    let runs = [N]
        .into_iter()
        .chain(MORE_N)
        .flat_map(|n| Peer::timers().map(move |peer| vec![peer.name().into(), n.to_string()]));
    let header = "# peer\tfuture overhead (B)\theap per armed timer (B)\theld\tarmed";
    args.runs_apart(header, runs);
}
