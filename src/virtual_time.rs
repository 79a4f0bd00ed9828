//! Virtual time for tests, on any executor (feature `test-util`): [`pause`] gives the
//! calling thread a clock of its own that only [`advance`] (which fires, in deadline order,
//! what came due) and [`advance_to_next`] move.
//!
//! * Default deadlines, sleeps and budgets started on the paused thread afterwards run on
//!   it, under any executor polling there; earlier ones stay on real time. Under tokio,
//!   prefer `#[tokio::test(start_paused = true)]`.
//! * Each paused thread's clock is its own, from the real time of its first `pause`.
//! * A paused thread's wheel is leaked; at the thread's exit it is shelved for the next
//!   `pause`, unless a deadline is still armed on it.
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

use core::cell::Cell;
use core::sync::atomic::{AtomicU64, Ordering};
use core::time::Duration;
use std::time::Instant;

use punctual_core::{Clock, Growable, Reading, Wheel};

use crate::global::std_clock;
use crate::wheel_choice::{Shelf, WheelChoice};

const TICK: Duration = Duration::from_millis(1);

/// A paused thread's clock. Only its thread's `advance` moves it; `pause` sets it anew,
/// earlier too, when a shelved wheel serves another thread.
#[derive(Debug)]
struct VirtualClock(AtomicU64);

impl VirtualClock {
    fn set(&self, to: Duration) {
        let nanos = u64::try_from(to.as_nanos()).unwrap_or(u64::MAX);
        self.0.store(nanos, Ordering::Release);
    }
}

impl Clock for VirtualClock {
    fn now(&self) -> Duration {
        Duration::from_nanos(self.0.load(Ordering::Acquire))
    }
}

type VirtualWheel = Wheel<VirtualClock, Growable>;

/// A paused thread's wheel, and how default deadlines reach it. Leaked.
pub(crate) struct Paused {
    wheel: &'static VirtualWheel,
    choice: WheelChoice,
}

/// The wheels of paused threads that have exited, for the next `pause`.
pub(crate) static SHELF: Shelf<Paused> = Shelf::new();

std::thread_local! {
    static PAUSED: Held = const { Held(Cell::new(None)) };
}

/// The thread's virtual wheel, once paused; shelved when the thread exits (a deadline
/// still armed keeps it from serving again: `restart`).
struct Held(Cell<Option<&'static Paused>>);

impl Drop for Held {
    fn drop(&mut self) {
        if let Some(paused) = self.0.take() {
            SHELF.put(paused);
        }
    }
}

/// The paused thread's wheel, for a deadline starting now.
#[inline]
pub(crate) fn current() -> Option<&'static WheelChoice> {
    PAUSED
        .try_with(|held| held.0.get())
        .ok()
        .flatten()
        .map(|paused| &paused.choice)
}

fn paused_wheel_of(caller: &str) -> &'static VirtualWheel {
    let paused = PAUSED.with(|held| held.0.get()).unwrap_or_else(|| {
        panic!("`punctual::virtual_time::{caller}` on a thread that did not call `pause`")
    });
    paused.wheel
}

/// Moves `wheel`'s clock by `by` and fires what comes due (see [`advance`]); returns the
/// reading the wheel plans to turn at.
fn advance_wheel(wheel: &VirtualWheel, by: Duration) -> Reading {
    wheel.clock().set(wheel.clock().now().saturating_add(by));
    wheel.turn()
}

/// Pauses time for the default deadlines started on this thread from now on, from the real
/// time of the first call; later calls change nothing.
pub fn pause() {
    PAUSED.with(|held| {
        if held.0.get().is_none() {
            let paused = SHELF.claim(|paused| paused.wheel.restart(), make);
            paused.wheel.clock().set(std_clock().now());
            held.0.set(Some(paused));
        }
    });
}

fn make() -> &'static Paused {
    // Precise fires: advances that add up to a deadline fire it however they are split.
    let wheel: &'static VirtualWheel = Box::leak(Box::new(
        Wheel::growable(VirtualClock(AtomicU64::new(0)), TICK).with_precise_fires(),
    ));
    Box::leak(Box::new(Paused {
        wheel,
        choice: WheelChoice {
            wheel,
            #[cfg(feature = "tokio")]
            runtime_clock: None,
            on_global_timeline: false,
        },
    }))
}

/// Whether this thread has paused time.
pub fn is_paused() -> bool {
    PAUSED.with(|held| held.0.get()).is_some()
}

/// Moves this thread's virtual clock forward by `by` and fires, in deadline order, every
/// deadline it passes (`Duration::ZERO`: what is due now), waking their tasks.
///
/// # Panics
///
/// If this thread did not [`pause`], or if a waker panics while firing.
pub fn advance(by: Duration) {
    advance_wheel(paused_wheel_of("advance"), by);
}

/// Moves this thread's virtual clock to the next pending deadline's own time and fires
/// what is due there. Returns how far it moved; `None` (and no move) if nothing is pending.
///
/// # Panics
///
/// If this thread did not [`pause`], or if a waker panics while firing.
pub fn advance_to_next() -> Option<Duration> {
    let wheel = paused_wheel_of("advance_to_next");
    let start = wheel.clock().now();
    let reading = || Reading::since_origin(wheel.clock().now());
    // A turn where the clock stands takes in what was armed since the last one.
    let mut plan = advance_wheel(wheel, Duration::ZERO);
    if wheel.occupied() == 0 {
        return None;
    }
    // A plan is a deadline's time rounded up to the grain, a 32768th of a tick.
    // From a grain before the plan, stepping a nanosecond at a time stops on its own time.
    let grain = Duration::from_nanos((wheel.tick().as_nanos() / 32_768) as u64);
    let fired = wheel.stats().fired;
    while wheel.stats().fired == fired && wheel.occupied() != 0 {
        let now = reading();
        if plan == Reading::END || plan <= now {
            // A plan at or before now is stale: move a tick.
            plan = advance_wheel(wheel, wheel.tick());
            continue;
        }
        let target = plan;
        plan = advance_wheel(wheel, (target - now).saturating_sub(grain));
        while wheel.stats().fired == fired && reading() < target {
            plan = advance_wheel(wheel, Duration::from_nanos(1));
        }
        // A plan may be a cascade that fires nothing: go on to the one that does.
    }
    Some(wheel.clock().now() - start)
}

/// This thread's virtual time as an `Instant`: the real time of its first [`pause`] plus
/// every [`advance`] since.
///
/// # Panics
///
/// If this thread did not [`pause`].
pub fn now() -> Instant {
    let reading = paused_wheel_of("now").clock().now();
    let clock = std_clock();
    clock
        .instant_of(Reading::since_origin(reading))
        .unwrap_or_else(|| clock.origin() + reading)
}

/// The calling thread's paused wheel, for its [`stats`](Wheel::stats), its entries in use
/// ([`occupied`](Wheel::occupied)) and its clock, or deadlines made on it directly.
///
/// # Panics
///
/// If this thread did not call [`pause`].
pub fn paused_wheel() -> &'static Wheel<impl Clock, Growable> {
    self::paused_wheel_of("paused_wheel")
}
