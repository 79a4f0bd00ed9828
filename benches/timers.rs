//! The cost of one deadline, beside the peers (see `common` for how each peer is written):
//!
//! * `ready`: a deadline around a future that is ready at its first poll, against the bare
//!   future.
//! * `arm_cancel`: a 2 s deadline around a pending future, polled once (so it arms), then
//!   dropped; with 0 and with 10 000 deadlines already armed. With 0 armed, the group also
//!   has the floor under any such timer (`common::ArmFloor`: a clock reading and two
//!   compare-and-swaps).
//! * `contention`: the same on 1 and on 2 threads at once (tokio: tasks on its 2-worker
//!   runtime); throughput in operations per second.
//!
//! Tokio runs inside `tokio::task::unconstrained`. Run with
//! `cargo bench -p punctual-benches --bench timers`.

#[macro_use]
mod common;

use common::Peer;
use criterion::{BenchmarkId, Criterion, Throughput};

fn ready(c: &mut Criterion) {
    let mut group = c.benchmark_group("ready");
    for peer in [Peer::Bare].into_iter().chain(Peer::timers()) {
        group.bench_function(peer.name(), |b| {
            b.iter_custom(|iters| with_peer!(peer, T => common::ready::<T>(iters)))
        });
    }
    group.finish();
}

fn arm_cancel(c: &mut Criterion) {
    let mut group = c.benchmark_group("arm_cancel");
    for armed in [0, 10_000] {
        for peer in Peer::timers() {
            with_peer!(peer, T => {
                // Named by the deadlines the peer actually holds (embassy-time: 128 at most).
                let held = common::prearm::<T>(armed);
                group.bench_with_input(BenchmarkId::new(peer.name(), held.held()), &armed, |b, _| {
                    b.iter_custom(common::arm_cancel::<T>)
                });
                drop(held);
            });
        }
    }
    group.bench_function(BenchmarkId::new(Peer::ArmFloor.name(), 0), |b| {
        b.iter_custom(common::arm_cancel::<common::ArmFloor>)
    });
    group.finish();
}

fn contention(c: &mut Criterion) {
    let mut group = c.benchmark_group("contention");
    for peer in Peer::timers() {
        for threads in [1, 2] {
            group.throughput(Throughput::Elements(threads as u64));
            group.bench_with_input(
                BenchmarkId::new(peer.name(), threads),
                &threads,
                |b, &threads| {
                    b.iter_custom(
                        |iters| with_peer!(peer, T => common::contention::<T>(threads, iters)),
                    )
                },
            );
        }
    }
    group.finish();
}

fn main() {
    let mut c = Criterion::default().configure_from_args();
    ready(&mut c);
    arm_cancel(&mut c);
    contention(&mut c);
    c.final_summary();
}
