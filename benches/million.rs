//! A million timers, beside tokio's two timers: 1 000 000 deadlines of 1 to 60 s armed
//! from 2 threads (tokio: 2 tasks on a 2-worker runtime), dropped by the same 2, then
//! 100 000 of 1 to 100 ms fired. Measured: arm and cancel wall times, resident growth per
//! armed deadline, and the fire's CPU and wall time. Each run is a process of its own
//! (`--one PEER`): resident memory never shrinks.
//!
//! `-- --tsv PATH` writes the runs for the report.

#[macro_use]
mod common;

use std::future::{Future, pending};
use std::pin::Pin;
use std::sync::{Arc, Mutex};
use std::task::Context;
use std::time::{Duration, Instant};

use common::{Args, Peer, Rng, Timeouts};

const N: usize = 1_000_000;
const FIRED: usize = 100_000;
const THREADS: usize = 2;
/// Runs per peer, interleaved between the peers.
const RUNS: usize = 3;

/// A boxed deadline, as the million are kept.
type Boxed = Pin<Box<dyn Future<Output = ()> + Send>>;

/// Runs `f(0)` and `f(1)` at once where `peer`'s users run code: on 2 threads for
/// punctual's global wheel and the floor, as 2 tasks on the peer's 2-worker runtime for
/// the others. Their outputs, and the wall time until both were done.
fn on_two<R: Send + 'static, F: Future<Output = R> + Send + 'static>(
    peer: Peer,
    f: impl Fn(usize) -> F + Sync,
) -> (Vec<R>, Duration) {
    match peer {
        Peer::Punctual | Peer::OwnFloor => {
            let start = Instant::now();
            let f = &f;
            let out = std::thread::scope(|s| {
                let run = |i| s.spawn(move || futures_executor::block_on(f(i)));
                let threads: Vec<_> = (0..THREADS).map(run).collect();
                threads
                    .into_iter()
                    .map(|t| t.join().expect("a thread"))
                    .collect()
            });
            (out, start.elapsed())
        }
        Peer::TokioAlt => common::tasks(common::tokio_alt(), THREADS, f),
        _ => common::tasks(common::tokio_multi(), THREADS, f),
    }
}

/// Makes, boxes and polls once `n` deadlines of 1 to 60 s, with one waker.
fn arm<T: Timeouts>(n: usize, seed: u64) -> Vec<Boxed> {
    let mut rng = Rng::new(seed);
    let waker = common::distinct_waker(&Default::default());
    let mut cx = Context::from_waker(&waker);
    let mut armed = Vec::with_capacity(n);
    for _ in 0..n {
        let d = rng.duration(Duration::from_secs(1), Duration::from_secs(60));
        let mut fut: Boxed = Box::pin(async move {
            T::bound(pending::<()>(), d).await;
        });
        let _ = fut.as_mut().poll(&mut cx);
        armed.push(fut);
    }
    armed
}

/// Resident memory of this process, in bytes.
fn resident() -> usize {
    let statm = std::fs::read_to_string("/proc/self/statm").expect("/proc/self/statm");
    let pages: usize = statm
        .split_whitespace()
        .nth(1)
        .and_then(|p| p.parse().ok())
        .expect("pages");
    // SAFETY: `sysconf` with a valid name only reads a system value.
    pages * unsafe { libc::sysconf(libc::_SC_PAGESIZE) } as usize
}

/// One run: `peer, arm ns, cancel ns, bytes per deadline, fire CPU ns, fire wall ns`.
fn run<T: Timeouts>(peer: Peer) -> String {
    // Warm up: the runtime's workers, the wheel, the allocator's first arenas.
    drop(on_two(
        peer,
        |i| async move { arm::<T>(10_000, 1 + i as u64) },
    ));
    std::thread::sleep(Duration::from_millis(50));
    let before = resident();
    let (halves, arm_time) = on_two(peer, |i| async move { arm::<T>(N / THREADS, 7 + i as u64) });
    // Let drivers take in what was handed to them (tokio's alternative timer files a
    // worker's new timers at its next turn).
    std::thread::sleep(Duration::from_millis(50));
    let bytes = resident().saturating_sub(before) as f64 / N as f64;
    // Each half is dropped by a thread of its own.
    let halves: Arc<Vec<_>> = Arc::new(halves.into_iter().map(|h| Mutex::new(Some(h))).collect());
    let (_, cancel_time) = on_two(peer, move |i| {
        let halves = halves.clone();
        async move { drop(halves[i].lock().expect("a half").take()) }
    });
    let (mut fire_cpu, mut fire_wall) = (Duration::ZERO, Duration::ZERO);
    if peer != Peer::OwnFloor {
        // Fire: each of the 2 awaits its 50 000 on the peer's executor.
        let (cpu, start) = (common::process_cpu(), Instant::now());
        let (fired, _) = on_two(peer, |i| {
            let all = common::fire_durations(FIRED);
            let durations = all.into_iter().skip(i).step_by(THREADS).collect();
            common::fire_all::<T>(durations, start + Duration::from_secs(3600))
        });
        fire_wall = start.elapsed();
        fire_cpu = common::process_cpu() - cpu;
        assert_eq!(fired.iter().sum::<usize>(), FIRED, "not all fired");
    }
    let [arm, cancel, cpu, wall] =
        [arm_time, cancel_time, fire_cpu, fire_wall].map(|d| d.as_nanos());
    format!(
        "{}\t{arm}\t{cancel}\t{bytes:.1}\t{cpu}\t{wall}",
        peer.name()
    )
}

fn main() {
    let Some(args) = Args::bench("million") else {
        return;
    };
    if let Some([peer, ..]) = args.after("--one") {
        let peer = Peer::named(peer).expect("a peer's name");
        println!("{}", with_peer!(peer, T => run::<T>(peer)));
        return;
    }
    let peers = common::MILLION_PEERS.into_iter().filter(|p| p.available());
    let runs = (0..RUNS).flat_map(|_| peers.clone().map(|p| vec![p.name().into()]));
    let header =
        "# peer\tarm (ns)\tcancel (ns)\tbytes per armed deadline\tfire CPU (ns)\tfire wall (ns)";
    args.runs_apart(header, runs);
}
