//! Wake-ups at low load, beside tokio in the same runtime: lone sleeps of 1 to 5 ms one
//! after another (lateness past the instant asked for), in a current-thread runtime and
//! under `block_on`; and a 100 ms interval's context switches and CPU per tick.
//!
//! `cargo bench -p punctual-benches --bench wakeups`.

mod common;

use std::future::Future;
use std::time::{Duration, Instant};

use futures_executor::block_on;

const SLEEPS: u64 = 300;
const TICKS: u32 = 50;

/// The process's context switches so far, voluntary or not.
fn switches() -> i64 {
    // SAFETY: `getrusage` fills the `rusage` we pass; all-zero bytes are a valid `rusage`.
    let usage = unsafe {
        let mut usage: libc::rusage = std::mem::zeroed();
        assert_eq!(libc::getrusage(libc::RUSAGE_SELF, &mut usage), 0);
        usage
    };
    usage.ru_nvcsw + usage.ru_nivcsw
}

/// Sleeps of 1 to 5 ms (off the millisecond grid), one after another: median, p99 and
/// max of their lateness, in µs.
async fn lone_sleeps<F: Future<Output = ()>>(sleep: impl Fn(Duration) -> F) -> String {
    let mut late = Vec::new();
    for i in 0..SLEEPS {
        let d = Duration::from_micros(1_000 + (i * 7_919) % 4_000);
        let asked = Instant::now() + d;
        sleep(d).await;
        late.push(Instant::now().saturating_duration_since(asked));
    }
    late.sort();
    let at = |q| common::quantile(&late, q).as_secs_f64() * 1e6;
    format!("{:>8.0} {:>8.0} {:>8.0}", at(0.5), at(0.99), at(1.0))
}

fn current_thread() -> tokio::runtime::Runtime {
    let mut builder = tokio::runtime::Builder::new_current_thread();
    builder.enable_all().build().expect("a runtime")
}

fn main() {
    if common::Args::bench("wakeups").is_none() {
        return;
    }
    println!("lone sleeps of 1 to 5 ms, lateness in µs     median      p99      max");
    for round in 1..=2 {
        let rt = current_thread();
        let row = |name: &str, late: String| println!("{name:<44}{late}  (run {round})");
        let late = rt.block_on(lone_sleeps(punctual::sleep));
        row("punctual in tokio (current-thread)", late);
        let late = rt.block_on(lone_sleeps(tokio::time::sleep));
        row("tokio::time::sleep (current-thread)", late);
        let late = block_on(lone_sleeps(punctual::sleep));
        row("punctual, global wheel (block_on)", late);
        let async_io = |d| futures_util::FutureExt::map(async_io::Timer::after(d), |_| ());
        let late = block_on(lone_sleeps(async_io));
        row("async-io Timer (block_on)", late);
        let late = block_on(lone_sleeps(futures_timer::Delay::new));
        row("futures-timer Delay (block_on)", late);
    }
    println!("\n100 ms interval, {TICKS} ticks, current-thread   switches/tick  CPU µs/tick");
    for round in 1..=2 {
        for name in ["punctual::interval", "tokio::time::interval"] {
            // The other timers' threads (the global wheel's, async-io's) sit idle here.
            let (switches, cpu) = current_thread().block_on(async {
                let period = Duration::from_millis(100);
                let (mut punctual, mut tokio) =
                    (punctual::interval(period), tokio::time::interval(period));
                let mut tick = async || {
                    if name == "punctual::interval" {
                        punctual.tick().await;
                    } else {
                        tokio.tick().await;
                    }
                };
                // The first tick is immediate in both, and starts the wheel's driver.
                tick().await;
                let (cpu0, sw0) = (common::process_cpu(), switches());
                for _ in 0..TICKS {
                    tick().await;
                }
                let (cpu1, sw1) = (common::process_cpu(), switches());
                let per_tick = f64::from(TICKS);
                (
                    (sw1 - sw0) as f64 / per_tick,
                    (cpu1 - cpu0).as_secs_f64() * 1e6 / per_tick,
                )
            });
            println!("{name:<44}{switches:>14.1}{cpu:>13.0}  (run {round})");
        }
    }
}
