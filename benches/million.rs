//! A million timers, beside tokio's two timers: 1 000 000 deadlines of 1 to 60 s armed at
//! once from 2 threads, then all cancelled from 2 threads; then 100 000 fired.
//!
//! * **arm**: the wall time for 2 threads (tokio: 2 tasks on its 2-worker runtime) to make,
//!   box and poll once 500 000 deadlines each, with one waker per thread.
//! * **cancel**: the wall time for the 2 to drop them all.
//! * **bytes per armed deadline**: the growth of the process's resident memory
//!   (`/proc/self/statm`) from before the deadlines are made to when all are armed, over
//!   1 000 000: the boxed future and whatever its timer holds for it, as a user pays it.
//! * **fire**: 100 000 deadlines spread over 1 to 100 ms (not 1 to 60 s, so that a run
//!   takes a fraction of a second), 50 000 awaited by each of the 2 in a
//!   `FuturesUnordered`, in the same process right after the million were cancelled (so
//!   each timer has grown to hold them): the process's CPU time and the wall time.
//!
//! The `floor: clock + waker + CAS` row (`common::OwnFloor`, on 2 threads as punctual's)
//! is the scenario with no timer's work at all: each deadline reads the clock, keeps its
//! waker and cancels with one compare-and-swap on its own word. Its arm and cancel times
//! are a floor under every peer's; it fires nothing, so it has no fire figures (0 in the
//! output).
//!
//! Each measurement runs in a process of its own (this binary with `--one PEER`): resident
//! memory does not shrink when the million are freed. `-- --tsv PATH` writes the runs for
//! the report (`ci/bench_report.sh`); `-- --one PEER --marks` runs one and prints where
//! its phases start, to profile each with perf (see `mark`); without `--bench` it does
//! nothing.

#[macro_use]
mod common;

use std::future::{Future, pending};
use std::pin::Pin;
use std::sync::Arc;
use std::sync::atomic::AtomicUsize;
use std::task::Context;
use std::time::{Duration, Instant};

use common::{Peer, Rng, Timeouts};
use futures_util::StreamExt;
use futures_util::stream::FuturesUnordered;

const N: usize = 1_000_000;
const FIRED: usize = 100_000;
const THREADS: usize = 2;
/// Runs per peer, interleaved between the peers.
const RUNS: usize = 3;

/// A boxed deadline, as the million are kept.
type Boxed = Pin<Box<dyn Future<Output = ()> + Send>>;

/// The peers: punctual's default (from 2 threads), the default inside a 2-worker tokio
/// runtime, and tokio's two timers on the same runtime shape; and the floor.
fn peers() -> Vec<Peer> {
    [
        Peer::Punctual,
        Peer::PunctualInTokio,
        Peer::Tokio,
        Peer::TokioAlt,
        Peer::OwnFloor,
    ]
    .into_iter()
    .filter(|p| p.available())
    .collect()
}

/// Runs the futures `f(0)` and `f(1)` at once where `peer`'s users run code: on 2 threads
/// (`block_on`) for punctual's global wheel, as 2 tasks on the peer's 2-worker runtime for
/// the others. Returns their outputs and the wall time until both were done.
fn on_two<R: Send + 'static, F: Future<Output = R> + Send + 'static>(
    peer: Peer,
    f: impl Fn(usize) -> F + Send + Sync + Clone + 'static,
) -> (Vec<R>, Duration) {
    let runtime = match peer {
        Peer::Punctual | Peer::OwnFloor => None,
        Peer::TokioAlt => Some(common::tokio_alt()),
        _ => Some(common::tokio_multi()),
    };
    match runtime {
        None => {
            let start = Instant::now();
            let out = std::thread::scope(|s| {
                let handles: Vec<_> = (0..THREADS)
                    .map(|i| {
                        let f = f.clone();
                        s.spawn(move || futures_executor::block_on(f(i)))
                    })
                    .collect();
                handles
                    .into_iter()
                    .map(|h| h.join().expect("a thread of the scenario"))
                    .collect()
            });
            (out, start.elapsed())
        }
        Some(rt) => rt.block_on(async move {
            let start = Instant::now();
            let tasks: Vec<_> = (0..THREADS)
                .map(|i| {
                    let f = f.clone();
                    tokio::spawn(tokio::task::unconstrained(f(i)))
                })
                .collect();
            let mut out = Vec::with_capacity(THREADS);
            for task in tasks {
                out.push(task.await.expect("a task of the scenario"));
            }
            (out, start.elapsed())
        }),
    }
}

/// Makes, boxes and polls once `n` deadlines of 1 to 60 s, with one waker.
fn arm<T: Timeouts>(n: usize, seed: u64) -> Vec<Boxed> {
    let mut rng = Rng::new(seed);
    let wakes = Arc::new(AtomicUsize::new(0));
    let waker = common::distinct_waker(&wakes);
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
        .expect("resident pages");
    // SAFETY: `sysconf` with a valid name only reads a system value.
    let page = unsafe { libc::sysconf(libc::_SC_PAGESIZE) };
    pages * page as usize
}

/// What one run measured.
struct Run {
    arm: Duration,
    cancel: Duration,
    bytes: f64,
    fire_cpu: Duration,
    fire_wall: Duration,
}

/// With `--marks`, prints where each phase starts on `CLOCK_MONOTONIC` to stderr, for
/// `perf record -k CLOCK_MONOTONIC` and `perf report --time FROM,TO` to profile one phase:
/// `million: arm 3560.361314368`.
fn mark(what: &str) {
    if !std::env::args().any(|a| a == "--marks") {
        return;
    }
    let mut ts = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: `clock_gettime` writes the reading into the valid `timespec` it is given.
    unsafe { libc::clock_gettime(libc::CLOCK_MONOTONIC, &mut ts) };
    eprintln!("million: {what} {}.{:09}", ts.tv_sec, ts.tv_nsec);
}

fn run<T: Timeouts>(peer: Peer) -> Run {
    // Warm up: the runtime's workers, the wheel, the allocator's first arenas.
    let (warm, _) = on_two(peer, |i| async move { arm::<T>(10_000, 1 + i as u64) });
    drop(warm);
    std::thread::sleep(Duration::from_millis(50));
    let before = resident();
    mark("arm");
    let (halves, arm_time) = on_two(peer, |i| async move { arm::<T>(N / THREADS, 7 + i as u64) });
    // Let drivers take in what was handed to them (tokio's alternative timer files a
    // worker's new timers at its next turn).
    std::thread::sleep(Duration::from_millis(50));
    let bytes = (resident().saturating_sub(before)) as f64 / N as f64;
    // Hand each half to a thread of its own to drop.
    let halves: Vec<_> = halves
        .into_iter()
        .map(|h| std::sync::Mutex::new(Some(h)))
        .collect();
    let halves = Arc::new(halves);
    mark("cancel");
    let (_, cancel_time) = on_two(peer, move |i| {
        let halves = halves.clone();
        async move { drop(halves[i].lock().expect("a half").take()) }
    });
    if peer == Peer::OwnFloor {
        // Nothing to fire.
        return Run {
            arm: arm_time,
            cancel: cancel_time,
            bytes,
            fire_cpu: Duration::ZERO,
            fire_wall: Duration::ZERO,
        };
    }
    // Fire: each of the 2 awaits its 50 000 on the peer's executor.
    mark("fire");
    let cpu = common::process_cpu();
    let start = Instant::now();
    let (fired, _) = on_two(peer, move |i| {
        let durations: Vec<Duration> = common::fire_durations(FIRED)
            .into_iter()
            .skip(i)
            .step_by(THREADS)
            .collect();
        async move {
            let mut set: FuturesUnordered<_> = durations
                .into_iter()
                .map(|d| T::timed_out(pending::<()>(), d))
                .collect();
            let mut fired = 0;
            while let Some(timed_out) = set.next().await {
                assert!(timed_out, "a deadline around a pending future did not fire");
                fired += 1;
            }
            fired
        }
    });
    let fire_wall = start.elapsed();
    mark("end");
    let fire_cpu = common::process_cpu() - cpu;
    assert_eq!(fired.iter().sum::<usize>(), FIRED, "not all fired");
    Run {
        arm: arm_time,
        cancel: cancel_time,
        bytes,
        fire_cpu,
        fire_wall,
    }
}

fn main() {
    let args: Vec<String> = std::env::args().collect();
    if !args.iter().any(|a| a == "--bench") {
        println!(
            "million: not run without --bench (use `cargo bench -p punctual-benches --bench million`)"
        );
        return;
    }
    if let Some(i) = args.iter().position(|a| a == "--one") {
        let peer = Peer::named(&args[i + 1]).expect("a peer's name");
        let r = with_peer!(peer, T => run::<T>(peer));
        println!(
            "{}\t{}\t{}\t{:.1}\t{}\t{}",
            peer.name(),
            r.arm.as_nanos(),
            r.cancel.as_nanos(),
            r.bytes,
            r.fire_cpu.as_nanos(),
            r.fire_wall.as_nanos()
        );
        return;
    }
    let exe = std::env::current_exe().expect("this benchmark's path");
    let mut tsv = String::from(
        "# peer\tarm (ns)\tcancel (ns)\tbytes per armed deadline\tfire CPU (ns)\tfire wall (ns)\n",
    );
    println!(
        "{:<18} {:>10} {:>12} {:>8} {:>14}",
        "", "arm (ms)", "cancel (ms)", "B/armed", "fire CPU (ms)"
    );
    for _ in 0..RUNS {
        for peer in peers() {
            let out = std::process::Command::new(&exe)
                .args(["--bench", "--one", peer.name()])
                .output()
                .expect("run a measurement");
            assert!(out.status.success(), "measuring {} failed", peer.name());
            let line = String::from_utf8(out.stdout).expect("UTF-8");
            let cols: Vec<&str> = line.trim().split('\t').collect();
            let ms = |c: &str| c.parse::<f64>().unwrap_or(f64::NAN) / 1e6;
            println!(
                "{:<18} {:>10.1} {:>12.1} {:>8} {:>14.1}",
                cols[0],
                ms(cols[1]),
                ms(cols[2]),
                cols[3],
                ms(cols[4])
            );
            tsv.push_str(line.trim());
            tsv.push('\n');
        }
    }
    if let Some(i) = args.iter().position(|a| a == "--tsv") {
        std::fs::write(&args[i + 1], tsv).expect("write the million-timers table");
    }
}
