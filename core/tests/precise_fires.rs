//! Precise fires (`Wheel::with_precise_fires`, for a driver on a coarser timer than the
//! wheel's ticks, as tokio's is): a dense slot is looked at before its tick as a sparse
//! one is, whenever its earliest deadline is due; each look fires every deadline due by
//! then and nothing before its own time, and plans the next at the earliest one left. So
//! with a driver that wakes late (as a coarse timer does), each deadline fires at the
//! driver's first wake after its own time, not at the slot's tick. Without precise fires a
//! dense slot fires all at once at its tick (`sub_tick.rs`). With `std` only: without it,
//! precise fires change nothing (firmware carries none of their code).
#![cfg(feature = "std")]

mod support;

use core::pin::Pin;

use punctual_core::{Fixed, Growable, ManualClock, Reading, Sleep, Storage, Wheel};
use support::{AdvanceToManual, CountingWaker, ms, ns, us};

type TestWheel = Wheel<ManualClock, Fixed<32>>;

fn wheel(precise_fires: bool) -> TestWheel {
    let wheel = Wheel::fixed(ManualClock::new(), ms(1));
    if precise_fires {
        wheel.with_precise_fires()
    } else {
        wheel
    }
}

/// One sleep per waker, due at `first` µs and on, `step` µs apart, each polled once, then
/// filed by a turn while the clock reads 0 (a first turn later would fire those due from
/// the arm inbox and file only the rest).
fn filed<'w, S: Storage>(
    wheel: &'w Wheel<ManualClock, S>,
    wakers: &[CountingWaker],
    first: u64,
    step: u64,
) -> Vec<Pin<Box<Sleep<'w>>>> {
    let mut sleeps: Vec<_> = (0..wakers.len() as u64)
        .map(|k| Box::pin(wheel.sleep(us(first + step * k))))
        .collect();
    for (w, s) in wakers.iter().zip(&mut sleeps) {
        assert!(w.poll(s.as_mut()).is_pending());
    }
    wheel.turn();
    sleeps
}

/// [`filed`] for sleeps in the slot of tick 3 (due after 2 ms and by 3 ms).
fn in_the_slot_of_tick_3<'w>(
    wheel: &'w TestWheel,
    wakers: &[CountingWaker],
    first: u64,
    step: u64,
) -> Vec<Pin<Box<Sleep<'w>>>> {
    let sleeps = filed(wheel, wakers, first, step);
    assert!(first > 2000 && first + step * (wakers.len() as u64 - 1) <= 3000);
    sleeps
}

fn wakers(count: usize) -> Vec<CountingWaker> {
    (0..count).map(|_| CountingWaker::new()).collect()
}

/// How many of `wakers` were woken, checking that they were woken in order (never a later
/// deadline before an earlier one) and at most once.
fn woken(wakers: &[CountingWaker]) -> usize {
    let wakes: Vec<usize> = wakers.iter().map(CountingWaker::wakes).collect();
    let count = wakes.iter().take_while(|&&w| w == 1).count();
    assert!(
        wakes[count..].iter().all(|&w| w == 0),
        "woken out of order or twice: {wakes:?}"
    );
    count
}

#[test]
fn dense_slot_looked_at_when_its_earliest_is_due() {
    // Twenty due at 2.05, 2.10 … 3.00 ms.
    let wheel = wheel(true);
    let w = wakers(20);
    let mut sleeps = in_the_slot_of_tick_3(&wheel, &w, 2050, 50);
    assert_eq!(
        wheel.turn(),
        Reading::since_origin(us(2050)),
        "a dense slot not planned at its earliest deadline"
    );
    wheel.advance_to_manual(us(2050) - ns(1));
    assert_eq!(woken(&w), 0, "fired before its time");
    // The driver's coarse timer wakes it later than planned, at 2.45 ms: the nine due by
    // then fire, and the next look is planned at the earliest left (2.5 ms), not at the
    // slot's tick.
    wheel.advance_to_manual(us(2450));
    assert_eq!(woken(&w), 9);
    for (w, s) in w.iter().zip(&mut sleeps).take(9) {
        assert!(w.poll(s.as_mut()).is_ready());
    }
    assert_eq!(
        wheel.turn(),
        Reading::since_origin(us(2500)),
        "a dense slot not looked at again at the earliest deadline left"
    );
    // The timer's next wake, at 2.95 ms, fires the ten due by then; the last (due at the
    // tick itself) fires at the tick.
    wheel.advance_to_manual(us(2500) - ns(1));
    assert_eq!(woken(&w), 9, "fired before its time");
    wheel.advance_to_manual(us(2950));
    assert_eq!(woken(&w), 19);
    assert_eq!(wheel.turn(), Reading::since_origin(ms(3)));
    wheel.advance_to_manual(ms(3));
    assert_eq!(woken(&w), 20);
    assert_eq!(wheel.stats().fired, 20);
}

#[test]
fn a_look_at_the_earliest_deadline_fires_it_alone() {
    // The look's turn comes at the planned time: the earliest fires, nineteen wait, and
    // the next look is planned at the next one.
    let wheel = wheel(true);
    let w = wakers(20);
    let _sleeps = in_the_slot_of_tick_3(&wheel, &w, 2050, 50);
    wheel.advance_to_manual(us(2050) - ns(1));
    assert_eq!(wheel.turn(), Reading::since_origin(us(2050)));
    wheel.advance_to_manual(us(2050));
    assert_eq!(woken(&w), 1);
    assert_eq!(wheel.turn(), Reading::since_origin(us(2100)));
}

#[test]
fn an_arm_into_a_slot_looked_at_fires_at_its_own_time() {
    // After the look at 2.45 ms, a sleep due at 2.575 ms goes into the same slot, still
    // dense: after the look at 2.55 ms the next is planned at it (the earliest left), and
    // it fires then, not before.
    let wheel = wheel(true);
    let w = wakers(20);
    let _sleeps = in_the_slot_of_tick_3(&wheel, &w, 2050, 50);
    wheel.advance_to_manual(us(2450));
    assert_eq!(woken(&w), 9);
    let late = CountingWaker::new();
    let mut extra = Box::pin(wheel.sleep(us(125)));
    assert!(late.poll(extra.as_mut()).is_pending());
    wheel.advance_to_manual(us(2550));
    assert_eq!((late.wakes(), woken(&w)), (0, 11));
    let planned = wheel.turn();
    assert!(
        planned >= Reading::since_origin(us(2575)) && planned < Reading::since_origin(us(2576)),
        "the next look not planned at the arm's deadline: {planned:?}"
    );
    wheel.advance_to_manual(us(2575) - ns(1));
    assert_eq!(late.wakes(), 0, "fired before its time");
    wheel.advance_to_manual(planned.as_duration());
    assert_eq!((late.wakes(), woken(&w)), (1, 11));
    assert!(late.poll(extra.as_mut()).is_ready());
}

#[test]
fn slot_past_its_count_limit_is_looked_at_early_too() {
    // Three hundred due at 2.001, 2.004 … 2.898 ms in one slot (its count saturates at
    // 255, "many"): the look at 2.45 ms fires the 150 due by then, and the next is planned
    // at the earliest left.
    let wheel: Wheel<ManualClock, Growable> =
        Wheel::growable(ManualClock::new(), ms(1)).with_precise_fires();
    let w = wakers(300);
    let _sleeps = filed(&wheel, &w, 2001, 3);
    wheel.advance_to_manual(us(2450));
    assert_eq!(woken(&w), 150);
    let planned = wheel.turn();
    assert!(
        planned >= Reading::since_origin(us(2451)) && planned < Reading::since_origin(us(2452)),
        "not planned at the earliest left: {planned:?}"
    );
    wheel.advance_to_manual(us(2900));
    assert_eq!(woken(&w), 300);
}

#[test]
fn dense_slot_from_higher_level_is_looked_at_early() {
    // Twenty due at 66.05 … 67 ms, armed at 0 ms: they wait at level 1 and come down to
    // the slot of tick 67 as the wheel reaches tick 66, which is then looked at early.
    let wheel = wheel(true);
    let w = wakers(20);
    let _sleeps = filed(&wheel, &w, 66_050, 50);
    wheel.advance_to_manual(ms(66));
    assert_eq!(woken(&w), 0);
    assert_eq!(wheel.turn(), Reading::since_origin(us(66_050)));
    wheel.advance_to_manual(us(66_450));
    assert_eq!(woken(&w), 9);
    assert_eq!(wheel.turn(), Reading::since_origin(us(66_500)));
}

#[test]
fn without_precise_fires_dense_slot_waits_for_tick() {
    // The same twenty and the same late wake-up, on a wheel without precise fires: nothing
    // fires before the tick.
    let wheel = wheel(false);
    let w = wakers(20);
    let _sleeps = in_the_slot_of_tick_3(&wheel, &w, 2050, 50);
    assert_eq!(wheel.turn(), Reading::since_origin(ms(3)));
    wheel.advance_to_manual(us(2450));
    assert_eq!(woken(&w), 0);
    wheel.advance_to_manual(ms(3));
    assert_eq!(woken(&w), 20);
}

#[test]
fn only_an_arm_before_the_planned_look_wakes_driver() {
    // The plan is the look at 2.05 ms: an arm into the same tick due at 2.02 ms wakes the
    // driver (its turn must come sooner). After the look at 2.45 ms the plan is the next
    // look, at 2.5 ms: an arm into the slot due at 2.6 ms wakes no one, one due at 2.48
    // ms wakes the driver.
    let wheel = wheel(true);
    let w = wakers(20);
    let _sleeps = in_the_slot_of_tick_3(&wheel, &w, 2050, 50);
    let driver = CountingWaker::new();
    wheel.register_driver(&driver.waker);
    assert_eq!(wheel.turn(), Reading::since_origin(us(2050)));
    let sooner = CountingWaker::new();
    let mut early = Box::pin(wheel.sleep(us(2020)));
    assert!(sooner.poll(early.as_mut()).is_pending());
    assert_eq!(
        driver.wakes(),
        1,
        "an arm before the planned look woke no driver"
    );
    assert_eq!(wheel.turn(), Reading::since_origin(us(2020)));
    wheel.advance_to_manual(us(2450));
    assert_eq!((sooner.wakes(), woken(&w)), (1, 9));
    wheel.register_driver(&driver.waker);
    assert_eq!(wheel.turn(), Reading::since_origin(us(2500)));
    let woken_before = driver.wakes();
    let later = CountingWaker::new();
    let mut late = Box::pin(wheel.sleep(us(150)));
    assert!(later.poll(late.as_mut()).is_pending());
    assert_eq!(
        driver.wakes(),
        woken_before,
        "an arm due after the planned look woke the driver"
    );
    let before = CountingWaker::new();
    let mut sooner_again = Box::pin(wheel.sleep(us(30)));
    assert!(before.poll(sooner_again.as_mut()).is_pending());
    assert_eq!(
        driver.wakes(),
        woken_before + 1,
        "an arm due before the planned look woke no driver"
    );
    assert_eq!(wheel.turn(), Reading::since_origin(us(2480)));
}

#[test]
fn look_at_only_cancelled_due_tightens_the_bound() {
    // The three earliest of twenty are dropped after they were filed: the slot's bound
    // stays at the first (2.05 ms), whose look finds nothing due. It fires nothing,
    // tightens the bound, and the look comes again at the earliest left (2.2 ms).
    let wheel = wheel(true);
    let w = wakers(20);
    let mut sleeps = in_the_slot_of_tick_3(&wheel, &w, 2050, 50);
    drop(sleeps.drain(..3));
    wheel.turn(); // reclaims them
    wheel.advance_to_manual(ms(1));
    assert_eq!(wheel.turn(), Reading::since_origin(us(2050)));
    wheel.advance_to_manual(us(2050));
    assert_eq!(woken(&w[3..]), 0);
    assert_eq!(
        wheel.turn(),
        Reading::since_origin(us(2200)),
        "a look that fired nothing left the bound at a cancelled deadline"
    );
    wheel.advance_to_manual(us(2200));
    assert_eq!(woken(&w[3..]), 1);
    assert_eq!(wheel.turn(), Reading::since_origin(us(2250)));
}
