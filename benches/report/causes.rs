//! Why punctual is behind where it is: for the verdict's rows ([`behind`]) and for the
//! targets it misses ([`missed`]). Each cause is what profiling or a measurement in the
//! same run found, in at most three sentences.

use crate::common::Peer;
use crate::format::*;
use crate::machine::Machine;
use crate::measure::*;

/// The HTTP harness: what moves its rows from run to run.
pub(crate) const HTTP_HARNESS: &str = "The harness, not the deadlines: the 2 server workers and the load \
     generator share 2 cores, and a run at times settles where requests/s rise by about 40% \
     while p99 rises to about 4.3 ms (one scheduler slice), for every peer alike (3 of 24 \
     runs at K = 4 in a check on a quiet machine). On that machine, 8 interleaved runs per \
     peer at K = 4 gave medians of 125 000 requests/s for punctual, 121 000 for tokio's \
     timer and 126 000 for its alternative timer, with punctual at 0.85× tokio's server CPU \
     per request; a median of 7 runs still moves with how many of them fell in that mode.";

/// A wheel driven in the executor against async-io's own timers, at a 100 µs tick.
const SMOL_WAKE: &str = "Both wait for the same reactor wake-up (epoll), after which \
     punctual-smol's driver task turns the wheel and wakes the deadline's task, where the \
     reactor wakes an async-io timer's task itself: one more task poll, a few tenths of a \
     microsecond. A 100 µs wheel on a thread of its own (punctual-100us) is ahead of \
     async-io.";

/// The cause of a verdict row where punctual is behind `peer` at `what`.
pub(crate) fn behind(what: &str, peer: &str) -> &'static str {
    if what.starts_with("HTTP") || what.starts_with("gRPC") {
        return HTTP_HARNESS;
    }
    if what.starts_with("lateness: median, 1 ms tick") {
        return "The tick: the global wheel turns once a millisecond, so a deadline fires \
                at the first turn at or after its time, half a tick late on average, where \
                async-io gives the reactor each timer's own instant. A wheel of 100 µs ticks \
                (the next row) is level with async-io; the tick is what buys arming in \
                constant time with no allocation.";
    }
    if what.starts_with("lateness: median, punctual-smol") {
        return SMOL_WAKE;
    }
    if what.starts_with("fire 100 000") && peer.starts_with("tokio") {
        return "Not the instructions (callgrind counts the timer's own within 0.9 to 1.0× of \
                tokio's) but one cache miss per deadline: the fired entry's state word, in \
                the wheel's storage apart from the future, which the turn's pass over a \
                tick's 1 000 fired entries evicts before each task is polled. tokio keeps \
                its timer's state inside the future, on lines the poll touches anyway. On \
                real time the default wheel's driver task also sleeps on the global wheel's \
                thread, one cross-thread wake a turn.";
    }
    if what == "firmware flash, thumbv7m" {
        return "The wheel's code (its turn 3.1 KB with the levels' search and insert 0.6 KB, \
                the lock-free start and release 1.3 KB, the degraded mode of a full wheel \
                0.9 KB, the deadline's timer 1.1 KB: see *Firmware size*): cascading \
                levels, prompt reclaiming and the degraded mode, none of which \
                `with_timeout`'s sorted queue has to do. Helpers copied into several \
                callers are out of line on 32-bit targets; what remains duplicated is \
                under 100 B each.";
    }
    if what == "firmware static RAM, thumbv7m" {
        return "The 8-entry wheel's static, 680 B: besides 32 B per entry, about 420 B are \
                fixed (the level heads and bitmaps, the places of degraded deadlines, the \
                drivers' wakers), where embassy-time's queue keeps wakers only.";
    }
    if what.starts_with("arm + cancel") && peer == "embassy-time" {
        return "embassy-time's queue is a static array of 128 wakers: an arm writes a waker \
                into it, a cancel leaves it there, and nothing is handed to another thread. \
                punctual's entry is published for a driver on another thread without a lock \
                and taken back on drop: the floor row of the cost table (a clock reading and \
                those two compare-and-swaps) is most of punctual's time.";
    }
    "Not profiled yet."
}

/// The cause of a target missed in this run (the appendix).
pub(crate) fn missed(target: &str, r: &Results, m: &Machine) -> String {
    let load = m
        .load_before
        .zip(m.load_after)
        .map_or("?".to_string(), |(a, b)| format!("{:.1}", a.max(b)));
    let tokio_p99 = r.lateness.get(&Peer::Tokio).map(|(l, _)| fmt_us(l.p99));
    if target.starts_with("lateness: p99") {
        return format!(
            "The machine's load: a load average up to {load} on 2 cores, where a thread woken \
             on time waits for a core (tokio's own p99 in the same run: {} µs). The wheels a \
             tokio task drives sleep on tokio's timer between turns and inherit its lateness.",
            tokio_p99.unwrap_or_else(|| "?".into())
        );
    }
    if target.starts_with("contention") {
        let tokio = r.contention.get(&Peer::Tokio).map(|(one, two)| two / one);
        return format!(
            "The machine's load (a load average up to {load} on 2 cores) leaves a second \
             thread no core of its own; tokio's 2 workers did {} the operations of one in \
             the same run.",
            tokio.map_or("?".into(), |x| format!("{x:.2}×"))
        );
    }
    if target.starts_with("memory: ≤ 56") {
        let mem = r.memory.get(&Peer::Punctual);
        return format!(
            "The wheel's entry is {} B, which leaves 16 B for the deadline future's own \
             overhead, and that overhead (the timer's state word, its limit and the wheel \
             reference, beyond the inner future) is {} B.",
            mem.map_or("?".into(), |m| format!("{:.0}", m.heap)),
            mem.map_or("?".into(), |m| format!("{:.0}", m.future))
        );
    }
    if target.starts_with("arm + cancel inside tokio") {
        let spread = r
            .arm_cancel_runs
            .get(&Peer::PunctualInTokio)
            .zip(r.arm_cancel_runs.get(&Peer::Punctual))
            .and_then(|(inside, global)| paired(inside, global));
        return format!(
            "Measured in a task on a worker of the 2-worker runtime, whose wheel reads \
             `CLOCK_MONOTONIC` directly as the global wheel does: callgrind counts 567 \
             instructions against the global wheel's 534 (1.06×), the difference being the \
             choice of the worker's wheel at the first pending poll. Run by run the ratio \
             went {} in this run, on a machine whose load moves both rows.",
            spread.map_or("?".into(), |((_, lo, hi), _)| format!(
                "from {lo:.2}× to {hi:.2}×"
            ))
        );
    }
    if target.starts_with("arm + cancel, one thread: ≤ 1.3× the floor") {
        return "Not atomics: an arm + cancel does the floor's two compare-and-swaps and no \
                other read-modify-write (the entry comes from the thread's spare, and the \
                cancel takes it back off the arm inbox before the driver sees it). The rest \
                is instructions, about 560 against the floor's 115 (callgrind), spread over \
                every layer: the arm itself 192 (the tick of the deadline and of now, the \
                thread's shard and spare, the entry, the plan), the release 100, the \
                deadline's poll and drop with the timer's state 131, the default deadline \
                asking tokio whether a runtime is current 72, and the global clock's reading \
                51. Taking the entry from the thread's spare by address, and a lighter \
                recycle of an entry taken back off the inbox, saved 17 of them (3%) and \
                0.05× of the ratio in interleaved runs, within their spread, so the change \
                was not kept."
            .into();
    }
    if target.starts_with("arm + cancel") {
        let floor = r.arm_cancel.get(&Peer::ArmFloor);
        let tokio = r.arm_cancel.get(&Peer::Tokio);
        return format!(
            "The floor (one clock reading and two compare-and-swaps, the least a deadline \
             that starts at its first poll and hands itself to another thread can do) is {} \
             of tokio's time on its own, and the clock reading is a third of punctual's. A \
             start from the CPU's time-stamp counter came closer but could end early when \
             the kernel slews the clock, so it was dropped.",
            floor
                .zip(tokio)
                .map_or("?".into(), |(f, t)| format!("{:.2}", f / t))
        );
    }
    if target.starts_with("fire: process CPU ≤ half") {
        let floor = match r.fire.get(&Peer::NoTimer) {
            Some(Some(c)) => fmt_ms(c.cpu),
            _ => "?".into(),
        };
        return format!(
            "The harness alone, with no timer, takes {floor} ms, more than half of tokio's: \
             no timer can meet this target in this scenario."
        );
    }
    if target.starts_with("fire: process CPU ≤ tokio's (the default wheel inside tokio)") {
        return "The entries live in the wheel's storage, apart from the futures (no \
                allocation per deadline): a fire touches the entry, then wakes a task whose \
                lines are cold, and the poll that sees the fire releases the entry again. \
                perf: the harness's wakes take 11% of the process's CPU against 3.5% under \
                tokio, whose timer state sits in the future beside the task it wakes, and \
                the release of fired entries 9%. Batched wakes for the runtime's wheel \
                measured no better in interleaved runs (1.08 to 1.22× against 1.07 to \
                1.17×), so they stay off."
            .into();
    }
    if target.starts_with("fire: process CPU ≤ tokio's") {
        return "Instructions are level with tokio's (callgrind: 192 against 179 million for \
                the run); the time is memory traffic. The turn's walk of a crowded tick, \
                one miss per entry, was a fifth of the process's CPU; growable wheels' slots \
                are now four chains walked in turn, which took the global wheel from about 1.1× \
                to about 0.9× of tokio's in interleaved criterion runs (`--bench fire`); \
                this report's runs, in one process after every other scenario, put it about \
                level. What is left is the fired entry's state word, read by the polling \
                thread on another core, and the wakes of tasks that core polls."
            .into();
    }
    if target.starts_with("fire: the timer's own CPU") {
        return "Not the instructions: callgrind counts the timer's own at 0.90× (smol) and \
                0.98× (tokio adapter) of tokio's. The time is one cache miss in `has_fired`, \
                on the fired entry's state word in the wheel's storage, which the turn's pass \
                over a tick's 1 000 fired entries evicts before each task polls; tokio keeps \
                its timer's state inside the future. Entries in the wheel's storage are the \
                design (no allocation per deadline, fixed storage on microcontrollers)."
            .into();
    }
    if target.starts_with("a million timers: arm") {
        return "The floor row (no timer: the boxes, the clock reading at each first poll, \
                the kept waker) alone takes most of half the best tokio timer's time. \
                punctual's own part is the start path (the entry, its waker, the arm inbox) \
                and the wheel's storage growing to a million entries (perf, the phase alone; \
                the timer thread is idle)."
            .into();
    }
    if target.starts_with("a million timers: cancel") {
        return "The first cancel wakes the driver (cancelled entries are reclaimed within a \
                tick), whose turn files the million arms it was never woken for, only to \
                unlink each as its cancel arrives: a third thread on 2 cores. Even a build \
                whose cancels left their entries to no one measured above half the best \
                tokio timer's, since each release is a compare-and-swap on an entry a cache \
                line from the deadline's box, so the change was not made."
            .into();
    }
    if target.starts_with("a million timers: bytes") {
        return "Resident growth counts what every peer pays alike: the floor row, with no \
                timer, grows by more than half the best tokio timer's bytes on its own (the \
                boxes, malloc's headers, the `Vec`, the kept wakers). punctual adds little \
                to the floor, and the deadline alone (the memory table) is about half of \
                tokio's."
            .into();
    }
    if target.starts_with("HTTP") || target.starts_with("gRPC") {
        return HTTP_HARNESS.into();
    }
    if target.starts_with("lateness: at a 100 µs tick") {
        let range = |p: Peer| {
            let runs = r.lateness_run_medians.get(&p)?;
            let lo = *runs.iter().min()?;
            let hi = *runs.iter().max()?;
            Some(format!("{} to {} µs", fmt_us(lo), fmt_us(hi)))
        };
        return format!(
            "Both wait for the same reactor wake-up (epoll), after which punctual-smol's \
             driver task turns the wheel and wakes the deadline's task, where the reactor \
             wakes an async-io timer's task itself: a few tenths of a microsecond. Not \
             profiled further; the run medians went from {} for punctual-smol and {} for \
             async-io.",
            range(Peer::PunctualSmol100us).unwrap_or_else(|| "?".into()),
            range(Peer::AsyncIo).unwrap_or_else(|| "?".into())
        );
    }
    "Not profiled yet.".into()
}
