//! The driver's plan across long uptimes: the plan is kept as the low 32 bits of its tick
//! and rebuilt near the arming tick, so an arm earlier than the plan must wake the driver
//! across the 32-bit wrap, a driver that sleeps exactly until each plan (as the thread and
//! tokio drivers do) must never oversleep a deadline, across every wrap and with arms that
//! come in while it sleeps (the wrap bug that stopped tokio's timers after 12 days), and a
//! plan past the clock's end must not read as idle.
#![cfg(all(feature = "alloc", feature = "stats"))]

mod support;

use core::future::pending;
use core::pin::{Pin, pin};
use core::time::Duration;

use punctual_core::{Clock, Fixed, Growable, ManualClock, Reading, Sleep, Wheel};
use support::{CLOCK_END, CountingWaker, Rng, SPREAD, TICK, duration_of, is_elapsed, ns, ticks};

#[test]
fn earlier_arm_wakes_driver_across_32_bit_wrap() {
    // The plan is kept as the low 32 bits of its tick and rebuilt near the arming tick.
    // Just below 2^32 ticks, the arming tick's low bits are large and the plan's small.
    let t = |n: u64| ticks(TICK, n);
    let wrap = 1u64 << 32;
    let wheel: Wheel<ManualClock, Fixed<8>> =
        Wheel::fixed(ManualClock::starting_at(t(wrap - 2)), TICK);
    let driver = CountingWaker::new();
    let w = CountingWaker::new();
    // Idle as a turn left it (a new wheel's first turn does not linger); the next turn
    // lingers.
    assert_eq!(wheel.turn(), Reading::END);
    wheel.register_driver(&driver.waker);
    let _ = wheel.turn();

    // Due at 2^32 + 4: earlier than any plan of an empty wheel.
    let mut a = pin!(wheel.sleep(t(6)));
    assert!(w.poll(a.as_mut()).is_pending());
    assert_eq!(driver.wakes(), 1, "the first arm did not wake the driver");
    wheel.register_driver(&driver.waker);
    // `a` sits on the top level (its tick differs from now in bit 32): the plan is the
    // turn that cascades it, at 2^32, whose low 32 bits are 0.
    assert_eq!(wheel.turn(), Reading::since_origin(t(wrap)));
    assert_eq!(wheel.next_turn(), Reading::since_origin(t(wrap)));

    // Due at 2^32 (the plan itself) and at 2^32 + 3: not earlier, no wake.
    let mut b = pin!(wheel.sleep(t(2)));
    let mut c = pin!(wheel.deadline(t(5), pending::<()>()));
    assert!(w.poll(b.as_mut()).is_pending());
    assert!(w.poll(c.as_mut()).is_pending());
    assert_eq!(
        driver.wakes(),
        1,
        "an arm not earlier than the plan woke the driver"
    );
    // Due at 2^32 - 1: earlier, so it wakes the driver.
    let mut d = pin!(wheel.sleep(t(1)));
    assert!(w.poll(d.as_mut()).is_pending());
    assert_eq!(
        driver.wakes(),
        2,
        "an arm earlier than the plan did not wake the driver"
    );
    wheel.register_driver(&driver.waker);
    assert_eq!(wheel.turn(), Reading::since_origin(t(wrap - 1)));

    // The driver sleeps until each plan in turn, across the wrap.
    let mut fired = Vec::new();
    for _ in 0..4 {
        let plan = wheel.next_turn();
        wheel.clock().set(plan.as_duration());
        wheel.register_driver(&driver.waker);
        let _ = wheel.turn();
        fired.push((plan.as_duration(), w.wakes()));
    }
    assert_eq!(
        fired,
        [
            (t(wrap - 1), 1),
            (t(wrap), 2),
            (t(wrap + 3), 3),
            (t(wrap + 4), 4)
        ],
        "fired (plan, wakes so far)"
    );
    assert!(w.poll(a.as_mut()).is_ready());
    assert!(w.poll(b.as_mut()).is_ready());
    assert_eq!(is_elapsed(w.poll(c.as_mut())).duration(), t(5));
    assert!(w.poll(d.as_mut()).is_ready());

    // Nothing armed: the driver lingers until 16 ticks after the arm that woke it from
    // idle (the first one, at 2^32 - 2), then goes idle.
    assert_eq!(wheel.next_turn(), Reading::since_origin(t(wrap + 14)));
    wheel.clock().set(t(wrap + 14));
    assert_eq!(wheel.turn(), Reading::END);
    // Idle: it waits for a wake only, and any arm wakes it.
    assert_eq!(wheel.next_turn(), Reading::END);
    let wakes = driver.wakes();
    let mut e = pin!(wheel.sleep(t(100)));
    assert!(w.poll(e.as_mut()).is_pending());
    assert_eq!(
        driver.wakes(),
        wakes + 1,
        "an arm did not wake the idle driver"
    );
    // On the far side: the arming tick's low bits are small now.
    wheel.register_driver(&driver.waker);
    let plan = wheel.turn();
    let wakes = driver.wakes();
    let mut f = pin!(wheel.sleep(t(99)));
    assert!(w.poll(f.as_mut()).is_pending());
    let earlier = plan > Reading::since_origin(wheel.clock().now() + t(99));
    assert_eq!(
        driver.wakes(),
        wakes + usize::from(earlier),
        "plan {plan:?}"
    );
    assert_eq!(wheel.occupied(), 2);
}

/// One simulated driver run: the driver turns, sleeps exactly until the planned turn (or
/// until an arm wakes it), and turns again; meanwhile deadlines of random lengths are
/// armed at random moments of its sleep. Every deadline must fire within two ticks of its
/// time: a driver that trusts the plan never oversleeps one.
fn sleeping_driver(tick: Duration, start: Duration, seed: u64, arms: usize) {
    let wheel: Wheel<ManualClock, Growable> =
        Wheel::growable(ManualClock::starting_at(start), tick);
    let tick_ns = tick.as_nanos();
    let driver = CountingWaker::new();
    let mut rng = Rng(seed);
    struct Armed<'w> {
        sleep: Pin<Box<Sleep<'w>>>,
        waker: CountingWaker,
        requested: u128,
    }
    let mut live: Vec<Armed<'_>> = Vec::new();
    let mut armed = 0;
    let mut turns = 0u64;
    let mut fired = 0;
    wheel.register_driver(&driver.waker);
    let mut wakes_seen = driver.wakes();
    let mut plan = wheel.turn();
    loop {
        turns += 1;
        assert!(turns < 1_000_000, "the driver is spinning");
        let now = wheel.clock().now();
        assert!(
            plan > Reading::since_origin(now),
            "planned {plan:?} at {now:?}"
        );
        if let Some(earliest) = live.iter().map(|a| a.requested).min() {
            let earliest_tick = earliest.div_ceil(tick_ns) * tick_ns;
            assert!(
                earliest_tick > CLOCK_END.as_nanos()
                    || u128::from(plan.as_nanos()) <= earliest_tick,
                "the plan {plan:?} oversleeps a deadline at {earliest} ns (now {now:?})"
            );
        }
        // `Duration::MAX`: nothing to turn for before the clock's end (idle, or only
        // deadlines past it). The driver waits for a wake only, with no timer.
        let waits_for_a_wake = plan == Reading::END;
        // Arm something while the driver sleeps, now and then (an idle driver sleeps
        // until something is armed).
        if armed < arms && (waits_for_a_wake || rng.below(3) == 0) {
            let gap = if waits_for_a_wake {
                ticks(tick, 1 << 33).as_nanos()
            } else {
                plan.as_duration().saturating_sub(now).as_nanos()
            };
            let at =
                (now.as_nanos() + u128::from(rng.next()) % gap.max(1)).min(CLOCK_END.as_nanos());
            wheel.clock().set(duration_of(at));
            let n = match rng.below(4) {
                0 => rng.below(8),
                1 => SPREAD[rng.below(SPREAD.len() as u64) as usize],
                2 => rng.below(1 << 33),
                _ => rng.below(1 << 38),
            };
            let duration = ticks(tick, n) + ns(rng.below(tick_ns as u64));
            let waker = CountingWaker::new();
            let mut sleep = Box::pin(wheel.sleep(duration));
            if waker.poll(sleep.as_mut()).is_pending() {
                live.push(Armed {
                    sleep,
                    waker,
                    requested: at + duration.as_nanos(),
                });
            }
            armed += 1;
        }
        // Sleep until the plan, unless woken.
        if driver.wakes() == wakes_seen {
            if waits_for_a_wake {
                if armed == arms {
                    break;
                }
                continue; // sleeping until the next arm
            }
            wheel
                .clock()
                .set(plan.min(Reading::since_origin(CLOCK_END)).as_duration());
        }
        wheel.register_driver(&driver.waker);
        wakes_seen = driver.wakes();
        plan = wheel.turn();
        let now = wheel.clock().now().as_nanos();
        live.retain_mut(|a| {
            if a.waker.wakes() > 0 {
                assert!(
                    now >= a.requested,
                    "woken early: {} ns at {now}",
                    a.requested
                );
                assert!(a.waker.poll(a.sleep.as_mut()).is_ready());
                fired += 1;
                false
            } else {
                assert!(
                    now < a.requested + 2 * tick_ns,
                    "the driver overslept a deadline due at {} ns: now {now}",
                    a.requested
                );
                true
            }
        });
        if armed == arms && live.iter().all(|a| a.requested >= CLOCK_END.as_nanos()) {
            break;
        }
    }
    assert!(fired > 0);
    for a in &live {
        assert!(
            a.requested + 2 * tick_ns > CLOCK_END.as_nanos(),
            "a deadline due at {} ns never fired: the driver was never woken for it",
            a.requested
        );
    }
    let stats = wheel.stats();
    assert_eq!(stats.lateness[2] + stats.lateness[3], 0, "{stats}");
}

#[test]
fn driver_sleeping_to_plan_never_oversleeps_wraps() {
    let near_2_32 = |tick| ticks(tick, (1 << 32) - 5);
    let cases = [
        (TICK, Duration::ZERO),
        (TICK, near_2_32(TICK)),
        (TICK, ticks(TICK, (1 << 31) - 3)),
        (TICK, ticks(TICK, (3 << 36) - 100)),
        (
            Duration::from_micros(1),
            near_2_32(Duration::from_micros(1)),
        ),
        (ns(1), near_2_32(ns(1))),
        (TICK, CLOCK_END - Duration::from_secs(1 << 33)),
        (ns(1), CLOCK_END - ns(1 << 40)),
    ];
    for (seed, (tick, start)) in cases.into_iter().enumerate() {
        sleeping_driver(tick, start, seed as u64 + 11, 300);
    }
}

#[test]
fn lingering_plan_past_last_tick_is_not_idle() {
    // 1 ns ticks, 10 ns before the manual clock's last reading: after a fire, the driver
    // lingers 16 ticks, past the last one. `next_turn` (and a turn left to the role's
    // holder) rebuild that plan from its low 32 bits, saturating at tick `u64::MAX`,
    // which must not read as "idle": the wheel still plans a turn.
    let wheel: Wheel<ManualClock, Fixed<2>> =
        Wheel::fixed(ManualClock::starting_at(CLOCK_END - ns(10)), ns(1));
    let w = CountingWaker::new();
    let mut d = pin!(wheel.sleep(ns(3)));
    assert!(w.poll(d.as_mut()).is_pending());
    wheel.advance(ns(3));
    assert!(w.poll(d.as_mut()).is_ready());
    let planned = wheel.turn();
    assert_ne!(planned, Reading::END, "the lingering wheel planned no turn");
    assert_ne!(wheel.next_turn(), Reading::END, "next_turn read as idle");
}

#[test]
fn turn_planned_past_clocks_end_is_not_idle() {
    // (`Wheel::turn` and `Wheel::next_turn` alike.)
    // Hour-long ticks, three hours before the manual clock's last reading: a deadline due
    // half an hour before the end has its tick boundary past `u64::MAX` ns (and no
    // sub-tick turn: an offset into an hour-long tick is more than the levels keep). The wheel still has it armed, so the planned turn
    // must not read as "idle" (`Duration::MAX`, which tells a driver to wait for its waker
    // alone): it is the clock's last reading. (The deadline fires by its tick, which this
    // clock never reaches; a real clock would take 584 years to.)
    let hour = Duration::from_secs(3600);
    let wheel: Wheel<ManualClock, Fixed<2>> =
        Wheel::fixed(ManualClock::starting_at(CLOCK_END - 3 * hour), hour);
    let w = CountingWaker::new();
    let mut d = pin!(wheel.sleep(hour * 5 / 2));
    assert!(w.poll(d.as_mut()).is_pending());
    assert_eq!(
        wheel.turn(),
        Reading::since_origin(CLOCK_END - ns(1)),
        "an armed wheel planned no turn"
    );
    assert_eq!(
        wheel.next_turn(),
        Reading::since_origin(CLOCK_END - ns(1)),
        "an armed wheel's next turn read as idle"
    );
    wheel.advance(hour * 5 / 2 - ns(1));
    assert_eq!(w.wakes(), 0, "early");
    assert!(w.poll(d.as_mut()).is_pending());
}
