//! The conformance scenarios of the keyed timer set, [`DelayQueue`] on fixed slots: core
//! only, no allocation, so that they can run on firmware as [`portable`](super::portable)'s
//! do. The host suite runs each as a `#[test]` on every driver.
//!
//! Values expire by the wheel's rules (never early, at most two ticks late on exact
//! targets), in deadline order; keys are refused once stale; a task waiting on the queue
//! is woken for a value inserted earlier than the one it waits for; a full fixed queue
//! gives the value back; the queue holds at most one entry of the wheel, and none once
//! empty.
#![allow(dead_code, unreachable_pub)]

use core::future::{Future, poll_fn};
use core::pin::Pin;
use core::task::{Context, Poll};
use core::time::Duration;

use punctual_core::{DelayQueue, Expired, FixedSlots, Full, RawWheel};

use super::portable::{Failure, Outcome, Target, ensure, entries_back_to};

/// A queue of `N` values of `V` on the target's wheel, at its tick.
type Queue<V, const N: usize> = DelayQueue<'static, V, FixedSlots<V, N>, &'static dyn RawWheel>;

fn queue<T: Target, V, const N: usize>(t: &T) -> Queue<V, N> {
    DelayQueue::with_tick(t.wheel(), t.tick(), FixedSlots::new())
}

/// Never early; on exact targets, at most two ticks (and the slack) late.
fn on_time<T: Target>(t: &T, requested: Duration, elapsed: Duration) -> Outcome {
    let failure = |what| {
        Err(Failure {
            what,
            requested: Some(requested),
            observed: Some(elapsed),
        })
    };
    if elapsed < requested {
        return failure("a value expired early");
    }
    if T::EXACT && elapsed > requested + 2 * t.tick() + t.slack() {
        return failure("a value expired more than two ticks late");
    }
    Ok(())
}

/// The next expired value; `None` if the queue is empty.
async fn next<V, const N: usize>(queue: &mut Queue<V, N>) -> Option<Expired<V>> {
    poll_fn(|cx| queue.poll_expired(cx)).await
}

/// Polls the queue once with the task's waker.
async fn poll_once<V, const N: usize>(queue: &mut Queue<V, N>) -> Poll<Option<Expired<V>>> {
    poll_fn(|cx| Poll::Ready(queue.poll_expired(cx))).await
}

/// Returns `Pending` once without asking to be woken, then `Ready`: the task goes on only
/// when something else wakes it.
struct UntilWoken(bool);

impl Future for UntilWoken {
    type Output = ();
    fn poll(mut self: Pin<&mut Self>, _: &mut Context<'_>) -> Poll<()> {
        if self.0 {
            Poll::Ready(())
        } else {
            self.0 = true;
            Poll::Pending
        }
    }
}

/// Values inserted out of order come out in deadline order, each on time. Each relative
/// insert reads the clock, so on a loaded host that stalls between inserts the order is
/// the deadlines', which is not always the values': it is checked on the deadlines.
pub async fn delay_queue_in_deadline_order<T: Target>(t: &T) -> Outcome {
    let tick = t.tick();
    let mut queue = queue::<T, u32, 8>(t);
    let start = t.true_now();
    for ticks in [7u32, 2, 5, 3] {
        let inserted = queue.try_insert(ticks, tick * ticks);
        ensure(inserted.is_ok(), "an insert into a queue with room failed")?;
    }
    let mut last = None;
    let mut seen = [false; 8];
    for _ in 0..4 {
        let Some(expired) = next(&mut queue).await else {
            return ensure(false, "the queue ended with values left");
        };
        let deadline = expired.deadline();
        ensure(
            last.is_none_or(|last| last <= deadline),
            "values came out of deadline order",
        )?;
        last = Some(deadline);
        let value = expired.into_inner();
        on_time(t, tick * value, t.true_now() - start)?;
        ensure(
            !core::mem::replace(&mut seen[value as usize], true),
            "a value came out twice",
        )?;
    }
    ensure(
        next(&mut queue).await.is_none(),
        "an empty queue gave a value",
    )
}

/// A reset moves a value's deadline; a removed value never comes out; stale keys are
/// refused, also once their slot holds another value.
pub async fn delay_queue_reset_and_remove<T: Target>(t: &T) -> Outcome {
    let tick = t.tick();
    let mut queue = queue::<T, char, 2>(t);
    let start = t.true_now();
    let (Ok(a), Ok(b)) = (
        queue.try_insert('a', tick * 2),
        queue.try_insert('b', tick * 3),
    ) else {
        return ensure(false, "an insert into a queue with room failed");
    };
    ensure(queue.reset(a, tick * 6).is_ok(), "a reset was refused")?;
    ensure(queue.remove(b) == Some('b'), "remove lost the value")?;
    ensure(queue.remove(b).is_none(), "a removed key gave a value")?;
    let c = queue.try_insert('c', tick * 60);
    ensure(c.is_ok(), "a freed slot was not reused")?;
    ensure(queue.remove(b).is_none(), "a stale key reached a new value")?;
    ensure(queue.reset(b, tick).is_err(), "a stale key was reset")?;
    let Some(expired) = next(&mut queue).await else {
        return ensure(false, "the queue ended with values left");
    };
    on_time(t, tick * 6, t.true_now() - start)?;
    ensure(expired.key() == a, "another value than the reset one")?;
    ensure(queue.remove(a).is_none(), "an expired key gave a value")?;
    queue.clear();
    ensure(queue.is_empty(), "clear left values")
}

/// A task waiting for a far value is woken for a nearer one inserted meanwhile, without
/// polling the queue in between: no lost wakeup.
pub async fn delay_queue_earlier_insert_wakes<T: Target>(t: &T) -> Outcome {
    let tick = t.tick();
    let mut queue = queue::<T, u8, 4>(t);
    let far = queue.try_insert(1, tick * 200);
    ensure(far.is_ok(), "an insert into a queue with room failed")?;
    ensure(
        poll_once(&mut queue).await.is_pending(),
        "a queue with a far value was ready",
    )?;
    let start = t.true_now();
    ensure(
        queue.try_insert(2, tick * 3).is_ok(),
        "an insert into a queue with room failed",
    )?;
    loop {
        UntilWoken(false).await;
        match poll_once(&mut queue).await {
            Poll::Ready(Some(expired)) => {
                ensure(expired.into_inner() == 2, "the far value came first")?;
                on_time(t, tick * 3, t.true_now() - start)?;
                break;
            }
            Poll::Ready(None) => return ensure(false, "the queue ended with values left"),
            Poll::Pending => {}
        }
    }
    ensure(
        far.ok().and_then(|far| queue.remove(far)) == Some(1),
        "the far value was lost",
    )
}

/// A full fixed queue gives the value back; a removal makes room again.
pub async fn delay_queue_full_gives_value_back<T: Target>(t: &T) -> Outcome {
    let tick = t.tick();
    let mut queue = queue::<T, u8, 2>(t);
    let first = queue.try_insert(1, tick * 10);
    ensure(queue.try_insert(2, tick * 10).is_ok(), "room refused")?;
    ensure(
        queue.try_insert(3, tick) == Err(Full(3)),
        "a full queue took a value",
    )?;
    ensure(
        first.ok().and_then(|first| queue.remove(first)) == Some(1),
        "remove lost the value",
    )?;
    ensure(
        queue.try_insert(4, tick).is_ok(),
        "a freed slot was refused",
    )?;
    ensure(queue.len() == 2, "len is off")
}

/// The queue holds one entry of the wheel while it waits, and none once empty or dropped.
pub async fn delay_queue_one_wheel_entry<T: Target>(t: &T) -> Outcome {
    let tick = t.tick();
    let before = t.occupied();
    let mut queue = queue::<T, u16, 16>(t);
    for i in 0..16u16 {
        let inserted = queue.try_insert(i, tick * (40 + u32::from(i)));
        ensure(inserted.is_ok(), "an insert into a queue with room failed")?;
    }
    ensure(
        poll_once(&mut queue).await.is_pending(),
        "a queue of pending values was ready",
    )?;
    ensure(
        t.occupied() <= before + 1,
        "the queue holds more than one entry",
    )?;
    queue.clear();
    ensure(
        entries_back_to(t, before).await,
        "a cleared queue kept its entry",
    )?;
    ensure(queue.try_insert(1, tick * 50).is_ok(), "room refused")?;
    ensure(
        poll_once(&mut queue).await.is_pending(),
        "a queue of a pending value was ready",
    )?;
    drop(queue);
    ensure(
        entries_back_to(t, before).await,
        "a dropped queue kept its entry",
    )
}

/// Hands the list of scenarios to `$then`, after `$args` (as `portable::scenarios!`).
macro_rules! scenarios {
    ($($then:ident)::+! { $($args:tt)* }) => {
        $($then)::+! {
            $($args)*
            delay_queue_in_deadline_order,
            delay_queue_reset_and_remove,
            delay_queue_earlier_insert_wakes,
            delay_queue_full_gives_value_back,
            delay_queue_one_wheel_entry,
        }
    };
}
#[allow(unused_imports)]
pub(crate) use scenarios;

/// Runs every scenario in order, handing each name and outcome to `report`.
pub async fn run_all<T: Target>(t: &T, mut report: impl FnMut(&'static str, Outcome)) {
    macro_rules! run_each {
        ($($name:ident),* $(,)?) => {
            $(report(stringify!($name), $name(t).await);)*
        };
    }
    scenarios!(run_each! {});
}
