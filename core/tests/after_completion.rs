//! A deadline or a budget polled again after it completed panics, naming its type: after
//! `Ok`, after `Err`, a deadline that a budget ended, and a degraded one. A sleep, as
//! tokio's, is `Ready` again.
#![cfg(all(feature = "alloc", feature = "stats"))]

mod support;

use core::future::{pending, ready};
use core::pin::pin;
use core::time::Duration;

use punctual_core::{Budget, Fixed, ManualClock, Reading, Wheel};
use support::{CountingWaker, TICK, fixed, is_elapsed, ms};

#[test]
#[should_panic(expected = "`Deadline` polled after completion")]
fn polling_a_deadline_after_ok_panics() {
    let wheel = fixed::<1>();
    let w = CountingWaker::new();
    let mut d = pin!(wheel.deadline(ms(1), ready(())));
    assert!(w.poll(d.as_mut()).is_ready());
    let _ = w.poll(d.as_mut());
}

#[test]
#[should_panic(expected = "`Deadline` polled after completion")]
fn polling_a_deadline_after_err_panics() {
    let wheel = fixed::<1>();
    let w = CountingWaker::new();
    let mut d = pin!(wheel.deadline(ms(1), pending::<()>()));
    assert!(w.poll(d.as_mut()).is_pending());
    wheel.advance(ms(1));
    assert!(w.poll(d.as_mut()).is_ready());
    let _ = w.poll(d.as_mut());
}

#[test]
fn polling_a_sleep_after_completion_is_ready_again() {
    let wheel = fixed::<1>();
    let w = CountingWaker::new();
    let mut s = pin!(wheel.sleep(ms(1)));
    assert!(w.poll(s.as_mut()).is_pending());
    wheel.advance(ms(1));
    assert!(w.poll(s.as_mut()).is_ready());
    assert!(w.poll(s.as_mut()).is_ready());
    wheel.turn();
    assert_eq!(wheel.occupied(), 0, "no entry taken by the polls after");
}

#[test]
fn polling_a_zero_sleep_after_completion_is_ready_again() {
    let wheel = fixed::<1>();
    let w = CountingWaker::new();
    let mut s = pin!(wheel.sleep(Duration::ZERO));
    assert!(w.poll(s.as_mut()).is_ready());
    assert!(w.poll(s.as_mut()).is_ready());
}

#[test]
#[should_panic(expected = "`Budgeted` polled after completion")]
fn polling_a_completed_budget_panics() {
    let wheel: Wheel<ManualClock, Fixed<2>> = Wheel::fixed(ManualClock::new(), TICK);
    let w = CountingWaker::new();
    let mut b = pin!(wheel.budget(ms(5), pending::<()>()));
    assert!(w.poll(b.as_mut()).is_pending());
    wheel.advance(ms(5));
    assert!(w.poll(b.as_mut()).is_ready());
    let _ = w.poll(b.as_mut());
}

#[test]
#[should_panic(expected = "`Deadline` polled after completion")]
fn polling_completed_within_budget_panics() {
    let wheel: Wheel<ManualClock, Fixed<2>> = Wheel::fixed(ManualClock::new(), TICK);
    let w = CountingWaker::new();
    let budget = Budget::new(&wheel, Reading::since_origin(ms(3)), ms(3));
    let mut d = pin!(wheel.deadline(ms(10), pending::<()>()).within(budget));
    assert!(w.poll(d.as_mut()).is_pending());
    wheel.advance(ms(3));
    assert!(is_elapsed(w.poll(d.as_mut())).is_budget());
    let _ = w.poll(d.as_mut());
}

#[test]
#[should_panic(expected = "`Deadline` polled after completion")]
fn polling_a_completed_degraded_deadline_panics() {
    let wheel: Wheel<ManualClock, Fixed<1>> = Wheel::fixed(ManualClock::new(), TICK);
    let w = CountingWaker::new();
    let mut blocker = pin!(wheel.sleep(ms(50)));
    assert!(w.poll(blocker.as_mut()).is_pending());
    let mut d = pin!(wheel.deadline(ms(2), pending::<()>()));
    assert!(w.poll(d.as_mut()).is_pending());
    assert_eq!(wheel.degraded_polls(), 1);
    wheel.advance(ms(2));
    is_elapsed(w.poll(d.as_mut()));
    let _ = w.poll(d.as_mut());
}
