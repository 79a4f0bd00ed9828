//! The appendix of `docs/benchmarks.md`: the performance targets the project set itself,
//! each judged on this run, with a link to the cause of each one missed.

use std::fmt::Write as _;

use crate::causes::cause;
use crate::common::{Peer, median};
use crate::format::*;
use crate::measure::FIRE_GIVE_UP;
use crate::results::{Million, Results};
use crate::{http, million};

/// The targets' rows: whether each was met, and the target and what was measured (two
/// cells).
type Targets = Vec<(bool, String)>;

/// punctual's rows of the lateness table, with their ticks in nanoseconds.
const PUNCTUAL_LATENESS: [(Peer, i64); 5] = [
    (Peer::Punctual, 1_000_000),
    (Peer::PunctualInTokio, 1_000_000),
    (Peer::PunctualTokio, 1_000_000),
    (Peer::Punctual100us, 100_000),
    (Peer::PunctualSmol100us, 100_000),
];

pub(crate) fn appendix(s: &mut String, r: &Results) {
    let mut t = Targets::new();
    per_deadline(&mut t, r);
    fire(&mut t, r);
    lateness(&mut t, r);
    against_tokio(&mut t, r);
    if t.is_empty() {
        return;
    }
    let _ = writeln!(
        s,
        "## Appendix: targets\n\n| target | measured | | cause |\n|---|---|---|---|"
    );
    for (met, cells) in &t {
        let (mark, cause) = match met {
            true => ("met", String::new()),
            false => ("missed", cause(cells, "") + "."),
        };
        let _ = writeln!(s, "| {cells} | {mark} | {cause} |");
    }
}

/// Ready, arm + cancel, contention and memory.
fn per_deadline(t: &mut Targets, r: &Results) {
    let (bare, ours, inside) = (
        r.ready(Peer::Bare),
        r.ready(Peer::Punctual),
        r.ready(Peer::PunctualInTokio),
    );
    if let (Some(bare), Some(ours)) = (bare, ours) {
        let (delta, ours_ns, bare_ns) = (fmt_delta_ns(ours - bare), fmt_ns(ours), fmt_ns(bare));
        let cells = format!(
            "ready: within 1 ns of the bare future | {delta} ns ({ours_ns} vs {bare_ns} ns)"
        );
        t.push((ours - bare <= 1.0, cells));
    }
    let ac = |p| r.arm_cancel(p);
    let (ours, tokio, floor) = (ac(Peer::Punctual), ac(Peer::Tokio), ac(Peer::ArmFloor));
    if let (Some(ours), Some(tokio)) = (ours, tokio) {
        let third = floor.map_or(String::new(), |floor| {
            let (third, floor) = (fmt_ns(tokio / 3.0), fmt_ns(floor));
            format!("; a third of tokio's is {third} ns, the floor (one clock reading and two compare-and-swaps, nothing else) {floor} ns")
        });
        let (o, k, ratio) = (fmt_ns(ours), fmt_ns(tokio), ours / tokio);
        let cells = format!(
            "arm + cancel, one thread: ≤ 1/3 of tokio's time | {o} vs {k} ns: {ratio:.2} of tokio's{third}"
        );
        t.push((ours * 3.0 <= tokio, cells));
    }
    if let (Some(ours), Some(floor)) = (ours, floor) {
        let (o, f, ratio) = (fmt_ns(ours), fmt_ns(floor), ours / floor);
        let cells = format!(
            "arm + cancel, one thread: ≤ 1.3× the floor (clock + 2 CAS) | {o} vs {f} ns: {ratio:.2}× the floor"
        );
        t.push((ours <= floor * 1.3, cells));
    }
    if let (Some(bare), Some(inside)) = (bare, inside) {
        let delta = fmt_delta_ns(inside - bare);
        let cells = format!("ready inside tokio: within 1 ns of the bare future | {delta} ns");
        t.push((inside - bare <= 1.0, cells));
    }
    if let (Some(global), Some(inside)) = (ours, ac(Peer::PunctualInTokio)) {
        let (i, g, ratio) = (fmt_ns(inside), fmt_ns(global), inside / global);
        let cells = format!(
            "arm + cancel inside tokio: ≤ 1.15× the global wheel's | {i} vs {g} ns: {ratio:.2}×"
        );
        t.push((inside <= global * 1.15, cells));
    }
    if let Some(&(one, two)) = r.contention.get(&Peer::Punctual) {
        let ratio = two / one;
        let cells = format!("contention: 2 threads ≥ 1.6× the operations of one | {ratio:.2}×");
        t.push((ratio >= 1.6, cells));
    }
    if let Some(m) = r.memory.get(&Peer::Punctual) {
        // A growable wheel's last segment is partly used at other counts.
        let at = &r.memory_at;
        let heaps = at
            .iter()
            .filter(|((p, _), _)| *p == Peer::Punctual)
            .map(|(_, &h)| h);
        let lo = heaps.clone().reduce(f64::min);
        let slack = lo.zip(heaps.reduce(f64::max)).map_or(String::new(), |(lo, hi)| {
            let (lo, hi) = (m.future + lo, m.future + hi);
            format!("; with the last segment partly used, {lo:.0} to {hi:.0} B at the other counts measured")
        });
        let (total, future, heap) = (m.total(), m.future, m.heap);
        let cells = format!(
            "memory: ≤ 56 bytes per armed deadline (x86-64) | {total:.0} B ({future:.0} future overhead + {heap:.0} wheel entry, every segment full{slack})"
        );
        t.push((total <= 56.0, cells));
    }
}

/// Fire against half of tokio's CPU, and with tokio's budget on.
fn fire(t: &mut Targets, r: &Results) {
    let cost = |p| r.fire.get(&p).copied().flatten();
    let drivers = [
        (Peer::Punctual, "the global wheel, its own timer thread"),
        (Peer::PunctualSmol, "driven in the executor, punctual-smol"),
    ];
    for (peer, driver) in drivers {
        let (Some(ours), Some(tokio)) = (cost(peer), cost(Peer::Tokio)) else {
            continue;
        };
        // The harness alone: when half of tokio's time is below it, no timer meets this.
        let floor = cost(Peer::NoTimer).map_or(String::new(), |floor| {
            let (half, floor) = (fmt_ms(tokio.cpu / 2), fmt_ms(floor.cpu));
            format!(
                "; half of tokio's is {half} ms, the harness alone with no timer takes {floor} ms"
            )
        });
        let ratio = ours.cpu.as_secs_f64() / tokio.cpu.as_secs_f64();
        let (o, k) = (fmt_ms(ours.cpu), fmt_ms(tokio.cpu));
        let cells = format!(
            "fire: process CPU ≤ half of tokio's ({driver}) | {o} vs {k} ms: {ratio:.2} of tokio's{floor}"
        );
        t.push((ours.cpu * 2 <= tokio.cpu, cells));
    }
    let budget = r.fire_budget_on.get(&Peer::Punctual);
    if let (Some(budget), Some(free)) = (budget, cost(Peer::Punctual)) {
        let (met, measured) = match budget {
            Some(b) => {
                let (on, off) = (fmt_ms(b.wall), fmt_ms(free.wall));
                let measured = format!("{on} ms wall with the budget on, {off} ms without");
                (
                    b.wall.as_secs_f64() <= 1.5 * free.wall.as_secs_f64(),
                    measured,
                )
            }
            None => (false, format!("not done after {FIRE_GIVE_UP:?}")),
        };
        let cells = format!("fire: no collapse with tokio's budget on | {measured}");
        t.push((met, cells));
    }
}

/// Early fires, p99 within 2 ticks, and a 100 µs tick against async-io.
fn lateness(t: &mut Targets, r: &Results) {
    let late = |p| r.lateness.get(&p).map(|(s, _)| *s);
    if late(Peer::Punctual).is_some() {
        let peers = PUNCTUAL_LATENESS.iter().filter_map(|&(p, _)| late(p));
        let early: usize = peers.map(|s| s.early).sum();
        let cells = format!("lateness: zero early fires | {early} early");
        t.push((early == 0, cells));
    }
    for (peer, tick) in PUNCTUAL_LATENESS {
        if let Some(s) = late(peer) {
            let (name, p99, ticks) = (peer.name(), fmt_us(s.p99), tick * 2 / 1000);
            let cells = format!(
                "lateness: p99 within 2 ticks ({name}) | p99 {p99} µs, 2 ticks = {ticks} µs"
            );
            t.push((s.p99 <= 2 * tick, cells));
        }
    }
    let drivers = [
        (
            Peer::PunctualSmol100us,
            "driven in the executor, as async-io's timers are",
        ),
        (Peer::Punctual100us, "its own timer thread"),
    ];
    for (peer, driver) in drivers {
        let (Some(ours), Some(aio)) = (late(peer), late(Peer::AsyncIo)) else {
            continue;
        };
        // In how many interleaved runs punctual's median was no worse: a pooled median only
        // says which peer met more of the machine's slow moments.
        let runs = &r.lateness_run_medians;
        let both = runs.get(&peer).zip(runs.get(&Peer::AsyncIo));
        let paired = both.map_or(String::new(), |(o, a)| {
            let no_worse = o.iter().zip(a).filter(|(o, a)| o <= a).count();
            format!("; no worse in {no_worse} of {} runs side by side", o.len())
        });
        let pair = fmt_us_pair(ours.median, aio.median);
        let cells = format!(
            "lateness: at a 100 µs tick, median no worse than async-io's ({driver}) | {pair}{paired}"
        );
        t.push((ours.median <= aio.median, cells));
    }
}

/// Against tokio's two timers: fire, contention, a million timers and the HTTP server.
fn against_tokio(t: &mut Targets, r: &Results) {
    let cost = |p| r.fire.get(&p).copied().flatten();
    let cpu = |p| cost(p).map(|c| c.cpu.as_secs_f64() * 1e3);
    if let Some(tokio) = cpu(Peer::Tokio) {
        let paths = [
            (Peer::Punctual, "the default global wheel"),
            (Peer::PunctualInTokio, "the default wheel inside tokio"),
        ];
        for (peer, path) in paths {
            if let Some(ours) = cpu(peer) {
                let ratio = ours / tokio;
                let cells = format!(
                    "fire: process CPU ≤ tokio's ({path}) | {ours:.0} vs {tokio:.0} ms: {ratio:.2}×"
                );
                t.push((ours <= tokio, cells));
            }
        }
        // The timer's own CPU: the row minus the harness with no timer at all.
        for peer in [Peer::PunctualSmol, Peer::PunctualTokio] {
            if let (Some(ours), Some(floor)) = (cpu(peer), cpu(Peer::NoTimer)) {
                let (name, own, tokio_own) = (peer.name(), ours - floor, tokio - floor);
                let ratio = own / tokio_own;
                let cells = format!(
                    "fire: the timer's own CPU ≤ 0.7× tokio's (driven in the executor, {name}) | {own:.0} vs {tokio_own:.0} ms above the {floor:.0} ms of no timer: {ratio:.2}×"
                );
                t.push((own <= 0.7 * tokio_own, cells));
            }
        }
    }
    let best = [Peer::Tokio, Peer::TokioAlt]
        .into_iter()
        .filter_map(|p| r.contention.get(&p).map(|&(_, two)| (p, two / 1e6)))
        .max_by(|a, b| a.1.total_cmp(&b.1));
    for peer in [Peer::Punctual, Peer::PunctualInTokio] {
        if let (Some((best_peer, best)), Some(&(_, two))) = (best, r.contention.get(&peer)) {
            let (name, best_name, two) = (peer.name(), best_peer.name(), two / 1e6);
            let ratio = two / best;
            let cells = format!(
                "contention: 2 threads ≥ 2× the best tokio timer's throughput ({name}) | {two:.2} vs {best:.2} M/s ({best_name}): {ratio:.2}×"
            );
            t.push((two >= 2.0 * best, cells));
        }
    }
    let m = million::medians(r);
    if let Some(ours) = m.get(&Peer::Punctual) {
        let mut row = |what: &str, f: fn(&Million) -> f64, unit: &str| {
            if let Some(best) = million::best_tokio(&m, f) {
                let (ours, ratio) = (f(ours), f(ours) / best);
                let cells = format!(
                    "a million timers: {what} ≤ half the best tokio timer's | {ours:.0} vs {best:.0} {unit}: {ratio:.2}×"
                );
                t.push((ours * 2.0 <= best, cells));
            }
        };
        row("arm", |x| x.arm / 1e6, "ms");
        row("cancel", |x| x.cancel / 1e6, "ms");
        row("bytes per armed deadline", |x| x.bytes, "B");
    }
    let h = http::medians(r);
    let get = |peer: &str, k: usize| h.get(&(peer.to_string(), k)).map(|(h, _)| *h);
    // Every K, and gRPC: requests/s no worse than tokio's, within the spread of its runs.
    for (prefix, k, row) in http::ROWS {
        let ours = get(&format!("{prefix}{}", http::PUNCTUAL), k);
        let runs = r.http.get(&(format!("{prefix}{}", http::TOKIO), k));
        if let (Some(ours), Some(runs)) = (ours, runs) {
            let rps: Vec<f64> = runs.iter().map(|h| h.requests_per_s).collect();
            let lo = rps.iter().copied().fold(f64::INFINITY, f64::min);
            let med = median(rps);
            let (ours, ratio) = (ours.requests_per_s, ours.requests_per_s / med);
            let cells = format!(
                "{row}: requests/s no worse than tower timeout + tokio's (within its runs' spread) | {ours:.0} vs a median of {med:.0} ({ratio:.2}×), its lowest run {lo:.0}"
            );
            t.push((ours >= lo, cells));
        }
    }
    if let (Some(ours), Some(tokio)) = (get(http::PUNCTUAL, 16), get(http::TOKIO, 16)) {
        let (o, k) = (ours.requests_per_s, tokio.requests_per_s);
        let ratio = o / k;
        let cells = format!(
            "HTTP, K = 16: requests/s ≥ 1.1× tower timeout + tokio's | {o:.0} vs {k:.0}: {ratio:.2}×"
        );
        t.push((o >= 1.1 * k, cells));
        let (o, k) = (ours.p99, tokio.p99);
        let cells = format!(
            "HTTP, K = 16: p99 no worse than tower timeout + tokio's | {o:.0} vs {k:.0} µs"
        );
        t.push((o <= k, cells));
    }
}
