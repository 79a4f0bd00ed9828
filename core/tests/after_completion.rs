//! A deadline or a sleep polled again after it completed panics, naming its type: after
//! `Ok`, after `Err`, and for a sleep that completed at once.

mod support;

use core::future::{pending, ready};
use core::pin::pin;
use core::time::Duration;

use support::{CountingWaker, fixed, ms};

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
#[should_panic(expected = "`Sleep` polled after completion")]
fn polling_a_sleep_after_completion_panics() {
    let wheel = fixed::<1>();
    let w = CountingWaker::new();
    let mut s = pin!(wheel.sleep(ms(1)));
    assert!(w.poll(s.as_mut()).is_pending());
    wheel.advance(ms(1));
    assert!(w.poll(s.as_mut()).is_ready());
    let _ = w.poll(s.as_mut());
}

#[test]
#[should_panic(expected = "`Sleep` polled after completion")]
fn polling_a_zero_sleep_after_completion_panics() {
    let wheel = fixed::<1>();
    let w = CountingWaker::new();
    let mut s = pin!(wheel.sleep(Duration::ZERO));
    assert!(w.poll(s.as_mut()).is_ready());
    let _ = w.poll(s.as_mut());
}
