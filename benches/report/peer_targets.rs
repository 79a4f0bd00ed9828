//! The targets against the strongest peers, tokio's two timers: fire on the default path
//! and driven in the executor, contention, a million timers, and the HTTP server. Each row
//! is `(target, measured, met)`, as in [`crate::targets`].

use crate::common::Peer;
use crate::http;
use crate::measure::*;
use crate::million;

type Row = (String, String, bool);

pub(crate) fn rows(r: &Results) -> Vec<Row> {
    let mut rows = Vec::new();
    fire(r, &mut rows);
    contention(r, &mut rows);
    a_million(r, &mut rows);
    http_server(r, &mut rows);
    rows
}

fn fire_cpu(r: &Results, peer: Peer) -> Option<f64> {
    match r.fire.get(&peer) {
        Some(Some(c)) => Some(c.cpu.as_secs_f64() * 1e3),
        _ => None,
    }
}

fn fire(r: &Results, rows: &mut Vec<Row>) {
    let Some(tokio) = fire_cpu(r, Peer::Tokio) else {
        return;
    };
    for (peer, path) in [
        (Peer::Punctual, "the default global wheel"),
        (Peer::PunctualInTokio, "the default wheel inside tokio"),
    ] {
        if let Some(ours) = fire_cpu(r, peer) {
            rows.push((
                format!("fire: process CPU ≤ tokio's ({path})"),
                format!("{ours:.0} vs {tokio:.0} ms: {:.2}×", ours / tokio),
                ours <= tokio,
            ));
        }
    }
    // The timer's own CPU: the row minus the harness with no timer at all.
    let Some(floor) = fire_cpu(r, Peer::NoTimer) else {
        return;
    };
    let tokio_own = tokio - floor;
    for peer in [Peer::PunctualSmol, Peer::PunctualTokio] {
        if let Some(ours) = fire_cpu(r, peer) {
            let own = ours - floor;
            rows.push((
                format!(
                    "fire: the timer's own CPU ≤ 0.7× tokio's (driven in the executor, {})",
                    peer.name()
                ),
                format!(
                    "{own:.0} vs {tokio_own:.0} ms above the {floor:.0} ms of no timer: {:.2}×",
                    own / tokio_own
                ),
                own <= 0.7 * tokio_own,
            ));
        }
    }
}

fn contention(r: &Results, rows: &mut Vec<Row>) {
    let best = [Peer::Tokio, Peer::TokioAlt]
        .iter()
        .filter_map(|p| r.contention.get(p).map(|&(_, two)| (*p, two)))
        .max_by(|a, b| a.1.total_cmp(&b.1));
    let Some((best_peer, best)) = best else {
        return;
    };
    for peer in [Peer::Punctual, Peer::PunctualInTokio] {
        if let Some(&(_, two)) = r.contention.get(&peer) {
            rows.push((
                format!(
                    "contention: 2 threads ≥ 2× the best tokio timer's throughput ({})",
                    peer.name()
                ),
                format!(
                    "{:.2} vs {:.2} M/s ({}): {:.2}×",
                    two / 1e6,
                    best / 1e6,
                    best_peer.name(),
                    two / best
                ),
                two >= 2.0 * best,
            ));
        }
    }
}

fn a_million(r: &Results, rows: &mut Vec<Row>) {
    let m = million::medians(r);
    let Some(ours) = m.get(&Peer::Punctual) else {
        return;
    };
    let ms = |d: std::time::Duration| d.as_secs_f64() * 1e3;
    let cells: [(&str, f64, Option<f64>, &str); 3] = [
        (
            "arm",
            ms(ours.arm),
            million::best_tokio(&m, |x| ms(x.arm)),
            "ms",
        ),
        (
            "cancel",
            ms(ours.cancel),
            million::best_tokio(&m, |x| ms(x.cancel)),
            "ms",
        ),
        (
            "bytes per armed deadline",
            ours.bytes,
            million::best_tokio(&m, |x| x.bytes),
            "B",
        ),
    ];
    for (what, ours, best, unit) in cells {
        if let Some(best) = best {
            rows.push((
                format!("a million timers: {what} ≤ half the best tokio timer's"),
                format!("{ours:.0} vs {best:.0} {unit}: {:.2}×", ours / best),
                ours * 2.0 <= best,
            ));
        }
    }
}

fn http_server(r: &Results, rows: &mut Vec<Row>) {
    let m = http::medians(r);
    let get = |peer: &str, k: usize| m.get(&(peer.to_string(), k)).map(|(h, _)| *h);
    // Every K, and gRPC: requests/s no worse than tokio's, within the spread of its runs.
    for (prefix, k, row) in http::ROWS {
        let ours = get(&format!("{prefix}{}", http::PUNCTUAL), k);
        let runs = r.http.get(&(format!("{prefix}{}", http::TOKIO), k));
        if let (Some(ours), Some(runs)) = (ours, runs) {
            let rps: Vec<f64> = runs.iter().map(|h| h.requests_per_s).collect();
            let med = median_f64(rps.clone());
            let lo = rps.iter().copied().fold(f64::INFINITY, f64::min);
            rows.push((
                format!("{row}: requests/s no worse than tower timeout + tokio's (within its runs' spread)"),
                format!(
                    "{:.0} vs a median of {med:.0} ({:.2}×), its lowest run {lo:.0}",
                    ours.requests_per_s,
                    ours.requests_per_s / med
                ),
                ours.requests_per_s >= lo,
            ));
        }
    }
    if let (Some(ours), Some(tokio)) = (get(http::PUNCTUAL, 16), get(http::TOKIO, 16)) {
        rows.push((
            "HTTP, K = 16: requests/s ≥ 1.1× tower timeout + tokio's".into(),
            format!(
                "{:.0} vs {:.0}: {:.2}×",
                ours.requests_per_s,
                tokio.requests_per_s,
                ours.requests_per_s / tokio.requests_per_s
            ),
            ours.requests_per_s >= 1.1 * tokio.requests_per_s,
        ));
        rows.push((
            "HTTP, K = 16: p99 no worse than tower timeout + tokio's".into(),
            format!("{:.0} vs {:.0} µs", ours.p99, tokio.p99),
            ours.p99 <= tokio.p99,
        ));
    }
}
