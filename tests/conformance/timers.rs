//! The conformance scenarios of the everyday timers: intervals (the first tick, ticks on
//! the grid, each missed-tick behaviour after a stall, reset, the stream) and the resets
//! of sleeps and deadlines. Like [`super::portable`]'s they need nothing beyond `core`, so
//! that firmware can run them: each is an `async fn` over a [`Target`] returning an
//! [`Outcome`].
//!
//! Tick readings are checked on the wheel's clock ([`Target::now`]), where the interval
//! keeps its grid. On every target: never early, on the grid, one tick after a stall
//! with `Skip`. On exact targets also: at most two ticks (and the slack) late.
#![allow(dead_code, unreachable_pub)]

use core::future::{pending, poll_fn};
use core::pin::pin;
use core::task::Poll;
use core::time::Duration;

use futures_core::Stream;
use punctual_core::{Deadline, Interval, Limit, MissedTickBehavior, Reading};

use super::portable::{Failure, Outcome, Target, ensure, entries_back_to, poll_once, sleep};

/// The wheel's clock now, as a reading.
fn now<T: Target>(t: &T) -> Reading {
    Reading::since_origin(t.now())
}

/// A tick due at `due`, given when the wheel's clock read `seen`: never early; on exact
/// targets at most two ticks (and the slack) late.
fn on_time<T: Target>(t: &T, due: Reading, seen: Reading) -> Outcome {
    let failure = |what| Failure {
        what,
        requested: Some(due.as_duration()),
        observed: Some(seen.as_duration()),
    };
    if seen < due {
        return Err(failure("a tick came early"));
    }
    if T::EXACT && seen - due > 2 * t.tick() + t.slack() {
        return Err(failure("a tick came more than two ticks late"));
    }
    Ok(())
}

/// An interval on the target's wheel, its first tick at once.
fn interval<T: Target>(t: &T, period: Duration) -> Interval<'static> {
    Interval::new(t.wheel(), Limit::After(Duration::ZERO), period)
}

/// Polls for a tick once: `Some` if one is ready now.
async fn tick_now(interval: &mut Interval<'static>) -> Option<Reading> {
    match poll_fn(|cx| Poll::Ready(interval.poll_tick(cx))).await {
        Poll::Ready(tick) => Some(tick),
        Poll::Pending => None,
    }
}

/// Whether `tick` is `first` plus a whole number of `period`s. (`is_multiple_of` is newer
/// than the crates' minimum Rust.)
#[allow(clippy::manual_is_multiple_of)]
fn on_grid(first: Reading, tick: Reading, period: Duration) -> bool {
    (tick - first).as_nanos() % period.as_nanos() == 0
}

/// The first tick is given at once, at the first poll's reading; the next ones one
/// period apart, never early, and the entry comes back once the interval is dropped.
pub async fn interval_ticks_on_the_grid<T: Target>(t: &T) -> Outcome {
    let before = t.occupied();
    let period = t.tick() * 3;
    let mut interval = interval(t, period);
    let made = now(t);
    let Some(first) = tick_now(&mut interval).await else {
        return ensure(false, "the first tick did not come at once");
    };
    ensure(
        first >= made,
        "the first tick is before the interval was polled",
    )?;
    ensure(
        !T::EXACT || first == now(t),
        "the first tick is not the first poll's reading",
    )?;
    let mut last = first;
    for _ in 0..4 {
        let tick = interval.tick().await;
        on_time(t, tick, now(t))?;
        ensure(tick > last, "a tick repeated or went back")?;
        ensure(on_grid(first, tick, period), "a tick off the grid")?;
        // On a loaded real clock a tick may be missed (then skipped); exact ones never are.
        ensure(
            !T::EXACT || tick - last == period,
            "a tick skipped on an exact clock",
        )?;
        last = tick;
    }
    drop(interval);
    ensure(
        entries_back_to(t, before).await,
        "a dropped interval kept its entry",
    )
}

/// `interval_at`: the first tick at the start given, never before it.
pub async fn interval_at_waits_for_start<T: Target>(t: &T) -> Outcome {
    let start = now(t) + t.tick() * 4;
    let period = t.tick() * 2;
    let mut interval = Interval::new(t.wheel(), Limit::At(start), period);
    let first = interval.tick().await;
    ensure(first == start, "the first tick is not the start given")?;
    on_time(t, start, now(t))?;
    let second = interval.tick().await;
    ensure(
        on_grid(start, second, period) && second > start,
        "the second tick is off the grid",
    )?;
    on_time(t, second, now(t))
}

/// A stall of five periods, then the tick that was due: the ticks that follow, by
/// `behaviour`. Returns the late tick, the clock when it was taken, and the next tick.
async fn after_a_stall<T: Target>(
    t: &T,
    behaviour: MissedTickBehavior,
    period: Duration,
) -> Result<(Reading, Reading, Reading, Reading, Interval<'static>), Failure> {
    let mut interval = interval(t, period);
    interval.set_missed_tick_behavior(behaviour);
    let first = interval.tick().await;
    sleep(t, period * 5).await; // the interval is not polled meanwhile: a stall
    let taken = now(t);
    let Some(late) = tick_now(&mut interval).await else {
        return Err(Failure {
            what: "the tick due during a stall was not ready after it",
            requested: Some(period),
            observed: None,
        });
    };
    // On a real clock the first tick itself may be taken more than two ticks late (the
    // host stalled inside the poll); then the behaviour already moved the next one.
    ensure(
        late > first && late <= taken,
        "the late tick is not between the first and the stall's end",
    )?;
    ensure(
        !T::EXACT || late == first + period,
        "the late tick is not the one due",
    )?;
    let next = interval.tick().await;
    on_time(t, next, now(t))?;
    Ok((first, late, taken, next, interval))
}

/// The default, `Skip`: one tick after a stall, then the next tick of the grid after it
/// (no burst); never early.
pub async fn interval_skips_after_a_stall<T: Target>(t: &T) -> Outcome {
    let period = t.tick() * 2;
    let (first, _, taken, next, _) =
        after_a_stall(t, MissedTickBehavior::default(), period).await?;
    ensure(
        next > taken,
        "Skip gave a second tick that was already past",
    )?;
    ensure(on_grid(first, next, period), "Skip left the grid")?;
    ensure(
        !T::EXACT || next - taken <= period,
        "Skip waited past the next tick of the grid",
    )
}

/// `Burst`: the ticks missed in a stall come at once, each on the grid, in order.
pub async fn interval_bursts_after_a_stall<T: Target>(t: &T) -> Outcome {
    let period = t.tick() * 2;
    let mut interval = interval(t, period);
    interval.set_missed_tick_behavior(MissedTickBehavior::Burst);
    let first = interval.tick().await;
    sleep(t, period * 5).await;
    for n in 1..=5_u32 {
        let Some(tick) = tick_now(&mut interval).await else {
            return ensure(false, "Burst did not give a missed tick at once");
        };
        ensure(tick == first + period * n, "Burst gave ticks out of order")?;
    }
    Ok(())
}

/// `Delay`: after a stall the grid moves: the next tick is a period after the late one
/// was taken.
pub async fn interval_delays_after_a_stall<T: Target>(t: &T) -> Outcome {
    let period = t.tick() * 2;
    let (_, late, taken, next, mut interval) =
        after_a_stall(t, MissedTickBehavior::Delay, period).await?;
    ensure(next >= taken + period, "Delay kept the old grid")?;
    ensure(late < taken, "the stall did not make the tick late")?;
    let after = interval.tick().await;
    ensure(
        !T::EXACT || after - next == period,
        "Delay's new grid has another period",
    )
}

/// `reset`: the next tick one period after the reset, never before.
pub async fn interval_reset_moves_next_tick<T: Target>(t: &T) -> Outcome {
    let period = t.tick() * 4;
    let mut interval = interval(t, period);
    interval.tick().await;
    sleep(t, t.tick()).await;
    let reset_at = now(t);
    interval.reset();
    let tick = interval.tick().await;
    ensure(tick >= reset_at + period, "a reset interval ticked early")?;
    on_time(t, tick, now(t))
}

/// As a stream: the same readings, never ending.
pub async fn interval_stream_yields_ticks<T: Target>(t: &T) -> Outcome {
    let period = t.tick() * 2;
    let mut stream = pin!(interval(t, period));
    let mut last = None;
    for _ in 0..3 {
        let Some(tick) = poll_fn(|cx| stream.as_mut().poll_next(cx)).await else {
            return ensure(false, "an interval's stream ended");
        };
        on_time(t, tick, now(t))?;
        ensure(last.is_none_or(|last| tick > last), "ticks out of order")?;
        last = Some(tick);
    }
    Ok(())
}

/// A sleep moved earlier and later: it ends at the time in force, never before; after
/// completion a reset runs it again.
pub async fn sleep_reset_moves_it<T: Target>(t: &T) -> Outcome {
    let mut nap = pin!(sleep(t, t.tick() * 1_000));
    ensure(
        poll_once(nap.as_mut()).await.is_pending(),
        "a long sleep ended",
    )?;
    let earlier = now(t) + t.tick() * 3;
    nap.as_mut().reset(earlier);
    nap.as_mut().await;
    on_time(t, earlier, now(t))?;

    let mut short = pin!(sleep(t, t.tick()));
    ensure(
        poll_once(short.as_mut()).await.is_pending(),
        "a sleep of a tick ended at once",
    )?;
    let later = now(t) + t.tick() * 6;
    short.as_mut().reset(later);
    short.as_mut().await;
    on_time(t, later, now(t))?;

    let again = now(t) + t.tick() * 2;
    short.as_mut().reset(again);
    short.as_mut().await;
    on_time(t, again, now(t))
}

/// A deadline moved later, then one reset after its time came: one outcome each. `true`:
/// the new time, never before it; `false`: the old time's `Err(Elapsed)` at once.
pub async fn deadline_reset_one_outcome<T: Target>(t: &T) -> Outcome {
    let before = t.occupied();
    let mut lease = pin!(Deadline::new(
        pending::<()>(),
        t.wheel(),
        Limit::After(t.tick() * 2)
    ));
    ensure(
        poll_once(lease.as_mut()).await.is_pending(),
        "a pending deadline completed",
    )?;
    let renewed = now(t) + t.tick() * 6;
    ensure(
        lease.as_mut().reset(renewed),
        "a deadline far from its time was not moved",
    )?;
    ensure(
        lease.as_mut().await.is_err(),
        "a moved deadline did not fire",
    )?;
    on_time(t, renewed, now(t))?;

    let requested = t.tick();
    let mut late = pin!(Deadline::new(
        pending::<()>(),
        t.wheel(),
        Limit::After(requested)
    ));
    ensure(
        poll_once(late.as_mut()).await.is_pending(),
        "a pending deadline completed",
    )?;
    sleep(t, t.tick() * 4).await;
    let target = now(t) + t.tick() * 3;
    let moved = late.as_mut().reset(target);
    // On an exact clock the old time has fired by now: the reset cannot move it.
    ensure(
        !T::EXACT || !moved,
        "a reset moved a deadline that had fired",
    )?;
    if moved {
        ensure(
            late.as_mut().await.is_err(),
            "a moved deadline did not fire",
        )?;
        on_time(t, target, now(t))?;
    } else {
        let first = poll_once(late.as_mut()).await;
        let kept = matches!(first, Poll::Ready(Err(ref e)) if e.duration() == requested);
        ensure(kept, "the fire that won over a reset was lost")?;
    }
    ensure(
        entries_back_to(t, before).await,
        "a reset deadline's entry was not reclaimed",
    )
}

/// Calls the macro `$then` with `$($args)*` followed by the name of every scenario here,
/// in the order they run (as [`super::portable`]'s `scenarios!`).
macro_rules! scenarios {
    ($($then:ident)::+! { $($args:tt)* }) => {
        $($then)::+! {
            $($args)*
            interval_ticks_on_the_grid,
            interval_at_waits_for_start,
            interval_skips_after_a_stall,
            interval_bursts_after_a_stall,
            interval_delays_after_a_stall,
            interval_reset_moves_next_tick,
            interval_stream_yields_ticks,
            sleep_reset_moves_it,
            deadline_reset_one_outcome,
        }
    };
}
// By path, for the host suite.
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
