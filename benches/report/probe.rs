//! `--probe`: one scenario alone, for a profiler to look at.

use crate::common::{self, Peer};
use crate::measure::*;

/// `--probe SCENARIO PEER ITERS`: runs one scenario alone and prints ns per operation, for
/// a profiler (`perf record`, `valgrind --tool=callgrind`) to look at. Two scenarios print
/// more: `lateness` (ITERS runs interleaved with async-io's, and the quantiles of both)
/// and `trace` (one lateness run, deadline by deadline).
pub(crate) fn probe(args: &[String]) {
    let [scenario, peer, iters, ..] = args else {
        panic!("--probe SCENARIO PEER ITERS");
    };
    let peer = Peer::named(peer).expect("a peer name");
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
