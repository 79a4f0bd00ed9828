//! The turn a wheel plans for its driver (`Wheel::turn`'s answer), and the arms that wake
//! a driver registered with `Wheel::register_driver` because they are due before it: in
//! the planned tick, before a higher level's slot comes down (with `sub-tick`; without
//! it such arms wake no one); and a new wheel's first turn, which plans nothing when
//! nothing is armed.
#![cfg(feature = "alloc")]

mod support;

use core::pin::pin;
use punctual_core::Reading;

use support::{AdvanceToManual, CountingWaker, fixed, growable, ms, ns, us};

#[cfg(feature = "sub-tick")]
#[test]
fn arm_due_before_plan_in_its_tick_wakes_driver() {
    // The driver plans its turn at 2.6 ms (tick 3). An arm into tick 3 due at 2.2 ms
    // wakes it, and fires at 2.2 ms; an arm due at 2.8 ms, after the planned turn, and an
    // arm far ahead wake no one.
    let wheel = fixed::<8>();
    let driver = CountingWaker::new();
    let (w1, w2, w3, w4) = (
        CountingWaker::new(),
        CountingWaker::new(),
        CountingWaker::new(),
        CountingWaker::new(),
    );
    let mut planned = pin!(wheel.sleep(us(2600)));
    assert!(w1.poll(planned.as_mut()).is_pending());
    wheel.register_driver(&driver.waker);
    assert_eq!(wheel.turn(), Reading::since_origin(us(2600)));
    // That turn took the new wheel out of idle, which wakes the drivers: a hand-written
    // loop's too, as it turns through `Wheel::turn`. It registers again.
    assert_eq!(driver.wakes(), 1);
    wheel.register_driver(&driver.waker);
    let mut after = pin!(wheel.sleep(us(2800)));
    let mut far = pin!(wheel.sleep(ms(50)));
    assert!(w2.poll(after.as_mut()).is_pending());
    assert!(w3.poll(far.as_mut()).is_pending());
    assert_eq!(
        driver.wakes(),
        1,
        "an arm after the planned turn woke the driver"
    );
    let mut before = pin!(wheel.sleep(us(2200)));
    assert!(w4.poll(before.as_mut()).is_pending());
    assert_eq!(
        driver.wakes(),
        2,
        "an arm before the planned turn did not wake the driver"
    );
    wheel.register_driver(&driver.waker);
    assert_eq!(wheel.turn(), Reading::since_origin(us(2200)));
    wheel.advance_to_manual(us(2200));
    assert_eq!((w1.wakes(), w2.wakes(), w4.wakes()), (0, 0, 1));
    assert_eq!(wheel.turn(), Reading::since_origin(us(2600)));
}

#[cfg(feature = "sub-tick")]
#[test]
fn arm_before_higher_slot_comes_down_fires_on_time() {
    // At 10 ms the only deadline is due at 69.5 ms, in a slot of level 1 that comes down
    // at 64 ms: the driver plans that turn. An arm due at 63.5 ms, in the tick before,
    // must wake it (else it waits for the 64 ms turn), and fires at 63.5 ms; an arm due
    // exactly at 64 ms wakes no one (that turn is on time for it).
    let wheel = growable();
    wheel.advance_to_manual(ms(10));
    let driver = CountingWaker::new();
    let (w1, w2, w3) = (
        CountingWaker::new(),
        CountingWaker::new(),
        CountingWaker::new(),
    );
    let mut later = pin!(wheel.sleep(us(59_500)));
    assert!(w1.poll(later.as_mut()).is_pending());
    wheel.register_driver(&driver.waker);
    assert_eq!(wheel.turn(), Reading::since_origin(ms(64)));
    wheel.register_driver(&driver.waker);
    let wakes = driver.wakes();
    let mut at_boundary = pin!(wheel.sleep(ms(54)));
    assert!(w2.poll(at_boundary.as_mut()).is_pending());
    assert_eq!(
        driver.wakes(),
        wakes,
        "an arm due at the planned turn woke the driver"
    );
    let mut before = pin!(wheel.sleep(us(53_500)));
    assert!(w3.poll(before.as_mut()).is_pending());
    assert_eq!(
        driver.wakes(),
        wakes + 1,
        "an arm due before the higher slot's turn did not wake the driver"
    );
    assert_eq!(wheel.turn(), Reading::since_origin(us(63_500)));
    wheel.advance_to_manual(us(63_500) - ns(1));
    assert_eq!(w3.wakes(), 0, "early");
    wheel.advance(ns(1));
    assert_eq!((w1.wakes(), w2.wakes(), w3.wakes()), (0, 0, 1));
    wheel.advance_to_manual(ms(64));
    assert_eq!((w1.wakes(), w2.wakes(), w3.wakes()), (0, 1, 1));
}

#[cfg(not(feature = "sub-tick"))]
#[test]
fn no_sub_tick_arms_into_planned_tick_quietly() {
    // Every deadline in a slot fires at its tick's end: the driver plans the turn at 3 ms
    // (tick 3) for a deadline due at 2.6 ms, and arms into tick 3, before 2.6 ms or after,
    // wake no one; once in the slot, all fire at 3 ms. Before a level-1 slot comes down
    // (64 ms), an arm into the tick before fires at that turn too.
    let wheel = fixed::<8>();
    let driver = CountingWaker::new();
    let (w1, w2, w3) = (
        CountingWaker::new(),
        CountingWaker::new(),
        CountingWaker::new(),
    );
    let mut planned = pin!(wheel.sleep(us(2600)));
    assert!(w1.poll(planned.as_mut()).is_pending());
    wheel.register_driver(&driver.waker);
    assert_eq!(wheel.turn(), Reading::since_origin(ms(3)));
    wheel.register_driver(&driver.waker);
    let wakes = driver.wakes();
    let mut before = pin!(wheel.sleep(us(2200)));
    let mut after = pin!(wheel.sleep(us(2800)));
    assert!(w2.poll(before.as_mut()).is_pending());
    assert!(w3.poll(after.as_mut()).is_pending());
    assert_eq!(
        driver.wakes(),
        wakes,
        "an arm into the planned tick woke the driver"
    );
    // The turn they wait for takes them in (one taken in when due would fire at once).
    wheel.turn();
    wheel.advance_to_manual(ms(3) - ns(1));
    assert_eq!(
        (w1.wakes(), w2.wakes(), w3.wakes()),
        (0, 0, 0),
        "fired inside the tick"
    );
    wheel.advance(ns(1));
    assert_eq!((w1.wakes(), w2.wakes(), w3.wakes()), (1, 1, 1));

    let wheel = growable();
    wheel.advance_to_manual(ms(10));
    let driver = CountingWaker::new();
    let (w1, w2) = (CountingWaker::new(), CountingWaker::new());
    let mut later = pin!(wheel.sleep(us(59_500)));
    assert!(w1.poll(later.as_mut()).is_pending());
    wheel.register_driver(&driver.waker);
    assert_eq!(wheel.turn(), Reading::since_origin(ms(64)));
    wheel.register_driver(&driver.waker);
    let wakes = driver.wakes();
    let mut before = pin!(wheel.sleep(us(53_500)));
    assert!(w2.poll(before.as_mut()).is_pending());
    assert_eq!(
        driver.wakes(),
        wakes,
        "an arm into the planned tick woke the driver"
    );
    wheel.turn();
    wheel.advance_to_manual(ms(64) - ns(1));
    assert_eq!(w2.wakes(), 0, "fired inside the tick");
    wheel.advance(ns(1));
    assert_eq!((w1.wakes(), w2.wakes()), (0, 1));
}

#[test]
fn new_wheels_first_turn_plans_nothing_if_empty() {
    // A new wheel is marked idle before any turn; its first turn was woken from no idle
    // (no arm woke it), so it does not linger: with nothing armed it plans nothing, and
    // a driver on a runtime's virtual clock holds no timer.
    let wheel = fixed::<4>();
    assert_eq!(wheel.turn(), Reading::END, "the first turn lingered");
    assert_eq!(wheel.next_turn(), Reading::END);
    // Woken from that idle by an arm (released at once, so the turn finds nothing), the
    // next turn lingers as before (wheel.rs, "Taking back").
    let w = CountingWaker::new();
    let mut d = Box::pin(wheel.sleep(ms(5)));
    assert!(w.poll(d.as_mut()).is_pending());
    drop(d);
    assert_eq!(
        wheel.turn(),
        Reading::since_origin(ms(16)),
        "woken from idle, the turn did not linger"
    );
    wheel.advance(ms(16));
    assert_eq!(wheel.next_turn(), Reading::END);
}
