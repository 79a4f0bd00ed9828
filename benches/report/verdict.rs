//! The "Verdict" that opens `docs/benchmarks.md`: per use case, punctual beside each peer
//! a user of it would pick, as punctual's figure over the peer's, run by run where the
//! runs were interleaved (median, least and greatest). "ahead" and "behind" need every run
//! to agree, else "level"; each row behind links to its cause.

use std::collections::BTreeMap;
use std::fmt::Write as _;

use crate::causes::cause;
use crate::common::{Peer, median};
use crate::http;
use crate::results::{Http, Results, paired};

/// Firmware sizes on `thumbv7m`, flash and static RAM, each `(punctual, embassy-time)`.
pub(crate) type Firmware = [(f64, f64); 2];

/// Reads the `thumbv7m` rows of the firmware table of the existing report
/// (`ci/firmware_sizes.sh` writes it before the report runs).
pub(crate) fn firmware(old_report: &str) -> Option<Firmware> {
    let row = |firmware: &str| -> Option<(f64, f64)> {
        let line = old_report
            .lines()
            .find(|l| l.starts_with("| `thumbv7m-none-eabi` |") && l.contains(firmware))?;
        let cells: Vec<f64> = line
            .split('|')
            .filter_map(|c| c.trim().replace(' ', "").parse().ok())
            .collect();
        Some((*cells.first()?, *cells.get(1)?))
    };
    let (peer, ours) = (row("`with_timeout`")?, row("punctual,")?);
    Some([(ours.0, peer.0), (ours.1, peer.1)])
}

/// What a row measures: its words and its unit. Lower is better (times, CPU, bytes) but
/// for rates (units per second).
type Measure<'a> = (&'a str, &'static str);

/// Each peer's runs of one figure.
type Runs = BTreeMap<Peer, Vec<f64>>;

/// A figure of an HTTP run.
type Field = fn(&Http) -> f64;

/// The rows of one use case, and the causes of those where punctual is behind.
#[derive(Default)]
struct Case {
    rows: String,
    behind: String,
}

impl Case {
    /// A row of `m` for punctual beside `peer`: both medians, and the ratio's median,
    /// least and greatest over `runs` runs.
    fn row(
        &mut self,
        m: Measure,
        peer: &str,
        figures: (f64, f64),
        ratio: (f64, f64, f64),
        runs: usize,
    ) {
        let ((what, unit), (ours, theirs), (med, lo, hi)) = (m, figures, ratio);
        let lower = !unit.ends_with("/s");
        let verdict = match (lower, hi < 1.0, lo > 1.0) {
            (true, true, _) | (false, _, true) => "ahead",
            (true, _, true) | (false, true, _) => "behind",
            _ => "level",
        };
        let spread = match runs {
            1 => format!("{med:.2}× (one run)"),
            _ => format!("{med:.2}× ({lo:.2} to {hi:.2}, {runs} runs)"),
        };
        let (ours, theirs) = (figure(ours), figure(theirs));
        let row = format!("| {what} | {peer} | {ours} {unit} | {theirs} {unit} | {spread} |");
        let _ = writeln!(self.rows, "{row} {verdict} |");
        if verdict == "behind" {
            let cause = cause(what, peer);
            let _ = writeln!(self.behind, "- **{what}**, against {peer}: {cause}.");
        }
    }

    /// A row from runs: `ours[k]` beside `theirs[k]`.
    fn runs(&mut self, m: Measure, peer: &str, ours: Option<&Vec<f64>>, theirs: Option<&Vec<f64>>) {
        let Some((ours, theirs)) = ours.zip(theirs) else {
            return;
        };
        if let Some((ratio, runs)) = paired(ours, theirs) {
            let figures = (median(ours.clone()), median(theirs.clone()));
            self.row(m, peer, figures, ratio, runs);
        }
    }

    /// A row from runs of `ours` and of `peer` in `map`.
    fn pair(&mut self, m: Measure, map: &Runs, ours: Peer, peer: Peer) {
        self.runs(m, peer.name(), map.get(&ours), map.get(&peer));
    }

    /// A row from one measurement of each.
    fn single(&mut self, m: Measure, peer: &str, ours: f64, theirs: f64) {
        let r = ours / theirs;
        self.row(m, peer, (ours, theirs), (r, r, r), 1);
    }

    fn write(&self, s: &mut String, title: &str) {
        if self.rows.is_empty() {
            return;
        }
        let head = "| measure | peer | punctual | peer | punctual ÷ peer (runs) | |";
        let _ = writeln!(s, "### {title}\n\n{head}\n|---|---|---:|---:|---:|---|");
        let _ = write!(s, "{}", self.rows);
        match self.behind.as_str() {
            "" => s.push_str("\npunctual is behind no peer here.\n\n"),
            behind => s.push_str(&format!(
                "\nWhere punctual is behind, and why:\n\n{behind}\n"
            )),
        }
    }
}

fn figure(x: f64) -> String {
    let digits = match x.abs() {
        a if a >= 100.0 => 0,
        a if a >= 10.0 => 1,
        _ => 2,
    };
    format!("{x:.digits$}")
}

/// Each peer's runs of `r`'s field, mapped by `f`.
fn each<T>(runs: &BTreeMap<Peer, Vec<T>>, f: impl Fn(&T) -> f64) -> BTreeMap<Peer, Vec<f64>> {
    runs.iter()
        .map(|(&p, runs)| (p, runs.iter().map(&f).collect()))
        .collect()
}

pub(crate) fn section(s: &mut String, r: &Results, firmware: Option<Firmware>) {
    s.push_str("## Verdict\n\nHow to read it: [below](#how-each-table-is-measured).\n\n");
    server_on_tokio(s, r);
    smol_or_block_on(s, r);
    firmware_case(s, r, firmware);
}

/// The rows every use case has: ready, arm + cancel on one and on 2 threads, and the
/// fire's CPU, of `ours` beside `peer`.
fn per_deadline(c: &mut Case, r: &Results, ours: Peer, peer: Peer) {
    let contention = each(&r.contention_runs, |x| x / 1e6);
    let rows: [(Measure, &Runs); 4] = [
        (("ready", "ns"), &r.ready_runs),
        (("arm + cancel", "ns"), &r.arm_cancel_runs),
        (("arm + cancel on 2 threads", "M op/s"), &contention),
        (("fire 100 000: process CPU", "ms"), &r.fire_runs),
    ];
    for (m, runs) in rows {
        c.pair(m, runs, ours, peer);
    }
}

/// The bytes per armed deadline of `ours` beside `peer` (one measurement each).
fn memory(c: &mut Case, r: &Results, ours: Peer, peer: Peer) {
    if let (Some(o), Some(t)) = (r.memory.get(&ours), r.memory.get(&peer)) {
        let m = ("bytes per armed deadline", "B");
        c.single(m, peer.name(), o.total(), t.total());
    }
}

fn server_on_tokio(s: &mut String, r: &Results) {
    let mut c = Case::default();
    let ours = Peer::PunctualInTokio;
    let late = each(&r.lateness_run_medians, |&ns| ns as f64 / 1e3);
    let arm = each(&r.million, |m| m.arm / 1e6);
    let cancel = each(&r.million, |m| m.cancel / 1e6);
    let bytes = each(&r.million, |m| m.bytes);
    let rows: [(Measure, &Runs); 4] = [
        (("lateness: median", "µs"), &late),
        (("a million timers: arm", "ms"), &arm),
        (("a million timers: cancel", "ms"), &cancel),
        (("a million timers: resident bytes each", "B"), &bytes),
    ];
    for peer in [Peer::Tokio, Peer::TokioAlt] {
        per_deadline(&mut c, r, ours, peer);
        for (m, runs) in rows {
            c.pair(m, runs, ours, peer);
        }
        memory(&mut c, r, ours, peer);
    }
    let fields: [(Measure, Field); 2] = [
        (("requests/s", "/s"), |h| h.requests_per_s),
        (("server CPU per request", "µs"), |h| h.cpu_per_request),
    ];
    for (prefix, k, row) in http::ROWS {
        for peer in [http::TOKIO, http::TOKIO_ALT] {
            for ((what, unit), f) in fields {
                let runs = |peer| {
                    let runs = r.http.get(&(format!("{prefix}{peer}"), k))?;
                    Some(runs.iter().map(f).collect::<Vec<f64>>())
                };
                let (ours, theirs) = (runs(http::PUNCTUAL), runs(peer));
                let what = format!("{row}: {what}");
                c.runs((&what, unit), peer, ours.as_ref(), theirs.as_ref());
            }
        }
    }
    c.write(s, "A server on tokio");
}

fn smol_or_block_on(s: &mut String, r: &Results) {
    let mut c = Case::default();
    let ours = Peer::Punctual;
    let late = each(&r.lateness_run_medians, |&ns| ns as f64 / 1e3);
    let rows: [(Measure, &Runs, Peer); 4] = [
        (
            ("fire 100 000: process CPU, punctual-smol", "ms"),
            &r.fire_runs,
            Peer::PunctualSmol,
        ),
        (("lateness: median, 1 ms tick", "µs"), &late, ours),
        (
            ("lateness: median, a 100 µs wheel on its own thread", "µs"),
            &late,
            Peer::Punctual100us,
        ),
        (
            ("lateness: median, punctual-smol at 100 µs", "µs"),
            &late,
            Peer::PunctualSmol100us,
        ),
    ];
    for peer in [Peer::AsyncIo, Peer::FuturesTimer, Peer::FuturesTime] {
        per_deadline(&mut c, r, ours, peer);
        for (m, runs, ours) in rows {
            c.pair(m, runs, ours, peer);
        }
        memory(&mut c, r, ours, peer);
    }
    c.write(s, "A smol or block_on app");
}

fn firmware_case(s: &mut String, r: &Results, firmware: Option<Firmware>) {
    let mut c = Case::default();
    if let Some([flash, ram]) = firmware {
        let embassy = Peer::Embassy.name();
        let (flash_row, ram_row) = ("firmware flash, thumbv7m", "firmware static RAM, thumbv7m");
        c.single((flash_row, "B"), embassy, flash.0, flash.1);
        c.single((ram_row, "B"), embassy, ram.0, ram.1);
    }
    let (ours, peer) = (Peer::Punctual, Peer::Embassy);
    let m = ("arm + cancel, on the host", "ns");
    c.pair(m, &r.arm_cancel_runs, ours, peer);
    let m = ("fire 100 000: process CPU, on the host", "ms");
    c.pair(m, &r.fire_runs, ours, peer);
    c.write(s, "Firmware");
}
