//! Never early in true time, at a coarse embassy tick (100 Hz: `Instant::now()` rounds the
//! true time down to 10 ms), side by side with `embassy_time::with_timeout`, which is not.
//!
//! A timeout of `d` started `off` into a tick reads its start as the tick's beginning.
//! `with_timeout` ends when the counter reaches that reading plus `d`: after `d - off` of true
//! time, up to a tick early. punctual's wheel adds the clock's resolution (one tick) to the
//! deadline and its driver sleeps until a tick at or after the wheel's turn: it ends after
//! `d + 10 ms - off` rounded up to the wheel's tick, never before `d`, and at most two wheel
//! ticks after it.
//!
//! True time moves in 0.5 ms steps here, which divide the 10 ms tick and every start offset
//! used, so the tests see each timer complete at the exact true time it does.
//!
//! Run with `--test-threads=1`: the virtual clock is global to this binary.

#[path = "../../../../../tests/conformance/mod.rs"]
mod conformance;
#[path = "../../support/harness.rs"]
mod harness;

use core::future::pending;
use core::time::Duration;

use harness::{TestWheel, VirtualTime, fresh_wheel, run_driven};
use punctual_embassy_coarse_tests as true_time;

struct Coarse;

impl VirtualTime for Coarse {
    const STEP: Duration = Duration::from_micros(500);

    fn reset() {
        true_time::reset();
    }

    fn advance(by: Duration) {
        true_time::advance(by);
    }

    fn true_now() -> Duration {
        true_time::true_now()
    }
}

const TICK: Duration = Duration::from_millis(10);
const LIMIT: Duration = Duration::from_secs(10);

/// A fresh wheel, with the true time `offset` into the first tick.
fn wheel_at(offset: Duration) -> &'static TestWheel {
    let wheel = fresh_wheel::<Coarse>();
    true_time::advance(offset);
    wheel
}

/// True time from the first poll of a punctual deadline of `requested` to its `Err`.
fn punctual_deadline(offset: Duration, requested: Duration) -> Duration {
    let wheel = wheel_at(offset);
    run_driven::<Coarse, _>(wheel, LIMIT, async {
        let start = true_time::true_now();
        let result = wheel.deadline(requested, pending::<()>()).await;
        assert!(result.is_err(), "a pending future must time out");
        true_time::true_now() - start
    })
}

/// True time from the first poll of a punctual sleep of `requested` to its end.
fn punctual_sleep(offset: Duration, requested: Duration) -> Duration {
    let wheel = wheel_at(offset);
    run_driven::<Coarse, _>(wheel, LIMIT, async {
        let start = true_time::true_now();
        wheel.sleep(requested).await;
        true_time::true_now() - start
    })
}

/// True time from the creation (and first poll) of `with_timeout(requested)` to its `Err`.
fn embassy_timeout(offset: Duration, requested: Duration) -> Duration {
    let wheel = wheel_at(offset);
    let timeout = embassy_time::Duration::try_from(requested).expect("fits");
    run_driven::<Coarse, _>(wheel, LIMIT, async {
        let start = true_time::true_now();
        let result = embassy_time::with_timeout(timeout, pending::<()>()).await;
        assert!(result.is_err(), "a pending future must time out");
        true_time::true_now() - start
    })
}

/// The example of the crate docs: a 50 ms timeout started 9 ms into a 10 ms tick.
#[test]
fn fifty_ms_from_nine_ms_into_a_tick() {
    let (offset, requested) = (Duration::from_millis(9), Duration::from_millis(50));

    let embassy = embassy_timeout(offset, requested);
    assert_eq!(
        embassy,
        Duration::from_millis(41),
        "with_timeout ends 9 ms early"
    );

    let punctual = punctual_deadline(offset, requested);
    assert_eq!(punctual, Duration::from_millis(51), "punctual: never early");
}

/// Every start offset within a tick (0.5 ms apart), durations around and across ticks.
#[test]
fn never_early_in_true_time_from_any_point_in_a_tick() {
    let requested = [
        500, 1_000, 5_000, 9_500, 10_000, 10_500, 15_000, 50_000, 640_000, 650_000, 655_000,
    ]
    .map(Duration::from_micros);
    let offsets = (0..20u64).map(|half_ms| Duration::from_micros(half_ms * 500));
    let mut early = Vec::new();
    for offset in offsets {
        for requested in requested {
            let deadline = punctual_deadline(offset, requested);
            assert!(
                deadline >= requested,
                "deadline of {requested:?} from {offset:?} into a tick: early, after {deadline:?}"
            );
            assert!(
                deadline <= requested + 2 * TICK,
                "deadline of {requested:?} from {offset:?}: {deadline:?}, over two ticks late"
            );
            let sleep = punctual_sleep(offset, requested);
            assert!(
                sleep >= requested && sleep <= requested + 2 * TICK,
                "sleep of {requested:?} from {offset:?}: {sleep:?}"
            );

            // embassy's own: its `Duration` rounds `requested` up to whole ticks, and it
            // ends when the counter has moved that many ticks from the tick it started in.
            let ticks = requested.as_nanos().div_ceil(TICK.as_nanos()) as u32;
            let embassy = embassy_timeout(offset, requested);
            assert_eq!(
                embassy,
                TICK * ticks - offset,
                "with_timeout of {requested:?}"
            );
            if embassy < requested {
                early.push((offset, requested, embassy));
            }
        }
    }
    // Early whenever it starts later into a tick than `requested` falls short of whole
    // ticks; for multiples of the tick, from every offset but zero.
    println!(
        "with_timeout ended early in {} of {} cases, by up to {:?}; punctual in none",
        early.len(),
        requested.len() * 20,
        early
            .iter()
            .map(|&(_, r, e)| r - e)
            .max()
            .unwrap_or_default(),
    );
    assert!(!early.is_empty());
    assert!(
        early
            .iter()
            .all(|&(_, requested, embassy)| requested - embassy < TICK)
    );
    let fifty = early
        .iter()
        .filter(|e| e.1 == Duration::from_millis(50))
        .count();
    assert_eq!(
        fifty, 19,
        "a 50 ms with_timeout is early from 19 offsets of 20"
    );
}
