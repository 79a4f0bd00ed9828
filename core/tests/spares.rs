//! Wheels with thread spares (`Wheel::with_thread_spares`): a thread keeps the last entry
//! it freed aside for its next deadline. These tests check that a spare is really kept
//! (another thread cannot take it), and what makes that safe: a spare serves only the
//! wheel it came from, a thread gives it back when it exits or moves on to another wheel,
//! and a deadline armed from a spare behaves as any other.
//!
//! Each test has wheels of its own (`static`s, which may have spares), and runs
//! its deadlines on threads of its own: a thread's spare slot is per thread, not per wheel.
//!
//! With `std` only: without it there are no thread-locals, and spares change nothing.

#![cfg(feature = "std")]

use core::future::pending;
use core::pin::pin;
use core::task::{Context, Poll, Waker};
use core::time::Duration;
use std::sync::mpsc;
use std::thread;

use punctual_core::{Fixed, ManualClock, Wheel};

const TICK: Duration = Duration::from_millis(1);

/// Polls a deadline of `wheel` around a pending future once (it arms), then drops it
/// before any turn: the entry is taken back off the arm inbox and freed by this thread.
fn arm_and_drop<const N: usize>(wheel: &Wheel<ManualClock, Fixed<N>>) {
    let mut deadline = pin!(wheel.deadline(Duration::from_secs(2), pending::<()>()));
    let polled = deadline
        .as_mut()
        .poll(&mut Context::from_waker(Waker::noop()));
    assert!(polled.is_pending());
}

/// Arms a deadline of `wheel` on a thread of its own and returns how many polls of the
/// wheel have run degraded (the wheel had no free entry for it).
fn degraded_polls_of_an_arm_elsewhere<const N: usize>(
    wheel: &'static Wheel<ManualClock, Fixed<N>>,
) -> usize {
    let before = wheel.degraded_polls();
    thread::spawn(|| arm_and_drop(wheel)).join().unwrap();
    wheel.degraded_polls() - before
}

/// A thread that ran `first` and stays alive, holding its spare slot, until
/// [`Holder::exit`].
struct Holder {
    exit: mpsc::Sender<()>,
    thread: thread::JoinHandle<()>,
}

impl Holder {
    /// Runs `first` on a new thread and returns once it has.
    fn after(first: impl FnOnce() + Send + 'static) -> Self {
        let (done, ran) = mpsc::channel();
        let (exit, exiting) = mpsc::channel::<()>();
        let thread = thread::spawn(move || {
            first();
            done.send(()).unwrap();
            let _ = exiting.recv();
        });
        ran.recv().unwrap();
        Self { exit, thread }
    }

    /// Lets the thread exit (its slot's destructor runs) and waits for it.
    fn exit(self) {
        self.exit.send(()).unwrap();
        self.thread.join().unwrap();
    }
}

#[test]
fn a_kept_entry_stays_with_its_thread_until_exit() {
    // SAFETY: a static stays at its address for good.
    static WHEEL: Wheel<ManualClock, Fixed<1>> =
        unsafe { Wheel::fixed(ManualClock::new(), TICK).with_thread_spares() };
    let holder = Holder::after(|| arm_and_drop(&WHEEL));
    // The wheel's one entry waits in the holder's slot: no other thread gets it.
    assert_eq!(WHEEL.occupied(), 0, "a kept entry is not in use");
    assert_eq!(degraded_polls_of_an_arm_elsewhere(&WHEEL), 1);
    // Once the holder exits, the entry is back. Were it lost with the thread, the wheel
    // would stay full.
    holder.exit();
    assert_eq!(degraded_polls_of_an_arm_elsewhere(&WHEEL), 0);
}

#[test]
fn moving_to_another_wheel_gives_first_entry_back() {
    // SAFETY: a static stays at its address for good.
    static FIRST: Wheel<ManualClock, Fixed<1>> =
        unsafe { Wheel::fixed(ManualClock::new(), TICK).with_thread_spares() };
    // SAFETY: a static stays at its address for good.
    static SECOND: Wheel<ManualClock, Fixed<1>> =
        unsafe { Wheel::fixed(ManualClock::new(), TICK).with_thread_spares() };
    let holder = Holder::after(|| {
        arm_and_drop(&FIRST);
        arm_and_drop(&SECOND);
    });
    // The holder's slot now holds `SECOND`'s entry; `FIRST`'s went back to its wheel.
    assert_eq!(degraded_polls_of_an_arm_elsewhere(&FIRST), 0);
    assert_eq!(degraded_polls_of_an_arm_elsewhere(&SECOND), 1);
    holder.exit();
    assert_eq!(degraded_polls_of_an_arm_elsewhere(&SECOND), 0);
}

#[test]
fn a_spare_serves_only_the_wheel_it_came_from() {
    // SAFETY: a static stays at its address for good.
    static TWO: Wheel<ManualClock, Fixed<2>> =
        unsafe { Wheel::fixed(ManualClock::new(), TICK).with_thread_spares() };
    // SAFETY: a static stays at its address for good.
    static ONE: Wheel<ManualClock, Fixed<1>> =
        unsafe { Wheel::fixed(ManualClock::new(), TICK).with_thread_spares() };
    thread::spawn(|| {
        let mut cx = Context::from_waker(Waker::noop());
        // Keep `TWO`'s entry 1: armed last, so it is the arm inbox's head when dropped.
        {
            let mut first = pin!(TWO.deadline(Duration::from_secs(2), pending::<()>()));
            assert!(first.as_mut().poll(&mut cx).is_pending());
            arm_and_drop(&TWO);
        }
        assert_eq!(TWO.occupied(), 0);
        // `ONE` has no entry 1: a spare taken for the wrong wheel would index past its
        // end. It gets its own entry, and keeps working.
        for _ in 0..3 {
            arm_and_drop(&ONE);
        }
        let mut on_one = pin!(ONE.deadline(Duration::from_millis(2), pending::<()>()));
        assert!(on_one.as_mut().poll(&mut cx).is_pending());
        assert_eq!((ONE.occupied(), ONE.degraded_polls()), (1, 0));
        ONE.advance(Duration::from_millis(2));
        assert!(matches!(on_one.as_mut().poll(&mut cx), Poll::Ready(Err(_))));
        // `TWO` still has both entries: the one on its free list, and the one given back
        // when the slot took `ONE`'s.
        let mut a = pin!(TWO.deadline(Duration::from_millis(1), pending::<()>()));
        let mut b = pin!(TWO.deadline(Duration::from_millis(1), pending::<()>()));
        assert!(a.as_mut().poll(&mut cx).is_pending());
        assert!(b.as_mut().poll(&mut cx).is_pending());
        assert_eq!((TWO.occupied(), TWO.degraded_polls()), (2, 0));
        TWO.advance(Duration::from_millis(1));
        assert!(matches!(a.as_mut().poll(&mut cx), Poll::Ready(Err(_))));
        assert!(matches!(b.as_mut().poll(&mut cx), Poll::Ready(Err(_))));
    })
    .join()
    .unwrap();
    assert_eq!((ONE.occupied(), TWO.occupied()), (0, 0));
}

#[test]
fn spare_armed_deadline_fires_on_time_frees_entry() {
    // SAFETY: a static stays at its address for good.
    static WHEEL: Wheel<ManualClock, Fixed<1>> =
        unsafe { Wheel::fixed(ManualClock::new(), TICK).with_thread_spares() };
    thread::spawn(|| {
        let mut cx = Context::from_waker(Waker::noop());
        for round in 0..3u32 {
            // The entry comes from the spare: each time a fresh generation, never early,
            // and kept again after the fire.
            arm_and_drop(&WHEEL);
            let mut deadline = pin!(WHEEL.deadline(Duration::from_millis(5), pending::<()>()));
            assert!(
                deadline.as_mut().poll(&mut cx).is_pending(),
                "round {round}"
            );
            WHEEL.advance(Duration::from_millis(4));
            assert!(
                deadline.as_mut().poll(&mut cx).is_pending(),
                "early, round {round}"
            );
            WHEEL.advance(Duration::from_millis(1));
            assert!(matches!(
                deadline.as_mut().poll(&mut cx),
                Poll::Ready(Err(_))
            ));
            assert_eq!(WHEEL.occupied(), 0);
        }
        assert_eq!(WHEEL.degraded_polls(), 0);
    })
    .join()
    .unwrap();
}

#[test]
fn drop_during_thread_exit_still_frees_entry() {
    // SAFETY: a static stays at its address for good.
    static WHEEL: Wheel<ManualClock, Fixed<1>> =
        unsafe { Wheel::fixed(ManualClock::new(), TICK).with_thread_spares() };
    /// Drops an armed deadline in its own thread-local destructor, which may run after
    /// the spare slot's: the release must then free the entry without a slot.
    struct DropsADeadline(
        Option<core::pin::Pin<Box<punctual_core::Deadline<'static, core::future::Pending<()>>>>>,
    );
    impl Drop for DropsADeadline {
        fn drop(&mut self) {
            self.0.take();
        }
    }
    thread_local! {
        static HELD: core::cell::RefCell<DropsADeadline> =
            const { core::cell::RefCell::new(DropsADeadline(None)) };
    }
    thread::spawn(|| {
        // Registered before the slot's destructor (this thread touches the slot only at
        // the release below), so it runs after it.
        HELD.with(|_| ());
        let wheel: &'static dyn punctual_core::RawWheel = &WHEEL;
        let mut deadline = Box::pin(punctual_core::Deadline::new(
            pending::<()>(),
            wheel,
            punctual_core::Limit::After(Duration::from_secs(2)),
        ));
        let polled = deadline
            .as_mut()
            .poll(&mut Context::from_waker(Waker::noop()));
        assert!(polled.is_pending());
        HELD.with(|held| held.borrow_mut().0 = Some(deadline));
    })
    .join()
    .unwrap();
    assert_eq!(WHEEL.occupied(), 0);
    assert_eq!(degraded_polls_of_an_arm_elsewhere(&WHEEL), 0);
}
