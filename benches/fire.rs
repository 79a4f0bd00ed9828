//! Fire: 100 000 deadlines spread over 1 to 100 ms in one `FuturesUnordered`, until all
//! have fired and been seen, beside the peers (see `common`).
//!
//! * `fire_wall`: the wall time of a run.
//! * `fire_cpu`: the CPU time of the whole process during a run (`getrusage`, the drivers'
//!   threads included), reported by criterion as if it were time.
//! * `fire_budget_on`: punctual and tokio in a tokio task with tokio's cooperative budget
//!   on (every other tokio figure is measured inside `tokio::task::unconstrained`).
//!
//! Run with `cargo bench -p punctual-benches --bench fire`.

#[macro_use]
mod common;

use std::time::Duration;

use common::{FireCost, Peer};
use criterion::{BenchmarkId, Criterion, SamplingMode};

const N: usize = 100_000;
/// A run that has not finished after this is cut short (and reported on stderr).
const GIVE_UP: Duration = Duration::from_secs(10);

fn measure(peer: Peer, label: &str, run: impl Fn() -> Option<FireCost>) -> FireCost {
    run().unwrap_or_else(|| {
        eprintln!(
            "{label}/{}: not all {N} deadlines fired within {GIVE_UP:?}",
            peer.name()
        );
        FireCost {
            wall: GIVE_UP,
            cpu: GIVE_UP,
        }
    })
}

fn fire(c: &mut Criterion) {
    for (label, cpu) in [("fire_wall", false), ("fire_cpu", true)] {
        let mut group = c.benchmark_group(label);
        group.sample_size(10).sampling_mode(SamplingMode::Flat);
        for peer in Peer::timers().chain([Peer::PunctualTokio]) {
            group.bench_function(BenchmarkId::new(peer.name(), N), |b| {
                b.iter_custom(|iters| {
                    (0..iters)
                        .map(|_| {
                            let cost = measure(
                                peer,
                                label,
                                || with_peer!(peer, T => common::fire::<T>(N, GIVE_UP)),
                            );
                            if cpu { cost.cpu } else { cost.wall }
                        })
                        .sum()
                })
            });
        }
        group.finish();
    }
    let mut group = c.benchmark_group("fire_budget_on");
    group.sample_size(10).sampling_mode(SamplingMode::Flat);
    for peer in [Peer::Punctual, Peer::Tokio] {
        group.bench_function(BenchmarkId::new(peer.name(), N), |b| {
            b.iter_custom(|iters| {
                (0..iters)
                    .map(|_| {
                        measure(
                            peer,
                            "fire_budget_on",
                            || with_peer!(peer, T => common::fire_budget_on::<T>(N, GIVE_UP)),
                        )
                        .wall
                    })
                    .sum()
            })
        });
    }
    group.finish();
}

fn main() {
    let mut c = Criterion::default().configure_from_args();
    fire(&mut c);
    c.final_summary();
}
