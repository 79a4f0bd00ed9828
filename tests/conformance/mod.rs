//! The conformance suite: every rule of docs/design.md, "The semantics", written once and
//! run against every driver (manual clock, the std thread, tokio paused and real, smol,
//! embassy).
//!
//! A driver plugs in through [`Harness`]; [`conformance_suite!`] then expands to one
//! `#[test]` per rule, each on a fresh harness (so per-test wheels never share time or
//! entries). Include this file from a test target with
//! `#[path = "conformance/mod.rs"] mod conformance;` (or the right relative path).
//!
//! On exact clocks (the manual clock, tokio's paused clock, embassy's mock driver) the
//! suite checks timing to the tick: never early, at most two ticks late. On real clocks
//! it checks only what holds on a loaded 2-core machine: never early, fires eventually,
//! the inner future dropped before the error is seen.
#![allow(dead_code, unreachable_pub)]

use core::future::Future;
use core::pin::{Pin, pin};
use core::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use core::task::{Context, Poll};
use core::time::Duration;
use std::sync::Arc;

use punctual_core::{Clock, Deadline, Elapsed, Limit, RawWheel, Reading, Sleep, Storage, Wheel};

/// What the suite reads off a wheel, whatever its clock and storage.
pub trait WheelView: Sync {
    /// The wheel as deadlines see it.
    fn as_raw(&self) -> &dyn RawWheel;
    /// The wheel's tick.
    fn tick(&self) -> Duration;
    /// The wheel's clock reading now.
    fn now(&self) -> Duration;
    /// Entries in use (`Wheel::occupied`).
    fn occupied(&self) -> usize;
}

impl<C: Clock, S: Storage> WheelView for Wheel<C, S> {
    fn as_raw(&self) -> &dyn RawWheel {
        self
    }
    fn tick(&self) -> Duration {
        Wheel::tick(self)
    }
    fn now(&self) -> Duration {
        self.clock().now()
    }
    fn occupied(&self) -> usize {
        Wheel::occupied(self)
    }
}

/// One driver under test.
pub trait Harness {
    /// Whether the clock is exact (virtual): then lateness is checked to the tick.
    const EXACT: bool;

    /// The wheel under test, alive for the rest of the process.
    fn wheel_view(&self) -> &'static dyn WheelView;

    /// The wheel under test, as deadlines see it.
    fn wheel(&self) -> &'static dyn RawWheel {
        self.wheel_view().as_raw()
    }

    /// The wheel's tick.
    fn tick(&self) -> Duration {
        self.wheel_view().tick()
    }

    /// The wheel's clock reading now.
    fn now(&self) -> Duration {
        self.wheel_view().now()
    }

    /// Entries in use on the wheel (`Wheel::occupied`).
    fn occupied(&self) -> usize {
        self.wheel_view().occupied()
    }

    /// Runs `body` to completion on the driver's runtime, with time passing: virtual
    /// clocks advance whenever every task is idle; real clocks just run.
    fn run(&self, body: impl Future<Output = ()>);
}

/// A deadline of `duration` around `future` on the harness's wheel.
pub fn deadline<H: Harness, F: Future>(
    h: &H,
    future: F,
    duration: Duration,
) -> Deadline<'static, F> {
    Deadline::new(future, h.wheel(), Limit::After(duration))
}

/// A sleep of `duration` on the harness's wheel.
pub fn sleep<H: Harness>(h: &H, duration: Duration) -> Sleep<'static> {
    Sleep::new(h.wheel(), Limit::After(duration))
}

/// A future that never completes and sets its flag when dropped.
pub struct NeverWithDropFlag(pub Arc<AtomicBool>);

impl Future for NeverWithDropFlag {
    type Output = ();
    fn poll(self: Pin<&mut Self>, _: &mut Context<'_>) -> Poll<()> {
        Poll::Pending
    }
}

impl Drop for NeverWithDropFlag {
    fn drop(&mut self) {
        self.0.store(true, Ordering::SeqCst);
    }
}

/// Checks `elapsed >= requested`, and on exact clocks `elapsed <= requested + 2 ticks`.
fn check_timing<H: Harness>(h: &H, what: &str, requested: Duration, elapsed: Duration) {
    assert!(
        elapsed >= requested,
        "{what}: fired early: {elapsed:?} < {requested:?}"
    );
    if H::EXACT {
        let bound = requested + 2 * h.tick();
        assert!(
            elapsed <= bound,
            "{what}: more than two ticks late: {elapsed:?} > {bound:?}"
        );
    }
}

/// Rule 1: the inner future is dropped before `Err(Elapsed)` is returned.
pub fn fired_deadline_drops_inner_before_error<H: Harness>(h: &H) {
    h.run(async {
        let dropped = Arc::new(AtomicBool::new(false));
        let start = h.now();
        let requested = h.tick() * 5;
        let result = deadline(h, NeverWithDropFlag(dropped.clone()), requested).await;
        // The deadline itself is gone now, but the flag is checked against the error.
        let err = result.expect_err("a future that never completes must time out");
        assert!(
            dropped.load(Ordering::SeqCst),
            "inner future not dropped before Err"
        );
        assert_eq!(err.duration(), requested);
        check_timing(h, "fire", requested, h.now() - start);
    });
}

/// Rule 1, strictly: the flag is set when the `Err` is first seen, while the `Deadline`
/// (pinned here, not a temporary) is still alive.
pub fn inner_dropped_while_deadline_still_alive<H: Harness>(h: &H) {
    h.run(async {
        let dropped = Arc::new(AtomicBool::new(false));
        let mut d = pin!(deadline(
            h,
            NeverWithDropFlag(dropped.clone()),
            h.tick() * 3
        ));
        let result = d.as_mut().await;
        assert!(result.is_err());
        assert!(
            dropped.load(Ordering::SeqCst),
            "inner still alive when Err was seen"
        );
    });
}

/// Rule 1: dropping a pending deadline drops the inner future and releases the entry.
pub fn dropping_a_pending_deadline_releases_everything<H: Harness>(h: &H) {
    let before = h.occupied();
    let dropped = Arc::new(AtomicBool::new(false));
    h.run(async {
        let mut d = Box::pin(deadline(
            h,
            NeverWithDropFlag(dropped.clone()),
            Duration::from_secs(30),
        ));
        // One poll arms it.
        core::future::poll_fn(|cx| {
            assert!(d.as_mut().poll(cx).is_pending());
            Poll::Ready(())
        })
        .await;
        assert_eq!(
            h.occupied(),
            before + 1,
            "a pending deadline holds one entry"
        );
        drop(d);
        assert!(
            dropped.load(Ordering::SeqCst),
            "dropping the deadline drops the inner future"
        );
        // Reclaimed within about a tick of a driver that runs: wait for it, bounded.
        let mut waited = Duration::ZERO;
        while h.occupied() != before {
            assert!(
                waited < Duration::from_secs(5),
                "cancelled entry not reclaimed after {waited:?}"
            );
            sleep(h, h.tick()).await;
            waited += h.tick();
        }
    });
}

/// Rule 2 and 3: never early, at most two ticks late (exact clocks), for durations around
/// the tick.
pub fn never_early_around_the_tick<H: Harness>(h: &H) {
    let tick = h.tick();
    let durations = [
        tick / 2,
        tick,
        tick + tick / 3,
        tick * 2,
        tick * 7,
        tick * 64,
        tick * 65,
    ];
    h.run(async {
        for requested in durations {
            let start = h.now();
            let err = deadline(h, core::future::pending::<()>(), requested)
                .await
                .expect_err("pending inner must time out");
            check_timing(
                h,
                &format!("deadline of {requested:?}"),
                requested,
                h.now() - start,
            );
            assert_eq!(err.duration(), requested);
            let start = h.now();
            sleep(h, requested).await;
            check_timing(
                h,
                &format!("sleep of {requested:?}"),
                requested,
                h.now() - start,
            );
        }
    });
}

/// Rule 4: the clock starts at the first poll, not at construction.
pub fn clock_starts_at_first_poll<H: Harness>(h: &H) {
    h.run(async {
        let requested = h.tick() * 4;
        let d = deadline(h, core::future::pending::<()>(), requested);
        sleep(h, h.tick() * 10).await; // time passes before the first poll
        let start = h.now();
        assert!(d.await.is_err());
        check_timing(h, "deadline created early", requested, h.now() - start);
    });
}

/// Rule 4: a future ready at its first poll arms nothing.
pub fn ready_at_first_poll_arms_nothing<H: Harness>(h: &H) {
    h.run(async {
        let before = h.occupied();
        for _ in 0..100 {
            assert_eq!(deadline(h, async { 7 }, h.tick()).await, Ok(7));
            assert_eq!(deadline(h, async { 7 }, Duration::ZERO).await, Ok(7));
        }
        assert_eq!(h.occupied(), before, "a ready future armed an entry");
    });
}

/// Rule 5: a result produced in time is `Ok`; the deadline is decided once.
pub fn completes_in_time_is_ok<H: Harness>(h: &H) {
    h.run(async {
        let inner = async {
            sleep(h, h.tick() * 2).await;
            "done"
        };
        assert_eq!(deadline(h, inner, h.tick() * 50).await, Ok("done"));
    });
}

/// Rule 6: `Duration::ZERO` fires at the first pending poll; a ready future still wins.
pub fn zero_duration<H: Harness>(h: &H) {
    h.run(async {
        let start = h.now();
        let err = deadline(h, core::future::pending::<()>(), Duration::ZERO)
            .await
            .unwrap_err();
        assert_eq!(err.duration(), Duration::ZERO);
        if H::EXACT {
            assert_eq!(h.now(), start, "ZERO must not wait on an exact clock");
        }
        assert_eq!(deadline(h, async { 1 }, Duration::ZERO).await, Ok(1));
    });
}

/// Rule 6: `Duration::MAX` never fires and holds no entry.
pub fn max_duration_never_fires<H: Harness>(h: &H) {
    h.run(async {
        let before = h.occupied();
        let mut forever = pin!(deadline(h, core::future::pending::<()>(), Duration::MAX));
        let mut short = pin!(sleep(h, h.tick() * 5));
        let winner = core::future::poll_fn(|cx| {
            if forever.as_mut().poll(cx).is_ready() {
                return Poll::Ready("forever");
            }
            if short.as_mut().poll(cx).is_ready() {
                return Poll::Ready("short");
            }
            Poll::Pending
        })
        .await;
        assert_eq!(winner, "short", "a Duration::MAX deadline fired");
        assert_eq!(h.occupied(), before, "Duration::MAX holds an entry");
    });
}

/// Rule 6: an instant already past fires at the first pending poll.
pub fn deadline_at_in_the_past<H: Harness>(h: &H) {
    h.run(async {
        sleep(h, h.tick() * 3).await;
        let past = h.now() - h.tick() * 2;
        let d = Deadline::new(
            core::future::pending::<()>(),
            h.wheel(),
            Limit::At(Reading::since_origin(past)),
        );
        let err = d.await.unwrap_err();
        assert_eq!(err.duration(), Duration::ZERO);
        let at = h.now() + h.tick() * 4;
        let d = Deadline::new(
            core::future::pending::<()>(),
            h.wheel(),
            Limit::At(Reading::since_origin(at)),
        );
        assert!(d.await.is_err());
        assert!(h.now() >= at, "deadline_at fired before its instant");
    });
}

/// Rule 7: `Elapsed` carries the duration and the name.
pub fn elapsed_names_the_deadline<H: Harness>(h: &H) {
    h.run(async {
        let err: Elapsed = deadline(h, core::future::pending::<()>(), h.tick() * 2)
            .named("pricing")
            .await
            .unwrap_err();
        assert_eq!(err.name(), Some("pricing"));
        assert_eq!(
            err.to_string(),
            format!("deadline 'pricing' of {:?} elapsed", h.tick() * 2)
        );
    });
}

/// Many deadlines at once: all fire, none early, every entry comes back.
pub fn many_deadlines_all_fire<H: Harness>(h: &H) {
    const COUNT: usize = 500;
    let before = h.occupied();
    let fired = AtomicUsize::new(0);
    h.run(async {
        let mut futures: Vec<_> = (0..COUNT)
            .map(|i| {
                let requested = h.tick() * (1 + (i * 7919 % 50) as u32);
                let fired = &fired;
                Box::pin(async move {
                    let start = h.now();
                    let r = deadline(h, core::future::pending::<()>(), requested).await;
                    assert!(r.is_err());
                    check_timing(h, "one of many", requested, h.now() - start);
                    fired.fetch_add(1, Ordering::SeqCst);
                })
            })
            .collect();
        core::future::poll_fn(|cx| {
            futures.retain_mut(|f| f.as_mut().poll(cx).is_pending());
            if futures.is_empty() {
                Poll::Ready(())
            } else {
                Poll::Pending
            }
        })
        .await;
        // Let the driver reclaim the fired entries.
        sleep(h, h.tick() * 2).await;
    });
    assert_eq!(fired.load(Ordering::SeqCst), COUNT);
    assert_eq!(h.occupied(), before, "entries leaked");
}

/// Expands to one `#[test]` per rule, each on a fresh `$make()` harness.
#[macro_export]
macro_rules! conformance_suite {
    ($make:expr) => {
        $crate::conformance_suite!(@tests $make;
            fired_deadline_drops_inner_before_error,
            inner_dropped_while_deadline_still_alive,
            dropping_a_pending_deadline_releases_everything,
            never_early_around_the_tick,
            clock_starts_at_first_poll,
            ready_at_first_poll_arms_nothing,
            completes_in_time_is_ok,
            zero_duration,
            max_duration_never_fires,
            deadline_at_in_the_past,
            elapsed_names_the_deadline,
            many_deadlines_all_fire,
        );
    };
    (@tests $make:expr; $($name:ident),* $(,)?) => {
        $(
            #[test]
            fn $name() {
                let harness = $make;
                conformance::$name(&harness);
            }
        )*
    };
}
