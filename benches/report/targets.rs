//! The project's performance targets, each judged on this run's results, and for each one
//! missed, the cause profiling found.

use crate::common::Peer;
use crate::format::*;
use crate::machine::Machine;
use crate::measure::*;

/// Why a target is missed, as profiling found it or, where the machine's load is the
/// cause, as the peers measured in the same run show it (for the `Still missed` table).
pub(crate) fn cause(target: &str, r: &Results, m: &Machine) -> String {
    if let Some(text) = load_cause(target, r, m) {
        return text;
    }
    if let Some(text) = crate::million::cause(target, r) {
        return text;
    }
    fixed_cause(target).to_string()
}

/// The causes read from this run: targets that the machine's load (other engineers'
/// builds and benchmarks on the same 2 cores) puts out of reach for every peer alike.
fn load_cause(target: &str, r: &Results, m: &Machine) -> Option<String> {
    let load = m
        .load_before
        .zip(m.load_after)
        .map_or("?".to_string(), |(a, b)| format!("{:.1}", a.max(b)));
    if target.starts_with("lateness: p99") {
        let p99 = |p: Peer| r.lateness.get(&p).map(|(l, _)| fmt_us(l.p99));
        let (tokio, alt, aio) = (p99(Peer::Tokio)?, p99(Peer::TokioAlt), p99(Peer::AsyncIo)?);
        let inherit =
            if target.contains("(punctual in tokio)") || target.contains("(punctual-tokio)") {
                format!(
                    " This wheel is turned by a task that sleeps on tokio's timer between turns, \
                 so it inherits that timer's lateness (tokio's own p99: {tokio} µs). With \
                 early looks (`Wheel::enable_early_looks`, on for every wheel a tokio task \
                 drives) deadlines fire at that timer's first wake after their own time, as \
                 tokio's own do (`--probe trace`: as many driver wakes as tokio's own timer \
                 makes in the same scenario), and on a quiet machine both the median and the \
                 p99 are below tokio's."
                )
            } else {
                String::new()
            };
        let steal = m.steal.map_or(String::new(), |x| {
            format!(
                " and {:.1}% of the CPU time stolen by the hypervisor (cores ready to run that \
                 the host gave to other work)",
                x * 100.0
            )
        });
        return Some(format!(
            "The machine's load, measured in the same run: the peers' p99 are far above their \
             ticks (tokio's {tokio} µs{}, async-io's, with no tick at all, {aio} µs) with a \
             load average up to {load} on 2 cores{steal}, where a thread woken on time waits \
             for a core; the target is for a quiet machine.{inherit}",
            alt.map_or(String::new(), |a| format!(
                ", its alternative timer's {a} µs"
            ))
        ));
    }
    if target.starts_with("contention") {
        let scaling = |p: Peer| r.contention.get(&p).map(|(one, two)| two / one);
        let tokio = scaling(Peer::Tokio)?;
        return Some(format!(
            "Not profiled for this target. The machine's load (a load average up to {load} on \
             2 cores) leaves a second thread no core of its own: in the same run tokio's 2 \
             workers did {tokio:.2}× the operations of one{}.",
            scaling(Peer::TokioAlt).map_or(String::new(), |a| format!(
                ", its alternative timer's {a:.2}×"
            ))
        ));
    }
    if target.starts_with("HTTP, K = 16: p99") {
        let runs = r.http.get(&(crate::http::TOKIO.to_string(), 16))?;
        let p99: Vec<f64> = runs.iter().map(|h| h.p99).collect();
        let lo = p99.iter().copied().fold(f64::INFINITY, f64::min);
        let hi = p99.iter().copied().fold(0.0, f64::max);
        return Some(format!(
            "Within the runs' noise, not profiled: tower timeout + tokio's own p99 ranged \
             from {lo:.0} to {hi:.0} µs over its runs at K = 16, on a machine with a load \
             average up to {load} on 2 cores, where the tail is the wait for a core."
        ));
    }
    if target.starts_with("memory: ≤ 56") {
        let mem = r.memory.get(&Peer::Punctual)?;
        return Some(format!(
            "Not profiled; measured: the wheel's entry is {:.0} B, which leaves {:.0} B for the \
             deadline future's own overhead, and that overhead (`size_of` of the deadline \
             beyond its inner future) is {:.0} B in this build.",
            mem.heap,
            56.0 - mem.heap,
            mem.future
        ));
    }
    if target.starts_with("HTTP, K = 16: requests/s") || target.starts_with("HTTP, K = 0") {
        let m = crate::http::medians(r);
        let cpu = |peer: &str, k: usize| {
            m.get(&(peer.to_string(), k))
                .map(|(h, _)| h.cpu_per_request)
        };
        let per_call = |peer: &str| Some((cpu(peer, 16)? - cpu(peer, 0)?) / 16.0 * 1e3);
        let (ours, tokio) = (
            per_call(crate::http::PUNCTUAL)?,
            per_call(crate::http::TOKIO)?,
        );
        let (base, ours0) = (cpu(crate::http::TOKIO, 0)?, cpu(crate::http::PUNCTUAL, 0)?);
        let inside = fmt_ns(*r.arm_cancel.get(&Peer::PunctualInTokio)?);
        return Some(format!(
            "Measured in the same run, not profiled further: a request with no inner \
             deadline already costs the server {base:.1} µs of CPU with tokio's timer and \
             {ours0:.1} µs with punctual's budget (hyper, the loopback socket, the task), and \
             each inner call adds {ours:.0} ns with punctual against {tokio:.0} ns with \
             tokio (the K = 16 row minus the K = 0 row, over 16): most of that is the inner \
             future's own pending poll and wake through the runtime's queue, which both \
             pay, not the deadline around it (arm + cancel inside tokio: {inside} ns in the \
             cost table). The load generator shares the 2 cores, with a load average \
             up to {load}: requests per second move with it from run to run."
        ));
    }
    None
}

fn fixed_cause(target: &str) -> &'static str {
    if target.starts_with("arm + cancel inside tokio") {
        "Measured in a task on a worker of the 2-worker runtime. callgrind, 100 000 arm + \
         cancel: 567 instructions on a multi-thread worker against 534 on the global wheel \
         (1.06×), where its wheel reads `CLOCK_MONOTONIC` directly, as the global wheel \
         does (tokio never pauses a multi-thread runtime's clock). A current-thread \
         runtime, whose clock may be paused, still reads through \
         `tokio::time::Instant::now()` and converts the `Instant`: 651 instructions in a \
         spawned task (169 of them the clock read), 691 in `block_on`, where choosing the \
         wheel also asks tokio for the current runtime (`Handle::try_current`, which \
         clones and drops the runtime's handle). tokio offers no cheaper way to tell \
         whether a thread is inside a runtime, or whether its clock is paused."
    } else if target.starts_with("arm + cancel") {
        "The floor row (one clock reading and two compare-and-swaps, the least a deadline \
         does that starts at its first poll, docs/design.md rule 4, and hands itself to a \
         driver on another thread without a lock) is already over a quarter of tokio's time, \
         and the clock reading alone is over a third of the operation; a third of tokio's \
         leaves less above the floor than the rest of the arm takes (its tick, the thread's \
         spare entry, the waker slot, the plan check). A start from the CPU's time-stamp \
         counter came closer but could end early when the kernel slews the clock, so it \
         was dropped."
    } else if target.starts_with("fire: process CPU ≤ tokio's") {
        "Profiled before batched wakes (callgrind, threads run one at a time; perf's \
         cpu-clock samples, threads at once): the instructions are level, 192 million for \
         the whole run (157 on the polling thread, 35 on the timer thread) against tokio's \
         179 million, with 100 of the harness alone; the time is not. The timer thread \
         woke 100 000 tasks that another core polls: each wake wrote the task's node in \
         `FuturesUnordered`'s ready queue, which the polling core then read (in the \
         samples, the dequeue took 24% of the CPU against 9% of the instructions, the \
         wake 9% against 2%). Batched wakes (`wheel/handoff.rs`) answer that: a turn wakes \
         one task, whose deadline's poll wakes the rest of the turn's batch on the polling \
         thread. Measured with `--probe fire`, batched against one wake per deadline \
         (the same binary) and tokio, interleaved, medians of CPU: 92 / 117 / 75 ms in one \
         set of 6 (1.23× tokio's, against 1.56× without); with the load average at 2.6 \
         to 3.5 on the 2 cores, 98 / 95 / 98 ms (9 runs) and 108 / 100 / 95 ms (7 runs). \
         The cause, counted in the same load: the first task's poll took the batch in 29 \
         to 68 of about 100 turns; in the others the polling thread did not run between \
         two turns (it waits for a core), and the next tick's turn took the batch back \
         and woke it from the timer thread, as before, to keep every wake within a tick \
         of its turn. What still crosses between cores with the hand-off taken: each \
         entry, whose state word the timer thread writes as it fires and the polling \
         thread reads. Driven on the polling thread (punctual-smol, punctual-tokio) \
         nothing crosses; driving the wheel where the tasks are polled, as the default \
         inside tokio does, is the remaining change. perf's samples now (8 runs of \
         `--probe fire`): 34 000 against tokio's 22 000, and the largest share on the \
         polling thread is the cache miss of the rows driven in the executor (next rows): \
         14% in `has_fired`, on the entry's state word, which the timer thread's core wrote \
         last; the timer thread's turn is 22%."
    } else if target.starts_with("fire: the timer's own CPU") {
        "Not the instructions: callgrind counts the timer's own (the run minus the no-timer \
         run's 100 million) at 100 million driven in the executor by smol and 109 million by \
         the tokio adapter, against tokio's 112 million (0.90× and 0.98×). The time goes to \
         a cache miss that tokio does not take. perf's samples (cpu-clock, 8 runs of \
         `--probe fire` each) put 12% of punctual-smol's time and 14% of punctual-tokio's \
         in `has_fired`, 96% of it on one load: the entry's state word, which a deadline \
         reads when its task is polled after the fire, so that the fire wins over its inner \
         future. The entries live in the wheel's storage, apart from the futures, and with \
         1 000 deadlines firing in a tick, the turn's pass over them and over their tasks \
         pushes each entry out of the cache before its task is polled: the same load is \
         0.7% of the samples with 10 000 deadlines (100 a tick) and 15% with 300 000. \
         tokio keeps its timer's state inside the future, on lines its poll touches anyway. \
         Entries in the wheel's storage are the design (no allocation per deadline, a fixed \
         storage on microcontrollers, deadlines that may move), and no saving of \
         instructions removes this miss."
    } else if target.starts_with("HTTP") {
        "Not profiled yet: the request's own cost (hyper's parsing, the loopback socket, the \
         load generator on the same 2 cores) is most of a request's CPU, so the deadlines' \
         part is small beside the runs' noise."
    } else if target.starts_with("fire:") {
        "The harness alone (the `no timer` row of the fire table) takes about half of \
         tokio's CPU, which leaves a timer almost nothing for 100000 clock readings (rule \
         4), arms, fires and wakes. With the global wheel the timer thread also fires \
         entries that another thread polls, so each entry moves between caches, and so do \
         the wakes of a batch the polling thread does not take within a tick (see the \
         default global wheel's row)."
    } else if target.starts_with("lateness: at a 100 µs tick") {
        "Level with async-io's to a few tenths of a microsecond: both wait for the same \
         reactor wake-up, and which one is ahead flips from run to run with the machine's \
         load."
    } else {
        "not profiled yet"
    }
}

pub(crate) fn mark(ok: bool) -> &'static str {
    if ok { "met" } else { "**missed**" }
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
