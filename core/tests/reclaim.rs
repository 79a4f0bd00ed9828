//! Reclaiming: a cancelled deadline's entry goes back to the wheel at the driver's next
//! turn, within about a tick; a turn that reclaims plans another within a tick (not idle,
//! even past the lingering), and deadlines released at once do not wake a reclaiming
//! driver.

mod support;

use core::future::pending;
use core::time::Duration;

use punctual_core::{Clock, ManualClock, Storage, Wheel};
use support::{CountingWaker, TICK, fixed, growable, ms, us};

#[test]
fn a_cancelled_30s_deadline_is_reclaimed_on_the_next_turn() {
    // wheel.rs: "A cancelled entry sits on the cancel inbox until the driver's next turn";
    // `advance(Duration::ZERO)` is such a turn.
    fn check<S: Storage>(wheel: &Wheel<ManualClock, S>) {
        let w = CountingWaker::new();
        let mut d = Box::pin(wheel.deadline(Duration::from_secs(30), pending::<()>()));
        assert!(w.poll(d.as_mut()).is_pending());
        assert_eq!(wheel.occupied(), 1);
        wheel.advance(ms(1));
        drop(d);
        wheel.advance(Duration::ZERO);
        assert_eq!(wheel.occupied(), 0, "not reclaimed by the next turn");

        // The same through `turn()`, and within one tick.
        let mut d = Box::pin(wheel.deadline(Duration::from_secs(30), pending::<()>()));
        assert!(w.poll(d.as_mut()).is_pending());
        drop(d);
        let _ = wheel.turn();
        assert_eq!(wheel.occupied(), 0, "not reclaimed by turn()");

        let mut d = Box::pin(wheel.sleep(Duration::from_secs(30)));
        assert!(w.poll(d.as_mut()).is_pending());
        drop(d);
        wheel.advance(TICK);
        assert_eq!(wheel.occupied(), 0, "not reclaimed within a tick");
        assert_eq!(w.wakes(), 0);
    }
    check(&fixed::<1>());
    check(&growable());
    // On a one-entry wheel the reclaimed entry is reused without degrading.
    let wheel = fixed::<1>();
    check(&wheel);
    assert_eq!(wheel.degraded_polls(), 0);
}

#[test]
fn after_a_reclaiming_turn_the_wheel_plans_a_turn_within_a_tick() {
    let wheel = fixed::<4>();
    let w = CountingWaker::new();
    let mut d = Box::pin(wheel.sleep(Duration::from_secs(30)));
    assert!(w.poll(d.as_mut()).is_pending());
    wheel.advance(ms(1));
    drop(d);
    wheel.advance(Duration::ZERO);
    assert!(
        wheel.next_turn() <= wheel.clock().now() + TICK,
        "{:?}",
        wheel.next_turn()
    );
}

#[test]
fn a_reclaiming_turn_after_lingering_plans_a_turn_within_a_tick_not_idle() {
    // wheel.rs: "Idle: nothing armed and nothing just reclaimed". Past the lingering
    // (16 ticks after the turn that left idle), a turn that reclaims the last entry still
    // plans a turn one tick ahead; only the turn after that, with nothing to reclaim,
    // goes idle.
    let wheel = fixed::<4>();
    let w = CountingWaker::new();
    let mut d = Box::pin(wheel.sleep(Duration::from_secs(30)));
    assert!(w.poll(d.as_mut()).is_pending());
    wheel.turn(); // out of idle: lingers until tick 16
    wheel.advance(ms(20));
    drop(d);
    wheel.advance(Duration::ZERO);
    assert_eq!(wheel.occupied(), 0);
    assert_eq!(
        wheel.next_turn(),
        ms(21),
        "a reclaiming turn left the wheel idle"
    );
    wheel.advance(ms(1));
    assert_eq!(
        wheel.next_turn(),
        Duration::MAX,
        "idle once nothing was reclaimed"
    );
}

#[test]
fn short_deadlines_released_at_once_do_not_wake_a_reclaiming_driver() {
    // A steady stream of cancels makes every turn reclaim and plan the next one a tick
    // ahead, with no slot of its own. Deadlines shorter than a tick, armed into that tick
    // and released at once, must not wake the driver each time (one turn per tick, not
    // one per arm).
    let wheel = growable();
    let w = CountingWaker::new();
    let driver = CountingWaker::new();
    let mut long: Vec<_> = (0..40).map(|_| Box::pin(wheel.sleep(ms(10_000)))).collect();
    for sleep in &mut long {
        assert!(w.poll(sleep.as_mut()).is_pending());
    }
    wheel.turn();
    let mut woken_by_arms = 0;
    for _ in 0..30 {
        // A cancel (which may wake the driver itself), then the turn that reclaims it.
        drop(long.pop());
        wheel.advance(ms(1));
        wheel.register_driver(&driver.waker);
        let before = driver.wakes();
        let mut short = Box::pin(wheel.sleep(us(400)));
        assert!(w.poll(short.as_mut()).is_pending());
        drop(short);
        woken_by_arms += driver.wakes() - before;
    }
    assert_eq!(woken_by_arms, 0, "short deadlines woke the driver");
    assert_eq!(w.wakes(), 0);
}
