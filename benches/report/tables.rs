//! The markdown of `docs/benchmarks.md`'s measured part: the header, the verdict, one
//! table per scenario and the targets. How each peer is measured, and the causes the
//! verdict and the targets link to, are in its hand-written part.

use std::fmt::Write as _;

use crate::common::{Peer, lateness_peers};
use crate::format::*;
use crate::machine::Machine;
use crate::measure::*;
use crate::results::{Memory, Results};
use crate::verdict::Firmware;

pub(crate) fn markdown(r: &Results, m: &Machine, firmware: Option<Firmware>) -> String {
    let mut s = String::new();
    let load = |l: Option<f64>| l.map_or("?".into(), |l| format!("{l:.2}"));
    let steal = m.steal.map_or("?".into(), |x| format!("{:.1}%", x * 100.0));
    let versions: Vec<String> = m.versions.iter().map(|(n, v)| format!("{n} {v}")).collect();
    let _ = writeln!(
        s,
        "# Benchmarks\n\nWritten by `bash ci/bench_report.sh` (the short suite: medians of \
         {SAMPLES} samples, interleaved between the peers for *ready* and *arm + cancel* and \
         taken one peer after another with {ARMED} armed; {CONTENTION_SAMPLES} samples for \
         contention, one peer after another; {FIRE_RUNS} fire runs; {LATE_RUNS}×{LATE_N} \
         lateness samples per peer). The full criterion suites are `cargo bench -p \
         punctual-benches --bench timers` and `--bench fire`; `--bench memory`, `--bench \
         million` and `--bench http` print their rows. The command builds \
         with `--cfg tokio_unstable`, for tokio's alternative timer, and tokio without \
         `test-util`, as a service's release build has it.) The machine is a virtual one, \
         shared with other work: read the figures as ratios between peers measured in the \
         same run, not as absolute costs. How each table and each peer is measured, and the \
         causes the verdict and the targets link to, follow the appendix.\n\n\
         - **Machine**: {}, {} cores; load average {} before the run, {} after; {steal} of \
         the CPU time during the run stolen by the hypervisor (steal: cores ready to run that \
         the host gave to other work, which the load average does not show)\n\
         - **Toolchain**: {}\n- **Crates**: {}\n",
        m.cpu,
        m.cores,
        load(m.load_before),
        load(m.load_after),
        m.rustc,
        versions.join(", ")
    );
    crate::verdict::section(&mut s, r, firmware);
    cost(&mut s, r);
    contention(&mut s, r);
    fire(&mut s, r);
    memory(&mut s, r);
    lateness(&mut s, r);
    crate::million::section(&mut s, r);
    crate::http::section(&mut s, r);
    crate::targets::appendix(&mut s, r);
    s
}

fn cost(s: &mut String, r: &Results) {
    let _ = writeln!(
        s,
        "\n## Cost per operation\n\n\
         | (ns) | ready | overhead | arm + cancel | × punctual | arm + cancel, {ARMED} armed | × punctual |\n\
         |---|---:|---:|---:|---:|---:|---:|"
    );
    let nan = |x: Option<f64>| x.unwrap_or(f64::NAN);
    let armed = |p| nan(r.arm_cancel_armed.get(&p).copied());
    let bare = r.ready(Peer::Bare).unwrap_or(0.0);
    let _ = writeln!(s, "| bare future | {} | | | | | |", fmt_ns(bare));
    let (ours_ac, ours_aca) = (nan(r.arm_cancel(Peer::Punctual)), armed(Peer::Punctual));
    for peer in Peer::timers() {
        let (ready, ac) = (nan(r.ready(peer)), nan(r.arm_cancel(peer)));
        let (aca, aca_ratio) = match r.armed_short.get(&peer) {
            Some(held) => (format!("n/a: held {held}"), String::new()),
            None => {
                let aca = armed(peer);
                (fmt_ns(aca), fmt_ratio(aca / ours_aca))
            }
        };
        let (name, delta, ratio) = (
            peer.name(),
            fmt_delta_ns(ready - bare),
            fmt_ratio(ac / ours_ac),
        );
        let (ready, ac) = (fmt_ns(ready), fmt_ns(ac));
        let _ = writeln!(
            s,
            "| {name} | {ready} | {delta} | {ac} | {ratio} | {aca} | {aca_ratio} |"
        );
    }
    if let Some(floor) = r.arm_cancel(Peer::ArmFloor) {
        let (name, ratio) = (Peer::ArmFloor.name(), fmt_ratio(floor / ours_ac));
        let _ = writeln!(s, "| *{name}* | | | {} | {ratio} | | |", fmt_ns(floor));
    }
}

fn contention(s: &mut String, r: &Results) {
    let _ = writeln!(
        s,
        "\n## Contention\n\n| (M op/s) | 1 thread | 2 threads | 2 / 1 |\n|---|---:|---:|---:|"
    );
    for peer in Peer::timers() {
        if let Some(&(one, two)) = r.contention.get(&peer) {
            let (name, ratio, one, two) = (peer.name(), two / one, one / 1e6, two / 1e6);
            let _ = writeln!(s, "| {name} | {one:.2} | {two:.2} | {ratio:.2}× |");
        }
    }
}

fn fire(s: &mut String, r: &Results) {
    let _ = writeln!(
        s,
        "\n## Fire\n\n| | wall (ms) | CPU (ms) | CPU × punctual |\n|---|---:|---:|---:|"
    );
    let not_done = format!("not done after {} s", FIRE_GIVE_UP.as_secs());
    let ours = r.fire.get(&Peer::Punctual).copied().flatten();
    for peer in fire_peers() {
        let row = match r.fire.get(&peer).copied().flatten() {
            Some(c) => {
                let ratio = ours.map_or("".into(), |o| {
                    fmt_ratio(c.cpu.as_secs_f64() / o.cpu.as_secs_f64())
                });
                format!("{} | {} | {ratio}", fmt_ms(c.wall), fmt_ms(c.cpu))
            }
            None => format!("{not_done} | |"),
        };
        let _ = writeln!(s, "| {} | {row} |", peer.name());
    }
    let _ = writeln!(
        s,
        "\nWith tokio's cooperative budget **on**:\n\n| | wall (ms) | CPU (ms) |\n|---|---:|---:|"
    );
    for (peer, cost) in &r.fire_budget_on {
        let row = cost.map_or(format!("{not_done} |"), |c| {
            format!("{} | {}", fmt_ms(c.wall), fmt_ms(c.cpu))
        });
        let _ = writeln!(s, "| {} (budget on) | {row} |", peer.name());
    }
}

fn memory(s: &mut String, r: &Results) {
    let _ = writeln!(
        s,
        "\n## Memory\n\n\
         | | future overhead | heap per timer | total | deadlines held |\n\
         |---|---:|---:|---:|---:|"
    );
    for peer in Peer::timers() {
        if let Some(mem) = r.memory.get(&peer) {
            // Not per deadline if the peer let go of some.
            let held_all = mem.held == mem.armed;
            let total = held_all.then(|| format!("{:.0}", mem.total()));
            let total = total.unwrap_or_else(|| "n/a".into());
            let Memory {
                future,
                heap,
                held,
                armed,
            } = *mem;
            let row = format!("{future:.0} | {heap:.0} | {total} | {held} of {armed}");
            let _ = writeln!(s, "| {} | {row} |", peer.name());
        }
    }
    let more: std::collections::BTreeSet<usize> = r.memory_at.keys().map(|&(_, n)| n).collect();
    if more.is_empty() {
        return;
    }
    let head: String = more.iter().map(|n| format!(" {n} |")).collect();
    let _ = writeln!(
        s,
        "\nHeap bytes per armed timer as more are armed:\n\n| |{head}\n|---|{}",
        "---:|".repeat(more.len())
    );
    for peer in Peer::timers() {
        let cells: String = more
            .iter()
            .map(|&n| {
                r.memory_at
                    .get(&(peer, n))
                    .map_or(" |".into(), |heap| format!(" {heap:.0} |"))
            })
            .collect();
        let _ = writeln!(s, "| {} |{cells}", peer.name());
    }
}

fn lateness(s: &mut String, r: &Results) {
    let _ = writeln!(
        s,
        "\n## Lateness\n\n\
         | | tick | early | median (µs) | p99 (µs) | max (µs) |\n|---|---|---:|---:|---:|---:|"
    );
    for (peer, tick) in lateness_peers() {
        if let Some((l, n)) = r.lateness.get(&peer) {
            let (median, p99, max) = (fmt_us(l.median), fmt_us(l.p99), fmt_us(l.max));
            let row = format!("{tick} | {} of {n} | {median} | {p99} | {max}", l.early);
            let _ = writeln!(s, "| {} | {row} |", peer.name());
        }
    }
}
