//! The facade with its `wasm` feature, with no setup: default deadlines, `sleep`,
//! `timeout`, instants and budgets on the global wheel, driven by this crate. Runs in Node
//! and in a headless browser (`ci/wasm.sh`).
#![cfg(all(target_family = "wasm", target_os = "unknown"))]

mod support;

use core::future::pending;
use core::pin::pin;

use futures_util::future::{Either, join_all, select};
use punctual::DeadlineExt;
use punctual::wheel::{GlobalClock, global_wheel};
use wasm_bindgen_test::wasm_bindgen_test;
use web_time::Instant;

use support::{IN_TIME, LONG, NeverWithDropFlag, flag, host_wait, ms};

#[wasm_bindgen_test]
async fn deadline_fires_after_dropping_inner() {
    for requested in [ms(0), ms(2), ms(25)] {
        let dropped = flag();
        let start = Instant::now();
        let err = NeverWithDropFlag(dropped.clone())
            .deadline(requested)
            .await
            .unwrap_err();
        assert!(dropped.get(), "inner future alive after Err");
        assert!(start.elapsed() >= requested, "fired early: {requested:?}");
        assert_eq!(err.duration(), requested);
    }
}

#[wasm_bindgen_test]
async fn timeout_of_ready_future_is_ok() {
    assert_eq!(punctual::timeout(ms(5), async { 7 }).await, Ok(7));
    let finishing = async {
        host_wait(10).await;
        8
    };
    assert_eq!(punctual::timeout(LONG, finishing).await, Ok(8));
    assert!(punctual::timeout(ms(5), pending::<()>()).await.is_err());
}

#[wasm_bindgen_test]
async fn sleep_waits_at_least_its_duration() {
    for requested in [ms(0), ms(1), ms(12), ms(30)] {
        let start = Instant::now();
        punctual::sleep(requested).await;
        assert!(start.elapsed() >= requested, "woke early: {requested:?}");
    }
}

#[wasm_bindgen_test]
async fn web_time_instants_are_never_early() {
    let at = Instant::now() + ms(15);
    punctual::sleep_until(at).await;
    assert!(Instant::now() >= at, "sleep_until woke early");

    let at = Instant::now() + ms(20);
    let dropped = flag();
    let r = punctual::timeout_at(at, NeverWithDropFlag(dropped.clone())).await;
    assert!(r.is_err());
    assert!(dropped.get());
    assert!(Instant::now() >= at, "timeout_at fired early");

    let past = Instant::now();
    host_wait(2).await;
    assert!(pending::<()>().deadline_at(past).await.is_err());
}

#[wasm_bindgen_test]
async fn budgets_nest() {
    // An inner budget or deadline never outlasts the outer budget.
    let start = Instant::now();
    let outer = punctual::budget(ms(40), async {
        punctual::budget(LONG, async { pending::<()>().deadline(LONG).await }).await
    })
    .await;
    let err = outer.unwrap_err();
    assert!(err.is_budget());
    assert_eq!(err.duration(), ms(40));
    let took = start.elapsed();
    assert!(took >= ms(40), "the budget ended early: {took:?}");
    assert!(
        took < IN_TIME,
        "the inner deadline outlasted the budget: {took:?}"
    );

    // A shorter inner budget ends first; the outer one goes on.
    let start = Instant::now();
    let outer = punctual::budget(LONG, async {
        let inner = punctual::budget(ms(20), pending::<()>()).await;
        (inner, start.elapsed())
    })
    .await;
    let (inner, took) = outer.expect("the outer budget ended");
    assert_eq!(inner.unwrap_err().duration(), ms(20));
    assert!(took >= ms(20) && took < IN_TIME, "{took:?}");
}

#[wasm_bindgen_test]
async fn earlier_arm_wakes_the_global_driver() {
    let long = pin!(pending::<()>().deadline(LONG));
    let short = pin!(async {
        // Long enough for the driver to leave its linger and sleep until `LONG`.
        host_wait(100).await;
        let start = Instant::now();
        let r = punctual::sleep(ms(20)).await;
        (r, start.elapsed())
    });
    match select(long, short).await {
        Either::Right((((), took), _)) => {
            assert!(took >= ms(20), "woke early: {took:?}");
            assert!(took < IN_TIME, "the earlier arm waited: {took:?}");
        }
        Either::Left(_) => panic!("the long deadline fired first"),
    }
}

#[wasm_bindgen_test]
async fn many_default_deadlines() {
    let start = Instant::now();
    let done = join_all((0..300u64).map(|i| async move {
        let requested = ms(1 + i % 40);
        if i % 3 == 0 {
            return assert_eq!(punctual::timeout(requested, async move { i }).await, Ok(i));
        }
        let dropped = flag();
        let start = Instant::now();
        let r = NeverWithDropFlag(dropped.clone()).deadline(requested).await;
        assert!(r.is_err());
        assert!(dropped.get(), "inner future alive after Err");
        assert!(start.elapsed() >= requested, "fired early: {requested:?}");
    }))
    .await;
    assert_eq!(done.len(), 300);
    assert!(start.elapsed() < IN_TIME, "took {:?}", start.elapsed());
}

#[wasm_bindgen_test]
fn global_wheel_reads_the_host_clock() {
    let before = GlobalClock::reading_of(Instant::now());
    let now = global_wheel().now();
    let after = GlobalClock::reading_of(Instant::now());
    assert!(
        before <= now && now <= after,
        "{before:?} {now:?} {after:?}"
    );
    assert_eq!(global_wheel().tick(), ms(1));
}

#[wasm_bindgen_test]
async fn interval_ticks_never_early() {
    let period = ms(5);
    let start = Instant::now();
    let mut interval = punctual::interval(period);
    for n in 0..4u32 {
        interval.tick().await;
        assert!(start.elapsed() >= period * n, "tick {n} came early");
    }
}

#[wasm_bindgen_test]
async fn sleep_reset_moves_it_later() {
    let start = Instant::now();
    let mut sleep = pin!(punctual::sleep(ms(5)));
    sleep.as_mut().reset(Instant::now() + ms(25));
    sleep.await;
    assert!(
        start.elapsed() >= ms(25),
        "the reset sleep woke at its old time"
    );
}
