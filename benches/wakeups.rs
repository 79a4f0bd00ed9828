//! Wake-ups at low load, beside tokio in the same runtime: how late a lone sleep wakes,
//! and what a 100 ms interval costs per tick.
//!
//! * Lone sleeps: 300 sleeps of 1 to 5 ms, one after another, on a current-thread tokio
//!   runtime (punctual's default sleep, which runs on the runtime's wheel, and tokio's
//!   own), and on the global wheel under `block_on` (punctual, async-io, futures-timer).
//!   Lateness is when the task saw the wake minus the instant asked for.
//! * Interval: 50 ticks of a 100 ms interval in a current-thread runtime, punctual's and
//!   tokio's: context switches of the process per tick (`getrusage`: voluntary and not)
//!   and process CPU time per tick.
//!
//! `cargo bench -p punctual-benches --bench wakeups`. Without `--bench` it does nothing.

use std::time::{Duration, Instant};

const SLEEPS: u64 = 300;
const TICKS: u32 = 50;

/// Process CPU time (`CLOCK_PROCESS_CPUTIME_ID`, to the nanosecond) and context switches
/// so far.
fn usage() -> (Duration, i64) {
    // SAFETY: `getrusage` and `clock_gettime` fill what we pass; all-zero bytes are valid.
    let (usage, cpu) = unsafe {
        let mut usage: libc::rusage = std::mem::zeroed();
        assert_eq!(libc::getrusage(libc::RUSAGE_SELF, &mut usage), 0);
        let mut cpu: libc::timespec = std::mem::zeroed();
        assert_eq!(
            libc::clock_gettime(libc::CLOCK_PROCESS_CPUTIME_ID, &mut cpu),
            0
        );
        (usage, cpu)
    };
    (
        Duration::new(cpu.tv_sec as u64, cpu.tv_nsec as u32),
        usage.ru_nvcsw + usage.ru_nivcsw,
    )
}

/// The i-th sleep's length: 1 to 5 ms, spread off the millisecond grid.
fn length(i: u64) -> Duration {
    Duration::from_micros(1_000 + (i * 7_919) % 4_000)
}

/// Median, p99 and max of lateness samples, in µs.
fn summary(mut late: Vec<Duration>) -> String {
    late.sort();
    let at = |q: f64| late[((late.len() - 1) as f64 * q) as usize].as_secs_f64() * 1e6;
    format!("{:>8.0} {:>8.0} {:>8.0}", at(0.5), at(0.99), at(1.0))
}

async fn lone_sleeps<F: std::future::Future<Output = ()>>(
    sleep: impl Fn(Duration) -> F,
) -> Vec<Duration> {
    let mut late = Vec::new();
    for i in 0..SLEEPS {
        let d = length(i);
        let asked = Instant::now() + d;
        sleep(d).await;
        late.push(Instant::now().saturating_duration_since(asked));
    }
    late
}

fn current_thread() -> tokio::runtime::Runtime {
    tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap()
}

fn main() {
    if !std::env::args().any(|a| a == "--bench") {
        println!("wakeups: not run without --bench");
        return;
    }
    println!("lone sleeps of 1 to 5 ms, lateness in µs     median      p99      max");
    for round in 0..2 {
        let rt = current_thread();
        let rows = [
            (
                "punctual in tokio (current-thread)",
                rt.block_on(lone_sleeps(punctual::sleep)),
            ),
            (
                "tokio::time::sleep (current-thread)",
                rt.block_on(lone_sleeps(tokio::time::sleep)),
            ),
            (
                "punctual, global wheel (block_on)",
                futures_executor::block_on(lone_sleeps(punctual::sleep)),
            ),
            (
                "async-io Timer (block_on)",
                futures_executor::block_on(lone_sleeps(|d| async move {
                    async_io::Timer::after(d).await;
                })),
            ),
            (
                "futures-timer Delay (block_on)",
                futures_executor::block_on(lone_sleeps(futures_timer::Delay::new)),
            ),
        ];
        for (name, late) in rows {
            println!("{name:<44}{}  (run {})", summary(late), round + 1);
        }
    }

    println!("\n100 ms interval, {TICKS} ticks, current-thread   switches/tick  CPU µs/tick");
    for round in 0..2 {
        for name in ["punctual::interval", "tokio::time::interval"] {
            // Each in a process of its own would be cleaner; here the other timers' threads
            // (the global wheel's, async-io's, futures-timer's) sit idle.
            let rt = current_thread();
            let (switches, cpu) = rt.block_on(async {
                let period = Duration::from_millis(100);
                let mut punctual = punctual::interval(period);
                let mut tokio = tokio::time::interval(period);
                // The first tick is immediate in both, and starts the wheel's driver.
                if name == "punctual::interval" {
                    punctual.tick().await;
                } else {
                    tokio.tick().await;
                }
                let (cpu0, sw0) = usage();
                for _ in 0..TICKS {
                    if name == "punctual::interval" {
                        punctual.tick().await;
                    } else {
                        tokio.tick().await;
                    }
                }
                let (cpu1, sw1) = usage();
                (
                    (sw1 - sw0) as f64 / f64::from(TICKS),
                    (cpu1 - cpu0).as_secs_f64() * 1e6 / f64::from(TICKS),
                )
            });
            println!("{name:<44}{switches:>14.1}{cpu:>13.0}  (run {})", round + 1);
        }
    }
}
