//! Rules 2 and 3 of docs/design.md: never early (pending 1 ns before the requested time,
//! ready at it) and at most two ticks late, across every level of the wheel, from starts
//! anywhere in a tick, reached in one jump or step by step.
#![cfg(feature = "alloc")]

mod support;

use core::future::pending;
use core::pin::pin;
use core::time::Duration;

use punctual_core::{Clock, Fixed, ManualClock, Reading, Wheel};
use support::{AdvanceToManual, CountingWaker, TICK, fixed, growable, is_elapsed, ms, ns};

#[test]
fn never_early_pending_1ns_before_ready_at_time() {
    for duration in [
        ms(1),
        ms(10),
        ms(63),
        ms(64),
        ms(65),
        ms(4095),
        ms(4096),
        ms(300_000),
    ] {
        let wheel = growable();
        let w = CountingWaker::new();
        let ws = CountingWaker::new();
        let mut d = pin!(wheel.deadline(duration, pending::<()>()));
        let mut s = pin!(wheel.sleep(duration));
        assert!(w.poll(d.as_mut()).is_pending());
        assert!(ws.poll(s.as_mut()).is_pending());
        wheel.advance(duration - ns(1));
        assert_eq!((w.wakes(), ws.wakes()), (0, 0), "{duration:?}: woken early");
        assert!(
            w.poll(d.as_mut()).is_pending(),
            "{duration:?}: deadline early"
        );
        assert!(
            ws.poll(s.as_mut()).is_pending(),
            "{duration:?}: sleep early"
        );
        wheel.advance(ns(1));
        assert_eq!(
            (w.wakes(), ws.wakes()),
            (1, 1),
            "{duration:?}: not woken on time"
        );
        assert_eq!(is_elapsed(w.poll(d.as_mut())).duration(), duration);
        assert!(ws.poll(s.as_mut()).is_ready());
        assert_eq!(wheel.occupied(), 0);
    }
}

#[test]
#[cfg_attr(
    miri,
    ignore = "thousands of turns; the same code paths run under Miri in the smaller tests"
)]
fn never_early_with_sub_tick_start_and_duration() {
    // Started 0.3 ms into a tick, for 1.5 ms: requested time 1.8 ms.
    let wheel = fixed::<4>();
    wheel.advance(Duration::from_micros(300));
    let w = CountingWaker::new();
    let mut d = pin!(wheel.deadline(Duration::from_micros(1500), pending::<()>()));
    assert!(w.poll(d.as_mut()).is_pending());
    wheel.advance(Duration::from_micros(1500) - ns(1));
    assert_eq!(w.wakes(), 0);
    assert!(w.poll(d.as_mut()).is_pending());
    // Step by 1 µs up to 2 ticks past the requested time: fires somewhere in there.
    let requested = Duration::from_micros(1800);
    let mut fired_at = None;
    while wheel.clock().now() < requested + 2 * TICK {
        let now = wheel.advance(Duration::from_micros(1));
        if w.wakes() > 0 {
            fired_at = Some(now);
            break;
        }
    }
    let fired_at = fired_at.expect("not fired within two ticks");
    assert!(
        fired_at >= Reading::since_origin(requested),
        "fired early at {fired_at:?}"
    );
    is_elapsed(w.poll(d.as_mut()));
}

#[test]
#[cfg_attr(
    miri,
    ignore = "thousands of turns; the same code paths run under Miri in the smaller tests"
)]
fn at_most_two_ticks_late_across_levels_and_starts() {
    let starts = [
        ns(0),
        ns(1),
        Duration::from_micros(500),
        TICK - ns(1),
        ms(63),
        ms(4095),
    ];
    let durations = [
        ns(1),
        TICK - ns(1),
        TICK,
        TICK + ns(1),
        ms(63),
        ms(64),
        ms(64) + ns(1),
        ms(4095),
        ms(4096),
        ms(4097),
        ms(262_144) + Duration::from_micros(1),
        ms(1 << 24) + ns(3),
        ms(1 << 30) - ns(3),
    ];
    for start in starts {
        for duration in durations {
            // Once jumping straight to the bound, once in tick-sized steps after the
            // requested time; both must fire by requested + 2 ticks.
            for stepped in [false, true] {
                let wheel: Wheel<ManualClock, Fixed<2>> =
                    Wheel::fixed(ManualClock::starting_at(start), TICK);
                let w = CountingWaker::new();
                let mut s = pin!(wheel.sleep(duration));
                assert!(w.poll(s.as_mut()).is_pending());
                let requested = start + duration;
                let bound = requested + 2 * TICK;
                wheel.advance_to_manual(requested - ns(1));
                let case = format!("start {start:?} duration {duration:?} stepped {stepped}");
                assert_eq!(w.wakes(), 0, "{case}: early");
                assert!(w.poll(s.as_mut()).is_pending(), "{case}: early");
                if stepped {
                    while wheel.clock().now() < bound && w.wakes() == 0 {
                        let next = (wheel.clock().now() + TICK).min(bound);
                        wheel.advance_to_manual(next);
                    }
                } else {
                    wheel.advance_to_manual(bound);
                }
                assert_eq!(w.wakes(), 1, "{case}: not fired by requested + 2 ticks");
                assert!(w.poll(s.as_mut()).is_ready(), "{case}");
                assert_eq!(wheel.occupied(), 0, "{case}");
            }
        }
    }
}
