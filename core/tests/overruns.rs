//! Overrun reports: a fired deadline whose task polls it later than the threshold counts
//! once in `Stats::overruns`; none without a threshold. One test: the threshold is the
//! process's.
#![cfg(feature = "stats")]

use core::future::{Future, pending};
use core::pin::pin;
use core::task::{Context, Waker};
use core::time::Duration;

use punctual_core::{Fixed, ManualClock, Wheel, report_overruns};

const MS: Duration = Duration::from_millis(1);

/// Fires a 5 ms deadline, polls it `polled_after` past its time; the wheel's overruns.
fn overruns_after(polled_after: Duration) -> usize {
    let wheel: Wheel<ManualClock, Fixed<4>> = Wheel::fixed(ManualClock::new(), MS);
    let mut cx = Context::from_waker(Waker::noop());
    let mut d = pin!(wheel.deadline(5 * MS, pending::<()>()));
    assert!(d.as_mut().poll(&mut cx).is_pending());
    wheel.advance(5 * MS + polled_after);
    assert!(d.as_mut().poll(&mut cx).is_ready());
    wheel.stats().overruns
}

#[test]
fn late_polls_count_once_past_threshold() {
    // Off by default: nothing counted, however late.
    assert_eq!(overruns_after(Duration::from_secs(60)), 0);

    report_overruns(Some(10 * MS));
    assert_eq!(punctual_core::overrun_threshold(), Some(10 * MS));
    assert_eq!(overruns_after(30 * MS), 1);
    // Within the threshold: not an overrun (lateness up to it is the driver's or the
    // executor's ordinary delay).
    assert_eq!(overruns_after(10 * MS), 0);
    assert_eq!(overruns_after(Duration::ZERO), 0);

    // A deadline that completes never counts, nor does a sleep polled in time.
    let wheel: Wheel<ManualClock, Fixed<4>> = Wheel::fixed(ManualClock::new(), MS);
    let mut cx = Context::from_waker(Waker::noop());
    let mut ok = pin!(wheel.deadline(5 * MS, async { 1 }));
    assert!(ok.as_mut().poll(&mut cx).is_ready());
    let mut sleep = pin!(wheel.sleep(5 * MS));
    assert!(sleep.as_mut().poll(&mut cx).is_pending());
    wheel.advance(5 * MS);
    assert!(sleep.as_mut().poll(&mut cx).is_ready());
    assert_eq!(wheel.stats().overruns, 0);

    // Off again.
    report_overruns(None);
    assert_eq!(punctual_core::overrun_threshold(), None);
    assert_eq!(overruns_after(Duration::from_secs(60)), 0);
}
