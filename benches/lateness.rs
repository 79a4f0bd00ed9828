//! Lateness on the real clock, beside the peers: for 1 000 deadlines of 1 to 50 ms started
//! together, when each one's `Err` was seen minus when it was asked for. Prints early
//! count, median, p99 and max per peer, punctual at its default 1 ms tick and at 100 µs.
//!
//! `cargo bench -p punctual-benches --bench lateness`. Without `--bench` (as
//! `cargo test --benches` runs it) it does nothing: it takes real time, and on a loaded machine its numbers mean little.

#[macro_use]
mod common;

use common::Peer;

const N: usize = 1_000;
const RUNS: u64 = 5;

fn main() {
    if !std::env::args().any(|a| a == "--bench") {
        println!(
            "lateness: not run without --bench (use `cargo bench -p punctual-benches --bench lateness`)"
        );
        return;
    }
    let peers: Vec<Peer> = [
        Peer::Punctual,
        Peer::PunctualInTokio,
        Peer::PunctualTokio,
        Peer::Punctual100us,
        Peer::PunctualSmol100us,
        Peer::Tokio,
        Peer::TokioAlt,
        Peer::AsyncIo,
        Peer::FuturesTimer,
        Peer::FuturesTime,
        Peer::Embassy,
    ]
    .into_iter()
    .filter(|p| p.available())
    .collect();
    if let Ok(name) = std::env::var("LATENESS_TRACE") {
        // The worst deadlines of one run of one peer: (start, duration, lateness).
        let peer = *peers
            .iter()
            .find(|p| p.name() == name)
            .expect("LATENESS_TRACE: a peer name");
        let mut trace = with_peer!(peer, T => common::lateness_traced::<T>(N, 1));
        trace.sort_by_key(|t| -t.2);
        for (start, d, late) in trace.iter().take(25) {
            println!(
                "start {start:>10.1?}  d {d:>10.3?}  late {:>10.1?}",
                std::time::Duration::from_nanos(*late as u64)
            );
        }
        return;
    }
    let mut samples = vec![Vec::new(); peers.len()];
    for run in 0..RUNS {
        for (i, &peer) in peers.iter().enumerate() {
            samples[i].extend(with_peer!(peer, T => common::lateness::<T>(N, 1 + run)));
        }
    }
    println!(
        "{:<16} {:>8} {:>12} {:>12} {:>12} {:>12}",
        "lateness", "early", "min (µs)", "median (µs)", "p99 (µs)", "max (µs)"
    );
    for (peer, sample) in peers.iter().zip(samples) {
        let n = sample.len();
        let s = common::summarize(sample);
        println!(
            "{:<16} {:>8} {:>12.1} {:>12.1} {:>12.1} {:>12.1}",
            peer.name(),
            format!("{}/{n}", s.early),
            s.min as f64 / 1e3,
            s.median as f64 / 1e3,
            s.p99 as f64 / 1e3,
            s.max as f64 / 1e3
        );
    }
    if let Some(load) = common::load_average() {
        println!("load average: {load:.2}");
    }
}
