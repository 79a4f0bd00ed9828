//! Measuring every in-process scenario of `common` for every peer, a few samples each,
//! interleaved between the peers where a change in the machine's load would otherwise
//! favour one.

use std::collections::BTreeMap;
use std::time::Duration;

use crate::common::{self, FireCost, Peer, Timeouts, median};
use crate::results::{Results, ns_per_op};

/// Samples per micro bench (the median is reported).
pub(crate) const SAMPLES: usize = 11;
/// Fire runs per peer, and deadlines per run.
pub(crate) const FIRE_RUNS: usize = 9;
pub(crate) const FIRE_N: usize = 100_000;
pub(crate) const FIRE_GIVE_UP: Duration = Duration::from_secs(10);
/// Lateness: deadlines per run, and runs per peer.
pub(crate) const LATE_N: usize = 1_000;
pub(crate) const LATE_RUNS: u64 = 15;
/// Contention: each sample runs about this long on one thread.
pub(crate) const CONTENTION_TARGET: Duration = Duration::from_millis(30);
pub(crate) const CONTENTION_SAMPLES: usize = 7;
/// Deadlines already armed in the second arm + cancel group.
pub(crate) const ARMED: usize = 10_000;

/// The peers of the fire table: every timer, punctual driven in the executor (smol) and by
/// the tokio adapter, and no timer at all (the floor under every timer's cost).
pub(crate) fn fire_peers() -> impl Iterator<Item = Peer> {
    use Peer::*;
    const PEERS: [Peer; 11] = [
        Punctual,
        PunctualInTokio,
        PunctualSmol,
        PunctualTokio,
        Tokio,
        TokioAlt,
        AsyncIo,
        FuturesTimer,
        FuturesTime,
        Embassy,
        NoTimer,
    ];
    PEERS.into_iter().filter(|p| p.available())
}

pub(crate) fn progress(what: &str) {
    eprintln!("report: {what}");
}

/// [`SAMPLES`] rounds of `run(peer, iters)` (after one round of warm-up), the peers
/// interleaved within each round: ns per operation, round by round.
fn rounds(
    peers: &[Peer],
    iters: u64,
    run: impl Fn(Peer, u64) -> Duration,
) -> BTreeMap<Peer, Vec<f64>> {
    let mut samples: BTreeMap<Peer, Vec<f64>> = BTreeMap::new();
    for round in 0..=SAMPLES {
        for &peer in peers {
            let d = run(peer, iters);
            if round > 0 {
                samples.entry(peer).or_default().push(ns_per_op(d, iters));
            }
        }
    }
    samples
}

pub(crate) fn measure(r: &mut Results) {
    progress("ready");
    let peers: Vec<Peer> = [Peer::Bare].into_iter().chain(Peer::timers()).collect();
    r.ready_runs = rounds(
        &peers,
        200_000,
        |p, n| with_peer!(p, T => common::ready::<T>(n)),
    );

    progress("arm + cancel");
    let peers: Vec<Peer> = Peer::timers().chain([Peer::ArmFloor]).collect();
    let iters = 20_000;
    r.arm_cancel_runs = rounds(
        &peers,
        iters,
        |p, n| with_peer!(p, T => common::arm_cancel::<T>(n)),
    );

    progress("arm + cancel with 10 000 armed");
    for peer in Peer::timers() {
        let (ns, held) = with_peer!(peer, T => {
            let armed = common::prearm::<T>(ARMED);
            let _ = common::arm_cancel::<T>(iters);
            let s = (0..SAMPLES).map(|_| ns_per_op(common::arm_cancel::<T>(iters), iters));
            (median(s.collect()), armed.held())
        });
        // A peer that let go of some of the deadlines was not measured with 10 000 armed.
        if held == ARMED {
            r.arm_cancel_armed.insert(peer, ns);
        } else {
            r.armed_short.insert(peer, held);
        }
    }

    progress("contention");
    for peer in Peer::timers() {
        let per_op = r.arm_cancel(peer).expect("measured above");
        let iters = ((CONTENTION_TARGET.as_nanos() as f64 / per_op) as u64).clamp(1_000, 2_000_000);
        let per_s = |threads: usize, d: Duration| (threads as u64 * iters) as f64 / d.as_secs_f64();
        let (mut one, mut two) = (Vec::new(), Vec::new());
        with_peer!(peer, T => {
            let _ = T::contention(2, iters / 4);
            for _ in 0..CONTENTION_SAMPLES {
                one.push(per_s(1, T::contention(1, iters)));
                two.push(per_s(2, T::contention(2, iters)));
            }
        });
        r.contention
            .insert(peer, (median(one), median(two.clone())));
        r.contention_runs.insert(peer, two);
    }

    progress("fire");
    let mut runs: BTreeMap<Peer, Vec<Option<FireCost>>> = BTreeMap::new();
    for _ in 0..FIRE_RUNS {
        for peer in fire_peers() {
            let cost = with_peer!(peer, T => common::fire::<T>(FIRE_N, FIRE_GIVE_UP));
            runs.entry(peer).or_default().push(cost);
        }
    }
    for (peer, costs) in runs {
        let done: Option<Vec<FireCost>> = costs.into_iter().collect();
        let cost = done.map(|done| {
            let cpu = done.iter().map(|c| c.cpu.as_secs_f64() * 1e3);
            r.fire_runs.insert(peer, cpu.collect());
            let wall = median(done.iter().map(|c| c.wall).collect());
            FireCost {
                wall,
                cpu: median(done.iter().map(|c| c.cpu).collect()),
            }
        });
        r.fire.insert(peer, cost);
    }
    progress("fire with tokio's budget on");
    for peer in [Peer::Punctual, Peer::Tokio] {
        let cost = with_peer!(peer, T => common::fire_budget_on::<T>(FIRE_N, FIRE_GIVE_UP));
        r.fire_budget_on.insert(peer, cost);
    }

    progress("lateness");
    let mut samples: BTreeMap<Peer, Vec<i64>> = BTreeMap::new();
    for run in 0..LATE_RUNS {
        for (peer, _) in common::lateness_peers() {
            let s = with_peer!(peer, T => common::lateness::<T>(LATE_N, 1 + run));
            let run_median = common::summarize(s.clone()).median;
            r.lateness_run_medians
                .entry(peer)
                .or_default()
                .push(run_median);
            samples.entry(peer).or_default().extend(s);
        }
    }
    for (peer, s) in samples {
        let n = s.len();
        r.lateness.insert(peer, (common::summarize(s), n));
    }
}
