//! The "A million timers" section: the medians of `benches/million.rs`'s runs.

use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::time::Duration;

use crate::common::{MILLION_PEERS, Peer, median};
use crate::format::*;
use crate::results::{Million, Results};

/// Each peer's median run (each figure its own median).
pub(crate) fn medians(r: &Results) -> BTreeMap<Peer, Million> {
    let runs = r.million.iter().filter(|(_, runs)| !runs.is_empty());
    runs.map(|(&peer, runs)| {
        let d = |f: fn(&Million) -> Duration| median(runs.iter().map(f).collect());
        let m = Million {
            arm: d(|m| m.arm),
            cancel: d(|m| m.cancel),
            bytes: median(runs.iter().map(|m| m.bytes).collect()),
            fire_cpu: d(|m| m.fire_cpu),
            fire_wall: d(|m| m.fire_wall),
        };
        (peer, m)
    })
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
    let columns: [fn(&Million) -> f64; 3] = [
        |x| x.arm.as_secs_f64() * 1e3,
        |x| x.cancel.as_secs_f64() * 1e3,
        |x| x.bytes,
    ];
    for peer in MILLION_PEERS {
        let Some(x) = m.get(&peer) else {
            continue;
        };
        let _ = write!(s, "| {} |", peer.name());
        for f in columns {
            let ratio = best_tokio(&m, f).map_or(String::new(), |b| fmt_ratio(f(x) / b));
            let _ = write!(s, " {:.0} | {ratio} |", f(x));
        }
        let fire = |d| {
            if peer == Peer::OwnFloor {
                "n/a".into()
            } else {
                fmt_ms(d)
            }
        };
        let _ = writeln!(s, " {} | {} |", fire(x.fire_cpu), fire(x.fire_wall));
    }
}
