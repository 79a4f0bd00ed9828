//! What the report measured: the in-process scenarios' figures, and the runs that other
//! processes measured (memory, a million timers, the HTTP server), read from their TSVs.

use std::collections::BTreeMap;
use std::collections::btree_map::Entry;
use std::path::Path;
use std::time::Duration;

use crate::common::{FireCost, LatenessSummary, Peer, median};

#[derive(Default)]
pub(crate) struct Results {
    /// Each round's sample in ns per operation, in round order: round `k` of two peers
    /// saw the same moment of the machine (as for every `_runs` below).
    pub(crate) ready_runs: BTreeMap<Peer, Vec<f64>>,
    pub(crate) arm_cancel_runs: BTreeMap<Peer, Vec<f64>>,
    /// Arm + cancel with [`crate::measure::ARMED`] deadlines armed.
    pub(crate) arm_cancel_armed: BTreeMap<Peer, f64>,
    /// Peers that did not hold all the deadlines armed: how many they held.
    pub(crate) armed_short: BTreeMap<Peer, usize>,
    /// Operations per second on 1 and on 2 threads.
    pub(crate) contention: BTreeMap<Peer, (f64, f64)>,
    /// Each sample's operations per second on 2 threads.
    pub(crate) contention_runs: BTreeMap<Peer, Vec<f64>>,
    pub(crate) fire: BTreeMap<Peer, Option<FireCost>>,
    /// Each fire run's process CPU (ms), for peers whose every run finished.
    pub(crate) fire_runs: BTreeMap<Peer, Vec<f64>>,
    pub(crate) fire_budget_on: BTreeMap<Peer, Option<FireCost>>,
    /// The pooled sample's summary, and its size.
    pub(crate) lateness: BTreeMap<Peer, (LatenessSummary, usize)>,
    /// Each lateness run's median (ns).
    pub(crate) lateness_run_medians: BTreeMap<Peer, Vec<i64>>,
    pub(crate) memory: BTreeMap<Peer, Memory>,
    /// Heap bytes per armed timer with other numbers armed: `(peer, armed)`.
    pub(crate) memory_at: BTreeMap<(Peer, usize), f64>,
    /// A million timers (`benches/million.rs`): each run, per peer.
    pub(crate) million: BTreeMap<Peer, Vec<Million>>,
    /// The HTTP server (`benches/http/`): each run, per peer and number of inner deadlines.
    pub(crate) http: BTreeMap<(String, usize), Vec<Http>>,
}

/// A record of named figures, one TSV column each after the name, and the record of
/// each figure's median over runs.
macro_rules! record {
    ($(#[$doc:meta])* $name:ident { $($(#[$fdoc:meta])* $field:ident,)* }) => {
        $(#[$doc])*
        #[derive(Clone, Copy, Debug)]
        pub(crate) struct $name {
            $($(#[$fdoc])* pub(crate) $field: f64,)*
        }

        impl $name {
            fn from_cols(cols: &[f64]) -> Option<Self> {
                let &[$($field),*] = cols else { return None };
                Some(Self { $($field),* })
            }

            #[allow(dead_code, reason = "not every record's")]
            pub(crate) fn medians(runs: &[Self]) -> Self {
                Self { $($field: median(runs.iter().map(|r| r.$field).collect()),)* }
            }
        }
    };
}

record!(
    /// Bytes per armed deadline (`benches/memory.rs`).
    Memory {
        future,
        heap,
        /// Deadlines the peer still held, of `armed`.
        held,
        armed,
    }
);

impl Memory {
    pub(crate) fn total(self) -> f64 {
        self.future + self.heap
    }
}

record!(
    /// One run of the million-timers scenario (`benches/million.rs`), in ns and bytes.
    Million {
        /// Wall times to arm and to cancel all the deadlines, from 2 threads.
        arm,
        cancel,
        /// Growth of resident memory while they were armed, per deadline.
        bytes,
        /// Process CPU and wall time of the fire part.
        fire_cpu,
        fire_wall,
    }
);

record!(
    /// One run of the HTTP benchmark (`benches/http/`).
    Http {
        requests_per_s,
        /// Latency quantiles seen by the load generator, in microseconds.
        p50,
        p99,
        p999,
        /// CPU of the server's worker threads per request, in microseconds.
        cpu_per_request,
    }
);

/// The rows of a TSV written by a bench (comments skipped), as numbers after the first
/// column; none when the file cannot be read.
fn rows(path: &Path) -> Vec<(String, Vec<f64>)> {
    let Ok(text) = std::fs::read_to_string(path) else {
        eprintln!("report: no results at {}", path.display());
        return Vec::new();
    };
    let row = |line: &str| {
        let mut cols = line.split('\t');
        let name = cols.next()?.to_string();
        Some((name, cols.map(|c| c.parse().ok()).collect::<Option<_>>()?))
    };
    text.lines()
        .filter(|l| !l.starts_with('#'))
        .filter_map(row)
        .collect()
}

impl Results {
    /// The median of a peer's ready runs, in ns.
    pub(crate) fn ready(&self, peer: Peer) -> Option<f64> {
        self.ready_runs.get(&peer).map(|runs| median(runs.clone()))
    }

    /// The median of a peer's arm + cancel runs, in ns.
    pub(crate) fn arm_cancel(&self, peer: Peer) -> Option<f64> {
        self.arm_cancel_runs
            .get(&peer)
            .map(|runs| median(runs.clone()))
    }

    /// `peer, future overhead, heap per timer, held, armed`; each peer's first row is the
    /// main measurement, later ones other numbers armed.
    pub(crate) fn read_memory(&mut self, path: &Path) {
        for (name, cols) in rows(path) {
            let (Some(peer), Some(m)) = (Peer::named(&name), Memory::from_cols(&cols)) else {
                continue;
            };
            match self.memory.entry(peer) {
                Entry::Occupied(_) => drop(self.memory_at.insert((peer, m.armed as usize), m.heap)),
                Entry::Vacant(main) => drop(main.insert(m)),
            }
        }
    }

    /// `peer, arm ns, cancel ns, bytes, fire CPU ns, fire wall ns`.
    pub(crate) fn read_million(&mut self, path: &Path) {
        for (name, cols) in rows(path) {
            if let (Some(peer), Some(run)) = (Peer::named(&name), Million::from_cols(&cols)) {
                self.million.entry(peer).or_default().push(run);
            }
        }
    }

    /// `peer, K, requests/s, p50 µs, p99 µs, p99.9 µs, CPU µs per request`.
    pub(crate) fn read_http(&mut self, path: &Path) {
        for (name, cols) in rows(path) {
            if let (Some(&k), Some(run)) = (cols.first(), Http::from_cols(&cols[1..])) {
                self.http.entry((name, k as usize)).or_default().push(run);
            }
        }
    }
}

pub(crate) fn ns_per_op(d: Duration, iters: u64) -> f64 {
    d.as_nanos() as f64 / iters as f64
}

/// Median, least and greatest of `ours[k] / theirs[k]`, and how many runs.
pub(crate) fn paired(ours: &[f64], theirs: &[f64]) -> Option<((f64, f64, f64), usize)> {
    let ratios: Vec<f64> = ours
        .iter()
        .zip(theirs)
        .filter(|(_, t)| **t > 0.0)
        .map(|(o, t)| o / t)
        .collect();
    let lo = ratios.iter().copied().reduce(f64::min)?;
    let hi = ratios.iter().copied().reduce(f64::max)?;
    let runs = ratios.len();
    Some(((median(ratios), lo, hi), runs))
}
