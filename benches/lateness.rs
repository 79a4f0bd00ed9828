//! Lateness on the real clock, beside the peers: for 1 000 deadlines of 1 to 50 ms started
//! together, when each one's `Err` was seen minus when it was asked for. Prints early
//! count, median, p99 and max per peer (the report's lateness table, fewer runs).
//!
//! `cargo bench -p punctual-benches --bench lateness`; without `--bench` it does nothing.
//! One run deadline by deadline: `--bench report -- --bench --probe trace PEER SEED`.

#[macro_use]
mod common;

const N: usize = 1_000;
const RUNS: u64 = 5;

fn main() {
    if common::Args::bench("lateness").is_none() {
        return;
    }
    let peers: Vec<_> = common::lateness_peers().collect();
    let mut samples = vec![Vec::new(); peers.len()];
    for run in 0..RUNS {
        for (sample, &(peer, _)) in samples.iter_mut().zip(&peers) {
            sample.extend(with_peer!(peer, T => common::lateness::<T>(N, 1 + run)));
        }
    }
    println!(
        "{:<20} {:>8} {:>10} {:>12} {:>10} {:>10}",
        "lateness", "early", "min (µs)", "median (µs)", "p99 (µs)", "max (µs)"
    );
    for ((peer, _), sample) in peers.into_iter().zip(samples) {
        let n = sample.len();
        let s = common::summarize(sample);
        let us = |ns: i64| ns as f64 / 1e3;
        let early = format!("{}/{n}", s.early);
        let (min, median, p99, max) = (us(s.min), us(s.median), us(s.p99), us(s.max));
        println!(
            "{:<20} {early:>8} {min:>10.1} {median:>12.1} {p99:>10.1} {max:>10.1}",
            peer.name()
        );
    }
    if let Some(load) = common::load_average() {
        println!("load average: {load:.2}");
    }
}
