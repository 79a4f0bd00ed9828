//! Several drivers of one wheel, and drivers that stop: a stopped driver loses nothing
//! (armed deadlines wait, and fire once anything turns the wheel again, as documented on
//! `Driver`); a driver is still woken after another one of its wheel stops, and one that
//! stops wakes an idle one to carry out its plan; a turn by hand on an idle wheel wakes the
//! idle driver; a driver beyond the wheel's places for wakers turns every tick until a
//! place frees up, and its turns and its stop wake the drivers that have a place.
#![cfg(all(feature = "alloc", feature = "stats"))]

mod support;

use core::future::{Pending, pending};
use core::pin::pin;
use core::task::{Context, Poll, Waker};
use core::time::Duration;
use std::sync::{Arc, Mutex};

use punctual_core::{Clock, Fixed, ManualClock, Reading, Sleeper, Wheel};
use support::{
    CountingWaker, NeverSleeper, TICK, drive_until_woken, idle_wheel, is_elapsed, ms,
    poll_until_idle,
};

#[test]
fn stopped_driver_loses_nothing_next_turn_fires() {
    // `Driver` docs: "Dropping the driver stops the wheel: armed deadlines no longer fire
    // until another driver (or `Wheel::turn`) turns it. Nothing is lost; they fire late,
    // once it does."
    let wheel: Wheel<ManualClock, Fixed<8>> = Wheel::fixed(ManualClock::new(), TICK);
    let driver_waker = CountingWaker::new();
    let mut driver = Box::pin(wheel.driver(NeverSleeper));
    assert!(driver_waker.poll(driver.as_mut()).is_pending());

    let ws: Vec<CountingWaker> = (0..4).map(|_| CountingWaker::new()).collect();
    let mut a = pin!(wheel.sleep(ms(10)));
    let mut b = pin!(wheel.deadline(ms(20), pending::<()>()));
    let mut c = pin!(wheel.sleep(Duration::from_secs(30)));
    let mut gone = Box::pin(wheel.sleep(ms(15)));
    assert!(ws[0].poll(a.as_mut()).is_pending());
    assert!(ws[1].poll(b.as_mut()).is_pending());
    assert!(ws[2].poll(c.as_mut()).is_pending());
    assert!(ws[3].poll(gone.as_mut()).is_pending());
    assert!(driver_waker.wakes() > 0, "the first arm wakes the driver");
    assert!(driver_waker.poll(driver.as_mut()).is_pending());
    drop(driver);

    // The clock moves on, nothing turns the wheel: nothing fires, nothing is woken.
    wheel.clock().advance(ms(25));
    drop(gone); // a cancel while stopped
    assert!(ws[0].poll(a.as_mut()).is_pending());
    assert!(ws[1].poll(b.as_mut()).is_pending());
    assert_eq!(ws.iter().map(CountingWaker::wakes).sum::<usize>(), 0);
    assert_eq!(wheel.occupied(), 4);

    // A new driver turns it: the two overdue deadlines fire once each, late, and the
    // cancelled one is reclaimed.
    let mut driver = Box::pin(wheel.driver(NeverSleeper));
    assert!(driver_waker.poll(driver.as_mut()).is_pending());
    assert_eq!((ws[0].wakes(), ws[1].wakes(), ws[2].wakes()), (1, 1, 0));
    assert!(ws[0].poll(a.as_mut()).is_ready());
    assert_eq!(is_elapsed(ws[1].poll(b.as_mut())).duration(), ms(20));
    assert_eq!(ws[3].wakes(), 0, "a cancelled deadline was woken");
    assert_eq!(wheel.occupied(), 1);
    let stats = wheel.stats();
    assert_eq!((stats.fired, stats.cancelled), (2, 1), "{stats}");
    assert_eq!(stats.lateness[3], 2, "both fired 5+ ticks late: {stats}");
    drop(driver);

    // Without any driver, `turn` alone does the same.
    wheel.clock().advance(Duration::from_secs(30));
    assert_eq!(ws[2].wakes(), 0);
    let _ = wheel.turn();
    assert_eq!(ws[2].wakes(), 1);
    assert!(ws[2].poll(c.as_mut()).is_ready());
    assert_eq!(wheel.occupied(), 0);
}

#[test]
fn driver_still_woken_after_another_stops() {
    // Two drivers, idle: each registered its waker, the second last. The second stops.
    // A deadline armed then must wake the first, which is still there to turn the wheel
    // (with one waker for every driver, the arm woke the stopped one alone).
    let wheel: Wheel<ManualClock, Fixed<8>> = Wheel::fixed(ManualClock::new(), TICK);
    let (first_waker, second_waker) = (CountingWaker::new(), CountingWaker::new());
    let mut first = Box::pin(wheel.driver(NeverSleeper));
    let mut second = Box::pin(wheel.driver(NeverSleeper));
    assert!(first_waker.poll(first.as_mut()).is_pending());
    assert!(second_waker.poll(second.as_mut()).is_pending());
    drop(second);

    let w = CountingWaker::new();
    let mut d = pin!(wheel.deadline(ms(5), pending::<()>()));
    assert!(w.poll(d.as_mut()).is_pending());
    assert!(
        first_waker.wakes() > 0,
        "the remaining driver was not woken"
    );
    wheel.clock().advance(ms(5));
    assert!(first_waker.poll(first.as_mut()).is_pending());
    assert_eq!(w.wakes(), 1, "the remaining driver's turn fired nothing");
    assert!(is_elapsed(w.poll(d.as_mut())).duration() == ms(5));
}

#[test]
fn stopping_driver_wakes_an_idle_one_for_its_plan() {
    let wheel = idle_wheel();
    let mut staying = pin!(wheel.driver(NeverSleeper));
    let staying_task = CountingWaker::new();
    let mut cx = Context::from_waker(&staying_task.waker);
    poll_until_idle(&wheel, staying.as_mut(), &mut cx);

    // A second driver turns the idle wheel once (it lingers: a turn is planned, and no
    // one is woken), then stops before that turn.
    {
        let mut leaving = pin!(wheel.driver(NeverSleeper));
        let leaving_task = CountingWaker::new();
        let mut leaving_cx = Context::from_waker(&leaving_task.waker);
        let _ = leaving
            .as_mut()
            .poll_with(pin!(pending::<()>()), &mut leaving_cx);
        assert!(wheel.next_turn() < Reading::END);
    }
    assert_eq!(
        staying_task.wakes(),
        1,
        "the driver that stayed was not told to take over"
    );

    // A deadline later than that plan wakes no one; the driver that stayed, polled for
    // the wake above, plans and fires it.
    let other = CountingWaker::new();
    let mut deadline = pin!(wheel.deadline(40 * TICK, pending::<()>()));
    assert!(other.poll(deadline.as_mut()).is_pending());
    drive_until_woken(&wheel, staying.as_mut(), &mut cx, &other);
    assert!(matches!(other.poll(deadline.as_mut()), Poll::Ready(Err(_))));
}

#[test]
fn hand_turn_on_idle_wheel_wakes_the_idle_driver() {
    let wheel = idle_wheel();
    let mut driver = pin!(wheel.driver(NeverSleeper));
    let task = CountingWaker::new();
    let mut cx = Context::from_waker(&task.waker);
    poll_until_idle(&wheel, driver.as_mut(), &mut cx);
    assert_eq!(task.wakes(), 0);

    // A turn by hand plans one (it lingers). A deadline later than that plan wakes no
    // one, and the idle driver waits for its waker only: the turn wakes it, or the wheel
    // would stop for good once the plan's time had passed.
    let _ = wheel.turn();
    assert!(wheel.next_turn() < Reading::END);
    assert_eq!(task.wakes(), 1, "the idle driver was not told of the plan");
    let other = CountingWaker::new();
    let mut deadline = pin!(wheel.deadline(40 * TICK, pending::<()>()));
    assert!(other.poll(deadline.as_mut()).is_pending());
    assert_eq!(task.wakes(), 1, "an arm later than the plan wakes no one");
    // The driver, polled for that wake, turns and plans; the deadline fires when due.
    drive_until_woken(&wheel, driver.as_mut(), &mut cx, &other);
    assert!(matches!(other.poll(deadline.as_mut()), Poll::Ready(Err(_))));
}

/// A runtime's sleep that never completes, and remembers the time it was asked for.
struct RecordingSleeper(Arc<Mutex<Vec<Duration>>>);

impl Sleeper for RecordingSleeper {
    type Sleep = Pending<()>;

    fn sleep_until(&mut self, at: Reading) -> Pending<()> {
        self.0.lock().unwrap().push(at.as_duration());
        pending()
    }
}

#[test]
fn placeless_fourth_driver_turns_every_tick() {
    // Three drivers hold the wheel's places for wakers; a fourth has none, so nothing
    // would wake it: it must never wait idle, and sleeps at most a tick at a time. Once
    // one of the three stops, it takes that place and sleeps as the wheel plans.
    let wheel: Wheel<ManualClock, Fixed<8>> = Wheel::fixed(ManualClock::new(), TICK);
    let wakers: Vec<CountingWaker> = (0..4).map(|_| CountingWaker::new()).collect();
    let mut three: Vec<_> = (0..3)
        .map(|_| Box::pin(wheel.driver(NeverSleeper)))
        .collect();
    for (driver, waker) in three.iter_mut().zip(&wakers) {
        assert!(waker.poll(driver.as_mut()).is_pending());
    }
    let asked = Arc::new(Mutex::new(Vec::new()));
    let mut fourth = Box::pin(wheel.driver(RecordingSleeper(asked.clone())));
    // Lingering over, nothing armed: the wheel goes idle.
    let mut plan = wheel.turn();
    while plan != Reading::END {
        wheel.clock().set(plan.as_duration());
        plan = wheel.turn();
    }
    let now = wheel.clock().now();
    assert!(wakers[3].poll(fourth.as_mut()).is_pending());
    let last = *asked
        .lock()
        .unwrap()
        .last()
        .expect("the fourth driver never slept");
    assert!(
        last <= now + TICK,
        "a driver nothing wakes slept until {last:?} at {now:?}"
    );

    // One of the three stops: the fourth takes its place and sleeps as the wheel plans,
    // and is woken when the wheel needs it sooner (here, to reclaim a cancelled deadline).
    drop(three.pop());
    let w = CountingWaker::new();
    let mut d = Box::pin(wheel.deadline(ms(30), pending::<()>()));
    assert!(w.poll(d.as_mut()).is_pending());
    assert!(wakers[3].poll(fourth.as_mut()).is_pending());
    let last = *asked.lock().unwrap().last().unwrap();
    assert!(
        last > now + TICK,
        "the fourth driver still sleeps a tick at a time: {last:?}"
    );
    let before = wakers[3].wakes();
    drop(d);
    assert!(
        wakers[3].wakes() > before,
        "the fourth driver, now in a place, was not woken"
    );
}

#[test]
fn placeless_driver_wakes_others_from_idle_and_stop() {
    let wheel = idle_wheel();
    let tasks = [(); 3].map(|()| CountingWaker::new());
    let mut slots = [
        wheel.driver_slot(),
        wheel.driver_slot(),
        wheel.driver_slot(),
    ];
    for (slot, task) in slots.iter_mut().zip(&tasks) {
        assert!(slot.register(&task.waker));
        let _ = slot.turn();
    }
    // Past the lingering: idle.
    wheel.clock().set(16 * TICK);
    let _ = slots[0].turn();
    assert_eq!(wheel.next_turn(), Reading::END);
    let woken = tasks.each_ref().map(CountingWaker::wakes);

    // A fourth driver finds no place; its turn takes the idle wheel out of idle (it
    // lingers), which the three must learn of: each is woken.
    let mut placeless = wheel.driver_slot();
    assert!(!placeless.register(Waker::noop()));
    let _ = placeless.turn();
    assert!(wheel.next_turn() < Reading::END);
    for (task, before) in tasks.iter().zip(woken) {
        assert_eq!(
            task.wakes(),
            before + 1,
            "a driver with a place was not woken"
        );
    }
    // They register again (as they would, polled), and the placeless one stops: it may
    // have planned a turn only it was going to make, so they are woken again.
    for (slot, task) in slots.iter_mut().zip(&tasks) {
        assert!(slot.register(&task.waker));
    }
    drop(placeless);
    for (task, before) in tasks.iter().zip(woken) {
        assert_eq!(task.wakes(), before + 2, "the stop did not wake a driver");
    }
}
