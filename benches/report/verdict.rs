//! The "Verdict" section that opens `docs/benchmarks.md`: for each use case (a server on
//! tokio, a smol or `block_on` app, firmware), punctual beside each peer a user of that
//! case would pick, as a ratio with its spread over runs, and every row where punctual is
//! behind with its cause ([`crate::causes::behind`]).
//!
//! A ratio is punctual's figure over the peer's, taken run by run where the runs were
//! interleaved (run `k` of both saw the same moment of the machine), and reported as the
//! median with the least and greatest of the runs. "ahead" and "behind" need every run to
//! agree; otherwise the row is "level".

use std::fmt::Write as _;

use crate::causes;
use crate::common::Peer;
use crate::http;
use crate::measure::{Results, median_f64, paired};

/// Firmware sizes on `thumbv7m`, read from the firmware section of the existing report
/// (`ci/firmware_sizes.sh` writes it before the report runs).
#[derive(Clone, Copy, Debug)]
pub(crate) struct Firmware {
    pub(crate) flash: (f64, f64),
    pub(crate) ram: (f64, f64),
}

/// Reads the `thumbv7m` rows of the firmware table: `(with_timeout, punctual)`.
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
    Some(Firmware {
        flash: (ours.0, peer.0),
        ram: (ours.1, peer.1),
    })
}

/// Which way a figure is better.
#[derive(Clone, Copy, PartialEq)]
enum Better {
    Lower,
    Higher,
}

/// One row: what is measured, the peer, both figures (medians), and the ratio's spread.
struct Row {
    what: &'static str,
    peer: &'static str,
    unit: &'static str,
    ours: f64,
    theirs: f64,
    /// Median, least and greatest of the run-by-run ratios.
    ratio: (f64, f64, f64),
    /// How many runs the ratio is over.
    runs: usize,
    better: Better,
}

impl Row {
    fn verdict(&self) -> &'static str {
        let (_, lo, hi) = self.ratio;
        match self.better {
            Better::Lower if hi < 1.0 => "ahead",
            Better::Lower if lo > 1.0 => "behind",
            Better::Higher if lo > 1.0 => "ahead",
            Better::Higher if hi < 1.0 => "behind",
            _ => "level",
        }
    }
}

fn median(xs: &[f64]) -> f64 {
    median_f64(xs.to_vec())
}

/// The rows of one use case, built from runs.
struct Case {
    rows: Vec<Row>,
}

impl Case {
    fn new() -> Self {
        Self { rows: Vec::new() }
    }

    fn runs(
        &mut self,
        what: &'static str,
        unit: &'static str,
        better: Better,
        (peer, ours, theirs): (&'static str, Option<&Vec<f64>>, Option<&Vec<f64>>),
    ) {
        let (Some(ours), Some(theirs)) = (ours, theirs) else {
            return;
        };
        if let Some((ratio, runs)) = paired(ours, theirs) {
            self.rows.push(Row {
                what,
                peer,
                unit,
                ours: median(ours),
                theirs: median(theirs),
                ratio,
                runs,
                better,
            });
        }
    }

    fn single(
        &mut self,
        what: &'static str,
        unit: &'static str,
        better: Better,
        peer: &'static str,
        ours: f64,
        theirs: f64,
    ) {
        let ratio = ours / theirs;
        self.rows.push(Row {
            what,
            peer,
            unit,
            ours,
            theirs,
            ratio: (ratio, ratio, ratio),
            runs: 1,
            better,
        });
    }

    fn write(&self, s: &mut String, title: &str, intro: &str, outro: &str) {
        if self.rows.is_empty() {
            return;
        }
        let _ = writeln!(s, "### {title}\n\n{intro}\n");
        let _ = writeln!(
            s,
            "| measure | peer | punctual | peer | punctual ÷ peer (runs) | |\n\
             |---|---|---:|---:|---:|---|"
        );
        for row in &self.rows {
            let (med, lo, hi) = row.ratio;
            let spread = if row.runs == 1 {
                format!("{med:.2}× (one run)")
            } else {
                format!("{med:.2}× ({lo:.2} to {hi:.2}, {} runs)", row.runs)
            };
            let _ = writeln!(
                s,
                "| {} | {} | {} {} | {} {} | {spread} | {} |",
                row.what,
                row.peer,
                figure(row.ours),
                row.unit,
                figure(row.theirs),
                row.unit,
                row.verdict()
            );
        }
        if !outro.is_empty() {
            let _ = writeln!(s, "\n{outro}");
        }
        let behind: Vec<&Row> = self
            .rows
            .iter()
            .filter(|r| r.verdict() == "behind")
            .collect();
        if behind.is_empty() {
            let _ = writeln!(s, "\npunctual is behind no peer here.\n");
            return;
        }
        let _ = writeln!(s, "\nWhere punctual is behind, and why:\n");
        let mut seen: Vec<&'static str> = Vec::new();
        for row in behind {
            let cause = causes::behind(row.what, row.peer);
            if seen.contains(&cause) {
                let _ = writeln!(s, "- **{}**, against {}: as above.", row.what, row.peer);
                continue;
            }
            seen.push(cause);
            let _ = writeln!(s, "- **{}**, against {}: {cause}", row.what, row.peer);
        }
        let _ = writeln!(s);
    }
}

fn figure(x: f64) -> String {
    if x.abs() >= 100.0 {
        format!("{x:.0}")
    } else if x.abs() >= 10.0 {
        format!("{x:.1}")
    } else {
        format!("{x:.2}")
    }
}

/// `(name, punctual's runs, the peer's runs)` for the per-operation benches.
fn pair(
    map: &std::collections::BTreeMap<Peer, Vec<f64>>,
    ours: Peer,
    peer: Peer,
) -> (&'static str, Option<&Vec<f64>>, Option<&Vec<f64>>) {
    (peer.name(), map.get(&ours), map.get(&peer))
}

/// Contention samples in millions of operations per second.
fn contention_m(r: &Results) -> std::collections::BTreeMap<Peer, Vec<f64>> {
    r.contention_runs
        .iter()
        .map(|(&p, runs)| (p, runs.iter().map(|x| x / 1e6).collect()))
        .collect()
}

/// Lateness run medians in microseconds.
fn lateness_us(r: &Results) -> std::collections::BTreeMap<Peer, Vec<f64>> {
    r.lateness_run_medians
        .iter()
        .map(|(&p, runs)| (p, runs.iter().map(|&ns| ns as f64 / 1e3).collect()))
        .collect()
}

fn million_runs(
    r: &Results,
    f: fn(&crate::measure::Million) -> f64,
) -> std::collections::BTreeMap<Peer, Vec<f64>> {
    r.million
        .iter()
        .map(|(&p, runs)| (p, runs.iter().map(f).collect()))
        .collect()
}

fn http_runs(
    r: &Results,
    prefix: &str,
    k: usize,
    f: fn(&crate::measure::Http) -> f64,
) -> std::collections::BTreeMap<&'static str, Vec<f64>> {
    [http::TOKIO, http::TOKIO_ALT, http::PUNCTUAL]
        .into_iter()
        .filter_map(|peer| {
            let runs = r.http.get(&(format!("{prefix}{peer}"), k))?;
            Some((peer, runs.iter().map(f).collect()))
        })
        .collect()
}

pub(crate) fn section(s: &mut String, r: &Results, firmware: Option<Firmware>) {
    let _ = writeln!(s, "## Verdict\n");
    let _ = writeln!(
        s,
        "For each use case, punctual beside the peers a user of it would pick, measured in \
         the same run. *punctual ÷ peer*: punctual's figure over the peer's, run by run \
         where the runs were interleaved, as the median and the range over runs. *ahead* \
         or *behind* when every run agrees, *level* otherwise. Lower is better for times, \
         CPU, lateness and bytes; higher for operations and requests per second. The \
         tables after the verdict give every figure; the targets the project set itself \
         are in the appendix.\n"
    );
    server_on_tokio(s, r);
    smol_or_block_on(s, r);
    firmware_case(s, r, firmware);
}

/// The rows every use case has: ready, arm + cancel on one and on 2 threads, and the
/// fire's CPU, of `ours` beside `peer`.
fn per_deadline(c: &mut Case, r: &Results, ours: Peer, peer: Peer) {
    let lower = Better::Lower;
    c.runs("ready", "ns", lower, pair(&r.ready_runs, ours, peer));
    c.runs(
        "arm + cancel",
        "ns",
        lower,
        pair(&r.arm_cancel_runs, ours, peer),
    );
    let contention = contention_m(r);
    let two = pair(&contention, ours, peer);
    c.runs("arm + cancel on 2 threads", "M op/s", Better::Higher, two);
    let fire = pair(&r.fire_runs, ours, peer);
    c.runs("fire 100 000: process CPU", "ms", lower, fire);
}

/// The bytes per armed deadline of `ours` beside `peer` (one measurement each).
fn memory(c: &mut Case, r: &Results, ours: Peer, peer: Peer) {
    if let (Some(o), Some(t)) = (r.memory.get(&ours), r.memory.get(&peer)) {
        let (what, lower) = ("bytes per armed deadline", Better::Lower);
        c.single(what, "B", lower, peer.name(), o.total(), t.total());
    }
}

fn server_on_tokio(s: &mut String, r: &Results) {
    let mut c = Case::new();
    let ours = Peer::PunctualInTokio;
    for peer in [Peer::Tokio, Peer::TokioAlt] {
        per_deadline(&mut c, r, ours, peer);
        c.runs(
            "lateness: median",
            "µs",
            Better::Lower,
            pair(&lateness_us(r), ours, peer),
        );
        let arm = million_runs(r, |m| m.arm.as_secs_f64() * 1e3);
        c.runs(
            "a million timers: arm",
            "ms",
            Better::Lower,
            pair(&arm, ours, peer),
        );
        let cancel = million_runs(r, |m| m.cancel.as_secs_f64() * 1e3);
        c.runs(
            "a million timers: cancel",
            "ms",
            Better::Lower,
            pair(&cancel, ours, peer),
        );
        let bytes = million_runs(r, |m| m.bytes);
        c.runs(
            "a million timers: resident bytes each",
            "B",
            Better::Lower,
            pair(&bytes, ours, peer),
        );
        memory(&mut c, r, ours, peer);
    }
    for (prefix, k, row) in http::ROWS {
        let rps = http_runs(r, prefix, k, |h| h.requests_per_s);
        let cpu = http_runs(r, prefix, k, |h| h.cpu_per_request);
        // The case's rows are named once for the process: leaked, a few bytes.
        let what_rps: &'static str = format!("{row}: requests/s").leak();
        let what_cpu: &'static str = format!("{row}: server CPU per request").leak();
        for peer in [http::TOKIO, http::TOKIO_ALT] {
            c.runs(
                what_rps,
                "/s",
                Better::Higher,
                (peer, rps.get(http::PUNCTUAL), rps.get(peer)),
            );
            c.runs(
                what_cpu,
                "µs",
                Better::Lower,
                (peer, cpu.get(http::PUNCTUAL), cpu.get(peer)),
            );
        }
    }
    c.write(
        s,
        "A server on tokio",
        "punctual: a default `.deadline()` inside the runtime (and for HTTP, punctual-tower's \
         `DeadlineLayer`); the peers: `tokio::time::timeout` on tokio's timer and on its \
         alternative one (and tower's `Timeout` around the handler). The HTTP rows are a \
         hyper server whose handler starts K inner deadlines; the gRPC row the same on a \
         tonic server.",
        &format!(
            "The HTTP rows' spread over runs, and an earlier run's 0.78× at K = 4: {}",
            causes::HTTP_HARNESS
        ),
    );
}

fn smol_or_block_on(s: &mut String, r: &Results) {
    let mut c = Case::new();
    let ours = Peer::Punctual;
    for peer in [Peer::AsyncIo, Peer::FuturesTimer, Peer::FuturesTime] {
        per_deadline(&mut c, r, ours, peer);
        let (_, smol, theirs) = pair(&r.fire_runs, Peer::PunctualSmol, peer);
        c.runs(
            "fire 100 000: process CPU, punctual-smol",
            "ms",
            Better::Lower,
            (peer.name(), smol, theirs),
        );
        let late = lateness_us(r);
        c.runs(
            "lateness: median, 1 ms tick",
            "µs",
            Better::Lower,
            pair(&late, ours, peer),
        );
        let (_, own, theirs) = pair(&late, Peer::Punctual100us, peer);
        c.runs(
            "lateness: median, a 100 µs wheel on its own thread",
            "µs",
            Better::Lower,
            (peer.name(), own, theirs),
        );
        let (_, fine, theirs) = pair(&late, Peer::PunctualSmol100us, peer);
        c.runs(
            "lateness: median, punctual-smol at 100 µs",
            "µs",
            Better::Lower,
            (peer.name(), fine, theirs),
        );
        memory(&mut c, r, ours, peer);
    }
    c.write(
        s,
        "A smol or block_on app",
        "punctual: a default `.deadline()` on the global wheel (1 ms ticks, its own timer \
         thread) under `futures::executor::block_on`, punctual-smol's wheel driven in the \
         executor, and for lateness wheels of 100 µs ticks (on a thread of their own, or \
         driven by smol); the peers: async-io's `Timer` (what smol uses), futures-timer's \
         `Delay` and futures-time's `timeout`.",
        "",
    );
}

fn firmware_case(s: &mut String, r: &Results, firmware: Option<Firmware>) {
    let mut c = Case::new();
    let peer = "embassy-time";
    if let Some(f) = firmware {
        c.single(
            "firmware flash, thumbv7m",
            "B",
            Better::Lower,
            peer,
            f.flash.0,
            f.flash.1,
        );
        c.single(
            "firmware static RAM, thumbv7m",
            "B",
            Better::Lower,
            peer,
            f.ram.0,
            f.ram.1,
        );
    }
    c.runs(
        "arm + cancel, on the host",
        "ns",
        Better::Lower,
        pair(&r.arm_cancel_runs, Peer::Punctual, Peer::Embassy),
    );
    c.runs(
        "fire 100 000: process CPU, on the host",
        "ms",
        Better::Lower,
        pair(&r.fire_runs, Peer::Punctual, Peer::Embassy),
    );
    c.write(
        s,
        "Firmware",
        "punctual: punctual-embassy's `EmbassyWheel<8>`; the peer: \
         `embassy_time::with_timeout`. Sizes are of the same minimal firmware built both \
         ways (see *Firmware size*); the host rows run embassy-time's `std` driver beside \
         punctual's global wheel, a hint of the work per deadline, not of a \
         microcontroller's.",
        "",
    );
}
