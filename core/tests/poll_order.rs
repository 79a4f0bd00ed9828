//! `Driver::poll_with`: a driver and the future whose deadlines it fires, in one task. The
//! order within a poll is the point: the wheel turns, then the future is polled (so a
//! deadline that came due is seen in the same poll), and only then does the driver set its
//! sleep, which on async-io costs a system call that would otherwise delay the future. A
//! nearer deadline brings a nearer sleep, a sleep that has come already brings the task
//! back at once, an idle driver nothing woke neither turns nor sleeps, and a driver whose
//! future was ready still carries out the turn it planned.
#![cfg(feature = "alloc")]

mod support;

use core::future::{Future, Pending, Ready, pending, ready};
use core::pin::{Pin, pin};
use core::task::{Context, Poll};
use std::sync::{Arc, Mutex};

use punctual_core::{Reading, Sleeper};
use support::{CountingWaker, TICK, idle_wheel, poll_until_idle};

/// What happened, in order.
type Log = Arc<Mutex<Vec<String>>>;

/// A sleeper whose sleeps never complete by themselves (the tests move the clock), and
/// which logs each sleep it is asked for.
struct LoggingSleeper(Log);

impl Sleeper for LoggingSleeper {
    type Sleep = Pending<()>;

    fn sleep_until(&mut self, at: Reading) -> Pending<()> {
        self.0
            .lock()
            .unwrap()
            .push(format!("sleep until {:?}", at.as_duration()));
        pending()
    }
}

/// A sleeper whose sleeps have always come already.
struct ElapsedSleeper;

impl Sleeper for ElapsedSleeper {
    type Sleep = Ready<()>;

    fn sleep_until(&mut self, _: Reading) -> Ready<()> {
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
fn poll_turns_then_polls_future_then_sets_sleep() {
    let wheel = idle_wheel();
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
fn nearer_deadline_from_future_brings_nearer_sleep() {
    let wheel = idle_wheel();
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
fn sleep_already_due_brings_task_back_at_once() {
    let wheel = idle_wheel();
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
fn unwoken_idle_driver_neither_turns_nor_sleeps() {
    let wheel = idle_wheel();
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

#[test]
fn driver_with_ready_future_makes_its_planned_turn() {
    let wheel = idle_wheel();
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
    assert!(due < Reading::END, "the turn planned nothing");
    wheel.clock().set(due.as_duration());
    let _ = driver.as_mut().poll_with(pin!(pending::<()>()), &mut cx);
    assert_eq!(other.wakes(), 1, "the deadline did not fire at {due:?}");
    assert!(matches!(other.poll(deadline.as_mut()), Poll::Ready(Err(_))));
}
