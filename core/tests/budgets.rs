//! Budgets, on the manual clock: a budget bounds its whole block, and every deadline inside
//! it is cut to what is left (keeping its own name when it ends first, taking the budget's
//! when the budget ends it); nested budgets take the earlier edge; a budget of another
//! wheel does not apply, or is refused when given explicitly; an explicit budget reaches
//! deadlines through `within`, without `std`.
#![cfg(feature = "alloc")]

mod support;

use core::future::{Future, pending};
use core::pin::pin;
use core::task::Poll;
use core::time::Duration;
use std::cell::Cell;

use punctual_core::{Budget, Budgeted, Elapsed, Fixed, Growable, ManualClock, Reading, Wheel};
use support::{TICK, growable, ms, poll};

/// Polls `f` and advances the clock one tick at a time until it completes; returns the
/// output and the clock reading then.
fn run<F: Future>(wheel: &Wheel<ManualClock, Growable>, f: F) -> (F::Output, Duration) {
    let mut f = pin!(f);
    for _ in 0..100_000 {
        if let Poll::Ready(out) = poll(f.as_mut()) {
            return (out, punctual_core::Clock::now(wheel.clock()));
        }
        wheel.advance(TICK);
    }
    panic!("did not complete within 100 s of virtual time");
}

#[test]
fn inner_deadline_is_cut_to_what_is_left() {
    let wheel = growable();
    let block = async {
        wheel.sleep(ms(150)).await;
        // 100 ms of its own, but only 50 ms are left of the budget.
        wheel
            .deadline(ms(100), pending::<()>())
            .named("inner")
            .await
    };
    let (out, at) = run(&wheel, wheel.budget(ms(200), block).named("edge"));
    // The inner deadline fired at the budget's edge (or the budget itself did, on the
    // same tick): either way, at 200 ms, and the error names the budget.
    assert!(at >= ms(200) && at <= ms(202), "ended at {at:?}");
    let err: Elapsed = out.and_then(|inner| inner).unwrap_err();
    assert!(err.is_budget());
    assert_eq!(err.name(), Some("edge"));
    assert_eq!(err.duration(), ms(200));
    assert_eq!(err.to_string(), "budget 'edge' of 200ms elapsed");
}

#[test]
fn shorter_inner_deadline_keeps_its_own_name() {
    let wheel = growable();
    let block = async {
        wheel
            .deadline(ms(30), pending::<()>())
            .named("pricing")
            .await
    };
    let (out, at) = run(&wheel, wheel.budget(ms(200), block));
    assert!(at >= ms(30) && at <= ms(32));
    let err = out.unwrap().unwrap_err();
    assert!(!err.is_budget());
    assert_eq!(err.name(), Some("pricing"));
    assert_eq!(err.to_string(), "deadline 'pricing' of 30ms elapsed");
}

#[test]
fn retries_stop_when_the_budget_runs_out() {
    let wheel = growable();
    let attempts = Cell::new(0);
    let retries = async {
        loop {
            attempts.set(attempts.get() + 1);
            match wheel.deadline(ms(80), pending::<()>()).await {
                Ok(()) => return Ok(()),
                Err(e) if e.is_budget() => return Err(e),
                Err(_) => continue,
            }
        }
    };
    let (out, at) = run(&wheel, wheel.budget(ms(200), retries));
    // 80 + 80 + 40: the third attempt is cut to what is left, and no fourth starts.
    assert!(at >= ms(200) && at <= ms(202), "ended at {at:?}");
    assert!(out.and_then(|r| r).unwrap_err().is_budget());
    assert_eq!(attempts.get(), 3);
    // The retry loop was dropped: nothing is left armed.
    wheel.advance(ms(1));
    assert_eq!(wheel.occupied(), 0);
}

#[test]
fn nested_budgets_take_the_earlier_edge() {
    let wheel = growable();
    let inner_budget = async {
        // The inner budget asks for 500 ms, but the outer one leaves only 100.
        wheel
            .budget(ms(500), async {
                wheel.deadline(ms(400), pending::<()>()).await
            })
            .named("inner")
            .await
    };
    let (out, at) = run(&wheel, wheel.budget(ms(100), inner_budget).named("outer"));
    assert!(at >= ms(100) && at <= ms(102), "ended at {at:?}");
    let err = match out {
        Err(e) | Ok(Err(e)) | Ok(Ok(Err(e))) => e,
        Ok(Ok(Ok(()))) => panic!("a pending future completed"),
    };
    assert!(err.is_budget());
    assert_eq!(err.name(), Some("outer"));
}

#[test]
fn a_budget_on_another_wheel_does_not_apply() {
    let wheel = growable();
    let other = growable();
    let mut d = pin!(other.budget(ms(10), wheel.deadline(ms(50), pending::<()>())));
    assert!(poll(d.as_mut()).is_pending());
    // The deadline on `wheel` is not cut by the budget on `other`.
    wheel.advance(ms(20));
    assert!(poll(d.as_mut()).is_pending());
    other.advance(ms(10));
    assert!(
        poll(d.as_mut()).is_ready(),
        "the budget itself still bounds the block"
    );
}

#[test]
#[should_panic(expected = "the budget was made on another wheel")]
fn an_explicit_budget_of_another_wheel_is_refused() {
    // `other`'s clock reads 1000 s; a budget of 10 ms taken there, read on `wheel`'s
    // clock (at 0), would look 1000 s away, and one the other way round would end the
    // block at once: refused at construction.
    let wheel = growable();
    let other: Wheel<ManualClock, Growable> =
        Wheel::growable(ManualClock::starting_at(Duration::from_secs(1000)), TICK);
    let budget = Budget::starting_now(&wheel, ms(10)).expect("a budget");
    let _block = Budgeted::with_budget(pending::<()>(), &other, budget);
}

#[test]
fn a_named_deadline_a_budget_ends_reports_the_budget() {
    let wheel = growable();
    let budget = Budget::starting_now(&wheel, ms(10)).expect("a budget");
    let mut d = pin!(
        wheel
            .deadline(ms(100), pending::<()>())
            .named("pricing")
            .within(budget)
    );
    assert!(poll(d.as_mut()).is_pending());
    wheel.advance(ms(10));
    let Poll::Ready(Err(err)) = poll(d.as_mut()) else {
        panic!("the budget ends the deadline at 10 ms");
    };
    assert!(err.is_budget());
    assert_eq!(err.duration(), ms(10));
    assert_eq!(
        err.name(),
        None,
        "the budget's name (it has none), not the deadline's"
    );
}

#[test]
fn budget_past_clock_end_is_made_and_never_ends() {
    let wheel = growable();
    let forever = Duration::from_secs(1000 * 365 * 86_400);
    assert!(Budget::starting_now(&wheel, Duration::MAX).is_none());
    let budget = Budget::starting_now(&wheel, forever).expect("a budget past the clock");
    let mut block = pin!(Budgeted::with_budget(pending::<()>(), &wheel, budget));
    assert!(poll(block.as_mut()).is_pending());
    wheel.advance(Duration::from_secs(365 * 86_400));
    assert!(poll(block.as_mut()).is_pending());
}

#[test]
fn explicit_budget_bounds_deadlines_without_std() {
    let wheel: Wheel<ManualClock, Fixed<8>> = Wheel::fixed(ManualClock::new(), TICK);
    let budget = Budget::starting_now(&wheel, ms(40)).unwrap().named("edge");
    let mut d = pin!(wheel.deadline(ms(100), pending::<()>()).within(budget));
    assert!(poll(d.as_mut()).is_pending());
    wheel.advance(ms(39));
    assert!(poll(d.as_mut()).is_pending(), "never early");
    wheel.advance(ms(1));
    let err = match poll(d.as_mut()) {
        Poll::Ready(Err(e)) => e,
        other => panic!("expected the budget to fire, got {other:?}"),
    };
    assert!(err.is_budget());
    assert_eq!(err.name(), Some("edge"));
    // And the block as a whole, the explicit way.
    let mut block = pin!(Budgeted::with_budget(pending::<()>(), &wheel, budget));
    assert!(
        poll(block.as_mut()).is_ready(),
        "the budget has already run out"
    );
}

// The ambient budget that a deadline takes at its first poll is a thread-local: `std` only
// (without it, a budget bounds its block and reaches inner deadlines through `within`).
#[cfg(feature = "std")]
#[test]
fn deadline_first_polled_inside_keeps_the_budget() {
    // As documented (module `budget`, "How the budget reaches inner deadlines"): a
    // deadline takes the budget at its first pending poll, wherever it was made, and keeps
    // it. One made before the block but first polled inside it (a `select!` in the block)
    // ends with the budget, even after the block is done; one polled once before the
    // block keeps its own limit.
    let wheel = growable();
    let mut taken = Box::pin(wheel.deadline(ms(100), pending::<()>()));
    let mut kept = Box::pin(wheel.deadline(ms(100), pending::<()>()));
    assert!(poll(kept.as_mut()).is_pending());
    {
        let block = core::future::poll_fn(|cx| {
            assert!(taken.as_mut().poll(cx).is_pending());
            assert!(kept.as_mut().poll(cx).is_pending());
            Poll::Ready(())
        });
        let mut budgeted = pin!(wheel.budget(ms(10), block).named("checkout"));
        assert!(matches!(poll(budgeted.as_mut()), Poll::Ready(Ok(()))));
    }
    wheel.advance(ms(10));
    let err = match poll(taken.as_mut()) {
        Poll::Ready(Err(err)) => err,
        other => panic!("the deadline did not take the budget: {other:?}"),
    };
    assert!(err.is_budget());
    assert_eq!(err.duration(), ms(10));
    // A deadline keeps no name of its own for the budget: the budget's name is read from
    // the budget in force where the deadline fires, and out here there is none.
    assert_eq!(err.name(), None);
    assert!(
        poll(kept.as_mut()).is_pending(),
        "the budget reached a deadline started before it"
    );
    wheel.advance(ms(90));
    assert!(matches!(poll(kept.as_mut()), Poll::Ready(Err(e)) if !e.is_budget()));
}

#[test]
fn never_ending_deadline_within_ends_with_budget() {
    // `Duration::MAX` alone never fires; within a budget it is bounded like any other.
    let wheel = growable();
    let budget = Budget::new(&wheel, Reading::since_origin(ms(10)), ms(10)).named("request");
    let mut d = pin!(
        wheel
            .deadline(Duration::MAX, pending::<()>())
            .within(budget)
    );
    assert!(poll(d.as_mut()).is_pending());
    wheel.advance(ms(10) - Duration::from_nanos(1));
    assert!(poll(d.as_mut()).is_pending(), "early");
    wheel.advance(Duration::from_nanos(1));
    match poll(d.as_mut()) {
        Poll::Ready(Err(e)) => {
            assert!(e.is_budget());
            assert_eq!((e.duration(), e.name()), (ms(10), Some("request")));
        }
        other => panic!("the budget did not end a never-ending deadline: {other:?}"),
    }
    // The same for an instant beyond any reading.
    let budget = Budget::new(&wheel, Reading::since_origin(ms(20)), ms(10));
    let (out, at) = run(
        &wheel,
        wheel
            .deadline_at(Reading::END, pending::<()>())
            .within(budget),
    );
    assert!(out.unwrap_err().is_budget());
    assert_eq!(at, ms(20));
}

#[test]
fn budget_at_deadline_s_own_instant_leaves_its_name() {
    // Only a budget that ends a deadline *before* its own time makes the `Elapsed` the
    // budget's; at the same instant the deadline's own duration and name stand.
    let wheel = growable();
    let budget = Budget::new(&wheel, Reading::since_origin(ms(10)), ms(7)).named("budget");
    let d = wheel
        .deadline(ms(10), pending::<()>())
        .named("own")
        .within(budget);
    let (out, at) = run(&wheel, d);
    let e = out.unwrap_err();
    assert_eq!(at, ms(10));
    assert!(!e.is_budget());
    assert_eq!((e.duration(), e.name()), (ms(10), Some("own")));
}

#[test]
fn budget_ending_with_enclosing_one_stays_in_force() {
    // Of two budgets ending at the same instant, the inner one is not replaced by the
    // enclosing one (only an earlier ambient budget is): its own name stays in force.
    let wheel = growable();
    let seen = Cell::new(None);
    let outer = Budgeted::new(
        async {
            let mut inner = pin!(Budgeted::new(pending::<()>(), &wheel, ms(10)).named("inner"));
            assert!(poll(inner.as_mut()).is_pending());
            seen.set(inner.budget().map(|b| b.name()));
            pending::<()>().await
        },
        &wheel,
        ms(10),
    )
    .named("outer");
    let mut outer = pin!(outer);
    assert!(poll(outer.as_mut()).is_pending());
    assert_eq!(seen.get(), Some(Some("inner")));
}

// The budget in force where a deadline fires lends its name only to the deadlines it cut
// (`Budget::enter` sets it as a `Budgeted` does while it polls: `std` only).
#[cfg(feature = "std")]
#[test]
fn ambient_budget_names_the_deadline_it_cut() {
    let wheel = support::fixed::<4>();
    let budget = Budget::starting_now(&wheel, ms(10))
        .unwrap()
        .named("checkout");
    let mut inside = pin!(wheel.deadline(ms(100), pending::<()>()));
    let mut outside = pin!(wheel.deadline(ms(100), pending::<()>()));
    budget.enter(|| {
        assert!(poll(inside.as_mut()).is_pending());
        assert!(poll(outside.as_mut()).is_pending());
    });
    wheel.advance(ms(10));
    let fired_inside = budget.enter(|| poll(inside.as_mut()));
    let Poll::Ready(Err(inside)) = fired_inside else {
        panic!("not cut to the budget: {fired_inside:?}");
    };
    assert!(inside.is_budget());
    assert_eq!(inside.name(), Some("checkout"));
    let Poll::Ready(Err(outside)) = poll(outside.as_mut()) else {
        panic!("not cut to the budget");
    };
    assert!(outside.is_budget());
    assert_eq!(outside.duration(), ms(10));
    assert_eq!(outside.name(), None, "no budget in force where it fired");
}

#[cfg(feature = "std")]
#[test]
fn later_budget_of_same_length_lends_no_name() {
    let wheel = support::fixed::<4>();
    let ten = ms(10);
    let first = Budget::starting_now(&wheel, ten).unwrap().named("a");
    let mut d = pin!(wheel.deadline(ms(100), pending::<()>()));
    first.enter(|| assert!(poll(d.as_mut()).is_pending()));
    wheel.advance(ms(5));
    let later = Budget::starting_now(&wheel, ten).unwrap().named("b");
    wheel.advance(ms(5));
    let fired = later.enter(|| poll(d.as_mut()));
    let Poll::Ready(Err(elapsed)) = fired else {
        panic!("not cut to the first budget: {fired:?}");
    };
    assert!(elapsed.is_budget());
    assert_eq!(elapsed.name(), None);
}
