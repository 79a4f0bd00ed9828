//! Resets of sleeps and deadlines on the manual clock: before the start, while armed (later
//! and earlier), after a fire not yet seen, after completion; never early relative to the
//! time in force, and no entry kept or lost.

#![cfg(feature = "std")]

mod support;

use core::future::{Future, pending};
use core::pin::pin;
use core::sync::atomic::Ordering;
use core::task::{Context, Poll, Waker};
use core::time::Duration;

use punctual_core::{Fixed, ManualClock, Reading, Wheel};
use support::{CountingWaker, ms};

type TestWheel = Wheel<ManualClock, Fixed<4>>;

fn at(n: u64) -> Reading {
    Reading::ZERO + ms(n)
}

fn wheel() -> TestWheel {
    Wheel::fixed(ManualClock::new(), ms(1))
}

fn noop() -> Context<'static> {
    Context::from_waker(Waker::noop())
}

#[test]
fn sleep_reset_before_start() {
    let wheel = wheel();
    let mut sleep = pin!(wheel.sleep(ms(5)));
    sleep.as_mut().reset(at(20));
    assert!(!sleep.is_started());
    assert!(sleep.as_mut().poll(&mut noop()).is_pending());
    wheel.advance(ms(19));
    assert!(sleep.as_mut().poll(&mut noop()).is_pending());
    wheel.advance(ms(1));
    assert!(sleep.as_mut().poll(&mut noop()).is_ready());
}

#[test]
fn sleep_reset_later_while_armed() {
    let wheel = wheel();
    let mut sleep = pin!(wheel.sleep(ms(10)));
    assert!(sleep.as_mut().poll(&mut noop()).is_pending());
    sleep.as_mut().reset(at(30));
    wheel.advance(ms(10));
    assert!(sleep.as_mut().poll(&mut noop()).is_pending(), "old time");
    wheel.advance(ms(19));
    assert!(sleep.as_mut().poll(&mut noop()).is_pending());
    wheel.advance(ms(1));
    assert!(sleep.as_mut().poll(&mut noop()).is_ready());
}

#[test]
fn sleep_reset_earlier_while_armed() {
    let wheel = wheel();
    let mut sleep = pin!(wheel.sleep(ms(100)));
    assert!(sleep.as_mut().poll(&mut noop()).is_pending());
    sleep.as_mut().reset(at(3));
    assert!(sleep.as_mut().poll(&mut noop()).is_pending());
    wheel.advance(ms(3));
    assert!(sleep.as_mut().poll(&mut noop()).is_ready());
}

/// A reset to a time already past completes at the next poll, arming nothing.
#[test]
fn sleep_reset_to_the_past_is_ready() {
    let wheel = wheel();
    wheel.advance(ms(50));
    let mut sleep = pin!(wheel.sleep(ms(100)));
    assert!(sleep.as_mut().poll(&mut noop()).is_pending());
    sleep.as_mut().reset(at(10));
    assert!(sleep.as_mut().poll(&mut noop()).is_ready());
    wheel.turn();
    assert_eq!(wheel.occupied(), 0);
}

#[test]
fn completed_sleep_reset_runs_again() {
    let wheel = wheel();
    let mut sleep = pin!(wheel.sleep(ms(1)));
    assert!(sleep.as_mut().poll(&mut noop()).is_pending());
    wheel.advance(ms(1));
    assert!(sleep.as_mut().poll(&mut noop()).is_ready());
    sleep.as_mut().reset(at(5));
    assert!(sleep.as_mut().poll(&mut noop()).is_pending());
    wheel.advance(ms(4));
    assert!(sleep.as_mut().poll(&mut noop()).is_ready());
}

/// The old time fired, unseen: the reset drops that fire; the new time is in force.
#[test]
fn sleep_reset_after_unseen_fire() {
    let wheel = wheel();
    let mut sleep = pin!(wheel.sleep(ms(2)));
    assert!(sleep.as_mut().poll(&mut noop()).is_pending());
    wheel.advance(ms(2));
    sleep.as_mut().reset(at(10));
    assert!(sleep.as_mut().poll(&mut noop()).is_pending());
    wheel.advance(ms(8));
    assert!(sleep.as_mut().poll(&mut noop()).is_ready());
    wheel.turn();
    assert_eq!(wheel.occupied(), 0);
}

/// As in a `select!` loop: activity resets the sleep, the loop polls it again, and the
/// task is woken at the new time; an old time may wake it, never end it.
#[test]
fn reset_and_poll_again_wakes_at_new_time() {
    let wheel = wheel();
    let wakes = CountingWaker::new();
    let mut cx = Context::from_waker(&wakes.waker);
    let mut idle = pin!(wheel.sleep(ms(10)));
    for _ in 0..5 {
        assert!(idle.as_mut().poll(&mut cx).is_pending());
        wheel.advance(ms(6));
        idle.as_mut().reset(wheel.now() + ms(10));
    }
    // Moved later each time, the entry stays: each old time that passes wakes the task
    // once (as a moved tokio sleep may), and the poll arms the rest. Never the end.
    assert!(idle.as_mut().poll(&mut cx).is_pending());
    let old_wakes = wakes.wakes();
    assert!(old_wakes <= 5, "an old time woke more than once");
    wheel.advance(ms(9));
    assert!(
        idle.as_mut().poll(&mut cx).is_pending(),
        "ended before its new time"
    );
    let before_end = wakes.wakes();
    wheel.advance(ms(1));
    assert_eq!(wakes.wakes(), before_end + 1, "not woken at the new time");
    assert!(idle.as_mut().poll(&mut cx).is_ready());
}

/// A later reset keeps the entry: the old time's fire is seen by the poll, which arms the
/// rest; the sleep ends at the new time, never at the old.
#[test]
fn later_reset_keeps_the_entry() {
    let wheel = wheel();
    let mut cx = noop();
    let mut sleep = pin!(wheel.sleep(ms(10)));
    assert!(sleep.as_mut().poll(&mut cx).is_pending());
    wheel.turn();
    sleep.as_mut().reset(at(30));
    assert_eq!(wheel.occupied(), 1, "a later reset let go of its entry");
    wheel.advance(ms(10)); // the old time fires
    assert!(
        sleep.as_mut().poll(&mut cx).is_pending(),
        "ended at the old time"
    );
    wheel.advance(ms(19));
    assert!(sleep.as_mut().poll(&mut cx).is_pending(), "ended early");
    wheel.advance(ms(1));
    assert!(sleep.as_mut().poll(&mut cx).is_ready());
    wheel.turn();
    assert_eq!(wheel.occupied(), 0);
}

/// Resets in a loop keep no entry: a cancelled entry is free again at the next turn, so
/// a sleep reset again and again needs at most two, and never runs degraded on them.
#[test]
fn resets_keep_no_entry() {
    let wheel: Wheel<ManualClock, Fixed<2>> = Wheel::fixed(ManualClock::new(), ms(1));
    let mut sleep = pin!(wheel.sleep(ms(10)));
    for n in 0..200 {
        assert!(sleep.as_mut().poll(&mut noop()).is_pending());
        if n % 3 == 0 {
            wheel.turn(); // the driver takes the entry in: the reset cancels it
        }
        sleep.as_mut().reset(wheel.now() + ms(10));
    }
    assert_eq!(wheel.degraded_polls(), 0);
    wheel.turn();
    assert_eq!(wheel.occupied(), 0);
}

#[test]
fn deadline_reset_later_while_armed() {
    let wheel = wheel();
    let mut deadline = pin!(wheel.deadline(ms(10), pending::<()>()));
    assert!(deadline.as_mut().poll(&mut noop()).is_pending());
    wheel.advance(ms(9));
    assert!(deadline.as_mut().reset(at(25)));
    wheel.advance(ms(15));
    assert!(deadline.as_mut().poll(&mut noop()).is_pending());
    wheel.advance(ms(1));
    let Poll::Ready(Err(elapsed)) = deadline.as_mut().poll(&mut noop()) else {
        panic!("not elapsed at the new time");
    };
    assert_eq!(elapsed.instant(), Some(at(25)));
}

#[test]
fn deadline_reset_earlier_while_armed() {
    let wheel = wheel();
    let mut deadline = pin!(wheel.deadline(ms(100), pending::<()>()));
    assert!(deadline.as_mut().poll(&mut noop()).is_pending());
    assert!(deadline.as_mut().reset(at(4)));
    assert!(deadline.as_mut().poll(&mut noop()).is_pending());
    wheel.advance(ms(4));
    assert!(matches!(
        deadline.as_mut().poll(&mut noop()),
        Poll::Ready(Err(_))
    ));
}

/// Decided once: a fire not yet seen wins over a reset, which moves nothing.
#[test]
fn deadline_reset_after_fire_keeps_it() {
    let wheel = wheel();
    let mut deadline = pin!(wheel.deadline(ms(5), pending::<()>()));
    assert!(deadline.as_mut().poll(&mut noop()).is_pending());
    wheel.advance(ms(5));
    assert!(!deadline.as_mut().reset(at(50)));
    let Poll::Ready(Err(elapsed)) = deadline.as_mut().poll(&mut noop()) else {
        panic!("the fire was lost");
    };
    assert_eq!(elapsed.duration(), ms(5));
    wheel.turn();
    assert_eq!(wheel.occupied(), 0);
}

#[test]
fn deadline_reset_before_start_and_after_end() {
    let wheel = wheel();
    let mut deadline = pin!(wheel.deadline(ms(5), async { 7 }));
    assert!(deadline.as_mut().reset(at(1)));
    assert_eq!(deadline.as_mut().poll(&mut noop()), Poll::Ready(Ok(7)));
    assert!(!deadline.as_mut().reset(at(9)), "completed");
}

/// A deadline running degraded on a full wheel moves too, and never fires early.
#[test]
fn degraded_deadline_reset() {
    let wheel: Wheel<ManualClock, Fixed<1>> = Wheel::fixed(ManualClock::new(), ms(1));
    let mut hog = pin!(wheel.sleep(Duration::from_secs(60)));
    assert!(hog.as_mut().poll(&mut noop()).is_pending());
    let mut deadline = pin!(wheel.deadline(ms(5), pending::<()>()));
    assert!(deadline.as_mut().poll(&mut noop()).is_pending());
    assert!(deadline.as_mut().reset(at(20)));
    wheel.advance(ms(19));
    assert!(deadline.as_mut().poll(&mut noop()).is_pending());
    wheel.advance(ms(1));
    assert!(matches!(
        deadline.as_mut().poll(&mut noop()),
        Poll::Ready(Err(_))
    ));
}

/// Whether the waker of [`PANICKY`] panics when dropped.
static PANIC_ON_DROP: core::sync::atomic::AtomicBool = core::sync::atomic::AtomicBool::new(false);

static PANICKY: core::task::RawWakerVTable =
    core::task::RawWakerVTable::new(clone_panicky, |_| {}, |_| {}, drop_panicky);

fn clone_panicky(_: *const ()) -> core::task::RawWaker {
    core::task::RawWaker::new(core::ptr::null(), &PANICKY)
}

fn drop_panicky(_: *const ()) {
    if PANIC_ON_DROP.swap(false, Ordering::SeqCst) {
        panic!("a waker's drop panicked");
    }
}

/// A reset whose release drops a waker that panics: the entry is let go, and a poll after
/// the panic panics too, rather than wait for a time no entry holds.
#[test]
fn reset_that_panics_poisons() {
    let wheel = wheel();
    // SAFETY: the vtable's functions do nothing with the (null) data pointer.
    let waker = unsafe { Waker::from_raw(clone_panicky(core::ptr::null())) };
    let mut sleep = std::boxed::Box::pin(wheel.sleep(ms(10)));
    assert!(
        sleep
            .as_mut()
            .poll(&mut Context::from_waker(&waker))
            .is_pending()
    );
    wheel.turn(); // taken in: the reset cancels, and drops the waker it held
    PANIC_ON_DROP.store(true, Ordering::SeqCst);
    // Earlier: the entry goes (a later reset would keep it).
    let reset = std::panic::catch_unwind(core::panic::AssertUnwindSafe(|| {
        sleep.as_mut().reset(at(5));
    }));
    assert!(reset.is_err(), "the waker's drop did not panic");
    let poll = std::panic::catch_unwind(core::panic::AssertUnwindSafe(|| {
        let _ = sleep.as_mut().poll(&mut noop());
    }));
    assert!(poll.is_err(), "a poll after a panicked reset did not panic");
    drop(sleep);
    wheel.turn();
    assert_eq!(wheel.occupied(), 0);
}

/// As tokio's: a completed sleep stays complete, polled again, until a reset.
#[test]
fn completed_sleep_is_ready_again() {
    let wheel = wheel();
    let mut sleep = pin!(wheel.sleep(ms(2)));
    assert!(sleep.as_mut().poll(&mut noop()).is_pending());
    wheel.advance(ms(2));
    for _ in 0..3 {
        assert!(sleep.as_mut().poll(&mut noop()).is_ready());
        assert!(sleep.is_elapsed());
    }
    sleep.as_mut().reset(at(600));
    assert!(!sleep.is_elapsed());
    assert!(sleep.as_mut().poll(&mut noop()).is_pending());
    assert!(sleep.as_mut().poll(&mut noop()).is_pending());
}

/// `is_elapsed`: false before the first poll and while pending, true once fired (before
/// the poll that sees it) and after; a later reset's old fire does not count.
#[test]
fn is_elapsed_follows_the_fire() {
    let wheel = wheel();
    let mut sleep = pin!(wheel.sleep_until(at(0)));
    assert!(!sleep.is_elapsed());
    assert!(sleep.as_mut().poll(&mut noop()).is_ready());
    assert!(sleep.is_elapsed());

    let mut sleep = pin!(wheel.sleep(ms(5)));
    assert!(sleep.as_mut().poll(&mut noop()).is_pending());
    assert!(!sleep.is_elapsed());
    sleep.as_mut().reset(at(10));
    wheel.advance(ms(5));
    wheel.turn();
    assert!(
        !sleep.is_elapsed(),
        "the old time fired, the new one has not come"
    );
    wheel.advance(ms(5));
    assert!(
        sleep.is_elapsed(),
        "the new time came, before the poll that sees it"
    );
    assert!(sleep.as_mut().poll(&mut noop()).is_ready());
    assert!(sleep.is_elapsed());
}

/// `deadline`: the time in force before the start, while armed, after a reset either
/// way, and after completion.
#[test]
fn deadline_is_the_time_in_force() {
    let wheel = wheel();
    wheel.advance(ms(3));
    let mut sleep = pin!(wheel.sleep(ms(10)));
    assert_eq!(sleep.deadline(), at(13), "before the start: from now");
    wheel.advance(ms(1));
    assert!(sleep.as_mut().poll(&mut noop()).is_pending());
    assert_eq!(sleep.deadline(), at(14), "counted from the first poll");
    sleep.as_mut().reset(at(30));
    assert_eq!(sleep.deadline(), at(30));
    sleep.as_mut().reset(at(20));
    assert_eq!(sleep.deadline(), at(20));
    assert!(sleep.as_mut().poll(&mut noop()).is_pending());
    wheel.advance(ms(20));
    assert!(sleep.as_mut().poll(&mut noop()).is_ready());
    assert_eq!(sleep.deadline(), at(20), "complete: the time it ended at");

    let mut past = pin!(wheel.sleep_until(at(1)));
    assert!(past.as_mut().poll(&mut noop()).is_ready());
    assert_eq!(past.deadline(), at(1));

    let mut never = pin!(wheel.sleep(Duration::MAX));
    assert!(never.as_mut().poll(&mut noop()).is_pending());
    assert_eq!(never.deadline(), Reading::END);
}
