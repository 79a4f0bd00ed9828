//! The "A million timers" section: the medians of `benches/million.rs`'s runs.

use std::collections::BTreeMap;
use std::fmt::Write as _;

use crate::common::{MILLION_PEERS, Peer};
use crate::format::*;
use crate::results::{Million, Results};

/// Each peer's median run (each figure its own median).
pub(crate) fn medians(r: &Results) -> BTreeMap<Peer, Million> {
    let runs = r.million.iter().filter(|(_, runs)| !runs.is_empty());
    runs.map(|(&peer, runs)| (peer, Million::medians(runs)))
        .collect()
}

/// The best (least) of tokio's two timers by `f`.
pub(crate) fn best_tokio(m: &BTreeMap<Peer, Million>, f: impl Fn(&Million) -> f64) -> Option<f64> {
    [Peer::Tokio, Peer::TokioAlt]
        .iter()
        .filter_map(|p| m.get(p).map(&f))
        .reduce(f64::min)
}

pub(crate) fn section(s: &mut String, r: &Results) {
    let m = medians(r);
    if m.is_empty() {
        return;
    }
    let runs = r.million.values().map(Vec::len).max().unwrap_or(0);
    let _ = writeln!(
        s,
        "\n## A million timers\n\nMedians of {runs} runs.\n\n\
         | | arm (ms) | × best tokio | cancel (ms) | × best tokio | bytes per armed deadline | × best tokio | fire CPU (ms) | fire wall (ms) |\n\
         |---|---:|---:|---:|---:|---:|---:|---:|---:|"
    );
    let columns: [fn(&Million) -> f64; 3] = [|x| x.arm / 1e6, |x| x.cancel / 1e6, |x| x.bytes];
    for peer in MILLION_PEERS {
        let Some(x) = m.get(&peer) else {
            continue;
        };
        let _ = write!(s, "| {} |", peer.name());
        for f in columns {
            let ratio = best_tokio(&m, f).map_or(String::new(), |b| fmt_ratio(f(x) / b));
            let _ = write!(s, " {:.0} | {ratio} |", f(x));
        }
        let fire = |ns: f64| match peer {
            Peer::OwnFloor => "n/a".into(),
            _ => format!("{:.0}", ns / 1e6),
        };
        let _ = writeln!(s, " {} | {} |", fire(x.fire_cpu), fire(x.fire_wall));
    }
}
