//! The conformance suite: every rule of docs/design.md, "The semantics", written once and
//! run against every driver (manual clock, the std thread, tokio paused and real, smol,
//! embassy).
//!
//! A driver plugs in through [`Harness`]; [`conformance_suite!`] then expands to one
//! `#[test]` per rule, each on a fresh harness (so per-test wheels never share time or
//! entries). Most rules are the scenarios of [`portable`], which need nothing beyond `core`
//! and also run on firmware (`examples/firmware`); the rest, which need `std` (strings,
//! hundreds of boxed futures), are here. Include this file from a test target with
//! `#[path = "conformance/mod.rs"] mod conformance;` (or the right relative path).
//!
//! On exact clocks (the manual clock, tokio's paused clock, embassy's mock driver) the
//! suite checks timing to the tick: never early, at most two ticks late. On real clocks
//! it checks only what holds on a loaded 2-core machine: never early, fires eventually,
//! the inner future dropped before the error is seen.
#![allow(dead_code, unreachable_pub)]

pub mod delay_queue;
pub mod portable;
pub mod timers;

use core::future::Future;
use core::sync::atomic::{AtomicUsize, Ordering};
use core::task::Poll;
use core::time::Duration;

use punctual_core::{Clock, Deadline, Elapsed, Limit, RawWheel, Sleep, Storage, Wheel};

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

    /// `Some(n)` if the wheel holds at most `n` entries (and degrades when full), `None`
    /// if it grows. A harness of a fixed wheel must let time pass while a task polls busily.
    fn fixed_capacity(&self) -> Option<usize> {
        None
    }

    /// `Wheel::degraded_polls`, if the harness can read it.
    fn degraded_polls(&self) -> Option<usize> {
        None
    }

    /// Runs `body` to completion on the driver's runtime, with time passing: virtual
    /// clocks advance whenever every task is idle; real clocks just run.
    fn run(&self, body: impl Future<Output = ()>);
}

/// A harness as the [`portable`] scenarios see it.
pub struct OnHost<'h, H>(pub &'h H);

impl<H: Harness> portable::Target for OnHost<'_, H> {
    const EXACT: bool = H::EXACT;

    fn wheel(&self) -> &'static dyn RawWheel {
        self.0.wheel()
    }
    fn tick(&self) -> Duration {
        self.0.tick()
    }
    fn now(&self) -> Duration {
        self.0.now()
    }
    fn occupied(&self) -> usize {
        self.0.occupied()
    }
    fn fixed_capacity(&self) -> Option<usize> {
        self.0.fixed_capacity()
    }
    fn degraded_polls(&self) -> Option<usize> {
        self.0.degraded_polls()
    }
}

/// One function per scenario of `$module` ([`portable`], [`timers`], [`delay_queue`]), of
/// the same name:
/// runs it on the harness and panics with its failure.
macro_rules! on_host {
    ($module:ident; $($name:ident),* $(,)?) => {
        $(
            #[doc = concat!("[`", stringify!($module), "::", stringify!($name), "`] on the harness.")]
            pub fn $name<H: Harness>(h: &H) {
                let target = OnHost(h);
                h.run(async {
                    if let Err(failure) = $module::$name(&target).await {
                        panic!("{}: {failure}", stringify!($name));
                    }
                });
            }
        )*
    };
}

portable::scenarios!(on_host! { portable; });
timers::scenarios!(on_host! { timers; });
delay_queue::scenarios!(on_host! { delay_queue; });

/// Runs `body` to completion on this thread for a harness on a virtual clock: polls it
/// while it is woken, and calls `advance` (a tick) when it is idle, or has been busy for
/// 1 000 polls in a row (then it is still polled after the tick, as time passes on a real
/// clock while a task spins). Panics after an hour of virtual time (`now`): a lost wakeup.
pub fn run_on_virtual_time(
    body: impl Future<Output = ()>,
    now: impl Fn() -> Duration,
    mut advance: impl FnMut(),
) {
    struct Flag(std::sync::atomic::AtomicBool);
    impl std::task::Wake for Flag {
        fn wake(self: std::sync::Arc<Self>) {
            self.0.store(true, Ordering::SeqCst);
        }
    }
    const BUSY_POLLS: u32 = 1_000;
    let flag = std::sync::Arc::new(Flag(std::sync::atomic::AtomicBool::new(true)));
    let waker = core::task::Waker::from(flag.clone());
    let mut cx = core::task::Context::from_waker(&waker);
    let mut body = core::pin::pin!(body);
    let limit = now() + Duration::from_secs(3600);
    let mut busy = 0;
    loop {
        if busy < BUSY_POLLS && flag.0.swap(false, Ordering::SeqCst) {
            if let Poll::Ready(()) = body.as_mut().poll(&mut cx) {
                return;
            }
            busy += 1;
            continue;
        }
        busy = 0;
        assert!(
            now() < limit,
            "no progress after an hour of virtual time: lost wakeup"
        );
        advance();
    }
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

/// The outcomes reported in this process, for [`named_outcomes_once`].
static OUTCOMES: std::sync::Mutex<Vec<punctual_core::Outcome>> = std::sync::Mutex::new(Vec::new());

fn record_outcome(outcome: &punctual_core::Outcome) {
    OUTCOMES.lock().unwrap().push(*outcome);
}

/// The outcomes reported under `name`.
fn outcomes_of(name: &str) -> Vec<punctual_core::OutcomeKind> {
    let all = OUTCOMES.lock().unwrap();
    all.iter()
        .filter(|o| o.name == name)
        .map(|o| o.kind)
        .collect()
}

/// A name no other test of the process uses.
fn unique_name(what: &str) -> &'static str {
    static NEXT: AtomicUsize = AtomicUsize::new(0);
    let n = NEXT.fetch_add(1, Ordering::SeqCst);
    Box::leak(format!("{what}-{n}").into_boxed_str())
}

/// Rule 5 for reports: a named deadline reports exactly one outcome, the one its caller
/// saw, under the races: complete at the fire, drop at the fire, reset then fire.
pub fn named_outcomes_once<H: Harness>(h: &H) {
    use punctual_core::OutcomeKind::{Completed, Dropped, Elapsed};
    punctual_core::set_outcome_hook(Some(record_outcome));
    let tick = h.tick();
    // Complete at the fire: an inner future ready when the deadline is due. Either may
    // win on a real clock; the outcome is the one the caller got.
    let raced = unique_name("raced");
    let seen = std::cell::Cell::new(None);
    h.run(async {
        let inner = sleep(h, tick * 3);
        let result = deadline(h, inner, tick * 3).named(raced).await;
        seen.set(Some(if result.is_ok() { Completed } else { Elapsed }));
    });
    assert_eq!(
        outcomes_of(raced),
        [seen.get().unwrap()],
        "complete at the fire"
    );

    // Drop at the fire: polled once, its time passes, dropped unpolled.
    let dropped = unique_name("dropped");
    h.run(async {
        let mut d = Box::pin(deadline(h, core::future::pending::<()>(), tick * 2).named(dropped));
        assert!(portable::poll_once(d.as_mut()).await.is_pending());
        sleep(h, tick * 6).await;
        drop(d);
    });
    assert_eq!(outcomes_of(dropped), [Dropped], "drop at the fire");

    // Reset then fire: one elapsed, timed from the first pending poll.
    let reset = unique_name("reset");
    h.run(async {
        let mut d = Box::pin(deadline(h, core::future::pending::<()>(), tick * 2).named(reset));
        let start = h.now();
        assert!(portable::poll_once(d.as_mut()).await.is_pending());
        let later = punctual_core::Reading::since_origin(h.now() + tick * 6);
        let moved = d.as_mut().reset(later);
        assert!(d.as_mut().await.is_err());
        if moved {
            check_timing(h, "reset then fire", tick * 6, h.now() - start);
        }
    });
    assert_eq!(outcomes_of(reset), [Elapsed], "reset then fire");
    let used = OUTCOMES
        .lock()
        .unwrap()
        .iter()
        .find(|o| o.name == reset)
        .unwrap()
        .used;
    assert!(
        used >= tick * 2,
        "time used counts from the first pending poll: {used:?}"
    );
}

/// Expands to one `#[test]` per rule, each on a fresh `$make()` harness.
#[macro_export]
macro_rules! conformance_suite {
    ($make:expr) => {
        conformance::portable::scenarios!($crate::conformance_suite! {
            @tests $make;
            elapsed_names_the_deadline,
            many_deadlines_all_fire,
            named_outcomes_once,
        });
        conformance::timers::scenarios!($crate::conformance_suite! { @tests $make; });
        conformance::delay_queue::scenarios!($crate::conformance_suite! { @tests $make; });
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
