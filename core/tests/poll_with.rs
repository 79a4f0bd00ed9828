//! `Driver::poll_with`: a driver and the future whose deadlines it fires, in one task. The
//! order within a poll is the point: the wheel turns, then the future is polled (so a
//! deadline that came due is seen in the same poll), and only then does the driver set its
//! sleep, which on async-io costs a system call that would otherwise delay the future.

mod support;

use core::future::{Future, Pending, Ready, pending, ready};
use core::pin::{Pin, pin};
use core::task::{Context, Poll, Waker};
use core::time::Duration;
use std::sync::{Arc, Mutex};

use punctual_core::{Clock, Fixed, ManualClock, Sleeper, Wheel};
use support::CountingWaker;

const TICK: Duration = Duration::from_millis(1);

type TestWheel = Wheel<ManualClock, Fixed<8>>;

/// A wheel that has been turned once, with nothing armed: idle, as a turn left it, so that
/// the next turn lingers (a new wheel's first turn does not: it was woken from no idle).
fn wheel() -> TestWheel {
    let wheel: TestWheel = Wheel::fixed(ManualClock::new(), TICK);
    assert_eq!(
        wheel.turn(),
        Duration::MAX,
        "a new wheel's first turn lingered"
    );
    wheel
}

/// What happened, in order.
type Log = Arc<Mutex<Vec<String>>>;

/// A sleeper whose sleeps never complete by themselves (the tests move the clock), and
/// which logs each sleep it is asked for.
struct LoggingSleeper(Log);

impl Sleeper for LoggingSleeper {
    type Sleep = Pending<()>;

    fn sleep_until(&mut self, at: Duration) -> Pending<()> {
        self.0.lock().unwrap().push(format!("sleep until {at:?}"));
        pending()
    }
}

/// A sleeper whose sleeps have always come already.
struct ElapsedSleeper;

impl Sleeper for ElapsedSleeper {
    type Sleep = Ready<()>;

    fn sleep_until(&mut self, _: Duration) -> Ready<()> {
        ready(())
    }
}

/// Logs each poll of the future it wraps, with what the poll returned.
struct Logged<F> {
    inner: F,
    log: Log,
}

impl<F: Future + Unpin> Future for Logged<F>
where
    F::Output: core::fmt::Debug,
{
    type Output = F::Output;

    fn poll(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<F::Output> {
        let polled = Pin::new(&mut self.inner).poll(cx);
        self.log.lock().unwrap().push(format!("future {polled:?}"));
        polled
    }
}

/// Two deadlines: the far one polled first, the near one from the second poll on; ready
/// with whether each fired once both are done.
struct Both<A, B> {
    far: Pin<Box<A>>,
    near: Pin<Box<B>>,
    near_polled: bool,
    fired: (Option<bool>, Option<bool>),
}

impl<A, B, T, U, E> Future for Both<A, B>
where
    A: Future<Output = Result<T, E>>,
    B: Future<Output = Result<U, E>>,
{
    type Output = (bool, bool);

    fn poll(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<(bool, bool)> {
        let this = &mut *self;
        if this.fired.0.is_none() {
            if let Poll::Ready(r) = this.far.as_mut().poll(cx) {
                this.fired.0 = Some(r.is_err());
            }
        }
        if this.near_polled && this.fired.1.is_none() {
            if let Poll::Ready(r) = this.near.as_mut().poll(cx) {
                this.fired.1 = Some(r.is_err());
            }
        }
        this.near_polled = true;
        match this.fired {
            (Some(a), Some(b)) => Poll::Ready((a, b)),
            _ => Poll::Pending,
        }
    }
}

fn take(log: &Log) -> Vec<String> {
    std::mem::take(&mut *log.lock().unwrap())
}

#[test]
fn a_poll_turns_the_wheel_then_polls_the_future_then_sets_the_sleep() {
    let wheel = wheel();
    let log = Log::default();
    let mut driver = pin!(wheel.driver(LoggingSleeper(log.clone())));
    let deadline = Box::pin(wheel.deadline(3 * TICK, pending::<()>()));
    let mut work = pin!(Logged {
        inner: deadline,
        log: log.clone()
    });
    let task = CountingWaker::new();
    let mut cx = Context::from_waker(&task.waker);

    // A turn out of an idle a turn left plans to linger 16 ticks; the arm in the future's poll,
    // earlier than that, wakes the task, and the next poll's turn plans its turn.
    assert!(
        driver
            .as_mut()
            .poll_with(work.as_mut(), &mut cx)
            .is_pending()
    );
    assert_eq!(take(&log), ["future Pending", "sleep until 16ms"]);
    assert_eq!(task.wakes(), 1, "the arm did not wake the driver's task");
    assert!(
        driver
            .as_mut()
            .poll_with(work.as_mut(), &mut cx)
            .is_pending()
    );
    assert_eq!(take(&log), ["future Pending", "sleep until 3ms"]);

    // Its time comes: one poll fires it and the future sees it, before any sleep is set.
    wheel.clock().set(3 * TICK);
    let polled = driver.as_mut().poll_with(work.as_mut(), &mut cx);
    assert!(
        matches!(polled, Poll::Ready(Err(_))),
        "the deadline that came due was not seen in the poll that fired it: {polled:?}"
    );
    let log = take(&log);
    assert_eq!(
        log.len(),
        1,
        "a sleep was set before the future was polled: {log:?}"
    );
    assert!(log[0].starts_with("future Ready(Err("), "{log:?}");
}

#[test]
fn a_nearer_deadline_armed_by_the_future_brings_a_nearer_sleep() {
    let wheel = wheel();
    let log = Log::default();
    let mut driver = pin!(wheel.driver(LoggingSleeper(log.clone())));
    let task = CountingWaker::new();
    let mut cx = Context::from_waker(&task.waker);
    let mut both = pin!(Both {
        far: Box::pin(wheel.deadline(50 * TICK, pending::<()>())),
        near: Box::pin(wheel.deadline(2 * TICK, pending::<()>())),
        near_polled: false,
        fired: (None, None),
    });

    // The far one first, later than the idle wheel's planned turn (16 ms): no wake. Then
    // the turn plans 50 ms and the near one is armed after it: its arm wakes the task,
    // and the next poll sleeps until 2 ms.
    assert!(
        driver
            .as_mut()
            .poll_with(both.as_mut(), &mut cx)
            .is_pending()
    );
    assert_eq!(task.wakes(), 0);
    assert!(
        driver
            .as_mut()
            .poll_with(both.as_mut(), &mut cx)
            .is_pending()
    );
    assert_eq!(
        task.wakes(),
        1,
        "the nearer arm did not wake the driver's task"
    );
    assert!(
        driver
            .as_mut()
            .poll_with(both.as_mut(), &mut cx)
            .is_pending()
    );
    assert_eq!(
        take(&log),
        ["sleep until 16ms", "sleep until 50ms", "sleep until 2ms"]
    );
    wheel.clock().set(2 * TICK);
    assert!(
        driver
            .as_mut()
            .poll_with(both.as_mut(), &mut cx)
            .is_pending()
    );
    wheel.clock().set(50 * TICK);
    assert_eq!(
        driver.as_mut().poll_with(both.as_mut(), &mut cx),
        Poll::Ready((true, true))
    );
}

#[test]
fn a_sleep_that_has_come_already_brings_the_task_back_at_once() {
    let wheel = wheel();
    let mut driver = pin!(wheel.driver(ElapsedSleeper));
    let task = CountingWaker::new();
    let mut cx = Context::from_waker(&task.waker);
    let mut work = pin!(wheel.deadline(3 * TICK, pending::<()>()));

    assert!(
        driver
            .as_mut()
            .poll_with(work.as_mut(), &mut cx)
            .is_pending()
    );
    let woken = task.wakes();
    assert!(
        woken >= 1,
        "a sleep that completed at once must bring the task back for the next turn"
    );
    // Without the clock moving, each poll turns and comes back, and nothing fires early.
    for _ in 0..3 {
        assert!(
            driver
                .as_mut()
                .poll_with(work.as_mut(), &mut cx)
                .is_pending()
        );
    }
    assert!(task.wakes() > woken);
    wheel.clock().set(3 * TICK);
    assert!(matches!(
        driver.as_mut().poll_with(work.as_mut(), &mut cx),
        Poll::Ready(Err(_))
    ));
}

#[test]
fn an_idle_driver_that_nothing_woke_neither_turns_nor_sets_a_sleep() {
    let wheel = wheel();
    let log = Log::default();
    let mut driver = pin!(wheel.driver(LoggingSleeper(log.clone())));
    let mut idle_work = pin!(Logged {
        inner: pending::<()>(),
        log: log.clone()
    });
    let task = CountingWaker::new();
    let mut cx = Context::from_waker(&task.waker);

    // Woken from idle, the wheel lingers 16 ticks, then goes idle: no sleep at all.
    let _ = driver.as_mut().poll_with(idle_work.as_mut(), &mut cx);
    assert_eq!(take(&log), ["future Pending", "sleep until 16ms"]);
    wheel.clock().set(16 * TICK);
    let _ = driver.as_mut().poll_with(idle_work.as_mut(), &mut cx);
    assert_eq!(take(&log), ["future Pending"]);

    // Polls for the future's sake (its I/O, say) while nothing is armed: no turn, so no
    // lingering again and no sleep (each would be a timer, and a wake for nothing).
    for _ in 0..5 {
        wheel.clock().advance(TICK);
        let _ = driver.as_mut().poll_with(idle_work.as_mut(), &mut cx);
        assert_eq!(take(&log), ["future Pending"]);
    }
    assert_eq!(task.wakes(), 0);

    // An arm wakes the driver's task, and the next poll turns and sleeps until it is due.
    let mut work = pin!(Logged {
        inner: Box::pin(wheel.deadline(3 * TICK, pending::<()>())),
        log: log.clone()
    });
    let _ = driver.as_mut().poll_with(work.as_mut(), &mut cx);
    assert_eq!(take(&log), ["future Pending"]);
    assert_eq!(task.wakes(), 1, "the arm did not wake the idle driver");
    let _ = driver.as_mut().poll_with(work.as_mut(), &mut cx);
    assert_eq!(take(&log), ["future Pending", "sleep until 24ms"]);
    wheel.clock().set(24 * TICK);
    let polled = driver.as_mut().poll_with(work.as_mut(), &mut cx);
    assert!(matches!(polled, Poll::Ready(Err(_))), "{polled:?}");
}

/// Polls `driver` with an always-pending future until the wheel goes idle (the lingering
/// of a new wheel over), moving the clock to each planned turn.
fn poll_until_idle<T: Sleeper>(
    wheel: &TestWheel,
    mut driver: Pin<&mut punctual_core::Driver<'_, ManualClock, Fixed<8>, T>>,
    cx: &mut Context<'_>,
) {
    loop {
        let _ = driver.as_mut().poll_with(pin!(pending::<()>()), cx);
        let next = wheel.next_turn();
        if next == Duration::MAX {
            return;
        }
        wheel.clock().set(next);
    }
}

/// Polls `driver` (for a future of its own, always pending), moving the clock to each
/// turn the wheel plans, until `task` is woken: what a driver polled for its future's I/O
/// sees. Panics if the wheel reads as idle, or after 100 polls.
fn drive_until_woken<T: Sleeper>(
    wheel: &TestWheel,
    mut driver: Pin<&mut punctual_core::Driver<'_, ManualClock, Fixed<8>, T>>,
    cx: &mut Context<'_>,
    task: &CountingWaker,
) {
    for _ in 0..100 {
        let _ = driver.as_mut().poll_with(pin!(pending::<()>()), cx);
        if task.wakes() > 0 {
            return;
        }
        let next = wheel.next_turn();
        assert!(next < Duration::MAX, "an armed wheel reads as idle");
        wheel.clock().set(next.max(wheel.clock().now()));
    }
    panic!("not woken after 100 polls of the driver");
}

#[test]
fn a_driver_whose_future_was_ready_carries_out_the_turn_it_planned() {
    let wheel = wheel();
    let mut driver = pin!(wheel.driver(LoggingSleeper(Log::default())));
    let task = CountingWaker::new();
    let mut cx = Context::from_waker(&task.waker);
    poll_until_idle(&wheel, driver.as_mut(), &mut cx);

    // Another task arms a deadline: the idle driver is woken; its next poll turns (and
    // plans the deadline's turn), and its future is ready at once.
    let other = CountingWaker::new();
    let mut deadline = pin!(wheel.deadline(3 * TICK, pending::<()>()));
    assert!(other.poll(deadline.as_mut()).is_pending());
    assert!(task.wakes() >= 1);
    assert!(
        driver
            .as_mut()
            .poll_with(pin!(ready(())), &mut cx)
            .is_ready()
    );
    // The deadline's time comes: a poll of the driver (for any future) fires it.
    let due = wheel.next_turn();
    assert!(due < Duration::MAX, "the turn planned nothing");
    wheel.clock().set(due);
    let _ = driver.as_mut().poll_with(pin!(pending::<()>()), &mut cx);
    assert_eq!(other.wakes(), 1, "the deadline did not fire at {due:?}");
    assert!(matches!(other.poll(deadline.as_mut()), Poll::Ready(Err(_))));
}

#[test]
fn a_driver_that_stops_wakes_an_idle_one_to_carry_out_its_plan() {
    let wheel = wheel();
    let mut staying = pin!(wheel.driver(LoggingSleeper(Log::default())));
    let staying_task = CountingWaker::new();
    let mut cx = Context::from_waker(&staying_task.waker);
    poll_until_idle(&wheel, staying.as_mut(), &mut cx);

    // A second driver turns the idle wheel once (it lingers: a turn is planned, and no
    // one is woken), then stops before that turn.
    {
        let mut leaving = pin!(wheel.driver(LoggingSleeper(Log::default())));
        let leaving_task = CountingWaker::new();
        let mut leaving_cx = Context::from_waker(&leaving_task.waker);
        let _ = leaving
            .as_mut()
            .poll_with(pin!(pending::<()>()), &mut leaving_cx);
        assert!(wheel.next_turn() < Duration::MAX);
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
fn a_turn_made_by_hand_on_an_idle_wheel_wakes_the_idle_driver_to_carry_it_out() {
    let wheel = wheel();
    let mut driver = pin!(wheel.driver(LoggingSleeper(Log::default())));
    let task = CountingWaker::new();
    let mut cx = Context::from_waker(&task.waker);
    poll_until_idle(&wheel, driver.as_mut(), &mut cx);
    assert_eq!(task.wakes(), 0);

    // A turn by hand plans one (it lingers). A deadline later than that plan wakes no
    // one, and the idle driver waits for its waker only: the turn wakes it, or the wheel
    // would stop for good once the plan's time had passed.
    let _ = wheel.turn();
    assert!(wheel.next_turn() < Duration::MAX);
    assert_eq!(task.wakes(), 1, "the idle driver was not told of the plan");
    let other = CountingWaker::new();
    let mut deadline = pin!(wheel.deadline(40 * TICK, pending::<()>()));
    assert!(other.poll(deadline.as_mut()).is_pending());
    assert_eq!(task.wakes(), 1, "an arm later than the plan wakes no one");
    // The driver, polled for that wake, turns and plans; the deadline fires when due.
    drive_until_woken(&wheel, driver.as_mut(), &mut cx, &other);
    assert!(matches!(other.poll(deadline.as_mut()), Poll::Ready(Err(_))));
}

#[test]
fn a_driver_without_a_place_that_turns_an_idle_wheel_wakes_the_others_and_again_when_it_stops() {
    let wheel = wheel();
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
    assert_eq!(wheel.next_turn(), Duration::MAX);
    let woken = tasks.each_ref().map(CountingWaker::wakes);

    // A fourth driver finds no place; its turn takes the idle wheel out of idle (it
    // lingers), which the three must learn of: each is woken.
    let mut placeless = wheel.driver_slot();
    assert!(!placeless.register(Waker::noop()));
    let _ = placeless.turn();
    assert!(wheel.next_turn() < Duration::MAX);
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
