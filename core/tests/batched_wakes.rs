//! Batched wakes (`Wheel::with_batched_wakes`): a turn wakes the first of its fired
//! deadlines, that deadline's poll (or drop) wakes the rest, and a batch no deadline takes
//! is woken by the next tick's turn, also when the lead never polls, drops its deadline,
//! or a waker of the batch panics.
//!
//! With `std` only: without it the hand-off is compiled out (there is no timer thread to
//! turn it on), and a turn wakes every deadline it fires, as every other test checks.
#![cfg(feature = "std")]

mod support;

use core::pin::{Pin, pin};
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::task::{Wake, Waker};

use support::{CountingWaker, fixed, growable, is_elapsed, ms, quietly};

/// Wakes of each of `wakers`.
fn wakes(wakers: &[CountingWaker]) -> Vec<usize> {
    wakers.iter().map(CountingWaker::wakes).collect()
}

/// The one woken (the lead), when exactly one was.
fn lead(wakers: &[CountingWaker]) -> usize {
    let woken: Vec<usize> = (0..wakers.len())
        .filter(|&i| wakers[i].wakes() > 0)
        .collect();
    assert_eq!(woken.len(), 1, "not exactly one lead: {:?}", wakes(wakers));
    woken[0]
}

#[test]
fn unbatched_turn_wakes_every_fired_deadline() {
    let wheel = growable();
    let wakers: Vec<CountingWaker> = (0..3).map(|_| CountingWaker::new()).collect();
    let mut sleeps: Vec<_> = (0..3).map(|_| Box::pin(wheel.sleep(ms(10)))).collect();
    for (s, w) in sleeps.iter_mut().zip(&wakers) {
        assert!(w.poll(s.as_mut()).is_pending());
    }
    wheel.advance(ms(10));
    assert_eq!(wakes(&wakers), [1, 1, 1]);
}

#[test]
fn the_leads_poll_wakes_the_rest_of_its_batch() {
    let wheel = growable().with_batched_wakes();
    let wakers: Vec<CountingWaker> = (0..4).map(|_| CountingWaker::new()).collect();
    let mut sleeps: Vec<_> = (0..4).map(|_| Box::pin(wheel.sleep(ms(10)))).collect();
    for (s, w) in sleeps.iter_mut().zip(&wakers) {
        assert!(w.poll(s.as_mut()).is_pending());
    }
    wheel.advance(ms(10));
    let lead = lead(&wakers);
    // No turn: the lead's poll, seeing its deadline fired, wakes the others.
    assert!(wakers[lead].poll(sleeps[lead].as_mut()).is_ready());
    assert_eq!(wakes(&wakers), [1, 1, 1, 1]);
    for (i, (s, w)) in sleeps.iter_mut().zip(&wakers).enumerate() {
        if i != lead {
            assert!(w.poll(s.as_mut()).is_ready());
        }
    }
    // Nothing left over: no extra wake from a later turn.
    wheel.advance(ms(5));
    assert_eq!(wakes(&wakers), [1, 1, 1, 1]);
}

#[test]
fn lead_never_polling_leaves_batch_to_next_tick() {
    let wheel = fixed::<8>().with_batched_wakes();
    let wakers: Vec<CountingWaker> = (0..3).map(|_| CountingWaker::new()).collect();
    let mut deadlines: Vec<_> = (0..3)
        .map(|_| Box::pin(wheel.deadline(ms(10), core::future::pending::<()>())))
        .collect();
    for (d, w) in deadlines.iter_mut().zip(&wakers) {
        assert!(w.poll(d.as_mut()).is_pending());
    }
    let planned = wheel.advance(ms(10));
    lead(&wakers);
    // The driver keeps a turn planned by the next tick (never idle) while a batch waits.
    let next = wheel.turn();
    assert!(
        next <= planned + ms(1),
        "planned {next:?}, more than a tick after {planned:?}"
    );
    // A turn within the same tick leaves the batch to its lead.
    wheel.advance(core::time::Duration::from_micros(500));
    assert_eq!(wakes(&wakers).iter().sum::<usize>(), 1);
    // The next tick's turn wakes the rest: one tick after they fired.
    wheel.advance(core::time::Duration::from_micros(500));
    assert_eq!(wakes(&wakers), [1, 1, 1]);
    for (d, w) in deadlines.iter_mut().zip(&wakers) {
        is_elapsed(w.poll(d.as_mut()));
    }
}

#[test]
fn a_lead_that_drops_its_deadline_wakes_the_rest() {
    let wheel = growable().with_batched_wakes();
    let wakers: Vec<CountingWaker> = (0..3).map(|_| CountingWaker::new()).collect();
    let mut sleeps: Vec<Option<Pin<Box<_>>>> =
        (0..3).map(|_| Some(Box::pin(wheel.sleep(ms(3))))).collect();
    for (s, w) in sleeps.iter_mut().zip(&wakers) {
        assert!(w.poll(s.as_mut().unwrap().as_mut()).is_pending());
    }
    wheel.advance(ms(3));
    let lead = lead(&wakers);
    sleeps[lead] = None;
    assert_eq!(wakes(&wakers), [1, 1, 1]);
}

/// A waker that panics when woken, and counts the wakes.
struct Panicking(AtomicUsize);

impl Wake for Panicking {
    fn wake(self: Arc<Self>) {
        self.wake_by_ref();
    }
    fn wake_by_ref(self: &Arc<Self>) {
        self.0.fetch_add(1, Ordering::SeqCst);
        panic!("a waker that panics");
    }
}

#[test]
fn panicking_waker_in_batch_loses_no_other_wake() {
    let wheel = growable().with_batched_wakes();
    let lead_waker = CountingWaker::new();
    let panicking = Arc::new(Panicking(AtomicUsize::new(0)));
    let panicking_waker = Waker::from(Arc::clone(&panicking));
    let after: Vec<CountingWaker> = (0..3).map(|_| CountingWaker::new()).collect();
    // Due in firing order: the lead, the panicking one, then the others.
    let mut first = pin!(wheel.sleep(ms(5)));
    assert!(lead_waker.poll(first.as_mut()).is_pending());
    wheel.advance(ms(1));
    let mut second = pin!(wheel.sleep(ms(4)));
    let mut cx = core::task::Context::from_waker(&panicking_waker);
    assert!(second.as_mut().poll(&mut cx).is_pending());
    wheel.advance(ms(1));
    let mut rest: Vec<_> = (0..3).map(|_| Box::pin(wheel.sleep(ms(3)))).collect();
    for (s, w) in rest.iter_mut().zip(&after) {
        assert!(w.poll(s.as_mut()).is_pending());
    }
    // The panicking waker may be the lead, woken by the turn itself: the batch is
    // handed off before the lead is woken.
    let _ = quietly(|| wheel.advance(ms(3)));
    let woken = lead_waker.wakes() + wakes(&after).iter().sum::<usize>();
    let lead_panicked = panicking.0.load(Ordering::SeqCst) == 1;
    assert_eq!(
        woken + usize::from(lead_panicked),
        1,
        "one lead woken by the turn"
    );
    if !lead_panicked {
        // The lead's poll wakes the batch, and panics at the panicking waker.
        let lead = after
            .iter()
            .position(|w| w.wakes() == 1)
            .map_or(Pin::as_mut(&mut first), |i| rest[i].as_mut());
        let lead_waker = if lead_waker.wakes() == 1 {
            &lead_waker
        } else {
            after.iter().find(|w| w.wakes() == 1).unwrap()
        };
        assert!(quietly(|| lead_waker.poll(lead)).is_err());
        assert_eq!(panicking.0.load(Ordering::SeqCst), 1);
    }
    // Whatever was not woken is woken by the next tick's turn at the latest.
    let _ = quietly(|| wheel.advance(ms(1)));
    assert_eq!(lead_waker.wakes(), 1);
    assert_eq!(wakes(&after), [1, 1, 1]);
    assert_eq!(panicking.0.load(Ordering::SeqCst), 1);
}
