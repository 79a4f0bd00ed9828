//! Firing order: one turn that passes many deadlines (as a virtual clock's jump does) wakes
//! their tasks in deadline order, tick by tick, also across the slots of higher levels
//! that come down in it, whatever the order they were armed in.
#![cfg(feature = "alloc")]

mod support;

use core::future::pending;
use core::task::{Context, Poll};
use std::sync::{Arc, Mutex};

use support::{growable, ms};

/// A waker that records its deadline's duration, in milliseconds, when woken.
struct RecordingWaker {
    millis: u64,
    woken: Arc<Mutex<Vec<u64>>>,
}

impl std::task::Wake for RecordingWaker {
    fn wake(self: Arc<Self>) {
        self.woken.lock().unwrap().push(self.millis);
    }
}

/// One turn that passes many deadlines (as a virtual clock's jump does) wakes their tasks
/// in deadline order: tick by tick, also across the slots of higher levels that come down
/// in it, whatever the order they were armed in.
#[test]
fn one_turn_wakes_many_deadlines_in_deadline_order() {
    let wheel = growable();
    let woken = Arc::new(Mutex::new(Vec::new()));
    // 200 distinct durations from 1 to 400 ms, armed out of order.
    let durations: Vec<u64> = (0..200u64).map(|k| (k * 7919) % 400 + 1).collect();
    let mut deadlines: Vec<_> = durations
        .iter()
        .map(|&millis| {
            let waker = std::task::Waker::from(Arc::new(RecordingWaker {
                millis,
                woken: Arc::clone(&woken),
            }));
            let mut d = Box::pin(wheel.deadline(ms(millis), pending::<()>()));
            assert!(
                d.as_mut()
                    .poll(&mut Context::from_waker(&waker))
                    .is_pending()
            );
            d
        })
        .collect();
    wheel.turn();
    wheel.advance(ms(400));
    let woken = woken.lock().unwrap().clone();
    assert_eq!(woken.len(), 200, "every deadline fired");
    let inversions = woken.windows(2).filter(|w| w[0] > w[1]).count();
    assert_eq!(inversions, 0, "woken out of deadline order: {woken:?}");
    let cx = &mut Context::from_waker(std::task::Waker::noop());
    for d in &mut deadlines {
        assert!(matches!(d.as_mut().poll(cx), Poll::Ready(Err(_))));
    }
}
