//! Moving a pending sleep (`Sleep::reset`, then a poll) beside making a fresh one (an arm +
//! cancel), for punctual's default sleep and tokio's (both its timers where built with
//! `--cfg tokio_unstable`). Every reset is 60 s or more away, so nothing fires.
//!
//! `cargo bench -p punctual-benches --bench reset`.

use std::future::Future;
use std::hint::black_box;
use std::pin::{Pin, pin};
use std::task::{Context, Waker};
use std::time::Duration;

use criterion::Criterion;

const LONG: Duration = Duration::from_secs(60);

/// The rows `{name}/fresh` and `{name}/reset`: `sleep()` makes a sleep of [`LONG`],
/// `reset(sleep, n)` moves it to the `n`-th later time.
fn rows<S: Future>(
    c: &mut Criterion,
    name: &str,
    sleep: impl Fn() -> S,
    reset: impl Fn(Pin<&mut S>, Duration),
) {
    let mut cx = Context::from_waker(Waker::noop());
    let mut group = c.benchmark_group("reset");
    group.bench_function(format!("{name}/fresh"), |b| {
        b.iter(|| black_box(pin!(sleep()).poll(&mut cx).is_pending()))
    });
    let mut sleep = pin!(sleep());
    assert!(sleep.as_mut().poll(&mut cx).is_pending());
    let mut n = 0u32;
    group.bench_function(format!("{name}/reset"), |b| {
        b.iter(|| {
            n = n.wrapping_add(1);
            reset(
                sleep.as_mut(),
                Duration::from_micros(u64::from(n % 1_000_000)),
            );
            black_box(sleep.as_mut().poll(&mut cx).is_pending());
        })
    });
    group.finish();
}

fn main() {
    if !std::env::args().any(|a| a == "--bench") {
        println!(
            "reset: not run without --bench (`cargo bench -p punctual-benches --bench reset`)"
        );
        return;
    }
    let mut c = Criterion::default()
        .warm_up_time(Duration::from_millis(500))
        .measurement_time(Duration::from_secs(2))
        .configure_from_args();
    let base = std::time::Instant::now() + LONG;
    rows(
        &mut c,
        "punctual",
        || punctual::sleep(LONG),
        |s, later| s.reset(base + later),
    );
    let mut tokio = |name: &str, alt: bool| {
        let mut builder = tokio::runtime::Builder::new_current_thread();
        if alt {
            #[cfg(tokio_unstable)]
            builder.enable_alt_timer();
            #[cfg(not(tokio_unstable))]
            unreachable!("tokio's alternative timer needs --cfg tokio_unstable");
        }
        let runtime = builder.enable_time().build().expect("a runtime");
        let _entered = runtime.enter();
        let base = tokio::time::Instant::now() + LONG;
        let sleep = || tokio::time::sleep(LONG);
        rows(&mut c, name, sleep, |s, later| s.reset(base + later));
    };
    tokio("tokio", false);
    if cfg!(tokio_unstable) {
        tokio("tokio-alt", true);
    }
    c.final_summary();
}
