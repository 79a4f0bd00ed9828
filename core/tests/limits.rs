//! Rule 6 of docs/design.md, odd limits: a zero duration or an instant already past fires
//! at the first pending poll with no entry (and loses to a ready inner future);
//! `Duration::MAX` never fires and holds no entry, nor does any limit that ends past the
//! last tick the wheel can count or the clock's last reading (`u64::MAX` ns), whatever the
//! tick; a deadline beyond the wheel's range waits at the top level, never early, and delays no earlier
//! one.
#![cfg(all(feature = "alloc", feature = "stats"))]

mod support;

use core::future::{pending, ready};
use core::pin::pin;
use core::task::Poll;
use core::time::Duration;

use punctual_core::{Clock, Elapsed, Fixed, Growable, ManualClock, Reading, Wheel};
use support::{
    AdvanceToManual, CLOCK_END, CountingWaker, ProbeState, TICK, fixed, growable, is_elapsed, ms,
    ns,
};

#[test]
fn duration_zero_fires_at_first_poll_without_entry() {
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
fn deadline_at_in_the_past_fires_at_first_poll() {
    let wheel = fixed::<4>();
    wheel.advance(ms(100));
    let w = CountingWaker::new();
    let probe = ProbeState::default();
    let mut d = pin!(wheel.deadline_at(Reading::since_origin(ms(50)), probe.probe()));
    let elapsed = is_elapsed(w.poll(d.as_mut()));
    assert_eq!(
        elapsed.duration(),
        Duration::ZERO,
        "the instant had already passed"
    );
    assert_eq!(probe.polls(), 1);
    assert!(probe.dropped());
    // "Now" has passed too.
    let mut d = pin!(wheel.deadline_at(Reading::since_origin(ms(100)), pending::<()>()));
    is_elapsed(w.poll(d.as_mut()));
    let mut s = pin!(wheel.sleep_until(Reading::ZERO));
    assert!(w.poll(s.as_mut()).is_ready());
    assert_eq!(wheel.occupied(), 0);
}

#[test]
fn duration_max_never_fires_and_holds_no_entry() {
    let wheel = fixed::<1>();
    let w = CountingWaker::new();
    let mut d = pin!(wheel.deadline(Duration::MAX, pending::<()>()));
    let mut s = pin!(wheel.sleep(Duration::MAX));
    let mut a = pin!(wheel.deadline_at(Reading::END, pending::<()>()));
    let mut u = pin!(wheel.sleep_until(Reading::END));
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
fn clock_overflowing_durations_never_fire_no_entry() {
    // Documented on `Deadline` ("Odd limits"): a deadline beyond the last tick the wheel
    // can count never fires and holds no entry. Each of these ends beyond it, by
    // overflowing `Duration` (start + duration), or the tick counter (a 1 ns tick).
    let start = Duration::from_secs(7) + ns(3);
    let ms_wheel: Wheel<ManualClock, Fixed<1>> =
        Wheel::fixed(ManualClock::starting_at(start), TICK);
    let ns_wheel: Wheel<ManualClock, Fixed<1>> =
        Wheel::fixed(ManualClock::starting_at(start), ns(1));
    let w = CountingWaker::new();
    let overflow_duration = Duration::MAX - Duration::from_secs(1);
    for wheel in [&ms_wheel, &ns_wheel] {
        let mut a = pin!(wheel.deadline(overflow_duration, pending::<()>()));
        let mut b = pin!(wheel.sleep(Duration::new(u64::MAX, 999_999_999)));
        assert!(w.poll(a.as_mut()).is_pending());
        assert!(w.poll(b.as_mut()).is_pending());
        assert_eq!(wheel.occupied(), 0, "an uncountable deadline took an entry");
        assert_eq!(wheel.degraded_polls(), 0);
        // To the end of the clock: never fired, never woken.
        assert_eq!(
            wheel.advance(Duration::MAX),
            Reading::since_origin(CLOCK_END)
        );
        assert!(w.poll(a.as_mut()).is_pending());
        assert!(w.poll(b.as_mut()).is_pending());
    }
    // At a 1 ns tick, `u64::MAX` ns after a non-zero start is past `u64::MAX` ticks.
    let wheel: Wheel<ManualClock, Fixed<1>> = Wheel::fixed(ManualClock::starting_at(start), ns(1));
    let mut c = pin!(wheel.sleep(CLOCK_END));
    assert!(w.poll(c.as_mut()).is_pending());
    assert_eq!(wheel.occupied(), 0);
    wheel.advance(Duration::MAX);
    assert!(w.poll(c.as_mut()).is_pending());
    assert_eq!(w.wakes(), 0);
    // The single entry of each wheel is still free for a real deadline.
    let mut d = pin!(wheel.deadline(ns(0), pending::<()>()));
    assert!(w.poll(d.as_mut()).is_ready());
}

#[test]
fn past_clocks_end_never_fires_and_holds_no_entry() {
    // An entry keeps its deadline as a reading in `u64` nanoseconds, so a deadline that
    // ends at or after `u64::MAX` ns (the manual clock's last reading, about 584 years)
    // stands for "never", whatever the tick: a relative one that runs past it and an
    // instant beyond it alike. Neither fires, nor holds an entry.
    let start = CLOCK_END - Duration::from_secs(3600);
    let wheel: Wheel<ManualClock, Growable> =
        Wheel::growable(ManualClock::starting_at(start), TICK);
    let w = CountingWaker::new();
    let mut beyond = Box::pin(wheel.deadline(Duration::from_secs(7200), pending::<()>()));
    let mut at_beyond = Box::pin(wheel.sleep_until(Reading::since_origin(CLOCK_END + TICK)));
    assert!(w.poll(beyond.as_mut()).is_pending());
    assert!(w.poll(at_beyond.as_mut()).is_pending());
    assert_eq!(wheel.occupied(), 0);
    for _ in 0..4 {
        wheel.advance(Duration::from_secs(1000));
        assert!(w.poll(beyond.as_mut()).is_pending());
        assert!(w.poll(at_beyond.as_mut()).is_pending());
    }
    assert_eq!(wheel.clock().now(), CLOCK_END);
    assert_eq!(w.wakes(), 0);
    drop((beyond, at_beyond));
    wheel.advance(Duration::ZERO);
    assert_eq!(wheel.occupied(), 0);
    let stats = wheel.stats();
    assert_eq!(
        (stats.armed, stats.fired, stats.cancelled),
        (0, 0, 0),
        "{stats}"
    );
}

#[test]
fn u64_max_ns_limit_never_fires_even_at_clock_end() {
    // A deadline keeps its limit in `u64` nanoseconds: from `u64::MAX` on it stands for
    // "never", even for an instant the manual clock can reach (it ends at `u64::MAX` ns).
    let wheel: Wheel<ManualClock, Fixed<2>> =
        Wheel::fixed(ManualClock::starting_at(CLOCK_END - ms(5)), TICK);
    let w = CountingWaker::new();
    let mut at_end = pin!(wheel.sleep_until(Reading::since_origin(CLOCK_END)));
    let mut after_max = pin!(wheel.sleep(Duration::from_nanos(u64::MAX)));
    let mut just_below = pin!(wheel.sleep_until(Reading::since_origin(CLOCK_END - ms(2))));
    // A relative limit that ends exactly there (the fast path of arming).
    let mut to_end = pin!(wheel.sleep(ms(5)));
    assert!(w.poll(at_end.as_mut()).is_pending());
    assert!(w.poll(after_max.as_mut()).is_pending());
    assert!(w.poll(just_below.as_mut()).is_pending());
    assert!(w.poll(to_end.as_mut()).is_pending());
    assert_eq!(
        wheel.occupied(),
        1,
        "only the instant below `u64::MAX` ns holds an entry"
    );
    wheel.advance(Duration::MAX);
    assert_eq!(wheel.clock().now(), CLOCK_END);
    assert!(w.poll(just_below.as_mut()).is_ready());
    assert!(w.poll(at_end.as_mut()).is_pending());
    assert!(w.poll(after_max.as_mut()).is_pending());
    assert!(w.poll(to_end.as_mut()).is_pending());

    // Whatever the tick: with ticks of over a second, `Duration::MAX` is a countable tick,
    // yet such a limit still holds no entry.
    for tick in [Duration::from_secs(2), Duration::from_secs(3600)] {
        let wheel: Wheel<ManualClock, Fixed<2>> = Wheel::fixed(ManualClock::new(), tick);
        let mut at_max = pin!(wheel.sleep_until(Reading::END));
        let mut after_max = pin!(wheel.sleep(Duration::MAX));
        assert!(w.poll(at_max.as_mut()).is_pending());
        assert!(w.poll(after_max.as_mut()).is_pending());
        assert_eq!(wheel.occupied(), 0, "tick {tick:?}");
    }
}

#[test]
fn beyond_the_range_waits_and_is_never_early() {
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
fn beyond_the_range_delays_no_earlier_top_level_one() {
    // `far` is beyond the top level (2^36 ticks) and waits in the top level's slot 0, the
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
    // `far` waits beyond the range in the top level's current slot; `e` sits on the top
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

#[test]
fn two_levels_hold_far_deadlines_and_fire_on_time() {
    // A wheel of 2 levels spans 4 096 ticks: deadlines past that wait at its top level, in
    // slots of their own, and are placed again each rotation. They fire in order, each
    // within its tick and never early, whatever the jumps in between.
    let wheel: Wheel<ManualClock, Fixed<8, u8, 2>> = Wheel::fixed(ManualClock::new(), TICK);
    let w = CountingWaker::new();
    let durations = [
        ms(5_000),
        ms(4_097),
        ms(70_003),
        ms(1_000_000),
        ms(64 * 4096 + 1),
    ];
    let mut sleeps: Vec<_> = durations
        .iter()
        .map(|&d| Box::pin(wheel.sleep(d)))
        .collect();
    for sleep in &mut sleeps {
        assert!(w.poll(sleep.as_mut()).is_pending());
    }
    let mut order: Vec<_> = (0..durations.len()).collect();
    order.sort_by_key(|&i| durations[i]);
    for (fired, &i) in order.iter().enumerate() {
        wheel.advance_to_manual(durations[i] - ns(1));
        assert_eq!(w.wakes(), fired, "early: {:?}", durations[i]);
        assert!(w.poll(sleeps[i].as_mut()).is_pending());
        wheel.advance_to_manual(durations[i] + TICK);
        assert_eq!(w.wakes(), fired + 1, "late: {:?}", durations[i]);
        assert!(w.poll(sleeps[i].as_mut()).is_ready());
    }
    assert_eq!(wheel.occupied(), 0);
}

#[test]
fn a_jump_skips_rotations_instead_of_replacing() {
    // A 2-level wheel at a 1 ns tick spans 4 096 ns; these deadlines are 2^50 and 2^52
    // ticks away: one turn that passed every rotation one by one would re-place each
    // about 2^40 times and never return. The turn skips to the rotation before the
    // earliest key instead, and still fires each on time and never early.
    let tick = ns(1);
    let wheel: Wheel<ManualClock, Fixed<4, u8, 2>> = Wheel::fixed(ManualClock::new(), tick);
    let w = CountingWaker::new();
    let near = ns(1 << 50);
    let far = ns((1 << 52) + 12_345);
    let mut near_sleep = pin!(wheel.sleep(near));
    let mut far_sleep = pin!(wheel.sleep(far));
    assert!(w.poll(near_sleep.as_mut()).is_pending());
    assert!(w.poll(far_sleep.as_mut()).is_pending());
    wheel.advance_to_manual(near - ns(1));
    assert_eq!(w.wakes(), 0, "early");
    wheel.advance_to_manual(near);
    assert_eq!(w.wakes(), 1, "not fired at its tick");
    assert!(w.poll(near_sleep.as_mut()).is_ready());
    // A jump that ends short of `far`'s rotation, and one into it.
    wheel.advance_to_manual(ns(3 << 50));
    assert!(w.poll(far_sleep.as_mut()).is_pending());
    wheel.advance_to_manual(far - ns(1));
    assert_eq!(w.wakes(), 1, "early");
    wheel.advance_to_manual(far);
    assert_eq!(w.wakes(), 2, "not fired at its tick");
    assert!(w.poll(far_sleep.as_mut()).is_ready());
    assert_eq!(wheel.occupied(), 0);
}
