//! The short benchmark suite, written up: runs every scenario of `common` for every peer
//! (a few samples each, interleaved so that a change in the machine's load touches every
//! peer alike), then writes `docs/benchmarks.md` (medians, ratios, the machine and the
//! versions), `docs/benchmarks.svg` (cost per operation, fire, lateness) and the README's
//! comparison table (between its markers).
//!
//! Run it with `bash ci/bench_report.sh`, which first measures memory in a process of its
//! own (`benches/memory.rs`, with a counting allocator) and hands the result over with
//! `--memory PATH`. Run without `--bench` (as `cargo test --benches` does), it does nothing.

#[macro_use]
mod common;

use std::collections::{BTreeMap, BTreeSet};
use std::fmt::Write as _;
use std::path::Path;
use std::process::Command;
use std::time::{Duration, Instant};

use common::{FireCost, LatenessSummary, Peer};

/// Samples per micro bench (the median is reported).
const SAMPLES: usize = 11;
/// Fire runs per peer.
const FIRE_RUNS: usize = 3;
const FIRE_N: usize = 100_000;
const FIRE_GIVE_UP: Duration = Duration::from_secs(10);
/// Lateness: deadlines per run, and runs per peer.
const LATE_N: usize = 1_000;
const LATE_RUNS: u64 = 15;
/// Contention: each sample runs about this long on one thread.
const CONTENTION_TARGET: Duration = Duration::from_millis(30);
const CONTENTION_SAMPLES: usize = 7;
/// Deadlines already armed in the second arm + cancel group.
const ARMED: usize = 10_000;

/// The peers of the fire table: every timer, punctual driven in the executor too, and the
/// harness with no timer at all (the floor under every timer's cost).
const FIRE_PEERS: [Peer; 9] = [
    Peer::Punctual,
    Peer::PunctualInTokio,
    Peer::PunctualSmol,
    Peer::Tokio,
    Peer::AsyncIo,
    Peer::FuturesTimer,
    Peer::FuturesTime,
    Peer::Embassy,
    Peer::NoTimer,
];

/// punctual's rows of the lateness table.
const PUNCTUAL_LATENESS: [Peer; 4] = [
    Peer::Punctual,
    Peer::PunctualInTokio,
    Peer::Punctual100us,
    Peer::PunctualSmol100us,
];

/// The peers of the lateness table, with the tick each is said to have.
const LATENESS_PEERS: [(Peer, &str); 9] = [
    (Peer::Punctual, "1 ms"),
    (Peer::PunctualInTokio, "1 ms"),
    (Peer::Punctual100us, "100 µs"),
    (Peer::PunctualSmol100us, "100 µs"),
    (Peer::Tokio, "1 ms"),
    (Peer::AsyncIo, "none (epoll)"),
    (Peer::FuturesTimer, "none (park)"),
    (Peer::FuturesTime, "none (async-io)"),
    (Peer::Embassy, "1 µs"),
];

#[derive(Default)]
struct Results {
    ready: BTreeMap<Peer, f64>,
    arm_cancel: BTreeMap<Peer, f64>,
    arm_cancel_armed: BTreeMap<Peer, f64>,
    /// Peers that did not hold all [`ARMED`] deadlines: how many they held.
    armed_short: BTreeMap<Peer, usize>,
    /// Operations per second on 1 and on 2 threads.
    contention: BTreeMap<Peer, (f64, f64)>,
    fire: BTreeMap<Peer, Option<FireCost>>,
    fire_budget_on: BTreeMap<Peer, Option<FireCost>>,
    lateness: BTreeMap<Peer, (LatenessSummary, usize)>,
    /// Each lateness run's median (ns), in run order: runs of the peers are interleaved,
    /// so run `k` of two peers saw the same moment of the machine.
    lateness_run_medians: BTreeMap<Peer, Vec<i64>>,
    memory: BTreeMap<Peer, Memory>,
    /// Heap bytes per armed timer with other numbers armed: `(peer, armed)`.
    memory_at: BTreeMap<(Peer, usize), f64>,
}

#[derive(Clone, Copy, Debug)]
struct Memory {
    future: f64,
    heap: f64,
    /// Deadlines the peer still held, of `armed`.
    held: usize,
    armed: usize,
}

impl Memory {
    fn total(self) -> f64 {
        self.future + self.heap
    }

    /// Whether the peer held every deadline armed (else its bytes are not per deadline).
    fn held_all(self) -> bool {
        self.held == self.armed
    }
}

fn ns_per_op(d: Duration, iters: u64) -> f64 {
    d.as_nanos() as f64 / iters as f64
}

fn median_f64(mut xs: Vec<f64>) -> f64 {
    xs.sort_by(f64::total_cmp);
    xs[xs.len() / 2]
}

fn progress(what: &str) {
    eprintln!("report: {what}");
}

fn measure(results: &mut Results) {
    // ---- ready: interleaved samples -------------------------------------------------
    progress("ready");
    let peers: Vec<Peer> = [Peer::Bare].into_iter().chain(Peer::TIMERS).collect();
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
        .into_iter()
        .map(|(p, s)| (p, median_f64(s)))
        .collect();

    // ---- arm + cancel ----------------------------------------------------------------
    progress("arm + cancel");
    let iters = 20_000;
    let mut samples: BTreeMap<Peer, Vec<f64>> = BTreeMap::new();
    for round in 0..=SAMPLES {
        for peer in Peer::TIMERS.into_iter().chain([Peer::ArmFloor]) {
            let d = with_peer!(peer, T => common::arm_cancel::<T>(iters));
            if round > 0 {
                samples.entry(peer).or_default().push(ns_per_op(d, iters));
            }
        }
    }
    results.arm_cancel = samples
        .into_iter()
        .map(|(p, s)| (p, median_f64(s)))
        .collect();

    progress("arm + cancel with 10 000 armed");
    for peer in Peer::TIMERS {
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
    for peer in Peer::TIMERS {
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
            .insert(peer, (median_f64(one), median_f64(two)));
    }

    // ---- fire --------------------------------------------------------------------------
    progress("fire");
    let mut runs: BTreeMap<Peer, Vec<Option<FireCost>>> = BTreeMap::new();
    for _ in 0..FIRE_RUNS {
        for peer in FIRE_PEERS {
            let cost = with_peer!(peer, T => common::fire::<T>(FIRE_N, FIRE_GIVE_UP));
            runs.entry(peer).or_default().push(cost);
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
    let mut samples: BTreeMap<Peer, Vec<i64>> = BTreeMap::new();
    for run in 0..LATE_RUNS {
        for (peer, _) in LATENESS_PEERS {
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

// ---- the machine and the versions ------------------------------------------------------

struct Machine {
    cpu: String,
    cores: usize,
    rustc: String,
    load_before: Option<f64>,
    load_after: Option<f64>,
    versions: Vec<(String, String)>,
}

fn command_output(program: &str, args: &[&str]) -> Option<String> {
    let out = Command::new(program).args(args).output().ok()?;
    out.status
        .success()
        .then(|| String::from_utf8_lossy(&out.stdout).trim().to_string())
}

fn machine(root: &Path) -> Machine {
    let cpu = command_output("lscpu", &[])
        .and_then(|text| {
            text.lines()
                .find(|l| l.starts_with("Model name:"))
                .map(|l| l["Model name:".len()..].trim().to_string())
        })
        .unwrap_or_else(|| "unknown CPU".into());
    let cores = std::thread::available_parallelism().map_or(0, |n| n.get());
    // The version alone: the report says what it measured, not when or from which commit.
    let rustc = command_output("rustc", &["--version"])
        .map(|v| v.split(" (").next().unwrap_or_default().to_string())
        .unwrap_or_else(|| "rustc ?".into());
    let lock = std::fs::read_to_string(root.join("Cargo.lock")).unwrap_or_default();
    let mut versions = vec![(
        "punctual".to_string(),
        env!("CARGO_PKG_VERSION").to_string(),
    )];
    for name in [
        "tokio",
        "async-io",
        "futures-timer",
        "futures-time",
        "embassy-time",
        "criterion",
    ] {
        let needle = format!("name = \"{name}\"\nversion = \"");
        if let Some(at) = lock.find(&needle) {
            let rest = &lock[at + needle.len()..];
            let version = rest.split('"').next().unwrap_or("?");
            versions.push((name.to_string(), version.to_string()));
        }
    }
    Machine {
        cpu,
        cores,
        rustc,
        load_before: None,
        load_after: None,
        versions,
    }
}

fn read_memory(path: &Path, results: &mut Results) {
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
        let Some(peer) = Peer::TIMERS.into_iter().find(|p| p.name() == cols[0]) else {
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

// ---- writing -----------------------------------------------------------------------------

fn fmt_ns(ns: f64) -> String {
    if ns < 10.0 {
        format!("{ns:.1}")
    } else {
        format!("{ns:.0}")
    }
}

/// A difference in nanoseconds, with its sign (a ready deadline can measure a hair faster
/// than the bare future: that is noise).
fn fmt_delta_ns(ns: f64) -> String {
    let sign = if ns < 0.0 { "−" } else { "+" };
    format!("{sign}{}", fmt_ns(ns.abs()))
}

fn fmt_us(ns: i64) -> String {
    let us = ns as f64 / 1000.0;
    if us.abs() < 10.0 {
        format!("{us:.1}")
    } else {
        format!("{us:.0}")
    }
}

/// Two medians side by side, with as many decimals as it takes to tell them apart (up to
/// nanoseconds), so that a verdict between two equal-looking numbers can be checked.
fn fmt_us_pair(a: i64, b: i64) -> String {
    let (fa, fb) = (fmt_us(a), fmt_us(b));
    if fa != fb || a == b {
        return format!("{fa} vs {fb} µs");
    }
    let (a, b) = (a as f64 / 1000.0, b as f64 / 1000.0);
    (2..=3)
        .map(|digits| format!("{a:.digits$} vs {b:.digits$} µs"))
        .find(|pair| {
            let mut halves = pair.trim_end_matches(" µs").split(" vs ");
            halves.next() != halves.next()
        })
        .unwrap_or_else(|| format!("{a:.3} vs {b:.3} µs"))
}

fn fmt_ms(d: Duration) -> String {
    format!("{:.0}", d.as_secs_f64() * 1000.0)
}

fn fmt_ratio(x: f64) -> String {
    if x >= 10.0 {
        format!("{x:.0}×")
    } else {
        format!("{x:.1}×")
    }
}

/// Why a target is missed, as profiling found it (for the `Still missed` table).
fn cause(target: &str) -> &'static str {
    if target.starts_with("arm + cancel inside tokio") {
        "Profiled with callgrind (200 000 arm + cancel on a current-thread runtime, in \
         its `block_on` as the bench runs them): 710 instructions each against 550 on the \
         global wheel. About 95 of the 160 more read the clock through \
         `tokio::time::Instant::now()` and convert the `Instant` (the source a paused \
         runtime needs), where the global wheel reads `CLOCK_MONOTONIC` directly; about \
         85 choose the wheel: outside a spawned task (the `block_on` future) the choice \
         asks tokio for the current runtime (`Handle::try_current`, which clones and \
         drops the runtime's handle), while in a spawned task a task id suffices. Not yet \
         changed: tokio offers no cheaper way to tell whether a thread is inside a \
         runtime, or whether its clock may be paused."
    } else if target.starts_with("arm + cancel") {
        "The floor row (one clock reading and two compare-and-swaps, the least a deadline \
         does that starts at its first poll, docs/design.md rule 4, and hands itself to a \
         driver on another thread without a lock) is already over a quarter of tokio's time, \
         and the clock reading alone is over a third of the operation; a third of tokio's \
         leaves less above the floor than the rest of the arm takes (its tick, the thread's \
         spare entry, the waker slot, the plan check). A start from the CPU's time-stamp \
         counter came closer but could end early when the kernel slews the clock, so it \
         was dropped."
    } else if target.starts_with("fire:") {
        "The harness alone (the `no timer` row of the fire table) takes about half of \
         tokio's CPU, which leaves a timer almost nothing for 100000 clock readings (rule \
         4), arms, fires and wakes. With the global wheel the timer thread also wakes tasks \
         that another thread polls, so every wake moves the task's waker between caches."
    } else if target.starts_with("lateness: at a 100 µs tick") {
        "Level with async-io's to a few tenths of a microsecond: both wait for the same \
         reactor wake-up, and which one is ahead flips from run to run with the machine's \
         load."
    } else {
        "not profiled yet"
    }
}

fn mark(ok: bool) -> &'static str {
    if ok { "met" } else { "**missed**" }
}

/// `(target, measured, met)` rows for the project's performance targets.
fn targets(r: &Results) -> Vec<(String, String, bool)> {
    let mut rows = Vec::new();
    let p = Peer::Punctual;
    if let (Some(&bare), Some(&ours)) = (r.ready.get(&Peer::Bare), r.ready.get(&p)) {
        rows.push((
            "ready: within 1 ns of the bare future".into(),
            format!(
                "{} ns ({} vs {} ns)",
                fmt_delta_ns(ours - bare),
                fmt_ns(ours),
                fmt_ns(bare)
            ),
            ours - bare <= 1.0,
        ));
    }
    if let (Some(&ours), Some(&tokio)) = (r.arm_cancel.get(&p), r.arm_cancel.get(&Peer::Tokio)) {
        rows.push((
            "arm + cancel, one thread: ≤ 1/3 of tokio's time".into(),
            format!(
                "{} vs {} ns: {:.2} of tokio's{}",
                fmt_ns(ours),
                fmt_ns(tokio),
                ours / tokio,
                r.arm_cancel
                    .get(&Peer::ArmFloor)
                    .map_or(String::new(), |&floor| format!(
                        "; a third of tokio's is {} ns, the floor (one clock reading and two \
                         compare-and-swaps, nothing else) {} ns",
                        fmt_ns(tokio / 3.0),
                        fmt_ns(floor)
                    ))
            ),
            ours * 3.0 <= tokio,
        ));
    }
    if let (Some(&bare), Some(&inside)) = (
        r.ready.get(&Peer::Bare),
        r.ready.get(&Peer::PunctualInTokio),
    ) {
        rows.push((
            "ready inside tokio: within 1 ns of the bare future".into(),
            format!("{} ns", fmt_delta_ns(inside - bare)),
            inside - bare <= 1.0,
        ));
    }
    if let (Some(&global), Some(&inside)) = (
        r.arm_cancel.get(&p),
        r.arm_cancel.get(&Peer::PunctualInTokio),
    ) {
        rows.push((
            "arm + cancel inside tokio: ≤ 1.15× the global wheel's".into(),
            format!(
                "{} vs {} ns: {:.2}×",
                fmt_ns(inside),
                fmt_ns(global),
                inside / global
            ),
            inside <= global * 1.15,
        ));
    }
    if let Some(&(one, two)) = r.contention.get(&p) {
        rows.push((
            "contention: 2 threads ≥ 1.6× the operations of one".into(),
            format!("{:.2}×", two / one),
            two / one >= 1.6,
        ));
    }
    if let Some(m) = r.memory.get(&p) {
        // The heap per deadline at other counts: a growable wheel's last segment is partly
        // used, so its heap runs above the entry's size.
        let heaps: Vec<f64> = r
            .memory_at
            .iter()
            .filter(|((peer, _), _)| *peer == p)
            .map(|(_, &heap)| heap)
            .collect();
        let slack = match (
            heaps.iter().copied().reduce(f64::min),
            heaps.iter().copied().reduce(f64::max),
        ) {
            (Some(lo), Some(hi)) => format!(
                "; with the last segment partly used, {:.0} to {:.0} B at the other counts \
                 measured",
                m.future + lo,
                m.future + hi
            ),
            _ => String::new(),
        };
        rows.push((
            "memory: ≤ 56 bytes per armed deadline (x86-64)".into(),
            format!(
                "{:.0} B ({:.0} future overhead + {:.0} wheel entry, every segment full{slack})",
                m.total(),
                m.future,
                m.heap
            ),
            m.total() <= 56.0,
        ));
    }
    for (peer, driver) in [
        (p, "the global wheel, its own timer thread"),
        (Peer::PunctualSmol, "driven in the executor, punctual-smol"),
    ] {
        if let (Some(Some(ours)), Some(Some(tokio))) = (r.fire.get(&peer), r.fire.get(&Peer::Tokio))
        {
            // The harness with no timer at all: when half of tokio's time is below it, no
            // timer can meet the target in this scenario.
            let floor = match r.fire.get(&Peer::NoTimer) {
                Some(Some(floor)) => format!(
                    "; half of tokio's is {} ms, the harness alone with no timer takes {} ms",
                    fmt_ms(tokio.cpu / 2),
                    fmt_ms(floor.cpu)
                ),
                _ => String::new(),
            };
            rows.push((
                format!("fire: process CPU ≤ half of tokio's ({driver})"),
                format!(
                    "{} vs {} ms: {:.2} of tokio's{floor}",
                    fmt_ms(ours.cpu),
                    fmt_ms(tokio.cpu),
                    ours.cpu.as_secs_f64() / tokio.cpu.as_secs_f64()
                ),
                ours.cpu * 2 <= tokio.cpu,
            ));
        }
    }
    if let (Some(budget), Some(Some(free))) = (r.fire_budget_on.get(&p), r.fire.get(&p)) {
        let (text, ok) = match budget {
            Some(b) => (
                format!(
                    "{} ms wall with the budget on, {} ms without",
                    fmt_ms(b.wall),
                    fmt_ms(free.wall)
                ),
                b.wall.as_secs_f64() <= 1.5 * free.wall.as_secs_f64(),
            ),
            None => (format!("not done after {FIRE_GIVE_UP:?}"), false),
        };
        rows.push(("fire: no collapse with tokio's budget on".into(), text, ok));
    }
    let early: usize = PUNCTUAL_LATENESS
        .iter()
        .filter_map(|q| r.lateness.get(q))
        .map(|(s, _)| s.early)
        .sum();
    if r.lateness.contains_key(&p) {
        rows.push((
            "lateness: zero early fires".into(),
            format!("{early} early"),
            early == 0,
        ));
    }
    for (peer, tick) in [
        (Peer::Punctual, 1_000_000),
        (Peer::PunctualInTokio, 1_000_000),
        (Peer::Punctual100us, 100_000),
        (Peer::PunctualSmol100us, 100_000),
    ] {
        if let Some((s, _)) = r.lateness.get(&peer) {
            rows.push((
                format!("lateness: p99 within 2 ticks ({})", peer.name()),
                format!("p99 {} µs, 2 ticks = {} µs", fmt_us(s.p99), tick * 2 / 1000),
                s.p99 <= 2 * tick,
            ));
        }
    }
    for (peer, driver) in [
        (
            Peer::PunctualSmol100us,
            "driven in the executor, as async-io's timers are",
        ),
        (Peer::Punctual100us, "its own timer thread"),
    ] {
        if let (Some((ours, _)), Some((aio, _))) =
            (r.lateness.get(&peer), r.lateness.get(&Peer::AsyncIo))
        {
            // Which of the interleaved runs punctual's median was no worse in: the machine
            // moves between faster and slower moments (medians of 6 and of 8 µs for both
            // peers alike), and a pooled median only says which peer met more slow ones.
            let paired = match (
                r.lateness_run_medians.get(&peer),
                r.lateness_run_medians.get(&Peer::AsyncIo),
            ) {
                (Some(ours), Some(aio)) => {
                    let no_worse = ours.iter().zip(aio).filter(|(o, a)| o <= a).count();
                    format!(
                        "; no worse in {no_worse} of {} runs side by side",
                        ours.len()
                    )
                }
                _ => String::new(),
            };
            rows.push((
                format!("lateness: at a 100 µs tick, median no worse than async-io's ({driver})"),
                format!("{}{paired}", fmt_us_pair(ours.median, aio.median)),
                ours.median <= aio.median,
            ));
        }
    }
    rows
}

fn markdown(r: &Results, m: &Machine) -> String {
    let mut s = String::new();
    let load = |l: Option<f64>| l.map_or("?".into(), |l| format!("{l:.2}"));
    let versions: Vec<String> = m.versions.iter().map(|(n, v)| format!("{n} {v}")).collect();
    let _ = writeln!(s, "# Benchmarks\n");
    let _ = writeln!(
        s,
        "Written by `bash ci/bench_report.sh` (the short suite: medians of {SAMPLES} samples, \
         interleaved between the peers for *ready* and *arm + cancel* and taken one peer after \
         another with {ARMED} armed; {CONTENTION_SAMPLES} samples for contention, one peer \
         after another; {FIRE_RUNS} fire runs; {LATE_RUNS}×{LATE_N} lateness samples per peer). The \
         full criterion suites are `cargo bench -p punctual-benches --bench timers` and \
         `--bench fire`; `--bench lateness` and `--bench memory` print their tables.\n"
    );
    let _ = writeln!(
        s,
        "- **Machine**: {}, {} cores; load average {} before the run, {} after \
         (a shared machine: other work was running)\n- **Toolchain**: {}\n- **Crates**: {}\n",
        m.cpu,
        m.cores,
        load(m.load_before),
        load(m.load_after),
        m.rustc,
        versions.join(", ")
    );
    let _ = writeln!(
        s,
        "![cost per operation, fire and lateness](benchmarks.svg)\n"
    );

    let _ = writeln!(s, "## Targets\n");
    let _ = writeln!(s, "| target | measured | |\n|---|---|---|");
    let rows = targets(r);
    for (target, measured, ok) in &rows {
        let _ = writeln!(s, "| {target} | {measured} | {} |", mark(*ok));
    }
    if rows.iter().any(|(_, _, ok)| !ok) {
        let _ = writeln!(s, "\n## Still missed\n");
        let _ = writeln!(
            s,
            "Each target missed in this run, and what profiling found to be the cause.\n"
        );
        let _ = writeln!(s, "| target | measured | cause |\n|---|---|---|");
        for (target, measured, _) in rows.iter().filter(|(_, _, ok)| !ok) {
            let _ = writeln!(s, "| {target} | {measured} | {} |", cause(target));
        }
    }

    let _ = writeln!(s, "\n## Cost per operation\n");
    let _ = writeln!(
        s,
        "Nanoseconds per operation, polled by hand with a no-op waker (so only the deadline is \
         measured). *ready*: a deadline around a future ready at its first poll. *arm + cancel*: \
         a 2 s deadline around a pending future, polled once (it arms) and dropped. × punctual: \
         the peer's time over punctual's.\n"
    );
    let _ = writeln!(
        s,
        "| | ready | overhead | arm + cancel | × punctual | arm + cancel, {ARMED} armed | × punctual |\n\
         |---|---:|---:|---:|---:|---:|---:|"
    );
    let bare = r.ready.get(&Peer::Bare).copied().unwrap_or(0.0);
    let _ = writeln!(s, "| bare future | {} | | | | | |", fmt_ns(bare));
    let ours_ac = r
        .arm_cancel
        .get(&Peer::Punctual)
        .copied()
        .unwrap_or(f64::NAN);
    let ours_aca = r
        .arm_cancel_armed
        .get(&Peer::Punctual)
        .copied()
        .unwrap_or(f64::NAN);
    for peer in Peer::TIMERS {
        let ready = r.ready.get(&peer).copied().unwrap_or(f64::NAN);
        let ac = r.arm_cancel.get(&peer).copied().unwrap_or(f64::NAN);
        let aca = r.arm_cancel_armed.get(&peer).copied().unwrap_or(f64::NAN);
        let (aca, aca_ratio) = match r.armed_short.get(&peer) {
            Some(held) => (format!("n/a: held {held}"), String::new()),
            None => (fmt_ns(aca), fmt_ratio(aca / ours_aca)),
        };
        let _ = writeln!(
            s,
            "| {} | {} | {} | {} | {} | {} | {} |",
            peer.name(),
            fmt_ns(ready),
            fmt_delta_ns(ready - bare),
            fmt_ns(ac),
            fmt_ratio(ac / ours_ac),
            aca,
            aca_ratio
        );
    }
    if let Some(&floor) = r.arm_cancel.get(&Peer::ArmFloor) {
        let _ = writeln!(
            s,
            "| *{}* | | | {} | {} | | |",
            Peer::ArmFloor.name(),
            fmt_ns(floor),
            fmt_ratio(floor / ours_ac)
        );
        let _ = writeln!(
            s,
            "\n*{}*: not a timer but the least that any deadline must do that starts at its \
             first poll and hands itself to a driver on another thread without a lock, measured \
             in the same rounds: read the clock the global wheel reads, keep the waker, publish \
             with one compare-and-swap, and take back with another when dropped.",
            Peer::ArmFloor.name()
        );
    }
    if !r.armed_short.is_empty() {
        let _ = writeln!(
            s,
            "\n*n/a: held N*: the peer let go of all but N of the {ARMED} deadlines armed \
             beforehand (their tasks were woken at once), so it was not measured with {ARMED} \
             armed. embassy-time's generic queue holds 128 wakers (`generic-queue-128`): when \
             it is full it wakes a task at once, for it to poll again and re-register."
        );
    }

    let _ = writeln!(s, "\n## Contention\n");
    let _ = writeln!(
        s,
        "Arm + cancel on 1 and on 2 threads at once (tokio: tasks on its 2-worker runtime), in \
         million operations per second, all threads together.\n"
    );
    let _ = writeln!(
        s,
        "| | 1 thread | 2 threads | 2 / 1 |\n|---|---:|---:|---:|"
    );
    for peer in Peer::TIMERS {
        if let Some(&(one, two)) = r.contention.get(&peer) {
            let _ = writeln!(
                s,
                "| {} | {:.2} | {:.2} | {:.2}× |",
                peer.name(),
                one / 1e6,
                two / 1e6,
                two / one
            );
        }
    }

    let _ = writeln!(s, "\n## Fire\n");
    let _ = writeln!(
        s,
        "{FIRE_N} deadlines spread over 1 to 100 ms in one `FuturesUnordered`, until all have \
         fired and been seen. CPU: user + system time of the whole process (`getrusage`), the \
         drivers' threads included. Each peer on the executor its users would use: \
         `futures::executor::block_on` for punctual, futures-timer and embassy-time, tokio's \
         current-thread runtime (inside `unconstrained`), `async_io::block_on` for async-io and \
         futures-time, and for punctual-smol, a 1 ms wheel whose driver runs in the same task \
         (`punctual_smol::with_driver`), so that no deadline crosses between threads. Median \
         of {FIRE_RUNS} runs.\n"
    );
    let _ = writeln!(
        s,
        "| | wall (ms) | CPU (ms) | CPU × punctual |\n|---|---:|---:|---:|"
    );
    let ours_cpu = r
        .fire
        .get(&Peer::Punctual)
        .copied()
        .flatten()
        .map(|c| c.cpu.as_secs_f64());
    for peer in FIRE_PEERS {
        match r.fire.get(&peer).copied().flatten() {
            Some(c) => {
                let ratio = ours_cpu.map_or("".into(), |o| fmt_ratio(c.cpu.as_secs_f64() / o));
                let _ = writeln!(
                    s,
                    "| {} | {} | {} | {} |",
                    peer.name(),
                    fmt_ms(c.wall),
                    fmt_ms(c.cpu),
                    ratio
                );
            }
            None => {
                let _ = writeln!(
                    s,
                    "| {} | not done after {} s | | |",
                    peer.name(),
                    FIRE_GIVE_UP.as_secs()
                );
            }
        }
    }
    let _ = writeln!(
        s,
        "\nWith tokio's cooperative budget **on** (the same run as a plain tokio task, without \
         `unconstrained`, on the current-thread runtime):\n"
    );
    let _ = writeln!(s, "| | wall (ms) | CPU (ms) |\n|---|---:|---:|");
    for (peer, cost) in &r.fire_budget_on {
        match cost {
            Some(c) => {
                let _ = writeln!(
                    s,
                    "| {} (budget on) | {} | {} |",
                    peer.name(),
                    fmt_ms(c.wall),
                    fmt_ms(c.cpu)
                );
            }
            None => {
                let _ = writeln!(
                    s,
                    "| {} (budget on) | not done after {} s | |",
                    peer.name(),
                    FIRE_GIVE_UP.as_secs()
                );
            }
        }
    }

    let _ = writeln!(s, "\n## Memory\n");
    let _ = writeln!(
        s,
        "Bytes per armed deadline: the deadline future's size beyond its inner future's \
         (`size_of`), plus the heap its driver holds per armed timer (net bytes live after \
         arming 16 320 deadlines with a counting allocator, `benches/memory.rs`; 16 320 fills a \
         growable punctual wheel's segments exactly, so its figure is the slab entry's size).\n"
    );
    let _ = writeln!(
        s,
        "| | future overhead | heap per timer | total | deadlines held |\n\
         |---|---:|---:|---:|---:|"
    );
    for peer in Peer::TIMERS {
        if let Some(mem) = r.memory.get(&peer) {
            let total = if mem.held_all() {
                format!("{:.0}", mem.total())
            } else {
                "n/a".into()
            };
            let _ = writeln!(
                s,
                "| {} | {:.0} | {:.0} | {total} | {} of {} |",
                peer.name(),
                mem.future,
                mem.heap,
                mem.held,
                mem.armed
            );
        }
    }
    let _ = writeln!(
        s,
        "\nA deadline is held if its waker was never woken (it is 10 minutes away). \
         embassy-time's generic queue is static (128 slots of 24 bytes, one per waker, not per \
         timer): when it is full it wakes a task at once, for it to poll again and re-register, \
         so it holds 128 deadlines at most, and its bytes are not per armed deadline."
    );
    let more: BTreeSet<usize> = r.memory_at.keys().map(|&(_, n)| n).collect();
    if !more.is_empty() {
        let _ = writeln!(
            s,
            "\nHeap bytes per armed timer as more are armed (the same measure). A growable \
             punctual wheel adds segments that double in size, so its figure runs from the \
             entry's 40 bytes, with every segment full, up to about twice that; the peers' \
             containers have slack of their own.\n"
        );
        let _ = write!(s, "| |");
        for n in &more {
            let _ = write!(s, " {n} |");
        }
        let _ = write!(s, "\n|---|");
        for _ in &more {
            let _ = write!(s, "---:|");
        }
        let _ = writeln!(s);
        for peer in Peer::TIMERS {
            let _ = write!(s, "| {} |", peer.name());
            for &n in &more {
                let cell = r
                    .memory_at
                    .get(&(peer, n))
                    .map_or(String::new(), |heap| format!("{heap:.0}"));
                let _ = write!(s, " {cell} |");
            }
            let _ = writeln!(s);
        }
    }

    let _ = writeln!(s, "\n## Lateness\n");
    let _ = writeln!(
        s,
        "On the real clock: {LATE_N} deadlines of 1 to 50 ms (random to the nanosecond) started \
         together, {LATE_RUNS} runs; for each, when its `Err` was seen minus when it was asked \
         for (microseconds; negative is early). Measured from just before the deadline is made \
         and first polled, to when the awaiting task saw it fire: the driver's and the \
         executor's wake-up are included.\n"
    );
    let _ = writeln!(
        s,
        "| | tick | early | median (µs) | p99 (µs) | max (µs) |\n|---|---|---:|---:|---:|---:|"
    );
    for (peer, tick) in LATENESS_PEERS {
        if let Some((l, n)) = r.lateness.get(&peer) {
            let _ = writeln!(
                s,
                "| {} | {tick} | {} of {n} | {} | {} | {} |",
                peer.name(),
                l.early,
                fmt_us(l.median),
                fmt_us(l.p99),
                fmt_us(l.max)
            );
        }
    }

    let _ = writeln!(s, "\n## How each peer is measured\n");
    let _ = writeln!(
        s,
        "- **punctual**: `f.deadline(d)` on the global wheel (1 ms tick, its own driver \
         thread); **punctual-100us**: `f.deadline_on(&wheel, d)` on a growable wheel of 100 µs \
         ticks driven by `punctual::spawn_driver`; **punctual-smol** (fire only) and \
         **punctual-smol-100us**: growable wheels of 1 ms and 100 µs ticks whose driver runs \
         inside the executor's own task \
         (`async_io::block_on(punctual_smol::with_driver(wheel, ..))`), sleeping on async-io \
         timers in the reactor that block_on runs, as async-io's own timers do.\n\
         - **tokio**: `tokio::time::timeout(d, f)`, always inside `tokio::task::unconstrained` \
         (its cooperative budget would otherwise stop its timers from registering after 128 \
         polls in one task), except in the budget-on row. Note that the benchmarks \
         enable tokio's `test-util` feature (as the workspace's tests do, for the adapter's \
         paused-clock tests), under which tokio's `Instant::now()` checks for a paused clock.\n\
         - **async-io**: `f` raced against `async_io::Timer::after(d)`, the timer made once `f` \
         is pending (as `f.or(async {{ Timer::after(d).await; .. }})` does).\n\
         - **futures-timer**: `f` raced against `futures_timer::Delay::new(d)`, made once `f` is \
         pending.\n\
         - **futures-time**: `f.timeout(d)` (`futures_time::future::FutureExt`; async-io \
         underneath).\n\
         - **embassy-time**: `embassy_time::with_timeout(d, f)` on its `std` driver (1 MHz \
         ticks) with `generic-queue-128`. Its timers do not leave the queue when dropped.\n\
         - **no timer** (fire only): no deadline at all. Each future is pending at its first \
         poll and leaves its waker; a bare loop wakes them in order of their durations, a \
         millisecond's worth at a time, polling between (no clock, no sleep). What the \
         scenario costs besides any timer's own work.\n\
         - **floor: clock + 2 CAS** (arm + cancel only): not a timer. At its first pending \
         poll it reads the clock the global wheel reads (`StdClock`), keeps a clone of the \
         waker, publishes itself with one compare-and-swap on a list head and reads a plan \
         word; dropped, it takes itself back with a second compare-and-swap. The least any \
         deadline does that starts at its first poll and hands itself to a driver on \
         another thread without a lock.\n"
    );
    s
}

// ---- the chart -----------------------------------------------------------------------------

const PUNCTUAL_COLOR: &str = "#d9480f";
const PEER_COLOR: &str = "#5c7cfa";
const BARE_COLOR: &str = "#adb5bd";

fn color(peer: Peer) -> &'static str {
    match peer {
        Peer::Punctual
        | Peer::PunctualInTokio
        | Peer::Punctual100us
        | Peer::PunctualSmol
        | Peer::PunctualSmol100us => PUNCTUAL_COLOR,
        Peer::Bare | Peer::NoTimer | Peer::ArmFloor => BARE_COLOR,
        _ => PEER_COLOR,
    }
}

fn escape(text: &str) -> String {
    text.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
}

/// A panel of horizontal bars, one per peer, on a linear scale from zero.
#[allow(clippy::too_many_arguments)]
fn bars(
    svg: &mut String,
    x: f64,
    y: f64,
    width: f64,
    title: &str,
    unit: &str,
    rows: &[(Peer, f64)],
    label_width: f64,
) -> f64 {
    let row_h = 18.0;
    let _ = writeln!(
        svg,
        r#"<text x="{x}" y="{}" class="h">{}</text>"#,
        y + 12.0,
        escape(title)
    );
    let top = y + 22.0;
    let max = rows.iter().map(|r| r.1).fold(0.0_f64, f64::max).max(1e-9);
    let bar_w = width - label_width - 60.0;
    for (i, &(peer, value)) in rows.iter().enumerate() {
        let yy = top + i as f64 * row_h;
        let w = (value / max * bar_w).max(1.0);
        let _ = writeln!(
            svg,
            r#"<text x="{}" y="{}" class="l" text-anchor="end">{}</text>"#,
            x + label_width - 6.0,
            yy + 12.0,
            peer.name()
        );
        let _ = writeln!(
            svg,
            r#"<rect x="{}" y="{yy}" width="{w:.1}" height="{}" fill="{}"/>"#,
            x + label_width,
            row_h - 4.0,
            color(peer)
        );
        let _ = writeln!(
            svg,
            r#"<text x="{:.1}" y="{}" class="v">{} {unit}</text>"#,
            x + label_width + w + 4.0,
            yy + 12.0,
            fmt_ns(value)
        );
    }
    top + rows.len() as f64 * row_h
}

fn chart(r: &Results, m: &Machine) -> String {
    let width = 960.0;
    let mut body = String::new();
    let mut y = 40.0;

    // Row 1: three cost panels.
    let panel_w = width / 3.0 - 10.0;
    let mut ready: Vec<(Peer, f64)> = vec![];
    if let Some(&b) = r.ready.get(&Peer::Bare) {
        ready.push((Peer::Bare, b));
    }
    ready.extend(
        Peer::TIMERS
            .iter()
            .filter_map(|p| r.ready.get(p).map(|&v| (*p, v))),
    );
    let ac: Vec<(Peer, f64)> = Peer::TIMERS
        .iter()
        .chain(&[Peer::ArmFloor])
        .filter_map(|p| r.arm_cancel.get(p).map(|&v| (*p, v)))
        .collect();
    let aca: Vec<(Peer, f64)> = Peer::TIMERS
        .iter()
        .filter_map(|p| r.arm_cancel_armed.get(p).map(|&v| (*p, v)))
        .collect();
    let y1 = bars(
        &mut body,
        10.0,
        y,
        panel_w,
        "ready (ns per op)",
        "ns",
        &ready,
        100.0,
    );
    let y2 = bars(
        &mut body,
        10.0 + width / 3.0,
        y,
        panel_w,
        "arm + cancel (ns per op)",
        "ns",
        &ac,
        100.0,
    );
    let y3 = bars(
        &mut body,
        10.0 + 2.0 * width / 3.0,
        y,
        panel_w,
        &format!("arm + cancel, {ARMED} armed (ns)"),
        "ns",
        &aca,
        100.0,
    );
    y = y1.max(y2).max(y3) + 24.0;

    // Row 2: fire CPU and memory.
    let fire: Vec<(Peer, f64)> = FIRE_PEERS
        .iter()
        .filter_map(|p| {
            r.fire
                .get(p)
                .copied()
                .flatten()
                .map(|c| (*p, c.cpu.as_secs_f64() * 1000.0))
        })
        .collect();
    let mem: Vec<(Peer, f64)> = Peer::TIMERS
        .iter()
        .filter_map(|p| {
            r.memory
                .get(p)
                .filter(|m| m.held_all())
                .map(|m| (*p, m.total()))
        })
        .collect();
    let half = width / 2.0 - 10.0;
    let y4 = bars(
        &mut body,
        10.0,
        y,
        half,
        &format!("fire {FIRE_N} deadlines: process CPU (ms)"),
        "ms",
        &fire,
        100.0,
    );
    let y5 = bars(
        &mut body,
        10.0 + width / 2.0,
        y,
        half,
        "bytes per armed deadline",
        "B",
        &mem,
        100.0,
    );
    y = y4.max(y5) + 24.0;

    // Row 3: lateness on a log scale of microseconds.
    let _ = writeln!(
        body,
        r#"<text x="10" y="{}" class="h">lateness on the real clock (µs, log scale): min–max line, box from median to p99, dot at the median</text>"#,
        y + 12.0
    );
    let top = y + 24.0;
    let rows: Vec<_> = LATENESS_PEERS
        .iter()
        .filter_map(|(p, tick)| r.lateness.get(p).map(|l| (*p, *tick, l.0)))
        .collect();
    // Wide enough for the longest peer's name (at most about 6.5 px a character at 11 px).
    let longest = rows.iter().map(|(p, ..)| p.name().len()).max().unwrap_or(0);
    let label_w = (longest as f64 * 6.5 + 12.0).max(110.0);
    let plot_x = 10.0 + label_w;
    let plot_w = width - plot_x - 270.0;
    let (lo, hi) = (1.0_f64, 100_000.0_f64); // 1 µs .. 100 ms
    let scale = |ns: i64| {
        let us = (ns as f64 / 1000.0).clamp(lo, hi);
        plot_x + (us.log10() - lo.log10()) / (hi.log10() - lo.log10()) * plot_w
    };
    let row_h = 22.0;
    let bottom = top + rows.len() as f64 * row_h;
    for decade in 0..=5 {
        let us = 10f64.powi(decade);
        let xx = scale((us * 1000.0) as i64);
        let label = match decade {
            0 => "1 µs".to_string(),
            1 => "10 µs".to_string(),
            2 => "100 µs".to_string(),
            3 => "1 ms".to_string(),
            4 => "10 ms".to_string(),
            _ => "100 ms".to_string(),
        };
        let _ = writeln!(
            body,
            r##"<line x1="{xx:.1}" y1="{}" x2="{xx:.1}" y2="{bottom}" stroke="#dee2e6"/><text x="{xx:.1}" y="{}" class="v" text-anchor="middle">{label}</text>"##,
            top - 4.0,
            bottom + 12.0
        );
    }
    for (i, (peer, tick, l)) in rows.iter().enumerate() {
        let yy = top + i as f64 * row_h;
        let mid = yy + row_h / 2.0 - 2.0;
        let c = color(*peer);
        let _ = writeln!(
            body,
            r#"<text x="{}" y="{}" class="l" text-anchor="end">{}</text>"#,
            plot_x - 6.0,
            mid + 4.0,
            peer.name()
        );
        let _ = writeln!(
            body,
            r#"<line x1="{:.1}" y1="{mid}" x2="{:.1}" y2="{mid}" stroke="{c}"/>"#,
            scale(l.min),
            scale(l.max)
        );
        let (bx, bw) = (scale(l.median), (scale(l.p99) - scale(l.median)).max(1.5));
        let _ = writeln!(
            body,
            r#"<rect x="{bx:.1}" y="{}" width="{bw:.1}" height="10" fill="{c}" fill-opacity="0.5" stroke="{c}"/>"#,
            mid - 5.0
        );
        let _ = writeln!(
            body,
            r#"<circle cx="{bx:.1}" cy="{mid}" r="3.5" fill="{c}"/>"#
        );
        let early = if l.early > 0 {
            format!(", {} EARLY", l.early)
        } else {
            String::new()
        };
        let _ = writeln!(
            body,
            r#"<text x="{}" y="{}" class="v">tick {tick}: median {}, p99 {}{early}</text>"#,
            plot_x + plot_w + 8.0,
            mid + 4.0,
            fmt_us(l.median),
            fmt_us(l.p99)
        );
    }
    y = bottom + 30.0;
    let _ = writeln!(
        body,
        r#"<text x="10" y="{y}" class="v">{}, {} cores · {} · lower is better everywhere</text>"#,
        escape(&m.cpu),
        m.cores,
        escape(&m.rustc)
    );
    let height = y + 12.0;
    format!(
        r##"<svg xmlns="http://www.w3.org/2000/svg" width="{width}" height="{height}" viewBox="0 0 {width} {height}" font-family="sans-serif">
<style>.h{{font-size:13px;font-weight:bold;fill:#212529}} .l{{font-size:11px;fill:#212529}} .v{{font-size:10px;fill:#495057}}</style>
<rect width="100%" height="100%" fill="white"/>
<text x="10" y="22" class="h" style="font-size:16px">punctual beside tokio, async-io, futures-timer, futures-time and embassy-time</text>
{body}</svg>
"##
    )
}

/// Where the full tables are, as the README links them (absolute: the README is also the
/// crate's docs on docs.rs and its page on crates.io).
const FULL_TABLES: &str = "https://github.com/punctual-rs/punctual/blob/main/docs/benchmarks.md";
/// The README's comparison table sits between these two lines.
const README_START: &str = "<!-- comparison: written by ci/bench_report.sh -->";
const README_END: &str = "<!-- end of comparison -->";

/// The README's comparison table: the guarantees side by side, then the headline figures of
/// this run, each row linking to its full table.
fn readme_section(r: &Results, _m: &Machine) -> String {
    let mut s = String::new();
    let _ = writeln!(s, "{README_START}");
    let _ = write!(s, "| |");
    for peer in Peer::TIMERS {
        let _ = write!(s, " {} |", peer.name());
    }
    let _ = write!(s, "\n|---|");
    for _ in Peer::TIMERS {
        let _ = write!(s, "---|");
    }
    let _ = writeln!(s);
    // The guarantees, in the order of `Peer::TIMERS`: punctual, tokio, async-io,
    // futures-timer, futures-time, embassy-time.
    let fixed: [(&str, [&str; 6]); 4] = [
        (
            "inner future dropped on fire",
            [
                "before `Err`",
                "with the `Timeout`",
                "with the race",
                "race a `Delay`",
                "with the `Timeout`",
                "with the future",
            ],
        ),
        ("`no_std`", ["yes", "no", "no", "no", "no", "yes"]),
        (
            "executor",
            [
                "any",
                "tokio",
                "any",
                "any",
                "any",
                "any, with a time driver",
            ],
        ),
        (
            "virtual time in tests",
            [
                "`ManualClock`, tokio's paused clock",
                "paused clock",
                "no",
                "no",
                "no",
                "mock driver",
            ],
        ),
    ];
    for (name, cells) in fixed {
        let _ = writeln!(s, "| {name} | {} |", cells.join(" | "));
    }
    let row = |s: &mut String, name: &str, anchor: &str, f: &dyn Fn(Peer) -> Option<String>| {
        let _ = write!(s, "| [{name}]({FULL_TABLES}#{anchor}) |");
        for peer in Peer::TIMERS {
            let _ = write!(s, " {} |", f(peer).unwrap_or_else(|| "n/a".into()));
        }
        let _ = writeln!(s);
    };
    // A peer's figure and, for a cost, how many times punctual's it is.
    let times = |ours: Option<f64>, theirs: f64, text: String, peer: Peer| match ours {
        Some(ours) if peer != Peer::Punctual && ours > 0.0 => {
            format!("{text} ({:.1}×)", theirs / ours)
        }
        _ => text,
    };
    row(&mut s, "early fires", "lateness", &|p| {
        r.lateness
            .get(&p)
            .map(|(l, n)| format!("{} of {n}", l.early))
    });
    let bare = r.ready.get(&Peer::Bare).copied().unwrap_or(0.0);
    row(&mut s, "ready future: cost", "cost-per-operation", &|p| {
        r.ready
            .get(&p)
            .map(|v| format!("{} ns", fmt_delta_ns(v - bare)))
    });
    let ours = r.arm_cancel.get(&Peer::Punctual).copied();
    row(&mut s, "arm + cancel", "cost-per-operation", &|p| {
        r.arm_cancel
            .get(&p)
            .map(|&v| times(ours, v, format!("{} ns", fmt_ns(v)), p))
    });
    row(&mut s, "2 threads / 1 thread", "contention", &|p| {
        r.contention.get(&p).map(|(a, b)| format!("{:.2}×", b / a))
    });
    let ours = match r.fire.get(&Peer::Punctual) {
        Some(Some(c)) => Some(c.cpu.as_secs_f64()),
        _ => None,
    };
    row(&mut s, &format!("fire {FIRE_N}: CPU"), "fire", &|p| {
        r.fire.get(&p).map(|c| match c {
            Some(c) => times(
                ours,
                c.cpu.as_secs_f64(),
                format!("{} ms", fmt_ms(c.cpu)),
                p,
            ),
            None => "—".into(),
        })
    });
    row(&mut s, "bytes per armed deadline", "memory", &|p| {
        r.memory
            .get(&p)
            .and_then(|m| m.held_all().then(|| format!("{:.0}", m.total())))
    });
    let _ = writeln!(s, "{README_END}");
    s
}

/// Replaces the README's comparison table (between [`README_START`] and [`README_END`]);
/// leaves a README without them alone.
fn update_readme(path: &Path, section: &str) {
    let Ok(text) = std::fs::read_to_string(path) else {
        return;
    };
    let (Some(start), Some(end)) = (text.find(README_START), text.find(README_END)) else {
        println!("report: the README has no comparison markers; left alone");
        return;
    };
    let end =
        end + README_END.len() + usize::from(text[end + README_END.len()..].starts_with('\n'));
    let new = format!("{}{section}{}", &text[..start], &text[end..]);
    std::fs::write(path, new).expect("write README.md");
}

/// `--probe SCENARIO PEER ITERS`: runs one scenario alone and prints ns per operation, for
/// a profiler (`perf record`, `valgrind --tool=callgrind`) to look at. Two scenarios print
/// more: `lateness` (ITERS runs interleaved with async-io's, and the quantiles of both)
/// and `trace` (one lateness run, deadline by deadline).
fn probe(args: &[String]) {
    let [scenario, peer, iters, ..] = args else {
        panic!("--probe SCENARIO PEER ITERS");
    };
    let peer = [
        Peer::Bare,
        Peer::Punctual,
        Peer::Punctual100us,
        Peer::PunctualSmol,
        Peer::PunctualSmol100us,
        Peer::NoTimer,
        Peer::ArmFloor,
    ]
    .into_iter()
    .chain(Peer::TIMERS)
    .find(|p| p.name() == peer)
    .expect("a peer name");
    let iters: u64 = iters.parse().expect("a number of iterations");
    let d = match scenario.as_str() {
        "ready" => with_peer!(peer, T => common::ready::<T>(iters)),
        "arm_cancel" => with_peer!(peer, T => common::arm_cancel::<T>(iters)),
        "contention" => with_peer!(peer, T => common::contention::<T>(2, iters)),
        "fire" => {
            let c = with_peer!(peer, T => common::fire::<T>(iters as usize, FIRE_GIVE_UP));
            println!("{c:?}");
            return;
        }
        "trace" => {
            // One lateness run (seed ITERS), a line per deadline in order of its due time:
            // start, duration and due (ns since the run began), and how late it was seen.
            // Late ones that share a moment point at something that held the driver.
            let mut trace = with_peer!(peer, T => common::lateness_traced::<T>(LATE_N, iters));
            trace.sort_by_key(|&(start, duration, _)| start + duration);
            for (start, duration, late) in trace {
                println!(
                    "{} {} {} {late}",
                    start.as_nanos(),
                    duration.as_nanos(),
                    (start + duration).as_nanos()
                );
            }
            return;
        }
        "lateness" => {
            // ITERS runs of LATE_N deadlines, interleaved with async-io's (the reference of
            // the lateness target): quantiles of each, pooled, in nanoseconds.
            let peers = [peer, Peer::AsyncIo];
            let mut pooled = [Vec::new(), Vec::new()];
            for run in 0..iters {
                for (sample, p) in pooled.iter_mut().zip(peers) {
                    sample.extend(with_peer!(p, T => common::lateness::<T>(LATE_N, 1 + run)));
                }
            }
            for (mut sample, p) in pooled.into_iter().zip(peers) {
                sample.sort_unstable();
                let at = |q: f64| sample[((sample.len() - 1) as f64 * q).round() as usize];
                let quantiles: Vec<String> = [0.05, 0.1, 0.25, 0.5, 0.75, 0.9, 0.99]
                    .iter()
                    .map(|&q| format!("p{:02.0} {:>7}", q * 100.0, at(q)))
                    .collect();
                println!("lateness {:<22} {}", p.name(), quantiles.join("  "));
            }
            return;
        }
        other => panic!("unknown scenario {other}"),
    };
    println!(
        "{scenario} {}: {:.2} ns per op",
        peer.name(),
        ns_per_op(d, iters)
    );
}

fn main() {
    let args: Vec<String> = std::env::args().collect();
    if !args.iter().any(|a| a == "--bench") {
        println!("report: not run without --bench (use `bash ci/bench_report.sh`)");
        return;
    }
    if let Some(i) = args.iter().position(|a| a == "--probe") {
        probe(&args[i + 1..]);
        return;
    }
    // The repository's root: this package is its `benches/` folder.
    let root = Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .expect("benches/ is inside the repository")
        .to_path_buf();
    let mut results = Results::default();
    if let Some(i) = args.iter().position(|a| a == "--memory") {
        read_memory(Path::new(&args[i + 1]), &mut results);
    }
    let mut m = machine(&root);
    m.load_before = common::load_average();
    let start = Instant::now();
    measure(&mut results);
    m.load_after = common::load_average();
    progress(&format!("measured in {:.0?}", start.elapsed()));

    let md = markdown(&results, &m);
    let svg = chart(&results, &m);
    if args.iter().any(|a| a == "--no-write") {
        println!("{md}");
        return;
    }
    std::fs::create_dir_all(root.join("docs")).expect("docs/");
    std::fs::write(root.join("docs/benchmarks.md"), &md).expect("write docs/benchmarks.md");
    std::fs::write(root.join("docs/benchmarks.svg"), svg).expect("write docs/benchmarks.svg");
    update_readme(&root.join("README.md"), &readme_section(&results, &m));
    println!("{md}");
}
