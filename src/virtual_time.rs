//! Virtual time for tests, on any executor (feature `test-util`).
//!
//! [`pause`] gives the calling thread a clock of its own that moves only when the test
//! says so: every default deadline, sleep and budget *started on this thread* from then on
//! (`fut.deadline(d)`, `punctual::sleep`, `punctual::timeout`, ...) runs on it. [`advance`]
//! moves it and fires, on the calling thread and in deadline order, everything that came
//! due; [`advance_to_next`] jumps straight to the next deadline. No real time passes, and
//! nothing moves the clock by itself.
//!
//! The clock is the thread's own, so tests running in parallel in one `cargo test`
//! process never see each other's time. It works under `futures::executor::block_on`,
//! smol's `block_on` and local executors, and a tokio `current_thread` runtime: whatever
//! polls its futures on the thread that paused. (Under tokio, prefer tokio's own paused
//! clock, `#[tokio::test(start_paused = true)]`: default deadlines follow it with no setup
//! and it also moves tokio's timers.)
//!
//! ```
//! use std::time::Duration;
//! use futures_util::future::{join, pending};
//! use punctual::{DeadlineExt, virtual_time};
//!
//! virtual_time::pause();
//! futures_executor::block_on(async {
//!     let slow = pending::<()>().deadline(Duration::from_secs(30));
//!     let (outcome, ()) = join(slow, async {
//!         virtual_time::advance(Duration::from_secs(29)); // not yet: never early
//!         virtual_time::advance(Duration::from_secs(1));  // now it fires
//!     })
//!     .await;
//!     assert!(outcome.is_err());
//! });
//! ```
//!
//! A deadline started before [`pause`] stays on the wheel it started on (real time). The
//! thread's virtual clock starts at the real time of its first `pause`, so an `Instant`
//! taken before then is already past for `deadline_at`.
//!
//! A paused thread's wheel outlives the thread (a deadline that chose it keeps a
//! `'static` reference to it), so it is never freed: when the thread exits, the wheel
//! goes on a shelf, and a later `pause` on another thread takes it from there, its clock
//! set to that moment's real time and the wheel started over (`Wheel::restart`), unless
//! a deadline is still armed on it (one that outlived its thread), which keeps it off
//! the shelf for good. So a process that pauses time on many threads, one after another,
//! holds as many wheels as threads paused at once.

use core::cell::Cell;
use core::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use core::time::Duration;
use std::sync::Mutex;
use std::time::Instant;

use punctual_core::{Clock, Growable, Reading, Wheel};

use crate::default_wheel::DefaultWheel;
use crate::global::std_clock;

/// The tick of a paused thread's wheel, as the global wheel's.
const TICK: Duration = Duration::from_millis(1);

/// A paused thread's clock: moved only by its thread's `advance`, and set anew (earlier
/// too) only when a shelved wheel serves another thread.
#[derive(Debug)]
struct VirtualClock(AtomicU64);

impl VirtualClock {
    /// Moves the clock forward by `by` (saturating); returns the new reading.
    fn advance(&self, by: Duration) -> Duration {
        let by = u64::try_from(by.as_nanos()).unwrap_or(u64::MAX);
        let before = self
            .0
            .fetch_update(Ordering::AcqRel, Ordering::Acquire, |now| {
                Some(now.saturating_add(by))
            })
            .unwrap_or_else(|now| now);
        Duration::from_nanos(before.saturating_add(by))
    }

    /// Sets the clock to `to`, for a wheel started over for another thread.
    fn set(&self, to: Duration) {
        self.0.store(
            u64::try_from(to.as_nanos()).unwrap_or(u64::MAX),
            Ordering::Release,
        );
    }
}

impl Clock for VirtualClock {
    fn now(&self) -> Duration {
        Duration::from_nanos(self.0.load(Ordering::Acquire))
    }
}

type VirtualWheel = Wheel<VirtualClock, Growable>;

/// A paused thread's wheel, and how default deadlines reach it. Leaked.
struct Paused {
    wheel: &'static VirtualWheel,
    chosen: DefaultWheel,
}

/// The wheels of paused threads that have exited, for the next `pause`. A lock: taken
/// once per thread.
static SHELF: Mutex<Vec<&'static Paused>> = Mutex::new(Vec::new());

/// Paused wheels ever made (leaked).
static MADE: AtomicUsize = AtomicUsize::new(0);

/// How many paused threads' wheels this process has made: a `pause` takes a shelved one
/// first, so this stays at the most paused threads at once. For the tests of their
/// reuse.
#[cfg_attr(not(feature = "tokio"), allow(dead_code))]
pub(crate) fn paused_wheels_made() -> usize {
    MADE.load(Ordering::Relaxed)
}

/// The thread's virtual wheel, once paused; shelved when the thread exits.
struct Held(Cell<Option<&'static Paused>>);

impl Drop for Held {
    fn drop(&mut self) {
        if let Some(paused) = self.0.take() {
            // Deadlines of this thread still armed then (held by futures that outlive
            // it) keep the wheel from serving again: `pause` checks when it takes it.
            SHELF
                .lock()
                .unwrap_or_else(|poisoned| poisoned.into_inner())
                .push(paused);
        }
    }
}

std::thread_local! {
    static PAUSED: Held = const { Held(Cell::new(None)) };
}

/// The paused thread's wheel, for a deadline starting now.
#[inline]
pub(crate) fn current() -> Option<&'static DefaultWheel> {
    PAUSED
        .try_with(|held| held.0.get())
        .ok()
        .flatten()
        .map(|paused| &paused.chosen)
}

fn paused_wheel(caller: &str) -> &'static VirtualWheel {
    let paused = PAUSED.with(|held| held.0.get()).unwrap_or_else(|| {
        panic!("`punctual::virtual_time::{caller}` on a thread that did not call `pause`")
    });
    paused.wheel
}

/// Moves `wheel`'s clock by `by` and fires what comes due (see [`advance`]).
fn advance_wheel(wheel: &VirtualWheel, by: Duration) {
    wheel.clock().advance(by);
    wheel.turn();
}

/// Pauses time for the default deadlines started on this thread from now on (see the
/// [module docs](self)). The clock starts at the real time of the first call; calling it
/// again changes nothing.
pub fn pause() {
    PAUSED.with(|held| {
        if held.0.get().is_none() {
            let paused = unshelve().unwrap_or_else(make);
            paused.wheel.clock().set(std_clock().now());
            held.0.set(Some(paused));
        }
    });
}

/// A shelved wheel, started over; `None` if the shelf is empty.
fn unshelve() -> Option<&'static Paused> {
    loop {
        let paused = SHELF
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner())
            .pop()?;
        // Refused with a deadline still armed (see the module docs).
        if paused.wheel.restart() {
            return Some(paused);
        }
    }
}

/// A new wheel (leaked: see the module docs).
fn make() -> &'static Paused {
    // A crowded tick's deadlines fire at their own times too, as a sparse one's do, so
    // that advances that add up to a deadline fire it however they are split.
    let wheel: &'static VirtualWheel = Box::leak(Box::new(
        Wheel::growable(VirtualClock(AtomicU64::new(0)), TICK).with_early_looks(),
    ));
    MADE.fetch_add(1, Ordering::Relaxed);
    Box::leak(Box::new(Paused {
        wheel,
        chosen: DefaultWheel {
            wheel,
            #[cfg(feature = "tokio")]
            reads_behind: None,
            on_global_timeline: false,
        },
    }))
}

/// Whether this thread has paused time.
pub fn is_paused() -> bool {
    PAUSED.with(|held| held.0.get()).is_some()
}

/// Moves this thread's virtual clock forward by `by`, and fires, in deadline order, every
/// deadline it passes: their tasks are woken before this returns (they run when their
/// executor next polls them). `Duration::ZERO` fires what is due now.
///
/// # Panics
///
/// If this thread did not [`pause`], or if a waker panics while firing.
pub fn advance(by: Duration) {
    advance_wheel(paused_wheel("advance"), by);
}

/// Moves this thread's virtual clock to the next pending deadline's own time and fires
/// what is due there. Returns how far the clock moved, or `None` (the clock stays) when
/// nothing is pending.
///
/// # Panics
///
/// If this thread did not [`pause`], or if a waker panics while firing.
pub fn advance_to_next() -> Option<Duration> {
    let wheel = paused_wheel("advance_to_next");
    let start = wheel.clock().now();
    let reading = || Reading::since_origin(wheel.clock().now());
    // Moves the clock by `by` and turns; returns the reading the wheel plans to turn at.
    let step = |by: Duration| {
        wheel.clock().advance(by);
        wheel.turn()
    };
    // A turn where the clock stands takes in what was armed since the last one.
    let mut plan = step(Duration::ZERO);
    if wheel.occupied() == 0 {
        return None;
    }
    // The wheel plans its turn at a deadline's time rounded up to its grain, a few
    // nanoseconds at most (under a 32768th of a tick), and fires a deadline at any turn
    // at or after its own time: from a grain before the plan, a nanosecond at a time,
    // the clock stops on the deadline's own time.
    let grain = Duration::from_nanos((wheel.tick().as_nanos() / 32_768) as u64);
    let fired = wheel.stats().fired;
    while wheel.stats().fired == fired && wheel.occupied() != 0 {
        let now = reading();
        if plan == Reading::END || plan <= now {
            // A plan at or before now, which a turn would have carried out, moves a tick.
            plan = step(wheel.tick());
            continue;
        }
        let target = plan;
        plan = step((target - now).saturating_sub(grain));
        while wheel.stats().fired == fired && reading() < target {
            plan = step(Duration::from_nanos(1));
        }
        // A plan may be a cascade that fires nothing: go on to the one that does.
    }
    Some(wheel.clock().now() - start)
}

/// This thread's virtual time as an `Instant`: the real time of its first [`pause`], plus
/// every [`advance`] since.
///
/// # Panics
///
/// If this thread did not [`pause`].
pub fn now() -> Instant {
    let reading = paused_wheel("now").clock().now();
    let clock = std_clock();
    clock
        .instant_of(Reading::since_origin(reading))
        .unwrap_or_else(|| clock.origin() + reading)
}
