//! The "A million timers" section: the medians of `benches/million.rs`'s runs.

use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::time::Duration;

use crate::common::Peer;
use crate::format::*;
use crate::measure::{Million, Results};

/// Each peer's median run (each figure its own median).
pub(crate) fn medians(r: &Results) -> BTreeMap<Peer, Million> {
    let median_d = |mut xs: Vec<Duration>| {
        xs.sort_unstable();
        xs[xs.len() / 2]
    };
    r.million
        .iter()
        .filter(|(_, runs)| !runs.is_empty())
        .map(|(&peer, runs)| {
            let mut bytes: Vec<f64> = runs.iter().map(|m| m.bytes).collect();
            bytes.sort_by(f64::total_cmp);
            let m = Million {
                arm: median_d(runs.iter().map(|m| m.arm).collect()),
                cancel: median_d(runs.iter().map(|m| m.cancel).collect()),
                bytes: bytes[bytes.len() / 2],
                fire_cpu: median_d(runs.iter().map(|m| m.fire_cpu).collect()),
                fire_wall: median_d(runs.iter().map(|m| m.fire_wall).collect()),
            };
            (peer, m)
        })
        .collect()
}

/// The best (least) of tokio's two timers by `f`.
pub(crate) fn best_tokio(m: &BTreeMap<Peer, Million>, f: impl Fn(&Million) -> f64) -> Option<f64> {
    [Peer::Tokio, Peer::TokioAlt]
        .iter()
        .filter_map(|p| m.get(p).map(&f))
        .reduce(f64::min)
}

pub(crate) fn section(s: &mut String, r: &Results) {
    let m = medians(r);
    if m.is_empty() {
        return;
    }
    let runs = r.million.values().map(Vec::len).max().unwrap_or(0);
    let _ = writeln!(s, "\n## A million timers\n");
    let _ = writeln!(
        s,
        "1 000 000 deadlines of 1 to 60 s armed at once from 2 threads (punctual's default: 2 \
         threads; the others: 2 tasks on a 2-worker tokio runtime, the alternative timer's \
         built with `enable_alt_timer()`), 500 000 each, made, boxed and polled once; then all \
         dropped by the same 2; then 100 000 deadlines over 1 to 100 ms fired, 50 000 awaited \
         by each of the 2, in the same process (the fire deadlines are short so that a run \
         takes a fraction of a second, not a minute). *Bytes*: growth of resident memory \
         from before the million were made to when all were armed, per deadline (the boxed \
         future and what its timer holds for it). Each run a process of its own, \
         `benches/million.rs`; median of {runs} runs. × best tokio: over the better of tokio's \
         two timers in that column. *floor: clock + waker + CAS*: not a timer but the scenario \
         with no timer's work at all, on 2 threads as punctual's: each deadline reads the \
         clock, keeps its waker and, dropped, cancels with one compare-and-swap on a word of \
         its own; it fires nothing.\n"
    );
    let _ = writeln!(
        s,
        "| | arm (ms) | × best tokio | cancel (ms) | × best tokio | bytes per armed deadline | × best tokio | fire CPU (ms) | fire wall (ms) |\n\
         |---|---:|---:|---:|---:|---:|---:|---:|---:|"
    );
    let ms = |d: Duration| d.as_secs_f64() * 1e3;
    let arm = best_tokio(&m, |x| ms(x.arm));
    let cancel = best_tokio(&m, |x| ms(x.cancel));
    let bytes = best_tokio(&m, |x| x.bytes);
    let ratio = |x: f64, best: Option<f64>| best.map_or(String::new(), |b| fmt_ratio(x / b));
    for peer in [
        Peer::Punctual,
        Peer::PunctualInTokio,
        Peer::Tokio,
        Peer::TokioAlt,
        Peer::OwnFloor,
    ] {
        if let Some(x) = m.get(&peer) {
            let fire = |d: Duration| {
                if peer == Peer::OwnFloor {
                    "n/a".to_string()
                } else {
                    fmt_ms(d)
                }
            };
            let _ = writeln!(
                s,
                "| {} | {:.0} | {} | {:.0} | {} | {:.0} | {} | {} | {} |",
                peer.name(),
                ms(x.arm),
                ratio(ms(x.arm), arm),
                ms(x.cancel),
                ratio(ms(x.cancel), cancel),
                x.bytes,
                ratio(x.bytes, bytes),
                fire(x.fire_cpu),
                fire(x.fire_wall)
            );
        }
    }
}

/// The measured cause of a million-timers target missed, with this run's figures: what the
/// floor row leaves to a timer against half the best tokio timer's.
pub(crate) fn cause(target: &str, r: &Results) -> Option<String> {
    let m = medians(r);
    let (ours, floor) = (m.get(&Peer::Punctual)?, m.get(&Peer::OwnFloor)?);
    let ms = |d: Duration| d.as_secs_f64() * 1e3;
    if target.starts_with("a million timers: arm") {
        let half = best_tokio(&m, |x| ms(x.arm))? / 2.0;
        return Some(format!(
            "The floor row alone (no timer: the boxes, the clock reading each deadline makes \
             at its first poll, docs/design.md rule 4, the kept waker) takes {:.0} ms, and half \
             the best tokio timer's is {half:.0} ms: that leaves a timer {:.0} ms for a million \
             arms, no design's reach. punctual's own part is the {:.0} ms above the floor. \
             perf's samples of the phase alone (`--bench million -- --one punctual --marks`, \
             `perf record -k CLOCK_MONOTONIC`, `perf report --time` between the marks): the \
             timer thread is idle (0.3% of the samples: arms later than its plan wake no one); \
             the arming threads' share beyond the floor is the start path (the entry, its \
             waker, the push onto the arm inbox) and the wheel's storage growing to a million \
             entries (its pages faulted in once).",
            ms(floor.arm),
            (half - ms(floor.arm)).max(0.0),
            ms(ours.arm) - ms(floor.arm),
        ));
    }
    if target.starts_with("a million timers: cancel") {
        let half = best_tokio(&m, |x| ms(x.cancel))? / 2.0;
        return Some(format!(
            "The floor row takes {:.0} ms, so half the best tokio timer's ({half:.0} ms) leaves \
             a timer {:.0} ms for a million cancels. punctual's first cancel wakes the driver \
             (cancelled entries are reclaimed within a tick), whose turn takes the million arms \
             it was never woken for and files every one not cancelled yet, to unlink each again \
             as its cancel arrives: a third thread on the 2 cores (36% of the phase's perf \
             samples). The design change this pointed to, a turn woken to reclaim keeping the \
             arms later than its plan unfiled, was bounded first by its best case: a build \
             whose cancels left their entries to no one (no cancel pushed, the driver never \
             woken, nothing reclaimed), 7 runs interleaved with the peers, took a median of \
             32 ms against 56 ms for this build and 38 ms for tokio's alternative timer, with \
             12 ms for the floor. That is still above half the best tokio timer's: the \
             release itself (each cancel's compare-and-swap on its entry, in the wheel's \
             storage, a cache line apart from the deadline's box) costs more than the target \
             leaves. Since the change would also leave entries cancelled inside an untaken arm \
             inbox unreclaimed until the driver's planned turn (no longer within a tick), \
             it was not made.",
            ms(floor.cancel),
            (half - ms(floor.cancel)).max(0.0),
        ));
    }
    if target.starts_with("a million timers: bytes") {
        let half = best_tokio(&m, |x| x.bytes)? / 2.0;
        let total = |p: Peer| r.memory.get(&p).map(|mem| mem.total());
        let (deadline, tokio) = (total(Peer::Punctual)?, total(Peer::Tokio)?);
        return Some(format!(
            "The floor row, with no timer, grows by {:.0} B per deadline (the box of each \
             future with malloc's header and rounding, its slot in the `Vec` that keeps it, \
             the async block, the kept waker), above half the best tokio timer's ({half:.0} B) \
             on its own: resident growth counts what every peer pays alike. punctual adds \
             {:.0} B to the floor. The deadline alone, from the memory table, is {deadline:.0} B \
             against tokio's {tokio:.0} B ({:.2}×).",
            floor.bytes,
            ours.bytes - floor.bytes,
            deadline / tokio
        ));
    }
    None
}
