//! Measuring: every scenario of `common` for every peer, a few samples each,
//! interleaved so that a change in the machine's load touches every peer alike; and the
//! results other processes measured (memory, a million timers, the HTTP server), read
//! from their files.

use std::collections::BTreeMap;
use std::path::Path;
use std::time::Duration;

use crate::common::{self, FireCost, LatenessSummary, Peer};

/// Samples per micro bench (the median is reported).
pub(crate) const SAMPLES: usize = 11;
/// Fire runs per peer.
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
/// the tokio adapter too, and the harness with no timer at all (the floor under every
/// timer's cost).
pub(crate) fn fire_peers() -> Vec<Peer> {
    [
        Peer::Punctual,
        Peer::PunctualInTokio,
        Peer::PunctualSmol,
        Peer::PunctualTokio,
        Peer::Tokio,
        Peer::TokioAlt,
        Peer::AsyncIo,
        Peer::FuturesTimer,
        Peer::FuturesTime,
        Peer::Embassy,
        Peer::NoTimer,
    ]
    .into_iter()
    .filter(|p| p.available())
    .collect()
}

/// punctual's rows of the lateness table, with their ticks in nanoseconds.
pub(crate) const PUNCTUAL_LATENESS: [(Peer, i64); 5] = [
    (Peer::Punctual, 1_000_000),
    (Peer::PunctualInTokio, 1_000_000),
    (Peer::PunctualTokio, 1_000_000),
    (Peer::Punctual100us, 100_000),
    (Peer::PunctualSmol100us, 100_000),
];

/// The peers of the lateness table, with the tick each is said to have.
pub(crate) fn lateness_peers() -> Vec<(Peer, &'static str)> {
    [
        (Peer::Punctual, "1 ms"),
        (Peer::PunctualInTokio, "1 ms"),
        (Peer::PunctualTokio, "1 ms"),
        (Peer::Punctual100us, "100 µs"),
        (Peer::PunctualSmol100us, "100 µs"),
        (Peer::Tokio, "1 ms"),
        (Peer::TokioAlt, "1 ms"),
        (Peer::AsyncIo, "none (epoll)"),
        (Peer::FuturesTimer, "none (park)"),
        (Peer::FuturesTime, "none (async-io)"),
        (Peer::Embassy, "1 µs"),
    ]
    .into_iter()
    .filter(|(p, _)| p.available())
    .collect()
}

#[derive(Default)]
pub(crate) struct Results {
    pub(crate) ready: BTreeMap<Peer, f64>,
    /// Each round's sample, in round order: the peers' rounds are interleaved, so round `k`
    /// of two peers saw the same moment of the machine (the same for `arm_cancel_runs`).
    pub(crate) ready_runs: BTreeMap<Peer, Vec<f64>>,
    pub(crate) arm_cancel: BTreeMap<Peer, f64>,
    pub(crate) arm_cancel_runs: BTreeMap<Peer, Vec<f64>>,
    pub(crate) arm_cancel_armed: BTreeMap<Peer, f64>,
    /// Peers that did not hold all [`ARMED`] deadlines: how many they held.
    pub(crate) armed_short: BTreeMap<Peer, usize>,
    /// Operations per second on 1 and on 2 threads.
    pub(crate) contention: BTreeMap<Peer, (f64, f64)>,
    /// Each sample's operations per second on 2 threads (one peer after another).
    pub(crate) contention_runs: BTreeMap<Peer, Vec<f64>>,
    pub(crate) fire: BTreeMap<Peer, Option<FireCost>>,
    /// Each fire run's process CPU, in run order (interleaved between the peers); only
    /// for peers whose every run finished.
    pub(crate) fire_runs: BTreeMap<Peer, Vec<f64>>,
    pub(crate) fire_budget_on: BTreeMap<Peer, Option<FireCost>>,
    pub(crate) lateness: BTreeMap<Peer, (LatenessSummary, usize)>,
    /// Each lateness run's median (ns), in run order: runs of the peers are interleaved,
    /// so run `k` of two peers saw the same moment of the machine.
    pub(crate) lateness_run_medians: BTreeMap<Peer, Vec<i64>>,
    pub(crate) memory: BTreeMap<Peer, Memory>,
    /// Heap bytes per armed timer with other numbers armed: `(peer, armed)`.
    pub(crate) memory_at: BTreeMap<(Peer, usize), f64>,
    /// A million timers (`benches/million.rs`): each run, per peer.
    pub(crate) million: BTreeMap<Peer, Vec<Million>>,
    /// The HTTP server (`benches/http/`): each run, per peer and number of inner deadlines.
    pub(crate) http: BTreeMap<(String, usize), Vec<Http>>,
}

#[derive(Clone, Copy, Debug)]
pub(crate) struct Memory {
    pub(crate) future: f64,
    pub(crate) heap: f64,
    /// Deadlines the peer still held, of `armed`.
    pub(crate) held: usize,
    pub(crate) armed: usize,
}

impl Memory {
    pub(crate) fn total(self) -> f64 {
        self.future + self.heap
    }

    /// Whether the peer held every deadline armed (else its bytes are not per deadline).
    pub(crate) fn held_all(self) -> bool {
        self.held == self.armed
    }
}

pub(crate) fn ns_per_op(d: Duration, iters: u64) -> f64 {
    d.as_nanos() as f64 / iters as f64
}

pub(crate) fn median_f64(mut xs: Vec<f64>) -> f64 {
    xs.sort_by(f64::total_cmp);
    xs[xs.len() / 2]
}

/// Median, least and greatest of `ours[k] / theirs[k]`, and how many runs.
pub(crate) fn paired(ours: &[f64], theirs: &[f64]) -> Option<((f64, f64, f64), usize)> {
    let ratios: Vec<f64> = ours
        .iter()
        .zip(theirs)
        .filter(|(_, t)| **t > 0.0)
        .map(|(o, t)| o / t)
        .collect();
    if ratios.is_empty() {
        return None;
    }
    let lo = ratios.iter().copied().fold(f64::INFINITY, f64::min);
    let hi = ratios.iter().copied().fold(0.0, f64::max);
    let runs = ratios.len();
    Some(((median_f64(ratios), lo, hi), runs))
}

pub(crate) fn progress(what: &str) {
    eprintln!("report: {what}");
}

pub(crate) fn measure(results: &mut Results) {
    // ---- ready: interleaved samples -------------------------------------------------
    progress("ready");
    let peers: Vec<Peer> = [Peer::Bare].into_iter().chain(Peer::timers()).collect();
    let iters = 200_000;
    let mut samples: BTreeMap<Peer, Vec<f64>> = BTreeMap::new();
    for round in 0..=SAMPLES {
        for &peer in &peers {
            let d = with_peer!(peer, T => common::ready::<T>(iters));
            if round > 0 {
                samples.entry(peer).or_default().push(ns_per_op(d, iters));
            }
        }
    }
    results.ready = samples
        .iter()
        .map(|(&p, s)| (p, median_f64(s.clone())))
        .collect();
    results.ready_runs = samples;

    // ---- arm + cancel ----------------------------------------------------------------
    progress("arm + cancel");
    let iters = 20_000;
    let mut samples: BTreeMap<Peer, Vec<f64>> = BTreeMap::new();
    for round in 0..=SAMPLES {
        for peer in Peer::timers().chain([Peer::ArmFloor]) {
            let d = with_peer!(peer, T => common::arm_cancel::<T>(iters));
            if round > 0 {
                samples.entry(peer).or_default().push(ns_per_op(d, iters));
            }
        }
    }
    results.arm_cancel = samples
        .iter()
        .map(|(&p, s)| (p, median_f64(s.clone())))
        .collect();
    results.arm_cancel_runs = samples;

    progress("arm + cancel with 10 000 armed");
    for peer in Peer::timers() {
        let (ns, held) = with_peer!(peer, T => {
            let armed = common::prearm::<T>(ARMED);
            let _ = common::arm_cancel::<T>(iters);
            let s: Vec<f64> = (0..SAMPLES)
                .map(|_| ns_per_op(common::arm_cancel::<T>(iters), iters))
                .collect();
            (median_f64(s), armed.held())
        });
        // A peer that let go of some of the deadlines was not measured with 10 000 armed.
        if held == ARMED {
            results.arm_cancel_armed.insert(peer, ns);
        } else {
            results.armed_short.insert(peer, held);
        }
    }

    // ---- contention ------------------------------------------------------------------
    progress("contention");
    for peer in Peer::timers() {
        let per_op = results.arm_cancel[&peer];
        let iters = ((CONTENTION_TARGET.as_nanos() as f64 / per_op) as u64).clamp(1_000, 2_000_000);
        let (mut one, mut two) = (Vec::new(), Vec::new());
        with_peer!(peer, T => {
            let _ = common::contention::<T>(2, iters / 4);
            for _ in 0..CONTENTION_SAMPLES {
                one.push(iters as f64 / common::contention::<T>(1, iters).as_secs_f64());
                two.push(2.0 * iters as f64 / common::contention::<T>(2, iters).as_secs_f64());
            }
        });
        results
            .contention
            .insert(peer, (median_f64(one), median_f64(two.clone())));
        results.contention_runs.insert(peer, two);
    }

    // ---- fire --------------------------------------------------------------------------
    progress("fire");
    let fire_peers = fire_peers();
    let mut runs: BTreeMap<Peer, Vec<Option<FireCost>>> = BTreeMap::new();
    for _ in 0..FIRE_RUNS {
        for &peer in &fire_peers {
            let cost = with_peer!(peer, T => common::fire::<T>(FIRE_N, FIRE_GIVE_UP));
            runs.entry(peer).or_default().push(cost);
        }
    }
    for (&peer, costs) in &runs {
        if costs.iter().all(Option::is_some) {
            let cpu = costs.iter().flatten().map(|c| c.cpu.as_secs_f64() * 1e3);
            results.fire_runs.insert(peer, cpu.collect());
        }
    }
    results.fire = runs
        .into_iter()
        .map(|(peer, costs)| {
            let done: Vec<FireCost> = costs.iter().flatten().copied().collect();
            let cost = (done.len() == costs.len()).then(|| FireCost {
                wall: common::median(done.iter().map(|c| c.wall).collect()),
                cpu: common::median(done.iter().map(|c| c.cpu).collect()),
            });
            (peer, cost)
        })
        .collect();
    progress("fire with tokio's budget on");
    for peer in [Peer::Punctual, Peer::Tokio] {
        let cost = with_peer!(peer, T => common::fire_budget_on::<T>(FIRE_N, FIRE_GIVE_UP));
        results.fire_budget_on.insert(peer, cost);
    }

    // ---- lateness ----------------------------------------------------------------------
    progress("lateness");
    let lateness_peers = lateness_peers();
    let mut samples: BTreeMap<Peer, Vec<i64>> = BTreeMap::new();
    for run in 0..LATE_RUNS {
        for &(peer, _) in &lateness_peers {
            let s = with_peer!(peer, T => common::lateness::<T>(LATE_N, 1 + run));
            results
                .lateness_run_medians
                .entry(peer)
                .or_default()
                .push(common::summarize(s.clone()).median);
            samples.entry(peer).or_default().extend(s);
        }
    }
    results.lateness = samples
        .into_iter()
        .map(|(p, s)| {
            let n = s.len();
            (p, (common::summarize(s), n))
        })
        .collect();
}

pub(crate) fn read_memory(path: &Path, results: &mut Results) {
    let Ok(text) = std::fs::read_to_string(path) else {
        eprintln!("report: no memory results at {}", path.display());
        return;
    };
    // Each peer's first row is the main measurement; later ones, other numbers armed.
    for line in text.lines().filter(|l| !l.starts_with('#')) {
        let cols: Vec<&str> = line.split('\t').collect();
        if cols.len() < 5 {
            continue;
        }
        let Some(peer) = Peer::named(cols[0]) else {
            continue;
        };
        let (Ok(future), Ok(heap), Ok(held), Ok(armed)) = (
            cols[1].parse(),
            cols[2].parse(),
            cols[3].parse(),
            cols[4].parse(),
        ) else {
            continue;
        };
        match results.memory.entry(peer) {
            std::collections::btree_map::Entry::Occupied(_) => {
                results.memory_at.insert((peer, armed), heap);
            }
            std::collections::btree_map::Entry::Vacant(main) => {
                main.insert(Memory {
                    future,
                    heap,
                    held,
                    armed,
                });
            }
        }
    }
}

/// One run of the million-timers scenario (`benches/million.rs`).
#[derive(Clone, Copy, Debug)]
pub(crate) struct Million {
    /// Wall time to arm all the deadlines, from 2 threads.
    pub(crate) arm: Duration,
    /// Wall time to cancel them all, from 2 threads.
    pub(crate) cancel: Duration,
    /// Growth of resident memory while they were armed, per deadline.
    pub(crate) bytes: f64,
    /// Process CPU of the fire part.
    pub(crate) fire_cpu: Duration,
    pub(crate) fire_wall: Duration,
}

/// Reads the million-timers runs: `peer, arm ns, cancel ns, bytes, fire CPU ns, fire wall ns`.
pub(crate) fn read_million(path: &Path, results: &mut Results) {
    let Ok(text) = std::fs::read_to_string(path) else {
        eprintln!("report: no million-timers results at {}", path.display());
        return;
    };
    for line in text.lines().filter(|l| !l.starts_with('#')) {
        let cols: Vec<&str> = line.split('\t').collect();
        let [name, arm, cancel, bytes, cpu, wall] = cols[..] else {
            continue;
        };
        let (Some(peer), Ok(arm), Ok(cancel), Ok(bytes), Ok(cpu), Ok(wall)) = (
            Peer::named(name),
            arm.parse(),
            cancel.parse(),
            bytes.parse(),
            cpu.parse(),
            wall.parse(),
        ) else {
            continue;
        };
        results.million.entry(peer).or_default().push(Million {
            arm: Duration::from_nanos(arm),
            cancel: Duration::from_nanos(cancel),
            bytes,
            fire_cpu: Duration::from_nanos(cpu),
            fire_wall: Duration::from_nanos(wall),
        });
    }
}

/// One run of the HTTP benchmark (`benches/http/`).
#[derive(Clone, Copy, Debug)]
pub(crate) struct Http {
    pub(crate) requests_per_s: f64,
    /// Latency quantiles seen by the load generator, in microseconds.
    pub(crate) p50: f64,
    pub(crate) p99: f64,
    pub(crate) p999: f64,
    /// CPU of the server's worker threads per request, in microseconds.
    pub(crate) cpu_per_request: f64,
}

/// Reads the HTTP runs: `peer, K, requests/s, p50 µs, p99 µs, p99.9 µs, CPU µs per request`.
pub(crate) fn read_http(path: &Path, results: &mut Results) {
    let Ok(text) = std::fs::read_to_string(path) else {
        eprintln!("report: no HTTP results at {}", path.display());
        return;
    };
    for line in text.lines().filter(|l| !l.starts_with('#')) {
        let cols: Vec<&str> = line.split('\t').collect();
        let [name, k, rps, p50, p99, p999, cpu] = cols[..] else {
            continue;
        };
        let num = |x: &str| x.parse::<f64>().ok();
        let (Ok(k), Some(rps), Some(p50), Some(p99), Some(p999), Some(cpu)) =
            (k.parse(), num(rps), num(p50), num(p99), num(p999), num(cpu))
        else {
            continue;
        };
        results
            .http
            .entry((name.to_string(), k))
            .or_default()
            .push(Http {
                requests_per_s: rps,
                p50,
                p99,
                p999,
                cpu_per_request: cpu,
            });
    }
}
