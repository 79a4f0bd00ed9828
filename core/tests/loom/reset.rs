//! Resets: a reset of a sleep or a deadline on one thread while the driver turns on
//! another, at the moment the old time is due; with the entry linked into its slot (the
//! reset cancels it) or still on the arm inbox (the reset takes it back, or the turn
//! takes it in first). The race resolves to one outcome: the old
//! time fired (a deadline keeps it; a sleep drops it), or the new time is in force; the
//! new time never fires early, and no entry is lost or freed twice.

use std::pin::Pin;
use std::sync::atomic::{AtomicUsize, Ordering::Relaxed};
use std::time::Duration;

use loom::thread;
use punctual_core::Reading;

use crate::support::TICK;
use crate::{counter, lend, model, poll, wheel, woken};

/// A deadline due now, moved three ticks later while a turn fires it: `reset` says which
/// won. `false`: the next poll returns the old time's `Err(Elapsed)`. `true`: it is
/// pending until the new time, and fires then exactly once.
#[test]
fn deadline_reset_vs_turn() {
    // Executions in which the fire won, and in which the reset won: the model sees both.
    static KEPT: AtomicUsize = AtomicUsize::new(0);
    static MOVED: AtomicUsize = AtomicUsize::new(0);
    deadline_reset_vs_turn_from(true, &KEPT, &MOVED);
    assert!(
        KEPT.load(Relaxed) > 0 && MOVED.load(Relaxed) > 0,
        "one side never won"
    );
}

/// The same, the entry still on the arm inbox: the reset takes it back, or the turn takes
/// it in and fires it first.
#[test]
fn deadline_reset_vs_first_turn() {
    static KEPT: AtomicUsize = AtomicUsize::new(0);
    static MOVED: AtomicUsize = AtomicUsize::new(0);
    deadline_reset_vs_turn_from(false, &KEPT, &MOVED);
    assert!(
        KEPT.load(Relaxed) > 0 && MOVED.load(Relaxed) > 0,
        "one side never won"
    );
}

fn deadline_reset_vs_turn_from(
    linked: bool,
    kept: &'static AtomicUsize,
    moved_count: &'static AtomicUsize,
) {
    model(move || {
        let wheel = wheel();
        let (task, task_waker) = counter();
        let mut deadline = lend(&wheel).deadline(TICK, std::future::pending::<()>());
        assert!(poll(&mut deadline, &task_waker).is_pending());
        if linked {
            wheel.turn(); // link it into its slot
        }
        wheel.clock().set(TICK);

        let w = lend(&wheel);
        let driver = thread::spawn(move || {
            w.turn();
        });
        let new_time = TICK * 3;
        let moved = Pin::new(&mut deadline).reset(Reading::since_origin(new_time));
        driver.join().unwrap();

        if !moved {
            kept.fetch_add(1, Relaxed);
            let elapsed = match poll(&mut deadline, &task_waker) {
                std::task::Poll::Ready(Err(elapsed)) => elapsed,
                other => panic!("the fire that won the reset was lost: {other:?}"),
            };
            assert_eq!(elapsed.duration(), TICK, "not the old time's");
            drop(deadline);
            wheel.turn();
            assert_eq!(wheel.occupied(), 0, "entry leaked or double-counted");
            return;
        }
        moved_count.fetch_add(1, Relaxed);
        assert_eq!(woken(&task), 0, "the cancelled old time woke the task");
        assert!(
            poll(&mut deadline, &task_waker).is_pending(),
            "fired before the new time"
        );
        wheel.turn();
        assert_eq!(wheel.occupied(), 1, "entries in use after the reset");
        wheel.clock().set(new_time - Duration::from_nanos(1));
        wheel.turn();
        assert_eq!(woken(&task), 0, "woken before the new time");
        wheel.clock().set(new_time);
        wheel.turn();
        assert_eq!(woken(&task), 1, "the new time fired once");
        match poll(&mut deadline, &task_waker) {
            std::task::Poll::Ready(Err(elapsed)) => {
                assert_eq!(elapsed.instant(), Some(Reading::since_origin(new_time)));
            }
            other => panic!("not elapsed at the new time: {other:?}"),
        }
        wheel.turn();
        assert_eq!(wheel.occupied(), 0);
    });
}

/// A sleep due now, moved later, then polled while a turn fires its old time. The later
/// reset keeps the entry, so the race is the poll's against the fire: either way the poll
/// is pending (it sees no fire, or sees it and arms the rest), the sleep fires once at the
/// new time, and holds one entry.
#[test]
fn sleep_reset_vs_turn() {
    sleep_reset_vs_turn_from(true);
}

/// The same, the entry still on the arm inbox.
#[test]
fn sleep_reset_vs_first_turn() {
    sleep_reset_vs_turn_from(false);
}

fn sleep_reset_vs_turn_from(linked: bool) {
    model(move || {
        let wheel = wheel();
        let (task, task_waker) = counter();
        let mut sleep = lend(&wheel).sleep(TICK);
        assert!(poll(&mut sleep, &task_waker).is_pending());
        if linked {
            wheel.turn(); // link it into its slot
        }
        wheel.clock().set(TICK);

        let w = lend(&wheel);
        let driver = thread::spawn(move || {
            w.turn();
        });
        let new_time = TICK * 3;
        Pin::new(&mut sleep).reset(Reading::since_origin(new_time));
        let pending = poll(&mut sleep, &task_waker).is_pending();
        driver.join().unwrap();
        assert!(pending, "completed at the old time");
        // The old time wakes the task once; a poll whose waker update meets that fire
        // also wakes it itself (the waker hand-off's rule), one spurious wake at most.
        let old_wakes = woken(&task);
        assert!(old_wakes <= 2, "the old time woke more than twice");

        // A fire the poll did not see yet: this poll sees it and arms the rest.
        assert!(
            poll(&mut sleep, &task_waker).is_pending(),
            "completed at the old time"
        );
        wheel.turn();
        assert_eq!(wheel.occupied(), 1, "entries in use after the reset");
        wheel.clock().set(new_time - Duration::from_nanos(1));
        wheel.turn();
        assert_eq!(woken(&task), old_wakes, "woken before the new time");
        wheel.clock().set(new_time);
        wheel.turn();
        assert_eq!(woken(&task), old_wakes + 1, "the new time fired once");
        assert!(poll(&mut sleep, &task_waker).is_ready());
        wheel.turn();
        assert_eq!(wheel.occupied(), 0);
    });
}

/// A sleep due now, moved earlier (to a time already passed) while a turn fires its old
/// time: the reset lets go of the entry, racing the fire; either way the next poll
/// completes, and no entry is lost or freed twice.
#[test]
fn sleep_earlier_reset_vs_turn() {
    model(move || {
        let wheel = wheel();
        let (_task, task_waker) = counter();
        let mut sleep = lend(&wheel).sleep(TICK * 2);
        assert!(poll(&mut sleep, &task_waker).is_pending());
        wheel.turn(); // link it into its slot
        wheel.clock().set(TICK * 2);

        let w = lend(&wheel);
        let driver = thread::spawn(move || {
            w.turn();
        });
        Pin::new(&mut sleep).reset(Reading::since_origin(TICK));
        driver.join().unwrap();
        assert!(
            poll(&mut sleep, &task_waker).is_ready(),
            "the new time had passed"
        );
        wheel.turn();
        assert_eq!(wheel.occupied(), 0, "an entry lost");
    });
}
