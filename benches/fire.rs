//! Fire, beside the peers (criterion): 100 000 deadlines over 1 to 100 ms in one
//! `FuturesUnordered`, until all have fired and been seen. Groups: `fire_wall`,
//! `fire_cpu` (the whole process's CPU time, reported as if it were time), and
//! `fire_budget_on` (punctual and tokio with tokio's cooperative budget on).
//!
//! `cargo bench -p punctual-benches --bench fire`.

#[macro_use]
mod common;

use std::time::Duration;

use common::{FireCost, Peer};
use criterion::{BenchmarkId, Criterion, SamplingMode};

const N: usize = 100_000;
/// A run that has not finished after this is cut short (and reported on stderr).
const GIVE_UP: Duration = Duration::from_secs(10);

/// One fire run of a peer.
type Run<'a> = &'a dyn Fn(Peer) -> Option<FireCost>;

fn main() {
    let mut c = Criterion::default().configure_from_args();
    let fire = |peer| with_peer!(peer, T => common::fire::<T>(N, GIVE_UP));
    let budget_on = |peer| with_peer!(peer, T => common::fire_budget_on::<T>(N, GIVE_UP));
    let all: Vec<Peer> = Peer::timers().chain([Peer::PunctualTokio]).collect();
    let groups: [(&str, Run, bool, &[Peer]); 3] = [
        ("fire_wall", &fire, false, &all),
        ("fire_cpu", &fire, true, &all),
        (
            "fire_budget_on",
            &budget_on,
            false,
            &[Peer::Punctual, Peer::Tokio],
        ),
    ];
    for (label, run, cpu, peers) in groups {
        let mut group = c.benchmark_group(label);
        group.sample_size(10).sampling_mode(SamplingMode::Flat);
        for &peer in peers {
            group.bench_function(BenchmarkId::new(peer.name(), N), |b| {
                b.iter_custom(|iters| {
                    (0..iters)
                        .map(|_| match run(peer) {
                            Some(cost) if cpu => cost.cpu,
                            Some(cost) => cost.wall,
                            None => {
                                eprintln!(
                                    "{label}/{}: not all fired within {GIVE_UP:?}",
                                    peer.name()
                                );
                                GIVE_UP
                            }
                        })
                        .sum()
                })
            });
        }
        group.finish();
    }
    c.final_summary();
}
