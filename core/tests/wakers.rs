//! Waker replacement: a deadline polled with another waker wakes the waker of its latest
//! poll only, also when it switches back to an earlier one.
#![cfg(feature = "alloc")]

mod support;

use core::future::pending;
use core::pin::pin;

use support::{CountingWaker, fixed, growable, ms};

#[test]
fn the_latest_waker_is_woken_not_an_earlier_one() {
    let wheel = fixed::<4>();
    let a = CountingWaker::new();
    let b = CountingWaker::new();
    let mut d = pin!(wheel.deadline(ms(10), pending::<()>()));
    let mut s = pin!(wheel.sleep(ms(10)));
    assert!(a.poll(d.as_mut()).is_pending());
    assert!(a.poll(s.as_mut()).is_pending());
    wheel.advance(ms(4));
    assert!(b.poll(d.as_mut()).is_pending());
    assert!(b.poll(s.as_mut()).is_pending());
    wheel.advance(ms(6));
    assert_eq!(a.wakes(), 0, "the replaced waker was woken");
    assert_eq!(b.wakes(), 2, "the current waker was not woken");
    assert!(b.poll(d.as_mut()).is_ready());
    assert!(b.poll(s.as_mut()).is_ready());
}

#[test]
fn switching_back_to_the_first_waker_wakes_only_it() {
    let wheel = growable();
    let a = CountingWaker::new();
    let b = CountingWaker::new();
    let mut s = pin!(wheel.sleep(ms(10)));
    assert!(a.poll(s.as_mut()).is_pending());
    assert!(b.poll(s.as_mut()).is_pending());
    assert!(a.poll(s.as_mut()).is_pending());
    wheel.advance(ms(10));
    assert_eq!((a.wakes(), b.wakes()), (1, 0));
}
