//! Rule 6 of docs/design.md, odd limits: a zero duration or an instant already past fires
//! at the first pending poll with no entry (and loses to a ready inner future);
//! `Duration::MAX` never fires and holds no entry; a deadline beyond the wheel's range is
//! parked, never early, and delays no earlier one.

mod support;

use core::future::{pending, ready};
use core::pin::pin;
use core::task::Poll;
use core::time::Duration;

use punctual_core::{Clock, Elapsed};
use support::{
    AdvanceToManual, CountingWaker, ProbeState, TICK, fixed, growable, is_elapsed, ms, ns,
};

#[test]
fn duration_zero_fires_at_the_first_pending_poll_without_an_entry() {
    let wheel = fixed::<4>();
    wheel.advance(ms(3));
    let probe = ProbeState::default();
    let w = CountingWaker::new();
    let mut d = pin!(wheel.deadline(Duration::ZERO, probe.probe()).named("zero"));
    let elapsed = is_elapsed(w.poll(d.as_mut()));
    assert_eq!(elapsed, Elapsed::new(Duration::ZERO, Some("zero")));
    assert_eq!(probe.polls(), 1);
    assert!(probe.dropped());
    let mut s = pin!(wheel.sleep(Duration::ZERO));
    assert!(w.poll(s.as_mut()).is_ready());
    assert_eq!(wheel.occupied(), 0);
    assert_eq!(w.wakes(), 0);
}

#[test]
fn duration_zero_loses_to_a_ready_inner_future() {
    let wheel = fixed::<4>();
    let w = CountingWaker::new();
    let mut d = pin!(wheel.deadline(Duration::ZERO, ready("done")));
    assert_eq!(w.poll(d.as_mut()), Poll::Ready(Ok("done")));
}

#[test]
fn deadline_at_in_the_past_fires_at_the_first_pending_poll() {
    let wheel = fixed::<4>();
    wheel.advance(ms(100));
    let w = CountingWaker::new();
    let probe = ProbeState::default();
    let mut d = pin!(wheel.deadline_at(ms(50), probe.probe()));
    let elapsed = is_elapsed(w.poll(d.as_mut()));
    assert_eq!(
        elapsed.duration(),
        Duration::ZERO,
        "the instant had already passed"
    );
    assert_eq!(probe.polls(), 1);
    assert!(probe.dropped());
    // "Now" has passed too.
    let mut d = pin!(wheel.deadline_at(ms(100), pending::<()>()));
    is_elapsed(w.poll(d.as_mut()));
    let mut s = pin!(wheel.sleep_until(Duration::ZERO));
    assert!(w.poll(s.as_mut()).is_ready());
    assert_eq!(wheel.occupied(), 0);
}

#[test]
fn duration_max_never_fires_and_holds_no_entry() {
    let wheel = fixed::<1>();
    let w = CountingWaker::new();
    let mut d = pin!(wheel.deadline(Duration::MAX, pending::<()>()));
    let mut s = pin!(wheel.sleep(Duration::MAX));
    let mut a = pin!(wheel.deadline_at(Duration::MAX, pending::<()>()));
    let mut u = pin!(wheel.sleep_until(Duration::MAX));
    wheel.advance(ms(5));
    assert!(w.poll(d.as_mut()).is_pending());
    assert!(w.poll(s.as_mut()).is_pending());
    assert!(w.poll(a.as_mut()).is_pending());
    assert!(w.poll(u.as_mut()).is_pending());
    assert_eq!(wheel.occupied(), 0);
    assert_eq!(wheel.degraded_polls(), 0);
    // The single entry is still free for a real deadline.
    {
        let other = CountingWaker::new();
        let mut x = pin!(wheel.sleep(ms(1)));
        assert!(other.poll(x.as_mut()).is_pending());
        assert_eq!(wheel.occupied(), 1);
    }
    assert_eq!(wheel.degraded_polls(), 0);
    // Far into the future (the manual clock saturates at u64::MAX ns): still pending.
    for _ in 0..3 {
        wheel.advance(Duration::from_secs(1 << 40));
        assert!(w.poll(d.as_mut()).is_pending());
        assert!(w.poll(s.as_mut()).is_pending());
        assert!(w.poll(a.as_mut()).is_pending());
        assert!(w.poll(u.as_mut()).is_pending());
    }
    assert_eq!(w.wakes(), 0);
    assert_eq!(wheel.occupied(), 0);
}

#[test]
fn beyond_the_wheels_range_is_parked_and_never_early() {
    // 2^40 ticks: beyond the top level (2^36 ticks), but a tick the wheel can count.
    let duration = ms(1 << 40);
    let wheel = growable();
    wheel.advance(Duration::from_micros(700));
    let w = CountingWaker::new();
    let mut d = pin!(wheel.deadline(duration, pending::<()>()));
    assert!(w.poll(d.as_mut()).is_pending());
    assert_eq!(wheel.occupied(), 1);
    let requested = wheel.clock().now() + duration;
    // Cross several rotations of the top level in uneven jumps.
    for jump in [
        ms(1 << 36),
        ms((1 << 37) + 12_345),
        ms(1 << 38),
        ms(3 << 36),
    ] {
        wheel.advance(jump);
        assert!(wheel.clock().now() < requested);
        assert_eq!(w.wakes(), 0);
        assert!(w.poll(d.as_mut()).is_pending());
    }
    wheel.advance_to_manual(requested - ns(1));
    assert_eq!(w.wakes(), 0);
    assert!(w.poll(d.as_mut()).is_pending());
    wheel.advance_to_manual(requested + 2 * TICK);
    assert_eq!(w.wakes(), 1);
    assert_eq!(is_elapsed(w.poll(d.as_mut())).duration(), duration);
    assert_eq!(wheel.occupied(), 0);
}

#[test]
fn a_deadline_parked_beyond_the_range_does_not_delay_earlier_top_level_ones() {
    // `far` is beyond the top level (2^36 ticks) and parks in the top level's slot 0, the
    // current one; `near` (2^30 + 5 ticks, top level slot 1) is due long before it.
    let wheel = growable();
    let w = CountingWaker::new();
    let mut far = pin!(wheel.sleep(ms((1 << 36) + 5)));
    let near_at = ms((1 << 30) + 5);
    let mut near = pin!(wheel.sleep(near_at));
    assert!(w.poll(far.as_mut()).is_pending());
    assert!(w.poll(near.as_mut()).is_pending());
    wheel.advance(ms(1 << 30) - ns(1));
    assert!(w.poll(near.as_mut()).is_pending());
    wheel.advance_to_manual(near_at + 2 * TICK);
    assert_eq!(
        w.wakes(),
        1,
        "the 2^30-tick deadline did not fire within two ticks"
    );
    assert!(w.poll(near.as_mut()).is_ready());
    assert!(w.poll(far.as_mut()).is_pending());
}

#[test]
fn cancelling_a_deadline_does_not_unlink_another_one() {
    // `far` parks beyond the range in the top level's current slot; `e` sits on the top
    // level (slot 1) and `l` on level 0, both due at tick 2^30 + 10. Dropping `e` must
    // unlink `e` and nothing else: `l` must still fire.
    let wheel = growable();
    let w = CountingWaker::new();
    let mut far = pin!(wheel.sleep(ms((1 << 36) + 5)));
    assert!(w.poll(far.as_mut()).is_pending());
    let due = (1 << 30) + 10;
    let mut e = Box::pin(wheel.sleep(ms(due)));
    assert!(w.poll(e.as_mut()).is_pending());
    wheel.advance(ms((1 << 30) - 1));
    wheel.advance(ms(8));
    assert_eq!(wheel.clock().now(), ms(due - 3));
    let wl = CountingWaker::new();
    let mut l = pin!(wheel.sleep(ms(3)));
    assert!(wl.poll(l.as_mut()).is_pending());
    wheel.advance(Duration::ZERO);
    drop(e);
    wheel.advance(Duration::ZERO);
    wheel.advance(ms(3) + 2 * TICK);
    assert_eq!(wl.wakes(), 1, "`l` was lost");
    assert!(wl.poll(l.as_mut()).is_ready());
    assert_eq!(wheel.occupied(), 1);
}
