//! Panics around a deadline, each a bug of someone else's: the entry is released once,
//! the wheel keeps working, nothing leaks.
//!
//! * **An inner future that panics** while polled, or while dropped (by the fire, by its
//!   completion, by a drop of the deadline).
//! * **A waker that panics** in `wake` when the wheel fires its deadline (the panic reaches
//!   the turning thread, and the wheel keeps firing everything else), in `drop` when
//!   replaced or dropped with its cancelled deadline, in `clone` as a deadline arms or as a
//!   waker slot registers it.
//! * **A driver's waker that panics** when an arm or a turn out of idle wakes it: the
//!   other drivers are still woken.
//! * **A deadline polled again after its poll panicked** panics as documented.
#![cfg(all(feature = "alloc", feature = "stats"))]

mod support;

use core::future::{Future, pending, ready};
use core::pin::{Pin, pin};
use core::sync::atomic::{AtomicBool, Ordering::SeqCst};
use core::task::{Context, Poll, Waker};
use core::time::Duration;
use std::sync::Arc;
use std::task::Wake;
use std::thread;

use punctual_core::{Clock, Fixed, Growable, ManualClock, Reading, Storage, Wheel};
use support::{CountingWaker, ProbeState, TICK, is_elapsed, ms, ns, quietly, ticks};

#[test]
fn panicking_inner_releases_entry_wheel_works_on() {
    fn check<S: Storage>(wheel: &Wheel<ManualClock, S>) {
        let w = CountingWaker::new();

        // At the first poll, before anything is armed.
        let bomb = ProbeState::default();
        bomb.panic_on_poll();
        let mut d = Box::pin(wheel.deadline(ms(10), bomb.probe()));
        assert!(quietly(|| w.poll(d.as_mut())).is_err());
        assert_eq!(wheel.occupied(), 0, "armed by a panicking first poll");
        drop(d);
        assert_eq!(bomb.drops(), 1, "the inner future, once");

        // At a later poll: the deadline is armed, and still owns its entry after the
        // panic; dropping it (as an executor drops a panicked task) releases it.
        let bomb = ProbeState::default();
        let mut d = Box::pin(wheel.deadline(ms(10), bomb.probe()));
        assert!(w.poll(d.as_mut()).is_pending());
        assert_eq!(wheel.occupied(), 1);
        bomb.panic_on_poll();
        assert!(quietly(|| w.poll(d.as_mut())).is_err());
        drop(d);
        let _ = wheel.turn();
        assert_eq!(wheel.occupied(), 0, "a panicked deadline's entry leaked");

        // The deadline owned by the panicking frame: dropped while unwinding.
        let bomb = ProbeState::default();
        let bomb_handle = bomb.probe();
        assert!(
            quietly(|| {
                let mut d = Box::pin(wheel.deadline(ms(10), bomb_handle));
                assert!(w.poll(d.as_mut()).is_pending());
                bomb.panic_on_poll();
                let _ = w.poll(d.as_mut());
            })
            .is_err()
        );
        let _ = wheel.turn();
        assert_eq!(wheel.occupied(), 0, "an entry leaked through unwinding");

        // The inner future panics in its destructor, run by the fire: the entry has been
        // released already, and the inner future is dropped once.
        let bomb = ProbeState::default();
        let mut d = Box::pin(wheel.deadline(ms(10), bomb.probe()));
        assert!(w.poll(d.as_mut()).is_pending());
        bomb.panic_on_drop();
        wheel.advance(ms(10));
        assert!(quietly(|| w.poll(d.as_mut())).is_err());
        assert_eq!(wheel.occupied(), 0, "the fired entry leaked");
        drop(d);
        assert_eq!(bomb.drops(), 1, "dropped twice, or never");

        // The inner future completes, and panics in its destructor: dropped once, and the
        // entry is released when the deadline is dropped (as the task is).
        let bomb = ProbeState::default();
        let mut d = Box::pin(wheel.deadline(ms(10), bomb.probe()));
        assert!(w.poll(d.as_mut()).is_pending());
        bomb.set_ready();
        bomb.panic_on_drop();
        assert!(quietly(|| w.poll(d.as_mut())).is_err());
        drop(d);
        let _ = wheel.turn();
        assert_eq!(wheel.occupied(), 0, "the completed deadline's entry leaked");
        assert_eq!(bomb.drops(), 1, "dropped twice, or never");

        // A pending deadline dropped, whose inner future panics in its destructor: the
        // entry is released all the same, and the inner future dropped once.
        let bomb = ProbeState::default();
        let mut d = Box::pin(wheel.deadline(ms(10), bomb.probe()));
        assert!(w.poll(d.as_mut()).is_pending());
        bomb.panic_on_drop();
        assert!(quietly(move || drop(d)).is_err());
        let _ = wheel.turn();
        assert_eq!(wheel.occupied(), 0, "the dropped deadline's entry leaked");
        assert_eq!(bomb.drops(), 1, "dropped twice, or never");

        // The same, on a timer that fires at the first pending poll.
        let bomb = ProbeState::default();
        bomb.panic_on_drop();
        let mut d = Box::pin(wheel.deadline(Duration::ZERO, bomb.probe()));
        assert!(quietly(|| w.poll(d.as_mut())).is_err());
        drop(d);
        assert_eq!(bomb.drops(), 1);

        // The wheel still works: a deadline fires on time, a met one is Ok.
        let mut d = Box::pin(wheel.deadline(ms(3), pending::<()>()));
        let mut met = Box::pin(wheel.deadline(ms(3), ready(5)));
        assert!(w.poll(d.as_mut()).is_pending());
        assert_eq!(w.poll(met.as_mut()), Poll::Ready(Ok(5)));
        wheel.advance(ms(3) - ns(1));
        assert!(w.poll(d.as_mut()).is_pending());
        wheel.advance(ns(1));
        assert_eq!(is_elapsed(w.poll(d.as_mut())).duration(), ms(3));
        assert_eq!(wheel.occupied(), 0);
        let stats = wheel.stats();
        assert_eq!(stats.armed, stats.fired + stats.cancelled, "{stats}");
    }
    check(&Wheel::<ManualClock, Fixed<2>>::fixed(
        ManualClock::new(),
        TICK,
    ));
    check(&Wheel::<ManualClock, Growable>::growable(
        ManualClock::starting_at(ticks(TICK, (1 << 32) - 7)),
        TICK,
    ));
}

/// A waker whose `wake` panics (a bug in some executor or adapter).
struct PanickingWaker;

impl Wake for PanickingWaker {
    fn wake(self: Arc<Self>) {
        panic!("waker exploded");
    }
}

#[test]
fn waker_panicking_on_fire_does_not_stop_wheel() {
    // The panic reaches the thread that turns the wheel (here the one calling `advance`),
    // like any panic in a waker. But the wheel must keep working for every other
    // deadline: one task's broken waker must not silence the timers of all the others
    // (on the global wheel, every deadline in the process).
    let wheel: Wheel<ManualClock, Fixed<4>> = Wheel::fixed(ManualClock::new(), TICK);
    let boom = Waker::from(Arc::new(PanickingWaker));
    let mut broken = pin!(wheel.sleep(ms(1)));
    assert!(
        broken
            .as_mut()
            .poll(&mut Context::from_waker(&boom))
            .is_pending()
    );
    assert!(
        quietly(|| wheel.advance(ms(1))).is_err(),
        "the wake did not panic"
    );

    let w = CountingWaker::new();
    let mut later = pin!(wheel.sleep(ms(1)));
    assert!(w.poll(later.as_mut()).is_pending());
    wheel.advance(ms(3));
    assert_eq!(
        w.wakes(),
        1,
        "after one waker panicked, the wheel no longer fires anything: {}",
        wheel.stats()
    );
    assert!(w.poll(later.as_mut()).is_ready());
}

#[test]
fn drop_while_wake_waits_behind_panic_frees_entry() {
    // Two deadlines fire in one turn and the first wake panics: the other's entry stays
    // queued, held by the wheel. Its deadline is dropped meanwhile (letting go of its
    // handle), so the turn that wakes the rest must free the entry: on a two-entry wheel,
    // two new deadlines then arm without degrading. (`occupied` cannot tell.)
    let wheel: Wheel<ManualClock, Fixed<2>> = Wheel::fixed(ManualClock::new(), TICK);
    let boom = Waker::from(Arc::new(PanickingWaker));
    let mut a = Box::pin(wheel.sleep(ms(1)));
    let mut b = Box::pin(wheel.sleep(ms(1)));
    assert!(
        a.as_mut()
            .poll(&mut Context::from_waker(&boom))
            .is_pending()
    );
    assert!(
        b.as_mut()
            .poll(&mut Context::from_waker(&boom))
            .is_pending()
    );
    assert!(
        quietly(|| wheel.advance(ms(1))).is_err(),
        "the wake did not panic"
    );
    drop(a);
    drop(b);
    // Wakes the queued one (whose waker panics again).
    assert!(quietly(|| wheel.turn()).is_err(), "no wake was left queued");
    let w = CountingWaker::new();
    let mut c = pin!(wheel.sleep(ms(5)));
    let mut d = pin!(wheel.sleep(ms(5)));
    assert!(w.poll(c.as_mut()).is_pending());
    assert!(w.poll(d.as_mut()).is_pending());
    assert_eq!(
        wheel.degraded_polls(),
        0,
        "an entry was lost: {}",
        wheel.stats()
    );
    wheel.advance(ms(5));
    assert!(w.poll(c.as_mut()).is_ready() && w.poll(d.as_mut()).is_ready());
}

/// A waker whose destructor panics (a bug in some executor).
struct PanicsOnDrop;

impl Wake for PanicsOnDrop {
    fn wake(self: Arc<Self>) {}
}

impl Drop for PanicsOnDrop {
    fn drop(&mut self) {
        if !thread::panicking() {
            panic!("waker dropped");
        }
    }
}

/// Polls `d` once (it arms) with a waker whose drop panics, and lets go of that waker:
/// the entry holds its last clone, so dropping that one panics.
fn poll_leaving_a_bomb<F: Future>(d: Pin<&mut F>) {
    let bomb = Waker::from(Arc::new(PanicsOnDrop));
    assert!(d.poll(&mut Context::from_waker(&bomb)).is_pending());
    drop(bomb);
}

#[test]
fn waker_panicking_on_replace_leaves_one_owner() {
    // Re-polling with another waker drops the old one inside the wheel; its panic unwinds
    // through the deadline's poll. The entry is released exactly once (as the poll
    // unwinds), the deadline is poisoned, and nothing releases the entry again under a
    // later deadline that reused it.
    let wheel: Wheel<ManualClock, Fixed<4>> = Wheel::fixed(ManualClock::new(), TICK);
    let w = CountingWaker::new();
    let mut d = Box::pin(wheel.sleep(ms(50)));
    poll_leaving_a_bomb(d.as_mut());
    wheel.advance(Duration::ZERO); // the driver takes the entry in
    assert!(
        quietly(|| w.poll(d.as_mut())).is_err(),
        "the old waker's drop panics"
    );
    wheel.advance(Duration::ZERO);
    assert_eq!(wheel.occupied(), 0, "released once, as the poll unwound");
    let again = quietly(|| w.poll(d.as_mut())).unwrap_err();
    assert_eq!(
        again.downcast_ref::<&str>(),
        Some(&"a deadline polled again after its poll panicked")
    );

    // Another deadline on the same entry, then the first one dropped: no second release.
    let other_w = CountingWaker::new();
    let mut other = Box::pin(wheel.sleep(ms(100)));
    assert!(other_w.poll(other.as_mut()).is_pending());
    wheel.advance(Duration::ZERO);
    drop(d);
    wheel.advance(Duration::ZERO);
    assert_eq!(wheel.occupied(), 1, "only `other` holds an entry");
    wheel.advance(ms(100));
    assert_eq!(other_w.wakes(), 1, "`other` fired and was woken");
    assert!(other_w.poll(other.as_mut()).is_ready());
    drop(other);
    assert_eq!(wheel.occupied(), 0);
    let stats = wheel.stats();
    assert_eq!(stats.armed, stats.fired + stats.cancelled, "{stats}");
}

#[test]
fn waker_panicking_on_cancel_drop_loses_no_entry() {
    // The entry holds the last clone of a waker whose drop panics; the deadline is
    // dropped (cancelled), once before the driver took its entry in and once after. The
    // panic may reach whoever drops the deadline, but never a turn of the driver, and the
    // wheel's only entry is not lost with it.
    let wheel: Wheel<ManualClock, Fixed<1>> = Wheel::fixed(ManualClock::new(), TICK);
    for taken_in in [false, true] {
        let mut d = Box::pin(wheel.sleep(ms(50)));
        poll_leaving_a_bomb(d.as_mut());
        if taken_in {
            wheel.advance(Duration::ZERO);
        }
        let _ = quietly(|| drop(d));
        assert!(
            quietly(|| wheel.advance(Duration::ZERO)).is_ok(),
            "a turn panicked dropping a cancelled deadline's waker (taken in: {taken_in})"
        );
        assert_eq!(wheel.occupied(), 0, "taken in: {taken_in}");
        let w = CountingWaker::new();
        let mut next = pin!(wheel.sleep(ms(5)));
        assert!(w.poll(next.as_mut()).is_pending());
        assert_eq!(
            wheel.occupied(),
            1,
            "the only entry was lost (taken in: {taken_in})"
        );
        wheel.advance(ms(5));
        assert!(w.poll(next.as_mut()).is_ready());
    }
    assert_eq!(wheel.degraded_polls(), 0);
}

/// A waker whose `clone` panics (a bug in some executor), built by hand: `Wake`'s clone is
/// an `Arc` clone, which cannot panic.
fn clone_panics() -> Waker {
    use core::task::{RawWaker, RawWakerVTable};
    fn clone(_: *const ()) -> RawWaker {
        panic!("waker clone exploded");
    }
    fn noop(_: *const ()) {}
    static VTABLE: RawWakerVTable = RawWakerVTable::new(clone, noop, noop, noop);
    // SAFETY: every function of the vtable ignores the data pointer; none touches memory.
    unsafe { Waker::from_raw(RawWaker::new(core::ptr::null(), &VTABLE)) }
}

#[test]
fn clone_panicking_at_first_poll_takes_no_entry() {
    // The clone happens as the deadline arms; its panic unwinds through the poll. The
    // wheel's only entry must not be lost with it: the next deadline arms normally.
    let wheel: Wheel<ManualClock, Fixed<1>> = Wheel::fixed(ManualClock::new(), TICK);
    let mut d = Box::pin(wheel.sleep(ms(5)));
    let bomb = clone_panics();
    assert!(quietly(|| Pin::new(&mut d).poll(&mut Context::from_waker(&bomb))).is_err());
    drop(d);
    let w = CountingWaker::new();
    let mut next = pin!(wheel.sleep(ms(5)));
    assert!(w.poll(next.as_mut()).is_pending());
    assert_eq!(wheel.occupied(), 1, "the only entry was lost");
    wheel.advance(ms(5));
    assert_eq!(w.wakes(), 1);
    assert!(w.poll(next.as_mut()).is_ready());
    assert_eq!(wheel.degraded_polls(), 0, "the next deadline ran degraded");
}

#[test]
fn repoll_after_panic_panics_without_polling_inner() {
    // The first poll panics in the waker's `clone` as the deadline arms. Polled again once
    // its inner future is ready (and past its time), it must panic as documented, not
    // poll the future and hand out its `Ok`.
    let wheel: Wheel<ManualClock, Fixed<4>> = Wheel::fixed(ManualClock::new(), TICK);
    let ready_now = Arc::new(AtomicBool::new(false));
    let flag = ready_now.clone();
    let inner = core::future::poll_fn(move |_| {
        if flag.load(SeqCst) {
            Poll::Ready(7)
        } else {
            Poll::Pending
        }
    });
    let mut d = Box::pin(wheel.deadline(ms(5), inner));
    let bomb = clone_panics();
    assert!(quietly(|| Pin::new(&mut d).poll(&mut Context::from_waker(&bomb))).is_err());
    ready_now.store(true, SeqCst);
    wheel.advance(ms(50));
    let w = CountingWaker::new();
    let again = quietly(|| w.poll(d.as_mut())).expect_err("polled again after a panic");
    assert_eq!(
        again.downcast_ref::<&str>(),
        Some(&"a deadline polled again after its poll panicked")
    );
}

#[test]
fn clone_panicking_on_register_leaves_entry_usable() {
    // A deadline the driver took in is polled again with a waker whose clone panics,
    // inside the waker slot's registration. The slot must be given back as the poll
    // unwinds: a later deadline that reuses the entry is woken when it fires. So must the
    // driver's slot, after a driver's registration panicked the same way.
    let wheel: Wheel<ManualClock, Fixed<1>> = Wheel::fixed(ManualClock::new(), TICK);
    let w = CountingWaker::new();
    let mut d = Box::pin(wheel.sleep(ms(50)));
    assert!(w.poll(d.as_mut()).is_pending());
    wheel.advance(Duration::ZERO); // the driver takes the entry in
    let bomb = clone_panics();
    assert!(quietly(|| Pin::new(&mut d).poll(&mut Context::from_waker(&bomb))).is_err());
    drop(d);
    wheel.advance(Duration::ZERO); // reclaims the entry (a debug check fired here)
    assert_eq!(wheel.occupied(), 0);

    let other_w = CountingWaker::new();
    let mut other = pin!(wheel.sleep(ms(5)));
    assert!(other_w.poll(other.as_mut()).is_pending());
    wheel.advance(ms(5));
    assert_eq!(
        other_w.wakes(),
        1,
        "the deadline on the reused entry was not woken"
    );
    assert!(other_w.poll(other.as_mut()).is_ready());

    assert!(quietly(|| wheel.register_driver(&bomb)).is_err());
    let driver = CountingWaker::new();
    wheel.register_driver(&driver.waker);
    let plan = wheel.turn();
    assert!(
        plan > Reading::since_origin(wheel.clock().now() + TICK),
        "the driver plans a turn beyond the next tick"
    );
    let mut early = pin!(wheel.sleep(ms(1)));
    assert!(w.poll(early.as_mut()).is_pending());
    assert!(
        driver.wakes() > 0,
        "the driver's slot stayed busy: no arm wakes it"
    );
}

#[test]
fn driver_waker_panicking_on_arm_loses_no_entry() {
    // An arm earlier than the plan wakes the driver, on the arming thread; that waker's
    // panic unwinds through the deadline's first poll. The entry must come back (the
    // deadline already held it), and the wheel's only entry serves the next deadline.
    let wheel: Wheel<ManualClock, Fixed<1>> = Wheel::fixed(ManualClock::new(), TICK);
    // Turned before the driver registers: a turn out of idle wakes the drivers too.
    assert!(
        wheel.turn() > Reading::since_origin(TICK),
        "the driver plans beyond the next tick"
    );
    wheel.register_driver(&Waker::from(Arc::new(PanickingWaker)));
    let w = CountingWaker::new();
    let mut d = Box::pin(wheel.sleep(ms(1)));
    assert!(
        quietly(|| w.poll(d.as_mut())).is_err(),
        "the driver's waker panics"
    );
    drop(d);
    wheel.advance(Duration::ZERO);
    assert_eq!(wheel.occupied(), 0, "the entry was lost with the panic");
    let mut next = pin!(wheel.sleep(ms(5)));
    assert!(w.poll(next.as_mut()).is_pending());
    wheel.advance(ms(5));
    assert!(w.poll(next.as_mut()).is_ready());
    assert_eq!(wheel.degraded_polls(), 0);
}

#[test]
fn panicking_driver_waker_keeps_no_wake_from_others() {
    // Two drivers; the first one's waker panics when woken. A wake for a sooner turn
    // must still reach the second.
    let wheel: Wheel<ManualClock, Fixed<4>> = Wheel::fixed(ManualClock::new(), TICK);
    // Turned before the drivers register: a turn out of idle wakes the drivers too.
    assert!(
        wheel.turn() > Reading::since_origin(TICK),
        "the drivers plan beyond the next tick"
    );
    let mut broken = wheel.driver_slot();
    let mut healthy = wheel.driver_slot();
    assert!(broken.register(&Waker::from(Arc::new(PanickingWaker))));
    let driver = CountingWaker::new();
    assert!(healthy.register(&driver.waker));
    let w = CountingWaker::new();
    let mut d = Box::pin(wheel.sleep(ms(1)));
    assert!(
        quietly(|| w.poll(d.as_mut())).is_err(),
        "the broken waker panics"
    );
    assert_eq!(driver.wakes(), 1, "the healthy driver was not woken");
    drop(d);
    drop((broken, healthy));
}

#[test]
fn driver_waker_panicking_leaving_idle_wheel_works() {
    // A turn that takes the wheel out of idle wakes the drivers once it has let go of the
    // driver role; a waker that panics then reaches the turn's caller, after the others
    // are woken, and the wheel keeps working.
    let wheel: Wheel<ManualClock, Fixed<4>> = Wheel::fixed(ManualClock::new(), TICK);
    // Idle as a turn left it (a new wheel's first turn does not linger).
    assert_eq!(wheel.turn(), Reading::END);
    let mut broken = wheel.driver_slot();
    let mut healthy = wheel.driver_slot();
    assert!(broken.register(&Waker::from(Arc::new(PanickingWaker))));
    let driver = CountingWaker::new();
    assert!(healthy.register(&driver.waker));
    assert!(quietly(|| wheel.turn()).is_err(), "the broken waker panics");
    assert_eq!(driver.wakes(), 1, "the healthy driver was not woken");
    assert!(wheel.next_turn() < Reading::END, "the turn's plan stands");
    let w = CountingWaker::new();
    let mut d = pin!(wheel.sleep(ms(2)));
    assert!(w.poll(d.as_mut()).is_pending());
    wheel.advance(ms(2));
    assert!(w.poll(d.as_mut()).is_ready());
    drop((broken, healthy));
}
