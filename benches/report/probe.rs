//! `--probe SCENARIO PEER ITERS`: one scenario alone, for a profiler to look at.

use crate::common::{self, Peer, quantile};
use crate::measure::{FIRE_GIVE_UP, LATE_N};
use crate::results::ns_per_op;

/// Runs one scenario alone and prints ns per operation, for a profiler (`perf record`,
/// `valgrind --tool=callgrind`). `fire` prints its cost; `lateness` runs ITERS runs
/// interleaved with async-io's and prints the quantiles of both; `trace` prints one
/// lateness run (seed ITERS) deadline by deadline: start, duration, due (ns since the run
/// began) and how late it was seen.
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
            let mut trace = with_peer!(peer, T => common::lateness_traced::<T>(LATE_N, iters));
            trace.sort_by_key(|&(start, duration, _)| start + duration);
            for (start, duration, late) in trace {
                let (start, duration) = (start.as_nanos(), duration.as_nanos());
                println!("{start} {duration} {} {late}", start + duration);
            }
            return;
        }
        "lateness" => {
            let peers = [peer, Peer::AsyncIo];
            let mut pooled = [Vec::new(), Vec::new()];
            for run in 0..iters {
                for (sample, p) in pooled.iter_mut().zip(peers) {
                    sample.extend(with_peer!(p, T => common::lateness::<T>(LATE_N, 1 + run)));
                }
            }
            for (mut sample, p) in pooled.into_iter().zip(peers) {
                sample.sort_unstable();
                let quantiles: Vec<String> = [0.05, 0.1, 0.25, 0.5, 0.75, 0.9, 0.99]
                    .map(|q| format!("p{:02.0} {:>7}", q * 100.0, quantile(&sample, q)))
                    .into();
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
