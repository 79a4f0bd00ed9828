//! The "HTTP server" section: the medians of `benches/http/`'s runs.

use std::collections::BTreeMap;
use std::fmt::Write as _;

use crate::common::HTTP_PEERS;
use crate::results::{Http, Results};

/// The peers' names as `benches/http/` writes them, in table order.
pub(crate) const TOKIO: &str = HTTP_PEERS[0].1;
pub(crate) const TOKIO_ALT: &str = HTTP_PEERS[1].1;
pub(crate) const PUNCTUAL: &str = HTTP_PEERS[2].1;
pub(crate) use crate::common::HTTP_ROWS as ROWS;

/// Each `(peer, K)`'s medians over its runs, and the number of runs.
pub(crate) fn medians(r: &Results) -> BTreeMap<(String, usize), (Http, usize)> {
    let runs = r.http.iter().filter(|(_, runs)| !runs.is_empty());
    runs.map(|(key, runs)| (key.clone(), (Http::medians(runs), runs.len())))
        .collect()
}

pub(crate) fn section(s: &mut String, r: &Results) {
    let m = medians(r);
    if m.is_empty() {
        return;
    }
    let runs = m.values().map(|(_, n)| *n).min().unwrap_or(0);
    let _ = writeln!(
        s,
        "\n## HTTP server\n\nMedians of {runs} runs each.\n\n\
         | | K | requests/s | × tokio | p50 (µs) | p99 (µs) | p99.9 (µs) | server CPU per request (µs) | × tokio |\n\
         |---|---:|---:|---:|---:|---:|---:|---:|---:|"
    );
    for (prefix, k, _) in ROWS {
        let base = m.get(&(format!("{prefix}{TOKIO}"), k)).map(|(h, _)| *h);
        for peer in [TOKIO, TOKIO_ALT, PUNCTUAL] {
            let peer = format!("{prefix}{peer}");
            let Some((h, _)) = m.get(&(peer.clone(), k)) else {
                continue;
            };
            let ratio = |f: fn(&Http) -> f64| {
                base.map_or(String::new(), |b| format!("{:.2}×", f(h) / f(&b)))
            };
            let (rps, cpu) = (ratio(|h| h.requests_per_s), ratio(|h| h.cpu_per_request));
            let (p50, p99, p999) = (h.p50, h.p99, h.p999);
            let line = format!(
                "{:.0} | {rps} | {p50:.0} | {p99:.0} | {p999:.0}",
                h.requests_per_s
            );
            let _ = writeln!(
                s,
                "| {peer} | {k} | {line} | {:.1} | {cpu} |",
                h.cpu_per_request
            );
        }
    }
}
