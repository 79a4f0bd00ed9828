//! The cost of one deadline, beside the peers (criterion):
//!
//! * `ready`: a deadline around a future ready at its first poll, beside the bare future.
//! * `arm_cancel`: a 2 s deadline around a pending future, polled once and dropped, with 0
//!   and with 10 000 deadlines armed; with 0, also the floor (`common::ArmFloor`).
//! * `named`: `ready` and `arm_cancel` on the global wheel, unnamed beside named with no
//!   outcome hook, with a hook that does nothing, and with `punctual::report` on.
//! * `contention`: arm + cancel on 1 and on 2 threads at once (tokio: tasks on its
//!   2-worker runtime), in operations per second.
//! * `reset`: a pending sleep moved 60 s or more away (`Sleep::reset`, then a poll) beside
//!   a fresh one polled once and dropped, for punctual's default sleep and tokio's (both
//!   its timers where built with `--cfg tokio_unstable`). Nothing fires.
//!
//! `cargo bench -p punctual-benches --bench timers`.

#[macro_use]
mod common;

use std::future::{self, Future};
use std::hint::black_box;
use std::pin::{Pin, pin};
use std::task::{Context, Waker};
use std::time::{Duration, Instant};

use common::{Peer, Timeouts};
use criterion::{BenchmarkId, Criterion, Throughput};
use punctual::DeadlineExt;

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

/// The `named` group's ways of making and reporting deadlines: a label, whether named,
/// and what to install first.
const NAMINGS: [(&str, bool, fn()); 4] = [
    ("unnamed", false, punctual::report::disable),
    ("named, no hook", true, punctual::report::disable),
    ("named, empty hook", true, || {
        punctual::punctual_core::set_outcome_hook(Some(|_| {}))
    }),
    ("named, punctual::report", true, punctual::report::enable),
];

/// `iters` times, on the global wheel: a deadline around `make()`, polled once, dropped.
fn poll_once<F: Future>(named: bool, iters: u64, make: impl Fn(u64) -> F) -> Duration {
    let mut cx = Context::from_waker(Waker::noop());
    let start = Instant::now();
    for i in 0..iters {
        let d = make(i).deadline(common::LONG);
        if named {
            black_box(pin!(d.named("bench")).poll(&mut cx).is_ready());
        } else {
            black_box(pin!(d).poll(&mut cx).is_ready());
        }
    }
    start.elapsed()
}

fn named(c: &mut Criterion) {
    let mut group = c.benchmark_group("named");
    for (label, named, install) in NAMINGS {
        install();
        group.bench_function(BenchmarkId::new("ready", label), |b| {
            b.iter_custom(|iters| poll_once(named, iters, |i| future::ready(black_box(i))))
        });
        group.bench_function(BenchmarkId::new("arm_cancel", label), |b| {
            b.iter_custom(|iters| poll_once(named, iters, |_| future::pending::<()>()))
        });
    }
    punctual::report::disable();
    group.finish();
}

fn contention(c: &mut Criterion) {
    let mut group = c.benchmark_group("contention");
    for peer in Peer::timers() {
        for threads in [1, 2] {
            group.throughput(Throughput::Elements(threads as u64));
            let run = |iters| with_peer!(peer, T => T::contention(threads, iters));
            let id = BenchmarkId::new(peer.name(), threads);
            group.bench_function(id, |b| b.iter_custom(run));
        }
    }
    group.finish();
}

/// The rows `reset/{name}/fresh` and `reset/{name}/reset`: `sleep()` makes a sleep of
/// [`RESET_FROM`], `reset(sleep, n)` moves it `n` past that.
fn reset_rows<S: Future>(
    c: &mut Criterion,
    name: &str,
    sleep: impl Fn() -> S,
    reset: impl Fn(Pin<&mut S>, Duration),
) {
    let mut cx = Context::from_waker(Waker::noop());
    let mut group = c.benchmark_group("reset");
    group.warm_up_time(Duration::from_millis(500));
    group.measurement_time(Duration::from_secs(2));
    group.bench_function(format!("{name}/fresh"), |b| {
        b.iter(|| black_box(pin!(sleep()).poll(&mut cx).is_pending()))
    });
    let mut sleep = pin!(sleep());
    assert!(sleep.as_mut().poll(&mut cx).is_pending());
    let mut n = 0u64;
    group.bench_function(format!("{name}/reset"), |b| {
        b.iter(|| {
            n = (n + 1) % 1_000_000;
            reset(sleep.as_mut(), Duration::from_micros(n));
            black_box(sleep.as_mut().poll(&mut cx).is_pending());
        })
    });
    group.finish();
}

const RESET_FROM: Duration = Duration::from_secs(60);

fn reset(c: &mut Criterion) {
    let base = Instant::now() + RESET_FROM;
    let sleep = || punctual::sleep(RESET_FROM);
    reset_rows(c, "punctual", sleep, |s, later| s.reset(base + later));
    let alts = [false, true]
        .into_iter()
        .filter(|&a| !a || cfg!(tokio_unstable));
    for alt in alts {
        let runtime = common::build(tokio::runtime::Builder::new_current_thread(), alt);
        let _entered = runtime.enter();
        let base = tokio::time::Instant::now() + RESET_FROM;
        let sleep = || tokio::time::sleep(RESET_FROM);
        let name = if alt { "tokio-alt" } else { "tokio" };
        reset_rows(c, name, sleep, |s, later| s.reset(base + later));
    }
}

fn main() {
    let mut c = Criterion::default().configure_from_args();
    ready(&mut c);
    arm_cancel(&mut c);
    named(&mut c);
    contention(&mut c);
    reset(&mut c);
    c.final_summary();
}
