//! punctual-wasm's driver on the host's timers: deadlines fire after dropping their inner
//! future, never early on the host's clock; an earlier arm wakes the driver; many
//! deadlines at once. Runs in Node and in a headless browser (`ci/wasm.sh`).
#![cfg(all(target_family = "wasm", target_os = "unknown"))]

mod support;

use core::future::pending;
use core::pin::pin;
use core::time::Duration;

use futures_util::future::{Either, join_all, select};
use punctual_core::{Clock, Fixed, Reading, Sleeper, Wheel};
use punctual_wasm::{HostClock, HostWheel, TimeoutSleeper};
use wasm_bindgen_test::wasm_bindgen_test;
use web_time::Instant;

use support::{IN_TIME, LONG, NeverWithDropFlag, flag, host_wait, ms};

/// A wheel of the test's own, with its driver spawned.
fn driven_wheel() -> &'static HostWheel {
    let wheel = punctual_wasm::leak_wheel(punctual_wasm::DEFAULT_TICK);
    punctual_wasm::spawn_driver(wheel);
    wheel
}

#[wasm_bindgen_test]
async fn fires_after_dropping_inner() {
    let wheel = driven_wheel();
    for requested in [ms(0), ms(1), ms(7), ms(30)] {
        let dropped = flag();
        let start = Instant::now();
        let err = wheel
            .deadline(requested, NeverWithDropFlag(dropped.clone()))
            .await
            .unwrap_err();
        assert!(dropped.get(), "inner future alive after Err");
        assert!(start.elapsed() >= requested, "fired early: {requested:?}");
        assert_eq!(err.duration(), requested);
    }
}

#[wasm_bindgen_test]
async fn ready_and_finishing_futures_are_ok() {
    let wheel = driven_wheel();
    assert_eq!(wheel.deadline(ms(1), async { 7 }).await, Ok(7));
    let slow_enough = async {
        host_wait(10).await;
        8
    };
    assert_eq!(wheel.deadline(LONG, slow_enough).await, Ok(8));
    // The cancelled entry is reclaimed at the driver's next turn, within about a tick.
    host_wait(20).await;
    assert_eq!(wheel.occupied(), 0);
}

#[wasm_bindgen_test]
async fn sleep_waits_at_least_its_duration() {
    let wheel = driven_wheel();
    for requested in [ms(0), ms(1), ms(3), ms(16), ms(40)] {
        let start = Instant::now();
        wheel.sleep(requested).await;
        assert!(start.elapsed() >= requested, "woke early: {requested:?}");
    }
}

#[wasm_bindgen_test]
async fn earlier_arm_wakes_the_driver() {
    let wheel = driven_wheel();
    let long = pin!(wheel.deadline(LONG, pending::<()>()));
    let short = pin!(async {
        // Long enough for the driver to leave its linger and sleep until `LONG`.
        host_wait(100).await;
        let start = Instant::now();
        let r = wheel.deadline(ms(20), pending::<()>()).await;
        (r, start.elapsed())
    });
    match select(long, short).await {
        Either::Right(((r, took), _)) => {
            assert!(r.is_err());
            assert!(took >= ms(20), "fired early: {took:?}");
            assert!(took < IN_TIME, "the earlier arm waited: {took:?}");
        }
        Either::Left(_) => panic!("the long deadline fired first"),
    }
}

#[wasm_bindgen_test]
async fn many_deadlines_at_once() {
    let wheel = driven_wheel();
    let start = Instant::now();
    let fired = join_all((0..300u64).map(|i| async move {
        let requested = ms(1 + i % 40);
        let dropped = flag();
        let start = Instant::now();
        let r = wheel
            .deadline(requested, NeverWithDropFlag(dropped.clone()))
            .await;
        assert!(r.is_err());
        assert!(dropped.get(), "inner future alive after Err");
        assert!(start.elapsed() >= requested, "fired early: {requested:?}");
    }))
    .await;
    assert_eq!(fired.len(), 300);
    assert!(start.elapsed() < IN_TIME, "took {:?}", start.elapsed());
    assert_eq!(wheel.occupied(), 0);
}

#[wasm_bindgen_test]
async fn borrowed_static_wheel_with_driver() {
    static WHEEL: Wheel<HostClock, Fixed<16>> = Wheel::fixed(HostClock::new(), ms(2));
    wasm_bindgen_futures::spawn_local(async { match punctual_wasm::driver(&WHEEL).await {} });
    let start = Instant::now();
    let r = WHEEL.deadline(ms(15), pending::<()>()).await;
    assert!(r.is_err());
    assert!(start.elapsed() >= ms(15));
}

#[wasm_bindgen_test]
async fn dropped_deadline_frees_its_entry() {
    let wheel = driven_wheel();
    {
        let mut deadline = pin!(wheel.deadline(LONG, pending::<()>()));
        let waited = matches!(
            select(deadline.as_mut(), pin!(host_wait(5))).await,
            Either::Right(_)
        );
        assert!(waited, "the deadline fired");
        assert_eq!(wheel.occupied(), 1);
    }
    host_wait(20).await;
    assert_eq!(wheel.occupied(), 0);
}

#[wasm_bindgen_test]
async fn sleeper_never_early() {
    let clock = HostClock::new();
    let mut sleeper = TimeoutSleeper::new(clock);
    for offset in [ms(0), Duration::from_micros(300), ms(1), ms(5)] {
        let at = Reading::since_origin(clock.now()) + offset;
        sleeper.sleep_until(at).await;
        assert!(Reading::since_origin(clock.now()) >= at, "woke early");
    }
}

#[wasm_bindgen_test]
async fn sleep_past_max_timeout_waits() {
    let clock = HostClock::new();
    let mut sleeper = TimeoutSleeper::new(clock);
    let far = Reading::since_origin(clock.now()) + Duration::from_secs(30 * 86_400);
    let waited = matches!(
        select(pin!(sleeper.sleep_until(far)), pin!(host_wait(50))).await,
        Either::Right(_)
    );
    assert!(waited, "a 30-day sleep completed");
}

#[wasm_bindgen_test]
fn instants_read_exactly() {
    let clock = HostClock::new();
    let before = Instant::now();
    let now = Reading::since_origin(clock.now());
    let after = Instant::now();
    assert!(clock.reading_of(before) <= now);
    assert!(now <= clock.reading_of(after));
    let later = before + ms(5);
    assert_eq!(clock.reading_of(later), clock.reading_of(before) + ms(5));
}
