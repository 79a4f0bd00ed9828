//! Reclaiming: a cancelled deadline's entry goes back to the wheel at the driver's next
//! turn, within about a tick. A turn that reclaims plans another within a tick (not idle,
//! even past the lingering); a cancel wakes a driver that plans to sleep longer than a
//! tick, once per tick, and always when the deadline cannot tell its start from its entry
//! (cut short by a budget, armed after running degraded); deadlines released at once do
//! not wake a reclaiming driver.
#![cfg(all(feature = "alloc", feature = "stats"))]

mod support;

use core::future::pending;
use core::task::{Context, Waker};
use core::time::Duration;

use punctual_core::{Budget, Clock, Fixed, Growable, ManualClock, Reading, Storage, Wheel};
use support::{CountingWaker, TICK, fixed, growable, ms, poll, poll_pending, us};

const THIRTY_SECONDS: Duration = Duration::from_secs(30);

#[test]
fn cancelled_30s_deadline_reclaimed_next_turn() {
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
fn reclaiming_turn_plans_next_within_a_tick() {
    let wheel = fixed::<4>();
    let w = CountingWaker::new();
    let mut d = Box::pin(wheel.sleep(Duration::from_secs(30)));
    assert!(w.poll(d.as_mut()).is_pending());
    wheel.advance(ms(1));
    drop(d);
    wheel.advance(Duration::ZERO);
    assert!(
        wheel.next_turn() <= Reading::since_origin(wheel.clock().now() + TICK),
        "{:?}",
        wheel.next_turn()
    );
}

#[test]
fn reclaim_after_linger_plans_within_tick_not_idle() {
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
        Reading::since_origin(ms(21)),
        "a reclaiming turn left the wheel idle"
    );
    wheel.advance(ms(1));
    assert_eq!(
        wheel.next_turn(),
        Reading::END,
        "idle once nothing was reclaimed"
    );
}

#[test]
fn cancel_wakes_long_sleeping_driver_once_per_tick() {
    // Reclaiming "within about one tick" needs the driver to turn: a cancel that finds the
    // inbox empty while the driver plans to sleep longer than a tick wakes it (wheel.rs,
    // "Reclaiming cancelled entries"); further cancels before that turn wake no one.
    let wheel: Wheel<ManualClock, Growable> = Wheel::growable(ManualClock::new(), TICK);
    let counter = CountingWaker::new();
    let driver = counter.waker.clone();
    let wakes = || counter.wakes();
    let mut cx = Context::from_waker(Waker::noop());

    let mut deadlines: Vec<_> = (0..100)
        .map(|_| wheel.deadline(THIRTY_SECONDS, pending::<()>()))
        .collect();
    for deadline in &mut deadlines {
        poll_pending(deadline, &mut cx);
    }
    wheel.register_driver(&driver);
    let _ = wheel.turn();
    wheel.register_driver(&driver);
    let before = wakes();
    assert!(
        wheel.next_turn() > Reading::since_origin(wheel.clock().now() + TICK),
        "plans to sleep long"
    );

    deadlines.truncate(50); // 50 cancels
    assert_eq!(wakes(), before + 1, "the cancels woke the driver once");
    assert_eq!(wheel.occupied(), 100);
    wheel.register_driver(&driver);
    let _ = wheel.turn();
    assert_eq!(wheel.occupied(), 50);
    // Right after a reclaiming turn the driver plans to look again within a tick, so the
    // next cancels need not wake it; that turn reclaims them.
    assert!(wheel.next_turn() <= Reading::since_origin(wheel.clock().now() + TICK));
    let before = wakes();
    deadlines.truncate(10);
    assert_eq!(wakes(), before, "a cancel woke a driver due within a tick");
    wheel.advance(TICK);
    assert_eq!(wheel.occupied(), 10);
}

/// Drops `deadline`, whose entry a turn took in, and checks that the cancel woke the
/// wheel's driver (registered with `register_driver`) and that the next turn reclaims the
/// entry.
fn assert_cancel_wakes_the_driver<S: Storage, D>(wheel: &Wheel<ManualClock, S>, deadline: D) {
    let driver = CountingWaker::new();
    wheel.register_driver(&driver.waker);
    drop(deadline);
    assert_eq!(
        driver.wakes(),
        1,
        "the driver was not woken to reclaim the entry"
    );
    wheel.turn();
    assert_eq!(wheel.occupied(), 0);
}

#[test]
fn cancel_of_budget_cut_deadline_wakes_driver() {
    // A budget's duration need not be the time to its instant (`Budget::new`): a deadline
    // it cut short cannot tell its start from its entry, so its cancel wakes the driver
    // rather than trust the plan.
    let wheel = growable();
    let budget = Budget::new(&wheel, Reading::since_origin(ms(10_000)), Duration::ZERO);
    let mut d = Box::pin(wheel.deadline(ms(30_000), pending::<()>()).within(budget));
    assert!(poll(d.as_mut()).is_pending());
    wheel.turn(); // takes the entry in: the cancel goes through the cancel inbox
    assert_cancel_wakes_the_driver(&wheel, d);
}

#[test]
fn cancel_after_degraded_arm_wakes_driver() {
    // Armed late, its entry is due at its target, not at its start plus its span: its
    // start cannot be told from the entry (here it lies 2.4e9 ticks back, more than the
    // plan's 32-bit ticks reach), so its cancel wakes the driver.
    let wheel: Wheel<ManualClock, Fixed<1>> =
        Wheel::fixed(ManualClock::new(), Duration::from_micros(1));
    let mut taken = Box::pin(wheel.sleep(ms(1)));
    assert!(poll(taken.as_mut()).is_pending());
    let mut d = Box::pin(wheel.deadline(Duration::from_secs(3600), pending::<()>()));
    assert!(poll(d.as_mut()).is_pending(), "degraded");
    drop(taken);
    wheel.advance(Duration::from_secs(2400));
    assert!(poll(d.as_mut()).is_pending(), "armed now");
    assert_eq!(wheel.occupied(), 1);
    wheel.turn();
    assert_cancel_wakes_the_driver(&wheel, d);
}

#[test]
fn quick_releases_do_not_wake_a_reclaiming_driver() {
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
