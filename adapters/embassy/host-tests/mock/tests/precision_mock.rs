//! Precision of punctual-embassy under embassy-time's mock driver, side by side with
//! `embassy_time::with_timeout`.
//!
//! # What the mock driver can and cannot show
//!
//! `with_timeout` can end up to one embassy tick early in true time, because
//! `Instant::now()` rounds the true time down to a tick and the timeout is measured from that
//! reading. The mock driver cannot show it: its time moves only in whole ticks
//! (`MockDriver::advance` takes an `embassy_time::Duration`, a tick count), so there is no
//! true time between two ticks for `Instant::now()` to round away. Every reading is exact, and
//! `with_timeout` is exact too (checked below, [`from_any_point_in_a_wheel_tick`]). The crate
//! `../coarse` runs a 100 Hz driver of its own whose true time runs between its ticks, and
//! shows `with_timeout` ending early where punctual does not.
//!
//! What the mock does show, exactly:
//! * punctual's deadlines are never early and at most two wheel ticks late, from any start
//!   within a wheel tick (the wheel's 1 ms tick is 1 000 mock ticks);
//! * punctual's clock starts at the first poll, `with_timeout`'s when it is created.
//!
//! Run with `--test-threads=1`: the mock clock is global to this binary.

#[path = "../../../../../tests/conformance/mod.rs"]
mod conformance;
#[path = "../../support/harness.rs"]
mod harness;

use core::future::pending;
use core::pin::pin;
use core::task::{Context, Poll, Waker};
use core::time::Duration;

use embassy_time::{Instant, MockDriver};
use harness::{VirtualTime, fresh_wheel, run_driven};
use punctual_core::Clock;

/// embassy-time's mock driver.
struct Mock;

impl VirtualTime for Mock {
    const STEP: Duration = Duration::from_micros(1);

    fn reset() {
        MockDriver::get().reset();
    }

    fn advance(by: Duration) {
        let by = embassy_time::Duration::try_from(by).expect("a step fits embassy's range");
        MockDriver::get().advance(by);
    }

    fn true_now() -> Duration {
        Duration::from_micros(Instant::now().as_micros())
    }
}

const LIMIT: Duration = Duration::from_secs(10);

/// The requested durations: around the embassy tick (1 µs) and the wheel tick (1 ms).
const REQUESTED: &[Duration] = &[
    Duration::from_micros(1),
    Duration::from_micros(999),
    Duration::from_millis(1),
    Duration::from_micros(1_001),
    Duration::from_micros(5_500),
    Duration::from_millis(64),
    Duration::from_millis(65),
];

/// Starts within a wheel tick, in microseconds.
fn offsets() -> impl Iterator<Item = u64> {
    (0..1_000).step_by(111).chain([1, 500, 999])
}

/// A deadline of `requested` on a pending future, started `offset` into a wheel tick:
/// returns the true time from its first poll to its `Err`, and the wheel clock's.
fn punctual_deadline(offset: Duration, requested: Duration) -> (Duration, Duration) {
    let wheel = fresh_wheel::<Mock>();
    Mock::advance(offset);
    run_driven::<Mock, _>(wheel, LIMIT, async {
        let (start, reading) = (Mock::true_now(), wheel.clock().now());
        let result = wheel.deadline(requested, pending::<()>()).await;
        assert!(result.is_err(), "a pending future must time out");
        (Mock::true_now() - start, wheel.clock().now() - reading)
    })
}

/// The same with `embassy_time::with_timeout`: the true time from its first poll to its
/// `Err`.
fn embassy_timeout(offset: Duration, requested: Duration) -> Duration {
    let wheel = fresh_wheel::<Mock>();
    Mock::advance(offset);
    let timeout = embassy_time::Duration::try_from(requested).expect("fits");
    run_driven::<Mock, _>(wheel, LIMIT, async {
        let start = Mock::true_now();
        let result = embassy_time::with_timeout(timeout, pending::<()>()).await;
        assert!(result.is_err(), "a pending future must time out");
        Mock::true_now() - start
    })
}

/// Never early, at most two wheel ticks late, wherever in a wheel tick the deadline starts;
/// `with_timeout` is exact under the mock (see the module docs for why).
#[test]
fn from_any_point_in_a_wheel_tick() {
    let tick = punctual_embassy::TICK;
    assert_eq!(
        tick,
        Duration::from_millis(1),
        "1 MHz mock ticks, 1 ms wheel"
    );
    for &requested in REQUESTED {
        for offset in offsets().map(Duration::from_micros) {
            let (true_elapsed, on_wheel) = punctual_deadline(offset, requested);
            assert!(
                true_elapsed >= requested,
                "punctual, {requested:?} from {offset:?}: early, after {true_elapsed:?}"
            );
            assert!(
                on_wheel <= requested + 2 * tick,
                "punctual, {requested:?} from {offset:?}: {on_wheel:?} is over two ticks late"
            );
            let embassy = embassy_timeout(offset, requested);
            assert_eq!(
                embassy, requested,
                "with_timeout, {requested:?} from {offset:?}: exact under the mock"
            );
        }
    }
}

/// A sleep on the wheel is never early either.
#[test]
fn sleeps_from_any_point_in_a_wheel_tick() {
    for &requested in REQUESTED {
        for offset in offsets().map(Duration::from_micros) {
            let wheel = fresh_wheel::<Mock>();
            Mock::advance(offset);
            let elapsed = run_driven::<Mock, _>(wheel, LIMIT, async {
                let start = Mock::true_now();
                wheel.sleep(requested).await;
                Mock::true_now() - start
            });
            assert!(elapsed >= requested, "sleep of {requested:?}: {elapsed:?}");
            assert!(elapsed <= requested + 2 * wheel.tick(), "{elapsed:?}");
        }
    }
}

/// punctual measures from the first poll; `with_timeout` from its creation
/// (`Timer::after` reads the clock in the constructor). Time that passes between creating
/// and first polling counts against `with_timeout`'s limit only.
#[test]
fn clock_starts_at_first_poll_not_at_creation() {
    let requested = Duration::from_millis(5);
    let idle = Duration::from_millis(3);

    let wheel = fresh_wheel::<Mock>();
    let ours = wheel.deadline(requested, pending::<()>());
    let theirs = embassy_time::with_timeout(
        embassy_time::Duration::try_from(requested).expect("fits"),
        pending::<()>(),
    );
    Mock::advance(idle); // created, not yet polled

    let (ours, theirs) = run_driven::<Mock, _>(wheel, LIMIT, async {
        let start = Mock::true_now();
        let mut ours = pin!(ours);
        let mut theirs = pin!(theirs);
        let (mut ours_at, mut theirs_at) = (None, None);
        core::future::poll_fn(|cx| {
            if ours_at.is_none() && ours.as_mut().poll(cx).is_ready() {
                ours_at = Some(Mock::true_now() - start);
            }
            if theirs_at.is_none() && theirs.as_mut().poll(cx).is_ready() {
                theirs_at = Some(Mock::true_now() - start);
            }
            if ours_at.is_some() && theirs_at.is_some() {
                Poll::Ready(())
            } else {
                Poll::Pending
            }
        })
        .await;
        (ours_at.unwrap(), theirs_at.unwrap())
    });
    assert!(ours >= requested, "punctual: {ours:?} after the first poll");
    assert_eq!(
        theirs,
        requested - idle,
        "with_timeout counts from creation"
    );
}

/// A deadline that is ready at its first poll arms nothing and reads no clock: it works even
/// with no driver running at all.
#[test]
fn ready_future_needs_no_driver() {
    let wheel = fresh_wheel::<Mock>();
    let mut d = pin!(wheel.deadline(Duration::from_millis(1), async { 7 }));
    let poll = d.as_mut().poll(&mut Context::from_waker(Waker::noop()));
    assert_eq!(poll, Poll::Ready(Ok(7)));
    assert_eq!(wheel.occupied(), 0);
}
