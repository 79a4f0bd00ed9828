//! Rule 5 of docs/design.md, decided once: the outcome is the fire or the inner future's
//! result, whichever the wheel decided first; a fire already decided stays `Err` even if
//! the inner future became ready, and a result produced first stays `Ok` even once the
//! clock has passed the deadline.
#![cfg(feature = "alloc")]

mod support;

use core::pin::pin;
use core::task::Poll;
use core::time::Duration;

use support::{CountingWaker, ProbeState, fixed, is_elapsed, ms};

#[test]
fn after_fire_result_is_err_even_if_inner_ready() {
    let wheel = fixed::<4>();
    let probe = ProbeState::default();
    let w = CountingWaker::new();
    let mut d = pin!(wheel.deadline(ms(10), probe.probe()));
    assert!(w.poll(d.as_mut()).is_pending());
    wheel.advance(ms(10));
    probe.set_ready();
    is_elapsed(w.poll(d.as_mut()));
    assert_eq!(
        probe.polls(),
        1,
        "the inner future was polled after the fire"
    );
    assert!(probe.dropped());
}

#[test]
fn result_before_fire_is_observed_is_ok() {
    let wheel = fixed::<4>();
    let probe = ProbeState::default();
    let w = CountingWaker::new();
    let mut d = pin!(wheel.deadline(ms(10), probe.probe()));
    assert!(w.poll(d.as_mut()).is_pending());
    wheel.advance(ms(9));
    probe.set_ready();
    assert_eq!(w.poll(d.as_mut()), Poll::Ready(Ok(7)));
    assert!(probe.dropped());
    wheel.advance(ms(5));
    assert_eq!(w.wakes(), 0, "a completed deadline fires nothing");
    assert_eq!(wheel.occupied(), 0);
}

#[test]
fn result_after_clock_passed_but_before_fire_is_ok() {
    // The clock moved past the deadline, but no one turned the wheel: the fire was not
    // decided, so the inner future's result wins, and the entry is released as cancelled.
    let wheel = fixed::<4>();
    let probe = ProbeState::default();
    let w = CountingWaker::new();
    let mut d = pin!(wheel.deadline(ms(10), probe.probe()));
    assert!(w.poll(d.as_mut()).is_pending());
    wheel.clock().advance(ms(20));
    probe.set_ready();
    assert_eq!(w.poll(d.as_mut()), Poll::Ready(Ok(7)));
    wheel.advance(Duration::ZERO);
    assert_eq!(
        w.wakes(),
        0,
        "a deadline decided as cancelled must not wake"
    );
    assert_eq!(wheel.occupied(), 0);
}
