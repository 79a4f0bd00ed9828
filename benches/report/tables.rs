//! The markdown of `docs/benchmarks.md`: the verdict per use case, one table per scenario,
//! how each peer is measured, and the project's targets as an appendix.

use std::collections::BTreeSet;
use std::fmt::Write as _;

use crate::common::Peer;
use crate::format::*;
use crate::machine::Machine;
use crate::measure::*;
use crate::targets::{mark, targets};
use crate::verdict::Firmware;

pub(crate) fn markdown(r: &Results, m: &Machine, firmware: Option<Firmware>) -> String {
    let mut s = String::new();
    let load = |l: Option<f64>| l.map_or("?".into(), |l| format!("{l:.2}"));
    let steal = |share: Option<f64>| share.map_or("?".into(), |x| format!("{:.1}%", x * 100.0));
    let versions: Vec<String> = m.versions.iter().map(|(n, v)| format!("{n} {v}")).collect();
    let _ = writeln!(s, "# Benchmarks\n");
    let _ = writeln!(
        s,
        "Written by `bash ci/bench_report.sh` (the short suite: medians of {SAMPLES} samples, \
         interleaved between the peers for *ready* and *arm + cancel* and taken one peer after \
         another with {ARMED} armed; {CONTENTION_SAMPLES} samples for contention, one peer \
         after another; {FIRE_RUNS} fire runs; {LATE_RUNS}×{LATE_N} lateness samples per peer). The \
         full criterion suites are `cargo bench -p punctual-benches --bench timers` and \
         `--bench fire`; `--bench lateness`, `--bench memory`, `--bench million` and \
         `--bench http` print their tables. The command builds with `--cfg tokio_unstable`, \
         for tokio's alternative timer, and tokio without `test-util`, as a service's \
         release build has it.) The machine is a virtual one, shared with other \
         work: read the figures as ratios between peers measured in the same run, not as \
         absolute costs.\n"
    );
    let _ = writeln!(
        s,
        "- **Machine**: {}, {} cores; load average {} before the run, {} after; {} of the \
         CPU time during the run stolen by the hypervisor (steal: cores ready to run that \
         the host gave to other work, which the load average does not show)\n\
         - **Toolchain**: {}\n- **Crates**: {}\n",
        m.cpu,
        m.cores,
        load(m.load_before),
        load(m.load_after),
        steal(m.steal),
        m.rustc,
        versions.join(", ")
    );
    let _ = writeln!(
        s,
        "![cost per operation, fire and lateness](benchmarks.svg)\n"
    );

    crate::verdict::section(&mut s, r, firmware);

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
    for peer in Peer::timers() {
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
    for peer in Peer::timers() {
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
         current-thread runtime (inside `unconstrained`) for tokio, punctual in tokio and \
         punctual-tokio (whose driver is a task of that runtime), a task on a worker of a \
         2-worker runtime for tokio's alternative timer (it applies to multi-thread runtimes \
         only), `async_io::block_on` for async-io and futures-time, and for punctual-smol, a 1 ms wheel whose driver runs in the same task \
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
    for peer in fire_peers() {
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
    for peer in Peer::timers() {
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
        for peer in Peer::timers() {
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
    for (peer, tick) in lateness_peers() {
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

    crate::million::section(&mut s, r);
    crate::http::section(&mut s, r);

    let _ = writeln!(s, "\n## How each peer is measured\n");
    let _ = writeln!(
        s,
        "- **punctual**: `f.deadline(d)` on the global wheel (1 ms tick, its own driver \
         thread); **punctual-100us**: `wheel.deadline(d, f)` on a growable wheel of 100 µs \
         ticks driven by `punctual::wheel::spawn_driver`; **punctual-smol** (fire only) and \
         **punctual-smol-100us**: growable wheels of 1 ms and 100 µs ticks whose driver runs \
         inside the executor's own task \
         (`async_io::block_on(punctual_smol::with_driver(wheel, ..))`), sleeping on async-io \
         timers in the reactor that block_on runs, as async-io's own timers do.\n\
         - **punctual-tokio** (fire and lateness): the tokio adapter, \
         `wheel.deadline(d, f)` on the wheel of `punctual::adapters::tokio::start()` (1 ms \
         ticks), driven by a task of the current-thread runtime the scenario runs on.\n\
         - **tokio alt timer**: `tokio::time::timeout(d, f)` on a 2-worker multi-thread \
         runtime built with `Builder::enable_alt_timer()` (tokio's alternative timer, a \
         wheel per worker; needs `--cfg tokio_unstable`, which the report command sets), \
         every scenario in a task on a worker (inside `unconstrained`), so its timers take \
         the worker-local path users' tasks take; contention runs tasks on the same runtime.\n\
         - **tokio**: `tokio::time::timeout(d, f)`, always inside `tokio::task::unconstrained` \
         (its cooperative budget would otherwise stop its timers from registering after 128 \
         polls in one task), except in the budget-on row. Built without tokio's \
         `test-util` feature, under which tokio's `Instant::now()` would first check for a \
         paused clock on every reading.\n\
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
    appendix(&mut s, r, m);
    s
}

/// The targets the project set itself, each judged on this run, with the cause of each
/// one missed.
fn appendix(s: &mut String, r: &Results, m: &Machine) {
    let rows = targets(r);
    if rows.is_empty() {
        return;
    }
    let _ = writeln!(
        s,
        "## Appendix: targets
"
    );
    let _ = writeln!(
        s,
        "The targets the project set itself, most of them against tokio, judged on this run; \
         for each one missed, what profiling or the same run found to be the cause. A target \
         missed here may still be a row where punctual is ahead of every peer (the verdict \
         says which).\n"
    );
    let _ = writeln!(s, "| target | measured | | cause |\n|---|---|---|---|");
    // A cause shared by several targets is written once.
    let mut written: Vec<(String, &str)> = Vec::new();
    for (target, measured, ok) in &rows {
        let cause = if *ok {
            String::new()
        } else {
            let cause = crate::causes::missed(target, r, m);
            match written.iter().find(|(text, _)| *text == cause) {
                Some((_, first)) => format!("As for *{first}*."),
                None => {
                    written.push((cause.clone(), target));
                    cause
                }
            }
        };
        let _ = writeln!(s, "| {target} | {measured} | {} | {cause} |", mark(*ok));
    }
}
