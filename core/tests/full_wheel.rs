//! A full fixed wheel: a deadline that finds no free entry runs degraded (it asks to be
//! polled again, and checks the clock at each poll), is never early and completes at its
//! first poll after its time; it arms once an entry is free, and then fires from the
//! wheel.
#![cfg(all(feature = "alloc", feature = "stats"))]

mod support;

use core::future::pending;
use core::pin::pin;
use core::time::Duration;

use support::{CountingWaker, ProbeState, fixed, is_elapsed, ms, ns};

#[test]
fn full_wheel_degrades_and_completes_never_early() {
    let wheel = fixed::<2>();
    let w = CountingWaker::new();
    let mut a = pin!(wheel.sleep(ms(30)));
    let mut b = pin!(wheel.sleep(ms(30)));
    assert!(w.poll(a.as_mut()).is_pending());
    assert!(w.poll(b.as_mut()).is_pending());
    assert_eq!(wheel.occupied(), 2);

    let probe = ProbeState::default();
    let wd = CountingWaker::new();
    let mut d = pin!(wheel.deadline(ms(10), probe.probe()));
    assert!(wd.poll(d.as_mut()).is_pending());
    assert_eq!(wheel.degraded_polls(), 1);
    assert_eq!(wd.wakes(), 0, "a degraded poll waits for the next tick");
    assert_eq!(wheel.occupied(), 2);
    wheel.advance(Duration::ZERO);
    assert_eq!(wd.wakes(), 0, "a turn in the same tick leaves it waiting");

    wheel.advance(ms(5));
    assert_eq!(wd.wakes(), 1, "the turn at a later tick wakes it");
    assert!(wd.poll(d.as_mut()).is_pending());
    assert_eq!(wheel.degraded_polls(), 2);

    wheel.advance(ms(5) - ns(1));
    assert_eq!(wd.wakes(), 2);
    assert!(
        wd.poll(d.as_mut()).is_pending(),
        "degraded deadline fired early"
    );
    assert_eq!(wheel.degraded_polls(), 3);

    wheel.advance(ns(1));
    assert_eq!(wd.wakes(), 3, "woken at the tick of its time");
    let elapsed = is_elapsed(wd.poll(d.as_mut()));
    assert_eq!(elapsed.duration(), ms(10));
    assert_eq!(
        wheel.degraded_polls(),
        3,
        "the completing poll is not degraded"
    );
    assert!(probe.dropped());
    assert_eq!(probe.polls(), 4);
    assert_eq!(wheel.occupied(), 2);

    // Much later than its time, a degraded sleep completes on its first poll.
    let mut late = pin!(wheel.sleep(ms(1)));
    assert!(wd.poll(late.as_mut()).is_pending());
    assert_eq!(wheel.degraded_polls(), 4);
    wheel.advance(ms(15));
    assert!(wd.poll(late.as_mut()).is_ready());
    assert_eq!(w.wakes(), 0, "the 30 ms sleeps are not due yet");
    wheel.advance(ms(10));
    assert_eq!(w.wakes(), 2);
    assert!(w.poll(a.as_mut()).is_ready());
    assert!(w.poll(b.as_mut()).is_ready());
    assert_eq!(wheel.occupied(), 0);
}

#[test]
fn degraded_deadline_arms_once_free_then_fires() {
    let wheel = fixed::<1>();
    let w = CountingWaker::new();
    let mut blocker = Box::pin(wheel.sleep(Duration::from_secs(30)));
    assert!(w.poll(blocker.as_mut()).is_pending());

    let wd = CountingWaker::new();
    let mut d = pin!(wheel.deadline(ms(10), pending::<()>()));
    assert!(wd.poll(d.as_mut()).is_pending());
    assert_eq!(wheel.degraded_polls(), 1);

    drop(blocker);
    wheel.advance(ms(1)); // reclaims the cancelled entry
    assert_eq!(wheel.occupied(), 0);
    assert!(wd.poll(d.as_mut()).is_pending());
    assert_eq!(
        wheel.degraded_polls(),
        1,
        "the entry was free: this poll armed"
    );
    assert_eq!(wheel.occupied(), 1);
    let wakes = wd.wakes();

    wheel.advance(ms(9) - ns(1));
    assert_eq!(wd.wakes(), wakes, "woken early");
    assert!(wd.poll(d.as_mut()).is_pending());
    wheel.advance(ns(1));
    assert_eq!(
        wd.wakes(),
        wakes + 1,
        "the wheel must wake the re-armed deadline"
    );
    assert_eq!(is_elapsed(wd.poll(d.as_mut())).duration(), ms(10));
    assert_eq!(wheel.occupied(), 0);
}

/// A wheel whose slot heads are bytes holds as many deadlines as a byte can name (255: the
/// largest index, 254, is stored as 255), spread over every level, and fires each one at
/// its time, not before; the 256th runs degraded.
#[test]
fn byte_wide_wheel_holds_255_deadlines_fires_each() {
    use punctual_core::{Fixed, ManualClock, Wheel};
    let wheel: Wheel<ManualClock, Fixed<255, u8>> = Wheel::fixed(ManualClock::new(), ms(1));
    let w = CountingWaker::new();
    // 1 ms to about 2.7 hours apart, so levels 0 to 3 all hold some.
    let due = |i: u64| ms(1 + i * i * 150);
    let mut deadlines: Vec<_> = (0..255)
        .map(|i| Box::pin(wheel.deadline(due(i), pending::<()>())))
        .collect();
    for deadline in &mut deadlines {
        assert!(w.poll(deadline.as_mut()).is_pending());
    }
    assert_eq!(wheel.occupied(), 255);
    let mut extra = Box::pin(wheel.deadline(ms(1), pending::<()>()));
    assert!(w.poll(extra.as_mut()).is_pending());
    assert_eq!(
        wheel.degraded_polls(),
        1,
        "the 256th deadline runs degraded"
    );
    drop(extra);
    let mut now = Duration::ZERO;
    for (i, deadline) in deadlines.iter_mut().enumerate() {
        let at = due(i as u64);
        wheel.advance(at - ns(1) - now);
        assert!(
            w.poll(deadline.as_mut()).is_pending(),
            "deadline {i} fired early"
        );
        wheel.advance(ns(1));
        now = at;
        assert_eq!(
            is_elapsed(w.poll(deadline.as_mut())).duration(),
            at,
            "deadline {i}"
        );
    }
    assert_eq!(wheel.occupied(), 0);
}
