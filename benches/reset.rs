//! Moving a pending sleep beside making a fresh one: `Sleep::reset` then a poll (which
//! arms the new time), against a new sleep polled once and dropped (an arm + cancel), for
//! punctual's default sleep (the global wheel) and tokio's (a runtime's timer, on its
//! default and its alternative one where built with `--cfg tokio_unstable`).
//!
//! Each reset moves the sleep to a later time 60 s or more away, so nothing fires. The
//! ratio of *reset* to *fresh* for each timer says whether a reset costs what a fresh arm
//! does.
//!
//! `cargo bench -p punctual-benches --bench reset`; without `--bench` it does nothing.

use std::future::Future;
use std::hint::black_box;
use std::pin::pin;
use std::task::{Context, Waker};
use std::time::{Duration, Instant};

use criterion::Criterion;

const LONG: Duration = Duration::from_secs(60);

fn punctual_rows(c: &mut Criterion) {
    let mut cx = Context::from_waker(Waker::noop());
    let mut group = c.benchmark_group("reset");
    group.bench_function("punctual/fresh", |b| {
        b.iter(|| {
            let sleep = pin!(punctual::sleep(LONG));
            black_box(sleep.poll(&mut cx).is_pending());
        })
    });
    let mut sleep = pin!(punctual::sleep(LONG));
    assert!(sleep.as_mut().poll(&mut cx).is_pending());
    let base = Instant::now() + LONG;
    let mut n = 0u32;
    group.bench_function("punctual/reset", |b| {
        b.iter(|| {
            n = n.wrapping_add(1);
            let at = base + Duration::from_micros(u64::from(n % 1_000_000));
            sleep.as_mut().reset(at);
            black_box(sleep.as_mut().poll(&mut cx).is_pending());
        })
    });
    group.finish();
}

fn tokio_rows(c: &mut Criterion, name: &str, runtime: tokio::runtime::Runtime) {
    let _entered = runtime.enter();
    let mut cx = Context::from_waker(Waker::noop());
    let mut group = c.benchmark_group("reset");
    group.bench_function(format!("{name}/fresh"), |b| {
        b.iter(|| {
            let sleep = pin!(tokio::time::sleep(LONG));
            black_box(sleep.poll(&mut cx).is_pending());
        })
    });
    let mut sleep = pin!(tokio::time::sleep(LONG));
    assert!(sleep.as_mut().poll(&mut cx).is_pending());
    let base = tokio::time::Instant::now() + LONG;
    let mut n = 0u32;
    group.bench_function(format!("{name}/reset"), |b| {
        b.iter(|| {
            n = n.wrapping_add(1);
            let at = base + Duration::from_micros(u64::from(n % 1_000_000));
            sleep.as_mut().reset(at);
            black_box(sleep.as_mut().poll(&mut cx).is_pending());
        })
    });
    group.finish();
}

fn main() {
    if !std::env::args().any(|a| a == "--bench") {
        println!(
            "reset: not run without --bench (use `cargo bench -p punctual-benches --bench reset`)"
        );
        return;
    }
    let mut c = Criterion::default()
        .warm_up_time(Duration::from_millis(500))
        .measurement_time(Duration::from_secs(2))
        .configure_from_args();
    punctual_rows(&mut c);
    let runtime = || {
        tokio::runtime::Builder::new_current_thread()
            .enable_time()
            .build()
            .expect("a runtime")
    };
    tokio_rows(&mut c, "tokio", runtime());
    #[cfg(tokio_unstable)]
    {
        let alt = tokio::runtime::Builder::new_current_thread()
            .enable_time()
            .enable_alt_timer()
            .build()
            .expect("a runtime with the alternative timer");
        tokio_rows(&mut c, "tokio-alt", alt);
    }
    c.final_summary();
}
