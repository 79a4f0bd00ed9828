//! loom models of every lock-free hand-off in the wheel, one module per hand-off:
//!
//! * [`plan`]: an arm and a turn meet at the driver's plan (the turn takes the entry in, or
//!   the arm sees the plan and wakes the driver), also on a shard marked in use for the
//!   first time;
//! * [`release`]: a cancel, or a take-back off the arm inbox, meets a fire, a turn's take
//!   of the inboxes, a reclamation or an arm on the same shard;
//! * [`entries`]: entries move between free lists, shards and a growable storage's
//!   segments (steals, fresh blocks, the free list's ABA tag, two first arms, the stats
//!   scan);
//! * [`waker`]: a waker slot registered again while the fire takes it;
//! * [`handoff`]: batched wakes: the lead's poll takes the hand-off list while the next
//!   tick's turn takes it back or hands off a batch of its own;
//! * [`degraded`]: a deadline on a full wheel waits in a place for the next tick's turn,
//!   while the driver turns or another deadline takes a place;
//! * [`drivers`]: the driver role between two turning threads, and drivers' places: a
//!   driver that stops or takes its place, a turn by hand out of idle, an idle driver's
//!   skipped turn;
//! * [`reset`]: a sleep's or a deadline's reset meets the turn that fires its old time.
//!
//! Run with `RUSTFLAGS="--cfg punctual_loom" cargo test -p punctual-core --test loom --release`
//! (the script `ci/loom.sh` does). Under `cfg(punctual_loom)` the crate's atomics and cells
//! are loom's (see `core/src/sync.rs`), and so is the counting waker's count
//! (`tests/support`), so loom explores every interleaving of them up to the preemption
//! bound.
//!
//! Each model checks a "no lost wakeup" property: whatever the interleaving, a deadline
//! that is due either has its task woken, or the driver was woken to turn again, and one
//! more turn then fires it; entries are never lost or freed twice.
#![cfg(punctual_loom)]

#[path = "../support/mod.rs"]
mod support;

mod degraded;
mod drivers;
mod entries;
mod handoff;
mod plan;
mod release;
mod reset;
mod waker;

use std::future::Future;
use std::pin::Pin;
use std::sync::Arc as StdArc;
use std::task::{Context, Poll, Waker};
use std::time::Duration;

use loom::sync::Arc;
use punctual_core::{Clock, ManualClock, Reading, Wheel};
use support::{CountingWaker, TICK};

type TestWheel = Wheel<ManualClock, punctual_core::Fixed<4>>;

fn wheel() -> Arc<TestWheel> {
    Arc::new(Wheel::fixed(ManualClock::new(), TICK))
}

/// A wheel with batched wakes (see `handoff`).
fn batched_wheel() -> Arc<TestWheel> {
    Arc::new(Wheel::fixed(ManualClock::new(), TICK).with_batched_wakes())
}

/// A counting waker and a clone of its waker, to move into a model's thread.
fn counter() -> (CountingWaker, Waker) {
    let count = CountingWaker::new();
    let waker = count.waker.clone();
    (count, waker)
}

/// Lends the wheel to spawned threads as `'static`, so a deadline can move between them.
///
/// loom has no scoped threads; every model below joins all its threads before the last
/// `Arc` is dropped, which is what makes this sound.
fn lend<W>(wheel: &Arc<W>) -> &'static W {
    // SAFETY: the models join every thread that uses the reference before dropping the
    // `Arc` that keeps the wheel alive.
    unsafe { &*Arc::as_ptr(wheel) }
}

fn woken(count: &CountingWaker) -> usize {
    count.wakes()
}

/// After a model's threads joined: one more turn takes in and reclaims what is left; then
/// exactly `live` entries are in use, and when `at` comes each of their deadlines fires
/// once (`task` counts them all).
fn settle<S: punctual_core::Storage>(
    wheel: &Wheel<ManualClock, S>,
    task: &CountingWaker,
    live: usize,
    at: Duration,
) {
    wheel.turn();
    assert_eq!(wheel.occupied(), live, "entries in use");
    wheel.clock().set(at);
    wheel.turn();
    assert_eq!(
        woken(task),
        live,
        "each live deadline fired once, the others never"
    );
}

/// Arms a sleep until `at` and keeps its entry armed (the handle is forgotten), for the
/// checks that follow.
fn arm_and_keep<S: punctual_core::Storage>(wheel: &Wheel<ManualClock, S>, at: Duration) {
    let mut sleep = wheel.sleep_until(Reading::since_origin(at));
    assert!(poll(&mut sleep, Waker::noop()).is_pending());
    std::mem::forget(sleep);
}

/// After a turn that planned `planned` raced an arm due at `due`: the turn took the entry
/// in (it plans `due` or sooner), or the arm woke the driver (woken more than the `seen`
/// times counted before the race).
fn assert_taken_in_or_woken(driver: &CountingWaker, seen: usize, planned: Duration, due: Duration) {
    assert!(
        woken(driver) > seen || planned <= due,
        "lost wakeup: the driver planned {planned:?} for a deadline due at {due:?} and was not woken"
    );
}

fn poll<F: Future + Unpin>(f: &mut F, waker: &Waker) -> Poll<F::Output> {
    Pin::new(f).poll(&mut Context::from_waker(waker))
}

/// Runs `f` under loom with at most `preemptions` forced switches per execution (unless
/// `LOOM_MAX_PREEMPTIONS` says otherwise), which keeps the whole file to a few minutes.
///
/// Fails a model that loom ran only once: then no two operations of its threads were
/// ever found to race, and it checked one interleaving, not all (a model whose threads
/// meet only through memory loom cannot see, as `ManualClock`'s once was). Prints how
/// many it explored.
fn model_bounded(preemptions: usize, f: impl Fn() + Sync + Send + 'static) {
    let mut builder = loom::model::Builder::new();
    if builder.preemption_bound.is_none() {
        builder.preemption_bound = Some(preemptions);
    }
    let executions = StdArc::new(std::sync::atomic::AtomicUsize::new(0));
    let counted = executions.clone();
    builder.check(move || {
        counted.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        f();
    });
    let executions = executions.load(std::sync::atomic::Ordering::Relaxed);
    eprintln!(
        "{}: {executions} interleavings",
        std::thread::current().name().unwrap_or("model")
    );
    assert!(
        executions > 1,
        "loom explored one interleaving: the model's threads never race"
    );
}

fn model(f: impl Fn() + Sync + Send + 'static) {
    model_bounded(3, f);
}

/// Arms `Fixed<4>`'s four entries, for one tick after the clock's reading, and turns until
/// then: none runs degraded (every entry was free exactly once), and each fires once
/// (none is still linked where an earlier use of its entry left it).
fn assert_every_entry_free_once(wheel: &Arc<TestWheel>) {
    let (task, task_waker) = counter();
    let due = wheel.clock().now() + TICK;
    let mut more: Vec<_> = (0..4)
        .map(|_| lend(wheel).sleep_until(Reading::since_origin(due)))
        .collect();
    for sleep in &mut more {
        assert!(poll(sleep, &task_waker).is_pending());
    }
    assert_eq!(wheel.occupied(), 4);
    assert_eq!(wheel.degraded_polls(), 0, "an entry went missing");
    settle(wheel, &task, 4, due);
}
