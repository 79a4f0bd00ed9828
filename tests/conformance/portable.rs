//! The conformance scenarios that need nothing beyond `core`: no allocation, no thread, no
//! formatting into strings. The host suite ([`super`]) runs each of them as a `#[test]` on
//! every driver; the embassy firmware (`examples/firmware`) includes this file and runs them
//! on a Cortex-M0 and a Cortex-M3 under QEMU, printing one result line each.
//!
//! A scenario is an `async fn` generic over a [`Target`], the view of one wheel and its
//! clocks, and returns an [`Outcome`] instead of panicking: on a microcontroller a panic
//! ends the run, and every scenario should report. The caller drives time (the host
//! harness's `run`, or the firmware's executor and punctual driver task).
//!
//! Timings are checked in *true* time ([`Target::true_now`]): on firmware that is SysTick's
//! counter to the core cycle, finer than the wheel's clock (embassy's `Instant`, which
//! rounds down to a tick), so "never early" is checked where a user would notice it.
#![allow(dead_code, unreachable_pub)]

use core::fmt;
use core::future::{Future, pending, poll_fn};
use core::pin::{Pin, pin};
use core::sync::atomic::{AtomicBool, Ordering};
use core::task::{Context, Poll};
use core::time::Duration;

use futures_core::Stream;
use punctual_core::{Budget, Budgeted, Deadline, Limit, RawWheel, Reading, Sleep, StreamDeadline};

/// One wheel under test, with its clocks.
pub trait Target {
    /// Whether time is exact (virtual, or an emulator counting instructions): then
    /// lateness is checked, at most two ticks plus [`Target::slack`].
    const EXACT: bool;

    /// The wheel under test.
    fn wheel(&self) -> &'static dyn RawWheel;

    /// The wheel's tick.
    fn tick(&self) -> Duration;

    /// The wheel's clock reading now.
    fn now(&self) -> Duration;

    /// The true time now, which the wheel's clock may round down. Timings are checked on it.
    fn true_now(&self) -> Duration {
        self.now()
    }

    /// Lateness allowed beyond two ticks, in true time: the time from a fire to the
    /// scenario's clock reading.
    fn slack(&self) -> Duration {
        Duration::ZERO
    }

    /// Entries in use on the wheel.
    fn occupied(&self) -> usize;

    /// `Some(n)` for a wheel of at most `n` entries, which degrades when full; `None` for
    /// one that grows.
    fn fixed_capacity(&self) -> Option<usize> {
        None
    }

    /// `Wheel::degraded_polls` (polls that found the wheel full), where the target can
    /// read it.
    fn degraded_polls(&self) -> Option<usize> {
        None
    }

    /// Waits, without yielding, until the true time is `phase` (less than a tick) into a
    /// tick of the wheel. `false` if the target cannot place a start within a tick (a
    /// virtual clock that moves a tick at a time): the scenario then starts at one phase.
    fn to_phase(&self, phase: Duration) -> bool {
        let _ = phase;
        false
    }
}

/// Why a scenario failed: what was checked, and the durations involved.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Failure {
    /// The check that failed.
    pub what: &'static str,
    /// The duration the scenario asked for, if one is involved.
    pub requested: Option<Duration>,
    /// The duration it observed, if one is involved.
    pub observed: Option<Duration>,
}

impl fmt::Display for Failure {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.what)?;
        if let Some(requested) = self.requested {
            write!(f, " (requested {requested:?}")?;
            if let Some(observed) = self.observed {
                write!(f, ", observed {observed:?}")?;
            }
            f.write_str(")")?;
        }
        Ok(())
    }
}

/// What a scenario returns.
pub type Outcome = Result<(), Failure>;

/// `Err` with `what` unless `holds`.
pub fn ensure(holds: bool, what: &'static str) -> Outcome {
    if holds {
        Ok(())
    } else {
        Err(Failure {
            what,
            requested: None,
            observed: None,
        })
    }
}

/// Never early; on exact targets, at most two ticks (and the slack) late.
fn check_timing<T: Target>(t: &T, requested: Duration, elapsed: Duration) -> Outcome {
    let failure = |what| Failure {
        what,
        requested: Some(requested),
        observed: Some(elapsed),
    };
    if elapsed < requested {
        return Err(failure("ended early"));
    }
    if T::EXACT && elapsed > requested + 2 * t.tick() + t.slack() {
        return Err(failure("more than two ticks late"));
    }
    Ok(())
}

/// A deadline of `duration` around `future` on the target's wheel.
fn deadline<T: Target, F: Future>(t: &T, future: F, duration: Duration) -> Deadline<'static, F> {
    Deadline::new(future, t.wheel(), Limit::After(duration))
}

/// A sleep of `duration` on the target's wheel.
pub fn sleep<T: Target>(t: &T, duration: Duration) -> Sleep<'static> {
    Sleep::new(t.wheel(), Limit::After(duration))
}

/// Polls `fut` once, with the waker of the task running the scenario.
pub async fn poll_once<F: Future + ?Sized>(fut: Pin<&mut F>) -> Poll<F::Output> {
    let mut fut = Some(fut);
    poll_fn(|cx| Poll::Ready(fut.take().expect("polled once").poll(cx))).await
}

/// Waits, a tick at a time, until the wheel holds at most `count` entries; `false` after
/// 1 000 ticks (reclaiming takes about one turn of a driver that runs). At most: on a
/// wheel shared by the scenarios (the firmware's), an earlier one's entries may come back
/// meanwhile.
pub async fn entries_back_to<T: Target>(t: &T, count: usize) -> bool {
    for _ in 0..1_000 {
        if t.occupied() <= count {
            return true;
        }
        sleep(t, t.tick()).await;
    }
    t.occupied() <= count
}

/// A future that never completes and sets its flag when dropped.
struct NeverWithDropFlag<'a>(&'a AtomicBool);

impl Future for NeverWithDropFlag<'_> {
    type Output = ();
    fn poll(self: Pin<&mut Self>, _: &mut Context<'_>) -> Poll<()> {
        Poll::Pending
    }
}

impl Drop for NeverWithDropFlag<'_> {
    fn drop(&mut self) {
        self.0.store(true, Ordering::SeqCst);
    }
}

/// Rule 1: a deadline that fires has dropped its inner future when `Err` is first seen,
/// while the `Deadline` itself (pinned here) is still alive; on time (rules 2 and 3).
pub async fn cancel_on_fire<T: Target>(t: &T) -> Outcome {
    let dropped = AtomicBool::new(false);
    let requested = t.tick() * 5;
    let mut d = pin!(deadline(t, NeverWithDropFlag(&dropped), requested));
    let start = t.true_now();
    let result = d.as_mut().await;
    let elapsed = t.true_now() - start;
    let Err(err) = result else {
        return Err(Failure {
            what: "a future that never completes did not time out",
            requested: Some(requested),
            observed: None,
        });
    };
    ensure(
        dropped.load(Ordering::SeqCst),
        "inner future alive when Err was seen",
    )?;
    ensure(
        err.duration() == requested,
        "Elapsed carries another duration",
    )?;
    check_timing(t, requested, elapsed)
}

/// Rule 1: dropping a pending deadline drops the inner future and releases its entry.
pub async fn drop_releases<T: Target>(t: &T) -> Outcome {
    let before = t.occupied();
    let dropped = AtomicBool::new(false);
    let mut slot = pin!(Some(deadline(
        t,
        NeverWithDropFlag(&dropped),
        Duration::from_secs(30)
    )));
    let first = poll_once(slot.as_mut().as_pin_mut().expect("just made")).await;
    ensure(first.is_pending(), "a pending deadline completed")?;
    ensure(
        t.occupied() == before + 1,
        "a pending deadline holds no entry",
    )?;
    slot.set(None);
    ensure(
        dropped.load(Ordering::SeqCst),
        "dropping the deadline kept the inner future",
    )?;
    ensure(
        entries_back_to(t, before).await,
        "a dropped deadline's entry was not reclaimed",
    )
}

/// How many starting points in a tick [`never_early_at_every_phase`] tries.
pub const PHASES: u32 = 8;

/// Rules 2 and 3: deadlines and sleeps around the tick, started at [`PHASES`] points of a
/// tick where the target can place them, then deadlines across the first level's edge (64
/// ticks) started late in a tick: never early in true time, at most two ticks late.
pub async fn never_early_at_every_phase<T: Target>(t: &T) -> Outcome {
    let tick = t.tick();
    for phase in 0..PHASES {
        let phase = tick * phase / PHASES;
        let mut placed = false;
        for requested in [tick / 2, tick, tick + tick / 3, tick * 2] {
            placed = t.to_phase(phase);
            let start = t.true_now();
            let result = deadline(t, pending::<()>(), requested).await;
            let elapsed = t.true_now() - start;
            ensure(result.is_err(), "a pending future did not time out")?;
            check_timing(t, requested, elapsed)?;

            t.to_phase(phase);
            let start = t.true_now();
            sleep(t, requested).await;
            check_timing(t, requested, t.true_now() - start)?;
        }
        if !placed {
            // One phase is all such a target has: the rest would repeat it.
            break;
        }
    }
    // Long ones once (an emulator pays for every tick that passes): from the end of a tick,
    // where a clock that rounds down is furthest behind.
    for requested in [tick * 7, tick * 64, tick * 65] {
        t.to_phase(tick * (PHASES - 1) / PHASES);
        let start = t.true_now();
        let result = deadline(t, pending::<()>(), requested).await;
        let elapsed = t.true_now() - start;
        ensure(result.is_err(), "a pending future did not time out")?;
        check_timing(t, requested, elapsed)?;
    }
    Ok(())
}

/// Rule 4: the clock starts at the first poll, not when the deadline is made.
pub async fn clock_starts_at_first_poll<T: Target>(t: &T) -> Outcome {
    let requested = t.tick() * 4;
    let d = deadline(t, pending::<()>(), requested);
    sleep(t, t.tick() * 10).await;
    let start = t.true_now();
    let result = d.await;
    let elapsed = t.true_now() - start;
    ensure(result.is_err(), "a pending future did not time out")?;
    check_timing(t, requested, elapsed)
}

/// Rules 4 and 6: a future ready at its first poll wins, even against `Duration::ZERO`,
/// and arms nothing; a pending one under `ZERO` fires at its first poll.
pub async fn ready_wins_even_at_zero<T: Target>(t: &T) -> Outcome {
    let before = t.occupied();
    for _ in 0..100 {
        ensure(
            deadline(t, async { 7 }, t.tick()).await == Ok(7),
            "a ready future lost to its deadline",
        )?;
        ensure(
            deadline(t, async { 7 }, Duration::ZERO).await == Ok(7),
            "a ready future lost to Duration::ZERO",
        )?;
    }
    ensure(t.occupied() == before, "a ready future armed an entry")?;
    // Early in a tick, so that the clock's reading cannot move on by itself before the
    // fire (a real clock may tick at any instruction).
    t.to_phase(Duration::ZERO);
    let start = t.now();
    let result = deadline(t, pending::<()>(), Duration::ZERO).await;
    ensure(
        result.map_err(|e| e.duration()) == Err(Duration::ZERO),
        "a pending future under Duration::ZERO did not fire with it",
    )?;
    ensure(
        !T::EXACT || t.now() == start,
        "Duration::ZERO waited for the clock",
    )
}

/// Rule 5: a future that completes in time returns its output as `Ok`, and the deadline,
/// decided, is done with the wheel: past its limit, its entry is back.
pub async fn decided_once<T: Target>(t: &T) -> Outcome {
    let before = t.occupied();
    let limit = t.tick() * 50;
    let inner = async {
        sleep(t, t.tick() * 2).await;
        "done"
    };
    ensure(
        deadline(t, inner, limit).await == Ok("done"),
        "a future that completed in time was not Ok",
    )?;
    // Past the limit: a deadline decided as `Ok` still holding its entry would show here.
    sleep(t, limit).await;
    ensure(
        t.occupied() == before,
        "a completed deadline kept its entry",
    )
}

/// Rule 6: `Duration::MAX` never fires and holds no entry.
pub async fn duration_max<T: Target>(t: &T) -> Outcome {
    let before = t.occupied();
    let mut forever = pin!(deadline(t, pending::<()>(), Duration::MAX));
    let mut short = pin!(sleep(t, t.tick() * 5));
    let forever_fired = poll_fn(|cx| {
        if forever.as_mut().poll(cx).is_ready() {
            return Poll::Ready(true);
        }
        if short.as_mut().poll(cx).is_ready() {
            return Poll::Ready(false);
        }
        Poll::Pending
    })
    .await;
    ensure(!forever_fired, "a Duration::MAX deadline fired")?;
    ensure(t.occupied() == before, "Duration::MAX holds an entry")
}

/// Rule 6: an instant already past fires at the first pending poll; one ahead never early.
pub async fn deadline_at_in_the_past<T: Target>(t: &T) -> Outcome {
    sleep(t, t.tick() * 3).await;
    let past = t.now() - t.tick() * 2;
    let result = Deadline::new(
        pending::<()>(),
        t.wheel(),
        Limit::At(Reading::since_origin(past)),
    )
    .await;
    ensure(
        result.map_err(|e| e.duration()) == Err(Duration::ZERO),
        "a deadline at a past instant did not fire at once",
    )?;
    let at = t.now() + t.tick() * 4;
    let result = Deadline::new(
        pending::<()>(),
        t.wheel(),
        Limit::At(Reading::since_origin(at)),
    )
    .await;
    ensure(result.is_err(), "a pending future did not time out")?;
    ensure(t.now() >= at, "deadline_at fired before its instant")
}

/// The most entries [`full_wheel_degrades`] fills: wheels of more are not filled.
pub const MAX_FILL: usize = 16;

/// Rule 6: on a full fixed wheel a deadline still fires, never early and within two ticks
/// (its task polls busily), and once entries free, deadlines arm again. Passes without
/// checking anything on a wheel that grows or holds more than [`MAX_FILL`].
pub async fn full_wheel_degrades<T: Target>(t: &T) -> Outcome {
    let Some(capacity) = t.fixed_capacity().filter(|&n| n <= MAX_FILL) else {
        return Ok(());
    };
    let before = t.occupied();
    {
        let fillers: [_; MAX_FILL] =
            core::array::from_fn(|_| deadline(t, pending::<()>(), t.tick() * 1_000));
        let mut fillers = pin!(fillers);
        for filler in fillers.iter_mut().take(capacity - before) {
            ensure(
                poll_once(Pin::new(filler)).await.is_pending(),
                "a filler completed",
            )?;
        }
        ensure(t.occupied() == capacity, "the wheel is not full")?;

        let requested = t.tick() * 5;
        let degraded_before = t.degraded_polls();
        let start = t.true_now();
        let result = deadline(t, pending::<()>(), requested).await;
        let elapsed = t.true_now() - start;
        ensure(
            result.is_err(),
            "a deadline on a full wheel did not time out",
        )?;
        check_timing(t, requested, elapsed)?;
        let degraded = t.degraded_polls().zip(degraded_before);
        ensure(
            degraded.is_none_or(|(after, before)| after > before),
            "a deadline on a full wheel did not poll degraded",
        )?;
        ensure(
            t.occupied() == capacity,
            "a degraded deadline took an entry",
        )?;
    }
    // The fillers are dropped: their entries come back and a deadline arms again.
    ensure(
        entries_back_to(t, before).await,
        "the fillers' entries were not reclaimed",
    )?;
    let mut armed = pin!(deadline(t, pending::<()>(), t.tick() * 1_000));
    ensure(
        poll_once(armed.as_mut()).await.is_pending(),
        "a deadline completed",
    )?;
    ensure(
        t.occupied() == before + 1,
        "a deadline after the wheel was full did not arm",
    )
}

/// Budgets, the `no_std` way ([`Budget`], [`Budgeted::with_budget`],
/// [`Deadline::within`]): retries of 4 ticks each in a budget of 10 stop at the budget's
/// edge, never before it, and the error is the budget's.
pub async fn budget_stops_retries<T: Target>(t: &T) -> Outcome {
    let length = t.tick() * 10;
    let attempt = t.tick() * 4;
    let start = t.true_now();
    let Some(budget) = Budget::starting_now(t.wheel(), length) else {
        return ensure(false, "a budget of ten ticks has no limit");
    };
    let budget = budget.named("edge");
    let mut attempts = 0_u32;
    let retries = async {
        loop {
            match deadline(t, pending::<()>(), attempt).within(budget).await {
                Err(e) if e.is_budget() => return e,
                _ => attempts += 1,
            }
        }
    };
    let outcome = Budgeted::with_budget(retries, t.wheel(), budget).await;
    let elapsed = t.true_now() - start;
    // Either the last attempt's deadline, cut to the budget, or the block's own.
    let err = match outcome {
        Ok(err) | Err(err) => err,
    };
    ensure(err.is_budget(), "the budget's end is not reported as one")?;
    ensure(
        err.name() == Some("edge"),
        "the error lost the budget's name",
    )?;
    ensure(
        err.duration() == length,
        "the error carries another duration",
    )?;
    // Each attempt lasts at least 4 ticks: at most two fit in 10. On a real clock the
    // first may be so late that it ends together with the budget.
    ensure(
        attempts <= 2 && (attempts >= 1 || !T::EXACT),
        "not one or two whole attempts in the budget",
    )?;
    check_timing(t, length, elapsed)
}

/// A stream of the numbers from 1, one every `every` on the target's wheel.
struct Ticker {
    wheel: &'static dyn RawWheel,
    every: Duration,
    sleep: Option<Sleep<'static>>,
    count: u32,
}

impl Stream for Ticker {
    type Item = u32;

    fn poll_next(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Option<u32>> {
        let (wheel, every) = (self.wheel, self.every);
        let sleep = self
            .sleep
            .get_or_insert_with(|| Sleep::new(wheel, Limit::After(every)));
        if Pin::new(sleep).poll(cx).is_pending() {
            return Poll::Pending;
        }
        self.sleep = None;
        self.count += 1;
        Poll::Ready(Some(self.count))
    }
}

/// A whole-stream deadline of 10 ticks over a stream of one item every 3: some items, then
/// one `Err(Elapsed)` with the deadline's name, never early, then the end of the stream.
pub async fn stream_deadline_ends_once<T: Target>(t: &T) -> Outcome {
    let requested = t.tick() * 10;
    let ticker = Ticker {
        wheel: t.wheel(),
        every: t.tick() * 3,
        sleep: None,
        count: 0,
    };
    let mut stream = pin!(StreamDeadline::new(ticker, t.wheel(), requested).named("feed"));
    let start = t.true_now();
    let mut items = 0_u32;
    let err = loop {
        match poll_fn(|cx| stream.as_mut().poll_next(cx)).await {
            Some(Ok(item)) => {
                items += 1;
                ensure(item == items, "an item came out of order")?;
            }
            Some(Err(err)) => break err,
            None => return ensure(false, "the stream ended without an error"),
        }
    };
    let elapsed = t.true_now() - start;
    ensure(
        err.name() == Some("feed"),
        "the error lost the deadline's name",
    )?;
    ensure(
        err.duration() == requested,
        "the error carries another duration",
    )?;
    // An item every 3 ticks or later: at most 3 in 10 ticks (a real clock may be late by
    // more than the stream's period: there only the error and the end are checked).
    ensure(
        !T::EXACT || (1..=3).contains(&items),
        "not one to three items of a 3-tick stream in 10 ticks",
    )?;
    ensure(
        poll_fn(|cx| stream.as_mut().poll_next(cx)).await.is_none(),
        "the stream went on after its error",
    )?;
    check_timing(t, requested, elapsed)
}

/// Calls the macro `$then` with `$($args)*` followed by the name of every scenario, in the
/// order they run: the one list that the firmware, the host suite and `ci/firmware.sh` read.
macro_rules! scenarios {
    ($($then:ident)::+! { $($args:tt)* }) => {
        $($then)::+! {
            $($args)*
            cancel_on_fire,
            drop_releases,
            never_early_at_every_phase,
            clock_starts_at_first_poll,
            ready_wins_even_at_zero,
            decided_once,
            duration_max,
            deadline_at_in_the_past,
            full_wheel_degrades,
            budget_stops_retries,
            stream_deadline_ends_once,
        }
    };
}
// By path, for the host suite; the firmware only runs `run_all`.
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
