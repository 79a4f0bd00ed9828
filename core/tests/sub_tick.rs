//! Sub-tick firing: a deadline alone in its slot, or among a few (a sparse slot, up to
//! eight), fires at its own time, not at the end of its tick, also in the last tick before
//! a level boundary; a dense slot (nine or more) fires all at once at its tick; a cancel
//! stops steering its slot's turns, and a slot starts afresh when its index comes round.
//! All of it is the `sub-tick` feature's (`std` implies it).
#![cfg(all(feature = "sub-tick", feature = "alloc", feature = "stats"))]

mod support;

use core::future::pending;
use core::pin::{Pin, pin};

use punctual_core::{Fixed, ManualClock, Reading, Sleep, Wheel};
use support::{AdvanceToManual, CountingWaker, fixed, growable, is_elapsed, ms, ns, us};

#[test]
fn lone_deadline_fires_at_its_time_not_its_tick() {
    // Due at 2.3 ms, in the slot of tick 3: the driver plans its turn at 2.3 ms, and the
    // deadline fires then, not at 3 ms.
    let wheel = fixed::<4>();
    let w = CountingWaker::new();
    let mut d = pin!(wheel.deadline(us(2300), pending::<()>()));
    assert!(w.poll(d.as_mut()).is_pending());
    assert_eq!(wheel.turn(), Reading::since_origin(us(2300)));
    wheel.advance_to_manual(us(2300) - ns(1));
    assert_eq!(wheel.turn(), Reading::since_origin(us(2300)));
    assert_eq!(w.wakes(), 0, "early");
    assert!(w.poll(d.as_mut()).is_pending(), "early");
    wheel.advance(ns(1));
    assert_eq!(w.wakes(), 1, "not fired at its own time");
    assert_eq!(is_elapsed(w.poll(d.as_mut())).duration(), us(2300));
    assert_eq!(wheel.occupied(), 0);
    let stats = wheel.stats();
    assert_eq!((stats.fired, stats.lateness[0]), (1, 1), "{stats}");
}

#[test]
fn last_tick_before_level_boundary_fires_on_time() {
    // Ticks 63, 4095 and 127 end blocks of 64 (and of 4096): a deadline due during one of
    // them has its tick (64, 4096, 128) on the far side of the boundary. It must still be
    // on level 0 during the tick it comes due in, and fire at its own time, not wait for
    // its slot on level 1 or 2 to come down at the boundary (up to a tick late). Its own
    // time as the levels plan it: rounded up to a grain of 16 ns at a 1 ms tick (the last
    // case's 401 µs into its tick is 25 062.5 grains: the driver plans 8 ns later); a turn
    // at its own time fires it all the same.
    for (started, duration) in [
        (us(0), us(63_500)),
        (us(0), us(4_095_300)),
        (us(100_000), us(27_700)),
        (us(100_400), us(27_001)),
    ] {
        let wheel = growable();
        wheel.advance_to_manual(started);
        let due = started + duration;
        let w = CountingWaker::new();
        let mut d = pin!(wheel.deadline(duration, pending::<()>()));
        assert!(w.poll(d.as_mut()).is_pending());
        let looked_at = ns(due.as_nanos().next_multiple_of(16) as u64);
        wheel.advance_to_manual(due - ns(1));
        assert_eq!(w.wakes(), 0, "early ({duration:?} from {started:?})");
        assert_eq!(
            wheel.turn(),
            Reading::since_origin(looked_at),
            "not planned at its own time ({duration:?} from {started:?})"
        );
        // A turn at its own time, before the planned look, fires it too (a virtual
        // clock's advance lands there).
        wheel.advance_to_manual(due);
        assert_eq!(
            w.wakes(),
            1,
            "not fired at its own time ({duration:?} from {started:?})"
        );
        assert_eq!(is_elapsed(w.poll(d.as_mut())).duration(), duration);
        assert_eq!(wheel.stats().lateness[0], 1);
    }
}

#[test]
fn a_sparse_slot_fires_each_deadline_at_its_own_time() {
    let wheel = fixed::<8>();
    let wakers: Vec<CountingWaker> = (0..3).map(|_| CountingWaker::new()).collect();
    let mut sleeps: Vec<_> = [us(2600), us(2200), us(2900)]
        .into_iter()
        .map(|d| Box::pin(wheel.sleep(d)))
        .collect();
    for (w, s) in wakers.iter().zip(&mut sleeps) {
        assert!(w.poll(s.as_mut()).is_pending());
    }
    let woken = || wakers.iter().map(CountingWaker::wakes).collect::<Vec<_>>();
    assert_eq!(wheel.turn(), Reading::since_origin(us(2200)));
    wheel.advance_to_manual(us(2200));
    assert_eq!(wheel.turn(), Reading::since_origin(us(2600)));
    assert_eq!(woken(), [0, 1, 0]);
    wheel.advance_to_manual(us(2899));
    assert_eq!(wheel.turn(), Reading::since_origin(us(2900)));
    assert_eq!(woken(), [1, 1, 0]);
    wheel.advance_to_manual(us(2900));
    assert_eq!(woken(), [1, 1, 1]);
}

#[test]
fn slot_of_sparse_deadlines_fires_each_on_time() {
    // SPARSE is 8: a slot of eight is still sparse (nine is dense, see
    // `a_dense_slot_fires_all_at_once_at_its_tick`).
    let wheel = fixed::<16>();
    let wakers: Vec<CountingWaker> = (0..8).map(|_| CountingWaker::new()).collect();
    let _sleeps = sleeps_in_the_slot_of_tick_3(&wheel, &wakers, 8);
    let woken = || wakers.iter().map(CountingWaker::wakes).sum::<usize>();
    assert_eq!(
        wheel.turn(),
        Reading::since_origin(us(2100)),
        "eight in a slot planned as dense"
    );
    wheel.advance_to_manual(us(2100));
    assert_eq!(woken(), 1);
    assert_eq!(wheel.turn(), Reading::since_origin(us(2200)));
}

/// `count` sleeps due at 2.1 ms, 2.2 ms and on, 100 µs apart (all in the slot of tick 3
/// for a count up to 9), each polled once (pending) with the waker of `wakers` at its
/// position, cycled.
fn sleeps_in_the_slot_of_tick_3<'w>(
    wheel: &'w Wheel<ManualClock, Fixed<16>>,
    wakers: &[CountingWaker],
    count: u64,
) -> Vec<Pin<Box<Sleep<'w>>>> {
    let mut sleeps: Vec<_> = (0..count)
        .map(|k| Box::pin(wheel.sleep(us(2100 + 100 * k))))
        .collect();
    for (w, s) in wakers.iter().cycle().zip(&mut sleeps) {
        assert!(w.poll(s.as_mut()).is_pending());
    }
    sleeps
}

#[test]
fn a_dense_slot_fires_all_at_once_at_its_tick() {
    // More deadlines in one slot than a sparse slot holds: the driver does not turn for
    // each one, and all fire at the tick, none before its own time.
    let wheel = fixed::<16>();
    let wakers: Vec<CountingWaker> = (0..9).map(|_| CountingWaker::new()).collect();
    let _sleeps = sleeps_in_the_slot_of_tick_3(&wheel, &wakers, 9);
    let woken = || wakers.iter().map(CountingWaker::wakes).sum::<usize>();
    assert_eq!(wheel.turn(), Reading::since_origin(ms(3)));
    wheel.advance_to_manual(ms(3) - ns(1));
    assert_eq!(wheel.turn(), Reading::since_origin(ms(3)));
    assert_eq!(woken(), 0);
    wheel.advance_to_manual(ms(3));
    assert_eq!(woken(), 9);
}

#[test]
fn a_dense_slot_thinned_by_a_cancel_is_sparse_again() {
    // Nine in the slot of tick 3 (dense); one is dropped and reclaimed: eight are left,
    // and the slot's earliest fires at its own time again.
    let wheel = fixed::<16>();
    let w = CountingWaker::new();
    let mut sleeps = sleeps_in_the_slot_of_tick_3(&wheel, core::slice::from_ref(&w), 9);
    assert_eq!(
        wheel.turn(),
        Reading::since_origin(ms(3)),
        "nine in a slot are dense"
    );
    drop(sleeps.pop()); // the 2.9 ms one
    wheel.turn(); // reclaims it (and plans a turn within a tick)
    wheel.advance_to_manual(ms(1));
    assert_eq!(
        wheel.turn(),
        Reading::since_origin(us(2100)),
        "the count did not come down with the cancel"
    );
    wheel.advance_to_manual(us(2100));
    assert_eq!(w.wakes(), 1);
}

#[test]
fn cancelled_deadline_stops_steering_its_slot() {
    // Two deadlines in the slot of tick 3; the earlier one is dropped after the driver took
    // it. The turn it would have needed comes once, finds nothing due, and plans the other.
    let wheel = fixed::<4>();
    let (w1, w2) = (CountingWaker::new(), CountingWaker::new());
    let mut early = Box::pin(wheel.sleep(us(2200)));
    let mut late = pin!(wheel.sleep(us(2700)));
    assert!(w1.poll(early.as_mut()).is_pending());
    assert!(w2.poll(late.as_mut()).is_pending());
    assert_eq!(wheel.turn(), Reading::since_origin(us(2200)));
    drop(early);
    wheel.advance_to_manual(us(2200));
    assert_eq!(wheel.turn(), Reading::since_origin(us(2700)));
    assert_eq!((w1.wakes(), w2.wakes()), (0, 0));
    wheel.advance_to_manual(us(2700));
    assert_eq!((w1.wakes(), w2.wakes()), (0, 1));
    assert!(w2.poll(late.as_mut()).is_ready());
    assert_eq!(wheel.occupied(), 0);
}

#[test]
fn taken_level0_slot_starts_afresh_next_round() {
    // Nine deadlines fill the slot of tick 3 (index 2) and fire all at once at 3 ms. 64
    // ticks later the same index holds one deadline due at 66.3 ms: alone in its slot, it
    // fires at its own time (the slot's count and offset bound start over).
    let wheel = fixed::<16>();
    let w = CountingWaker::new();
    let sleeps = sleeps_in_the_slot_of_tick_3(&wheel, core::slice::from_ref(&w), 9);
    assert_eq!(
        wheel.turn(),
        Reading::since_origin(ms(3)),
        "nine in a slot are dense"
    );
    wheel.advance_to_manual(ms(3));
    assert_eq!(w.wakes(), 9);
    drop(sleeps);
    wheel.advance_to_manual(ms(65));
    let mut alone = pin!(wheel.sleep(us(1300)));
    assert!(w.poll(alone.as_mut()).is_pending());
    assert_eq!(
        wheel.turn(),
        Reading::since_origin(us(66_300)),
        "stale count or offset of the slot's last use"
    );
    wheel.advance_to_manual(us(66_300));
    assert!(w.poll(alone.as_mut()).is_ready());
}
