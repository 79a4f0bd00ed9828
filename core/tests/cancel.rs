//! Rule 1 of docs/design.md, cancel, don't abandon: a deadline that fires drops its inner
//! future before it returns `Elapsed` and never polls it again; a deadline dropped early
//! drops its inner future and lets go of its entry silently, fired or not.
#![cfg(all(feature = "alloc", feature = "stats"))]

mod support;

use core::pin::pin;
use core::time::Duration;

use punctual_core::{ManualClock, Storage, Wheel};
use support::{CountingWaker, ProbeState, fixed, growable, is_elapsed, ms};

#[test]
fn fire_drops_inner_before_elapsed_never_polls_again() {
    let wheel = fixed::<4>();
    let probe = ProbeState::default();
    let w = CountingWaker::new();
    let mut d = pin!(wheel.deadline(ms(10), probe.probe()));
    assert!(w.poll(d.as_mut()).is_pending());
    assert_eq!(probe.polls(), 1);

    wheel.advance(ms(10));
    assert_eq!(
        w.wakes(),
        1,
        "the advancing thread fired the deadline and woke the task"
    );
    assert!(
        !probe.dropped(),
        "the inner future lives until the deadline is polled"
    );

    let result = w.poll(d.as_mut());
    probe.log("err returned");
    let elapsed = is_elapsed(result);
    assert_eq!(elapsed.duration(), ms(10));
    assert_eq!(probe.events(), ["poll", "drop", "err returned"]);
    assert_eq!(
        probe.polls(),
        1,
        "the inner future is not polled after the fire"
    );
    assert_eq!(wheel.occupied(), 0);
}

#[test]
fn fire_seen_in_same_poll_drops_inner_after_one_poll() {
    // Duration::ZERO: the inner future is polled (pending), then the deadline fires in
    // the same poll; the inner future is dropped before `Err` is returned.
    let wheel = fixed::<4>();
    let probe = ProbeState::default();
    let w = CountingWaker::new();
    let mut d = pin!(wheel.deadline(Duration::ZERO, probe.probe()));
    let result = w.poll(d.as_mut());
    probe.log("err returned");
    is_elapsed(result);
    assert_eq!(probe.events(), ["poll", "drop", "err returned"]);
}

#[test]
fn drop_drops_inner_and_releases_entry_silently() {
    fn check<S: Storage>(wheel: &Wheel<ManualClock, S>) {
        let probe = ProbeState::default();
        let w = CountingWaker::new();
        let mut d = Box::pin(wheel.deadline(ms(10), probe.probe()));
        assert!(w.poll(d.as_mut()).is_pending());
        assert_eq!(wheel.occupied(), 1);
        wheel.advance(ms(3));
        drop(d);
        assert!(probe.dropped());
        wheel.advance(Duration::ZERO);
        assert_eq!(wheel.occupied(), 0);
        wheel.advance(ms(100));
        assert_eq!(w.wakes(), 0, "a dropped deadline causes no event");
        assert_eq!(wheel.occupied(), 0);
        assert_eq!(probe.polls(), 1);
    }
    check(&fixed::<1>());
    check(&growable());
}

#[test]
fn drop_of_fired_unobserved_deadline_frees_entry() {
    let wheel = fixed::<1>();
    let probe = ProbeState::default();
    let w = CountingWaker::new();
    let mut d = Box::pin(wheel.deadline(ms(5), probe.probe()));
    assert!(w.poll(d.as_mut()).is_pending());
    wheel.advance(ms(5));
    assert_eq!(w.wakes(), 1);
    drop(d);
    assert!(probe.dropped());
    assert_eq!(
        wheel.occupied(),
        0,
        "the last owner frees the entry at once"
    );
    // The one entry is reusable: the next deadline arms, not degraded.
    let mut s = pin!(wheel.sleep(ms(1)));
    assert!(w.poll(s.as_mut()).is_pending());
    assert_eq!(wheel.degraded_polls(), 0);
    assert_eq!(wheel.occupied(), 1);
}
