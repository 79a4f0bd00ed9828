//! A deadline's accessors (`get_ref`, `get_pin_mut`, `get_mut`, `into_inner`, `named`):
//! while it runs they reach the live inner future (pinned in place, or moved out with the
//! timer released); once it completed they panic, naming the type and the method.
#![cfg(feature = "alloc")]

mod support;

use core::future::{Future, pending, ready};
use core::pin::Pin;
use core::task::Poll;
use core::time::Duration;
use std::thread;

use punctual_core::{Fixed, ManualClock, Wheel};
use support::{CountingWaker, TICK, is_elapsed, ms, quietly};

/// The accessors of a deadline still running give the live inner future: pinned in
/// place, or moved out with the timer released (its entry freed, nothing fires).
#[test]
fn running_deadline_accessors_reach_inner_future() {
    let wheel: Wheel<ManualClock, Fixed<2>> = Wheel::fixed(ManualClock::new(), TICK);
    let w = CountingWaker::new();
    // An inner future that counts its polls, and whose output is the count.
    let polls = std::cell::Cell::new(0);
    let counting = || {
        core::future::poll_fn(|_| {
            polls.set(polls.get() + 1);
            if polls.get() < 3 {
                Poll::Pending
            } else {
                Poll::Ready(polls.get())
            }
        })
    };
    let mut d = Box::pin(wheel.deadline(ms(5), counting()));
    assert!(w.poll(d.as_mut()).is_pending());
    assert_eq!(wheel.occupied(), 1);
    // Polled through the pinned accessor, the inner future sees the poll; the deadline
    // still runs and completes with the output.
    assert!(w.poll(d.as_mut().get_pin_mut()).is_pending());
    assert_eq!(polls.get(), 2);
    assert_eq!(w.poll(d.as_mut()), Poll::Ready(Ok(3)));
    assert_eq!(wheel.occupied(), 0);

    // Moved out: the timer lets go of its entry, and the future runs on its own.
    polls.set(0);
    let mut d = wheel.deadline(ms(5), Box::pin(counting())).named("moved");
    assert!(w.poll(Pin::new(&mut d)).is_pending());
    assert_eq!(wheel.occupied(), 1);
    let mut inner = d.into_inner();
    assert_eq!(wheel.occupied(), 0);
    wheel.advance(ms(10));
    assert_eq!(w.wakes(), 0, "the released deadline fired");
    assert!(w.poll(inner.as_mut()).is_pending());
    assert_eq!(w.poll(inner.as_mut()), Poll::Ready(3));
}

#[test]
fn completed_deadline_accessors_panic_with_names() {
    let wheel: Wheel<ManualClock, Fixed<2>> = Wheel::fixed(ManualClock::new(), TICK);
    let w = CountingWaker::new();
    let message = |r: thread::Result<()>| {
        let panic = r.expect_err("did not panic");
        panic
            .downcast_ref::<&str>()
            .map(|s| s.to_string())
            .or_else(|| panic.downcast_ref::<String>().cloned())
            .unwrap()
    };
    let mut d = Box::pin(wheel.deadline(ms(2), ready(1)));
    assert_eq!(w.poll(d.as_mut()), Poll::Ready(Ok(1)));
    assert_eq!(
        message(quietly(|| {
            let _ = d.get_ref();
        })),
        "`Deadline::get_ref` called after completion"
    );
    assert_eq!(
        message(quietly(|| {
            let _inner = d.as_mut().get_pin_mut();
        })),
        "`Deadline::get_pin_mut` called after completion"
    );
    let mut d = wheel.deadline(Duration::ZERO, pending::<()>());
    is_elapsed(w.poll(Pin::new(&mut d)));
    assert_eq!(
        message(quietly(|| {
            let _inner = d.get_mut();
        })),
        "`Deadline::get_mut` called after completion"
    );
    assert_eq!(
        message(quietly(|| {
            let _inner = d.into_inner();
        })),
        "`Deadline::into_inner` called after completion"
    );
    // A boxed future, freed at the fire: naming the deadline then would copy a dangling box.
    let boxed: Pin<Box<dyn Future<Output = ()>>> = Box::pin(pending());
    let mut d = wheel.deadline(Duration::ZERO, boxed);
    is_elapsed(w.poll(Pin::new(&mut d)));
    assert_eq!(
        message(quietly(|| {
            let _named = d.named("late");
        })),
        "`Deadline::named` called after completion"
    );
    assert_eq!(wheel.occupied(), 0);
}

/// A sleep's `is_elapsed` and `deadline`, as tokio's: elapsed once its time has come,
/// before the poll that completes it; the deadline moves with a reset.
#[test]
fn sleep_is_elapsed_and_deadline() {
    let wheel: Wheel<ManualClock, Fixed<4>> = Wheel::fixed(ManualClock::new(), TICK);
    let w = CountingWaker::new();
    let mut sleep = core::pin::pin!(wheel.sleep(ms(10)));
    assert!(w.poll(sleep.as_mut()).is_pending());
    assert!(!sleep.is_elapsed());
    wheel.advance(ms(10));
    assert!(sleep.is_elapsed());
    assert!(w.poll(sleep.as_mut()).is_ready());
    assert!(w.poll(sleep.as_mut()).is_ready()); // and again, as tokio's
    // Completed: a reset runs it again.
    sleep.as_mut().reset(wheel.now() + ms(2));
    assert!(w.poll(sleep.as_mut()).is_pending());
    wheel.advance(ms(2));
    assert!(w.poll(sleep.as_mut()).is_ready());

    let zero = punctual_core::Reading::ZERO;
    let mut sleep = core::pin::pin!(wheel.sleep_until(zero + ms(10)));
    assert_eq!(sleep.deadline(), zero + ms(10));
    sleep.as_mut().reset(zero + ms(30));
    assert_eq!(sleep.deadline(), zero + ms(30));
}
