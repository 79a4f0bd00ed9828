//! Outcomes of named deadlines: exactly one per deadline, what its caller saw, under the
//! races of docs/design.md rule 5 (complete at the fire, drop at the fire, reset then
//! fire), on a manual clock. Unnamed deadlines report nothing.
#![cfg(feature = "alloc")]

mod support;

use core::pin::pin;
use core::task::Poll;
use core::time::Duration;
use std::cell::RefCell;

use punctual_core::{Outcome, OutcomeKind, set_outcome_hook};
use support::{CountingWaker, ProbeState, fixed, is_elapsed, ms};

thread_local! {
    static SEEN: RefCell<Vec<Outcome>> = const { RefCell::new(Vec::new()) };
}

fn record(outcome: &Outcome) {
    SEEN.with(|seen| seen.borrow_mut().push(*outcome));
}

/// The outcomes reported on this thread while `f` ran. Each test runs on its own thread,
/// and the hook only records on the thread that ends the deadline.
fn outcomes(f: impl FnOnce()) -> Vec<Outcome> {
    set_outcome_hook(Some(record));
    SEEN.with(|seen| seen.borrow_mut().clear());
    f();
    SEEN.with(|seen| seen.borrow_mut().drain(..).collect())
}

fn one(f: impl FnOnce()) -> Outcome {
    let seen = outcomes(f);
    assert_eq!(seen.len(), 1, "exactly one outcome: {seen:?}");
    seen[0]
}

#[test]
fn ready_at_first_poll_is_completed_with_no_time_used() {
    let wheel = fixed::<4>();
    let o = one(|| {
        let d = pin!(wheel.deadline(ms(10), async { 1 }).named("ready"));
        assert_eq!(support::poll(d), Poll::Ready(Ok(1)));
    });
    assert_eq!(
        o,
        Outcome::new(
            "ready",
            OutcomeKind::Completed,
            Some(ms(10)),
            Duration::ZERO
        )
    );
}

#[test]
fn complete_at_the_fire_is_completed_once() {
    let wheel = fixed::<4>();
    let probe = ProbeState::default();
    let o = one(|| {
        let w = CountingWaker::new();
        let mut d = pin!(wheel.deadline(ms(10), probe.probe()).named("race"));
        assert!(w.poll(d.as_mut()).is_pending());
        // The clock is at the deadline, the wheel not yet turned: the output wins.
        wheel.clock().advance(ms(10));
        probe.set_ready();
        assert_eq!(w.poll(d.as_mut()), Poll::Ready(Ok(7)));
        wheel.advance(Duration::ZERO);
    });
    assert_eq!(o.kind, OutcomeKind::Completed);
    assert_eq!(o.used, ms(10));
    assert_eq!(o.limit, Some(ms(10)));
}

#[test]
fn fire_decided_before_the_output_is_elapsed_once() {
    let wheel = fixed::<4>();
    let probe = ProbeState::default();
    let o = one(|| {
        let w = CountingWaker::new();
        let mut d = pin!(wheel.deadline(ms(10), probe.probe()).named("race"));
        assert!(w.poll(d.as_mut()).is_pending());
        wheel.advance(ms(10));
        probe.set_ready();
        is_elapsed(w.poll(d.as_mut()));
    });
    assert_eq!(o.kind, OutcomeKind::Elapsed);
    assert_eq!(o.limit, Some(ms(10)));
    assert!(o.used >= ms(10), "never early: {o:?}");
}

#[test]
fn drop_at_the_fire_is_dropped_not_elapsed() {
    let wheel = fixed::<4>();
    let probe = ProbeState::default();
    let o = one(|| {
        let w = CountingWaker::new();
        let mut d = Box::pin(wheel.deadline(ms(10), probe.probe()).named("dropped"));
        assert!(w.poll(d.as_mut()).is_pending());
        wheel.advance(ms(10));
        assert_eq!(w.wakes(), 1, "fired");
        drop(d);
    });
    assert_eq!(o.kind, OutcomeKind::Dropped);
    assert_eq!(o.used, ms(10));
    assert!(probe.dropped());
}

#[test]
fn dropped_before_the_first_poll_used_no_time() {
    let wheel = fixed::<4>();
    let o = one(|| {
        drop(
            wheel
                .deadline(ms(10), core::future::pending::<()>())
                .named("idle"),
        )
    });
    assert_eq!(
        o,
        Outcome::new("idle", OutcomeKind::Dropped, Some(ms(10)), Duration::ZERO)
    );
}

#[test]
fn reset_then_fire_is_one_elapsed_timed_from_the_first_poll() {
    let wheel = fixed::<4>();
    let o = one(|| {
        let w = CountingWaker::new();
        let mut d = pin!(
            wheel
                .deadline(ms(10), core::future::pending::<()>())
                .named("lease")
        );
        assert!(w.poll(d.as_mut()).is_pending());
        wheel.advance(ms(8));
        assert!(d.as_mut().reset(wheel.now() + ms(10)));
        assert!(w.poll(d.as_mut()).is_pending());
        wheel.advance(ms(10));
        is_elapsed(w.poll(d.as_mut()));
    });
    assert_eq!(o.kind, OutcomeKind::Elapsed);
    assert_eq!(o.limit, None, "reset to an instant");
    assert!(o.used >= ms(18), "from the first pending poll: {o:?}");
}

#[test]
fn reset_after_the_fire_stays_one_elapsed() {
    let wheel = fixed::<4>();
    let seen = outcomes(|| {
        let w = CountingWaker::new();
        let mut d = pin!(
            wheel
                .deadline(ms(10), core::future::pending::<()>())
                .named("late")
        );
        assert!(w.poll(d.as_mut()).is_pending());
        wheel.advance(ms(10));
        assert!(!d.as_mut().reset(wheel.now() + ms(10)), "fired first");
        is_elapsed(w.poll(d.as_mut()));
    });
    assert_eq!(seen.len(), 1);
    assert_eq!(seen[0].kind, OutcomeKind::Elapsed);
}

#[test]
fn named_result_reports_succeeded_and_failed() {
    let wheel = fixed::<4>();
    let seen = outcomes(|| {
        let ok = pin!(
            wheel
                .deadline(ms(10), async { Ok::<u8, u8>(1) })
                .named_result("r")
        );
        assert_eq!(support::poll(ok), Poll::Ready(Ok(Ok(1))));
        let err = pin!(
            wheel
                .deadline(ms(10), async { Err::<u8, u8>(2) })
                .named_result("r")
        );
        assert_eq!(support::poll(err), Poll::Ready(Ok(Err(2))));
    });
    let kinds: Vec<_> = seen.iter().map(|o| o.kind).collect();
    assert_eq!(kinds, [OutcomeKind::Succeeded, OutcomeKind::Failed]);
}

#[test]
fn into_inner_is_dropped() {
    let wheel = fixed::<4>();
    let o = one(|| {
        drop(
            wheel
                .deadline(ms(10), async { 1 })
                .named("taken")
                .into_inner(),
        )
    });
    assert_eq!(o.kind, OutcomeKind::Dropped);
}

#[test]
fn unnamed_deadlines_report_nothing() {
    let wheel = fixed::<4>();
    let probe = ProbeState::default();
    let seen = outcomes(|| {
        let w = CountingWaker::new();
        let mut d = pin!(wheel.deadline(ms(10), probe.probe()));
        assert!(w.poll(d.as_mut()).is_pending());
        wheel.advance(ms(10));
        is_elapsed(w.poll(d.as_mut()));
        drop(wheel.deadline(ms(10), async {}));
        let ready = pin!(wheel.deadline(ms(10), async { 1 }));
        assert!(support::poll(ready).is_ready());
    });
    assert!(seen.is_empty(), "{seen:?}");
}

#[test]
fn a_budget_that_cuts_it_short_is_elapsed_with_the_budget_limit() {
    let wheel = fixed::<4>();
    let o = one(|| {
        let w = CountingWaker::new();
        let budget = punctual_core::Budget::starting_now(&wheel, ms(5)).unwrap();
        let mut d = pin!(
            wheel
                .deadline(ms(10), core::future::pending::<()>())
                .named("inner")
                .within(budget)
        );
        assert!(w.poll(d.as_mut()).is_pending());
        wheel.advance(ms(5));
        assert!(matches!(w.poll(d.as_mut()), Poll::Ready(Err(e)) if e.is_budget()));
    });
    assert_eq!(o.kind, OutcomeKind::Elapsed);
    assert_eq!(o.limit, Some(ms(5)));
}

#[test]
fn a_named_budget_reports_completed_elapsed_and_dropped() {
    use punctual_core::Budgeted;
    let wheel = fixed::<4>();
    let seen = outcomes(|| {
        let w = CountingWaker::new();
        let ok = pin!(Budgeted::new(async { 1 }, &wheel, ms(10)).named("b"));
        assert_eq!(w.poll(ok), Poll::Ready(Ok(1)));
        let mut late =
            pin!(Budgeted::new(core::future::pending::<()>(), &wheel, ms(10)).named("b"));
        assert!(w.poll(late.as_mut()).is_pending());
        wheel.advance(ms(10));
        assert!(matches!(w.poll(late.as_mut()), Poll::Ready(Err(_))));
        let mut dropped =
            Box::pin(Budgeted::new(core::future::pending::<()>(), &wheel, ms(10)).named("b"));
        assert!(w.poll(dropped.as_mut()).is_pending());
        wheel.advance(ms(10));
        drop(dropped);
        // Unnamed: nothing.
        let unnamed = pin!(Budgeted::new(async { 1 }, &wheel, ms(10)));
        assert!(w.poll(unnamed).is_ready());
    });
    let kinds: Vec<_> = seen.iter().map(|o| (o.kind, o.used)).collect();
    assert_eq!(
        kinds,
        [
            (OutcomeKind::Completed, Duration::ZERO),
            (OutcomeKind::Elapsed, ms(10)),
            (OutcomeKind::Dropped, ms(10)),
        ]
    );
    assert!(
        seen.iter()
            .all(|o| o.limit == Some(ms(10)) && o.name == "b")
    );
}

#[test]
fn a_budget_lent_to_with_budget_is_reported_by_its_owner_only() {
    use punctual_core::{Budget, Budgeted};
    let wheel = fixed::<4>();
    let seen = outcomes(|| {
        let budget = Budget::starting_now(&wheel, ms(10)).unwrap().named("owner");
        let w = CountingWaker::new();
        let mut lent = Box::pin(Budgeted::with_budget(
            core::future::pending::<()>(),
            &wheel,
            budget,
        ));
        assert!(w.poll(lent.as_mut()).is_pending());
        drop(lent);
    });
    assert!(seen.is_empty(), "{seen:?}");
}

#[test]
fn keep_on_elapsed_hands_the_future_back_and_reports_once() {
    let wheel = fixed::<4>();
    let probe = ProbeState::default();
    let o = one(|| {
        let w = CountingWaker::new();
        let mut d = pin!(
            wheel
                .deadline(ms(10), probe.probe())
                .named("kept")
                .keep_on_elapsed()
        );
        assert!(w.poll(d.as_mut()).is_pending());
        wheel.advance(ms(10));
        let Poll::Ready(Err(abandoned)) = w.poll(d.as_mut()) else {
            panic!("expected the future back")
        };
        assert_eq!(abandoned.elapsed.name(), Some("kept"));
        assert!(!probe.dropped(), "handed back, not dropped");
        let mut kept = abandoned.future;
        probe.set_ready();
        assert_eq!(w.poll(core::pin::Pin::new(&mut kept)), Poll::Ready(7));
    });
    assert_eq!(o.kind, OutcomeKind::Elapsed);
}

#[test]
fn keep_on_elapsed_in_time_is_ok_and_dropped_drops() {
    let wheel = fixed::<4>();
    let probe = ProbeState::default();
    let seen = outcomes(|| {
        let w = CountingWaker::new();
        let mut d = pin!(
            wheel
                .deadline(ms(10), probe.probe())
                .named("k")
                .keep_on_elapsed()
        );
        assert!(w.poll(d.as_mut()).is_pending());
        wheel.clock().advance(ms(10)); // at the fire, not yet turned: the output wins
        probe.set_ready();
        assert!(matches!(w.poll(d.as_mut()), Poll::Ready(Ok(7))));
        let other = ProbeState::default();
        let mut d = Box::pin(
            wheel
                .deadline(ms(10), other.probe())
                .named("k")
                .keep_on_elapsed(),
        );
        assert!(w.poll(d.as_mut()).is_pending());
        drop(d);
        assert!(other.dropped());
    });
    let kinds: Vec<_> = seen.iter().map(|o| o.kind).collect();
    assert_eq!(kinds, [OutcomeKind::Completed, OutcomeKind::Dropped]);
}

/// An outcome made by hand, its fraction used, its label; reported by hand once.
#[test]
fn an_outcome_by_hand() {
    let o = Outcome::new("pricing", OutcomeKind::Elapsed, Some(ms(800)), ms(801));
    assert_eq!(o.fraction_used(), Some(801.0 / 800.0));
    assert_eq!(OutcomeKind::Elapsed.as_str(), "elapsed");
    let refused = Outcome::new("refused", OutcomeKind::Elapsed, Some(ms(5)), Duration::ZERO);
    let seen = one(|| punctual_core::report_outcome(&refused));
    assert_eq!(seen, refused);
}
