//! The project's performance targets, each judged on this run's results (their causes,
//! where missed, are in [`crate::causes`]).

use crate::common::Peer;
use crate::format::*;
use crate::measure::*;

pub(crate) fn mark(ok: bool) -> &'static str {
    if ok { "met" } else { "missed" }
}

/// `(target, measured, met)` rows for the project's performance targets.
pub(crate) fn targets(r: &Results) -> Vec<(String, String, bool)> {
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
    if let (Some(&ours), Some(&floor)) = (r.arm_cancel.get(&p), r.arm_cancel.get(&Peer::ArmFloor)) {
        rows.push((
            "arm + cancel, one thread: ≤ 1.3× the floor (clock + 2 CAS)".into(),
            format!(
                "{} vs {} ns: {:.2}× the floor",
                fmt_ns(ours),
                fmt_ns(floor),
                ours / floor
            ),
            ours <= floor * 1.3,
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
        .filter_map(|(q, _)| r.lateness.get(q))
        .map(|(s, _)| s.early)
        .sum();
    if r.lateness.contains_key(&p) {
        rows.push((
            "lateness: zero early fires".into(),
            format!("{early} early"),
            early == 0,
        ));
    }
    for (peer, tick) in PUNCTUAL_LATENESS {
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
    rows.extend(crate::peer_targets::rows(r));
    rows
}
