//! The ambient budget lends its name only to the deadlines it cut.

use core::future::{Future, pending};
use core::pin::pin;
use core::task::{Context, Poll, Waker};
use core::time::Duration;

use super::{Budget, ambient};
use crate::{Fixed, ManualClock, Wheel};

#[test]
fn ambient_budget_names_the_deadline_it_cut() {
    let wheel: Wheel<ManualClock, Fixed<4>> =
        Wheel::fixed(ManualClock::new(), Duration::from_millis(1));
    let budget = Budget::starting_now(&wheel, Duration::from_millis(10))
        .unwrap()
        .named("checkout");
    let mut cx = Context::from_waker(Waker::noop());
    let mut inside = pin!(wheel.deadline(Duration::from_millis(100), pending::<()>()));
    let mut outside = pin!(wheel.deadline(Duration::from_millis(100), pending::<()>()));
    {
        let _scope = ambient::Scope::enter(budget);
        assert!(inside.as_mut().poll(&mut cx).is_pending());
        assert!(outside.as_mut().poll(&mut cx).is_pending());
    }
    wheel.advance(Duration::from_millis(10));
    let fired_inside = {
        let _scope = ambient::Scope::enter(budget);
        inside.as_mut().poll(&mut cx)
    };
    let Poll::Ready(Err(inside)) = fired_inside else {
        panic!("not cut to the budget: {fired_inside:?}");
    };
    assert!(inside.is_budget());
    assert_eq!(inside.name(), Some("checkout"));
    let Poll::Ready(Err(outside)) = outside.as_mut().poll(&mut cx) else {
        panic!("not cut to the budget");
    };
    assert!(outside.is_budget());
    assert_eq!(outside.duration(), Duration::from_millis(10));
    assert_eq!(outside.name(), None, "no budget in force where it fired");
}

#[test]
fn later_budget_of_same_length_lends_no_name() {
    let wheel: Wheel<ManualClock, Fixed<4>> =
        Wheel::fixed(ManualClock::new(), Duration::from_millis(1));
    let ten = Duration::from_millis(10);
    let first = Budget::starting_now(&wheel, ten).unwrap().named("a");
    let mut cx = Context::from_waker(Waker::noop());
    let mut d = pin!(wheel.deadline(Duration::from_millis(100), pending::<()>()));
    {
        let _scope = ambient::Scope::enter(first);
        assert!(d.as_mut().poll(&mut cx).is_pending());
    }
    wheel.advance(Duration::from_millis(5));
    let later = Budget::starting_now(&wheel, ten).unwrap().named("b");
    wheel.advance(Duration::from_millis(5));
    let fired = {
        let _scope = ambient::Scope::enter(later);
        d.as_mut().poll(&mut cx)
    };
    let Poll::Ready(Err(elapsed)) = fired else {
        panic!("not cut to the first budget: {fired:?}");
    };
    assert!(elapsed.is_budget());
    assert_eq!(elapsed.name(), None);
}
