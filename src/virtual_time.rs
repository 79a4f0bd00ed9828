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

use core::cell::Cell;
use core::time::Duration;
use std::time::Instant;

use punctual_core::{Clock, Growable, ManualClock, Reading, Wheel};

use crate::ambient::Chosen;
use crate::global::std_clock;

/// The tick of a paused thread's wheel, as the global wheel's.
const TICK: Duration = Duration::from_millis(1);

/// A paused thread's wheel, and how default deadlines reach it. Leaked.
struct Paused {
    wheel: &'static Wheel<ManualClock, Growable>,
    chosen: Chosen,
}

std::thread_local! {
    /// The thread's virtual wheel, once paused. Leaked: deadlines may outlive the thread.
    static PAUSED: Cell<Option<&'static Paused>> = const { Cell::new(None) };
}

/// The paused thread's wheel, for a deadline starting now.
#[inline]
pub(crate) fn current() -> Option<&'static Chosen> {
    PAUSED
        .try_with(Cell::get)
        .ok()
        .flatten()
        .map(|paused| &paused.chosen)
}

fn paused_wheel(caller: &str) -> &'static Wheel<ManualClock, Growable> {
    let paused = PAUSED.with(Cell::get).unwrap_or_else(|| {
        panic!("`punctual::virtual_time::{caller}` on a thread that did not call `pause`")
    });
    paused.wheel
}

/// Pauses time for the default deadlines started on this thread from now on (see the
/// [module docs](self)). The clock starts at the real time of the first call; calling it
/// again changes nothing.
pub fn pause() {
    PAUSED.with(|paused| {
        if paused.get().is_none() {
            let clock = ManualClock::new();
            clock.advance(std_clock().now());
            let wheel: &'static Wheel<ManualClock, Growable> =
                Box::leak(Box::new(Wheel::growable(clock, TICK)));
            // A crowded tick's deadlines fire at their own times too, as a sparse one's do,
            // so that advances that add up to a deadline fire it however they are split.
            wheel.enable_early_looks();
            let leaked: &'static Paused = Box::leak(Box::new(Paused {
                wheel,
                chosen: Chosen {
                    wheel,
                    #[cfg(feature = "tokio")]
                    runtime_clock: None,
                    on_global_timeline: false,
                },
            }));
            paused.set(Some(leaked));
        }
    });
}

/// Whether this thread has paused time.
pub fn is_paused() -> bool {
    PAUSED.with(Cell::get).is_some()
}

/// Moves this thread's virtual clock forward by `by`, and fires, in deadline order, every
/// deadline it passes: their tasks are woken before this returns (they run when their
/// executor next polls them). `Duration::ZERO` fires what is due now.
///
/// # Panics
///
/// If this thread did not [`pause`], or if a waker panics while firing.
pub fn advance(by: Duration) {
    paused_wheel("advance").advance(by);
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
    let step = |by: Duration| {
        wheel.clock().advance(by);
        wheel.advance_to(reading())
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
