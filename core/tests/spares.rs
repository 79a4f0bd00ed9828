//! Wheels with thread spares (`Wheel::with_thread_spares`): a thread keeps the last entry
//! it freed aside for its next deadline. These tests check what makes that safe: a spare
//! serves only the wheel it came from, a thread that exits gives it back, and a deadline
//! armed from a spare behaves as any other.
//!
//! Each test has wheels of its own (`static`, as the constructor requires), so that the
//! tests may run in parallel: a thread's spare slot is per thread, not per wheel.

use core::future::pending;
use core::pin::pin;
use core::task::{Context, Poll, Waker};
use core::time::Duration;

use punctual_core::{Fixed, ManualClock, Wheel};

const TICK: Duration = Duration::from_millis(1);

/// Polls a deadline of `wheel` around a pending future once (it arms), then drops it
/// before any turn: the entry is taken back off the arm inbox and freed by this thread.
fn arm_and_drop<const N: usize>(wheel: &Wheel<ManualClock, Fixed<N>>) {
    let mut deadline = pin!(wheel.deadline(pending::<()>(), Duration::from_secs(2)));
    let polled = deadline
        .as_mut()
        .poll(&mut Context::from_waker(Waker::noop()));
    assert!(polled.is_pending());
}

#[test]
fn a_thread_that_exits_gives_its_spare_back_to_the_wheel() {
    // SAFETY: a `static`, never dropped nor moved.
    static WHEEL: Wheel<ManualClock, Fixed<1>> =
        unsafe { Wheel::fixed(ManualClock::new(), TICK).with_thread_spares() };
    // The wheel's one entry is parked in the spawned thread's slot, then given back when
    // that thread exits. Were it lost, the wheel would be full: this deadline would run
    // degraded.
    std::thread::spawn(|| arm_and_drop(&WHEEL)).join().unwrap();
    let mut cx = Context::from_waker(Waker::noop());
    let mut deadline = pin!(WHEEL.deadline(pending::<()>(), Duration::from_millis(3)));
    assert!(deadline.as_mut().poll(&mut cx).is_pending());
    assert_eq!(
        WHEEL.degraded_polls(),
        0,
        "the entry was lost with the thread"
    );
    assert_eq!(WHEEL.occupied(), 1);
    WHEEL.advance(Duration::from_millis(3));
    assert!(matches!(
        deadline.as_mut().poll(&mut cx),
        Poll::Ready(Err(_))
    ));
    assert_eq!(WHEEL.occupied(), 0);
}

#[test]
fn a_spare_serves_only_the_wheel_it_came_from() {
    // SAFETY: a `static`, never dropped nor moved.
    static TWO: Wheel<ManualClock, Fixed<2>> =
        unsafe { Wheel::fixed(ManualClock::new(), TICK).with_thread_spares() };
    // SAFETY: as `TWO`.
    static ONE: Wheel<ManualClock, Fixed<1>> =
        unsafe { Wheel::fixed(ManualClock::new(), TICK).with_thread_spares() };
    std::thread::spawn(|| {
        let mut cx = Context::from_waker(Waker::noop());
        // Park `TWO`'s entry 1: armed last, so it is the arm inbox's head when dropped.
        {
            let mut first = pin!(TWO.deadline(pending::<()>(), Duration::from_secs(2)));
            assert!(first.as_mut().poll(&mut cx).is_pending());
            arm_and_drop(&TWO);
        }
        assert_eq!(TWO.occupied(), 0);
        // `ONE` has no entry 1: a spare taken for the wrong wheel would index past its
        // end. It gets its own entry, and keeps working with the slot full.
        for _ in 0..3 {
            arm_and_drop(&ONE);
        }
        let mut on_one = pin!(ONE.deadline(pending::<()>(), Duration::from_millis(2)));
        assert!(on_one.as_mut().poll(&mut cx).is_pending());
        assert_eq!((ONE.occupied(), ONE.degraded_polls()), (1, 0));
        ONE.advance(Duration::from_millis(2));
        assert!(matches!(on_one.as_mut().poll(&mut cx), Poll::Ready(Err(_))));
        // `TWO` still has both entries: the parked one and the freed one.
        let mut a = pin!(TWO.deadline(pending::<()>(), Duration::from_millis(1)));
        let mut b = pin!(TWO.deadline(pending::<()>(), Duration::from_millis(1)));
        assert!(a.as_mut().poll(&mut cx).is_pending());
        assert!(b.as_mut().poll(&mut cx).is_pending());
        assert_eq!((TWO.occupied(), TWO.degraded_polls()), (2, 0));
        TWO.advance(Duration::from_millis(1));
        assert!(matches!(a.as_mut().poll(&mut cx), Poll::Ready(Err(_))));
        assert!(matches!(b.as_mut().poll(&mut cx), Poll::Ready(Err(_))));
    })
    .join()
    .unwrap();
    assert_eq!((ONE.occupied(), TWO.occupied()), (0, 0));
}

#[test]
fn a_deadline_armed_from_a_spare_fires_on_time_and_frees_its_entry() {
    // SAFETY: a `static`, never dropped nor moved.
    static WHEEL: Wheel<ManualClock, Fixed<1>> =
        unsafe { Wheel::fixed(ManualClock::new(), TICK).with_thread_spares() };
    std::thread::spawn(|| {
        let mut cx = Context::from_waker(Waker::noop());
        for round in 0..3u32 {
            // The entry comes from the spare from the second round on; each time it is
            // a fresh generation, never early, and freed again by the fire.
            arm_and_drop(&WHEEL);
            let mut deadline = pin!(WHEEL.deadline(pending::<()>(), Duration::from_millis(5)));
            assert!(
                deadline.as_mut().poll(&mut cx).is_pending(),
                "round {round}"
            );
            WHEEL.advance(Duration::from_millis(4));
            assert!(
                deadline.as_mut().poll(&mut cx).is_pending(),
                "early, round {round}"
            );
            WHEEL.advance(Duration::from_millis(1));
            assert!(matches!(
                deadline.as_mut().poll(&mut cx),
                Poll::Ready(Err(_))
            ));
            assert_eq!(WHEEL.occupied(), 0);
        }
        assert_eq!(WHEEL.degraded_polls(), 0);
    })
    .join()
    .unwrap();
}
