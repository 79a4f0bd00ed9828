//! `BootClock`, the clock that counts suspended time: on a wheel of one's own driven by
//! `spawn_driver`, and chosen for the global wheel with `GlobalClock::select` before its
//! first use. No test here can suspend the machine: they check that deadlines on it fire,
//! never early, and that instants given to default deadlines are carried over to it.
//!
//! One test, since the global wheel's clock is chosen once per process: the selection
//! must come before any other test of this binary reads it.

use core::future::pending;
use std::sync::LazyLock;
use std::time::{Duration, Instant};

use futures_executor::block_on;
use punctual::wheel::{BootClock, Clock, GlobalClock, GlobalClockKind, Growable, StdClock, Wheel};
use punctual::{Budget, DeadlineExt};

/// A deadline that has not fired after this long has failed (it would have hung).
const WATCHDOG: Duration = Duration::from_secs(20);

static OWN: LazyLock<Wheel<BootClock, Growable>> = LazyLock::new(|| {
    Wheel::growable(BootClock::new(), Duration::from_millis(1)).with_batched_wakes()
});

/// Awaits `fut` on a thread of its own, failing if it takes longer than [`WATCHDOG`].
fn within_watchdog<T: Send + 'static>(
    what: &str,
    fut: impl core::future::Future<Output = T> + Send + 'static,
) -> T {
    let (tx, rx) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        let _ = tx.send(block_on(fut));
    });
    rx.recv_timeout(WATCHDOG)
        .unwrap_or_else(|_| panic!("{what}: did not end within {WATCHDOG:?}"))
}

#[test]
fn boot_clock_on_own_wheel_and_on_global_wheel() {
    // Selected before anything read the global clock.
    assert_eq!(GlobalClock::kind(), GlobalClockKind::Std);
    assert_eq!(GlobalClock::select(GlobalClockKind::Boot), Ok(()));
    assert_eq!(GlobalClock::kind(), GlobalClockKind::Boot);

    // Default deadlines, relative: never early.
    for ms in [1, 20, 50] {
        let requested = Duration::from_millis(ms);
        let started = Instant::now();
        let fired = within_watchdog("a relative deadline", pending::<()>().deadline(requested));
        assert!(fired.is_err());
        assert!(started.elapsed() >= requested, "{ms} ms: early");
    }
    // The global wheel counts on the boot clock now: its readings keep up with one.
    let boot = BootClock::new();
    let (global_before, boot_before) = (GlobalClock.now(), boot.now());
    std::thread::sleep(Duration::from_millis(10));
    let (boot_after, global_after) = (boot.now(), GlobalClock.now());
    assert!(global_after - global_before >= boot_after - boot_before);

    // Instants: `deadline_at` and `sleep_until` take `Instant`s, readings of the std
    // reference, which the global wheel's clock does not share (it started at zero, the
    // reference an hour back): carried over, they end on time, never early.
    for ms in [0, 5, 30] {
        let at = Instant::now() + Duration::from_millis(ms);
        let fired = within_watchdog("deadline_at", pending::<()>().deadline_at(at));
        assert!(fired.is_err());
        assert!(Instant::now() >= at, "deadline_at {ms} ms: early");
        within_watchdog("sleep_until", punctual::sleep_until(at));
        assert!(Instant::now() >= at);
    }
    // An instant in the past has passed; a far one is far.
    let past = Instant::now() - Duration::from_secs(1);
    assert!(within_watchdog("a past instant", pending::<()>().deadline_at(past)).is_err());
    let far = GlobalClock::reading_of(Instant::now() + Duration::from_secs(3600));
    assert!(far.as_duration() >= GlobalClock.now() + Duration::from_secs(3599));

    // A budget carried to another thread ends at the same instant there: neither at
    // once (the boot clock reads an hour behind the std reference) nor later.
    let start = Instant::now();
    let carried = futures_executor::block_on(punctual::budget(Duration::from_millis(200), async {
        let budget = Budget::current();
        move || budget.enter(|| Budget::current().remaining())
    }))
    .unwrap();
    let left = std::thread::spawn(carried).join().unwrap().unwrap();
    assert!(
        left <= Duration::from_millis(200),
        "{left:?}: longer than the budget"
    );
    // What is left plus what has passed since the budget began covers the budget, up to
    // rounding: however loaded the machine, a budget cut short fails this.
    let passed = start.elapsed();
    assert!(
        left + passed + Duration::from_millis(2) >= Duration::from_millis(200),
        "{left:?} left after {passed:?}: cut short"
    );

    // Chosen for good.
    assert_eq!(GlobalClock::select(GlobalClockKind::Boot), Ok(()));
    let late = GlobalClock::select(GlobalClockKind::Std).unwrap_err();
    assert_eq!(late.in_use, GlobalClockKind::Boot);
    assert!(late.to_string().contains("already in use"), "{late}");

    // A wheel of one's own on the boot clock, driven by a thread: never early either, and
    // next to a StdClock the boot clock counts at least as much.
    punctual::wheel::spawn_driver(&OWN);
    for ms in [1, 20] {
        let requested = Duration::from_millis(ms);
        let started = Instant::now();
        let fired = within_watchdog(
            "a deadline on a BootClock wheel",
            OWN.deadline(requested, pending::<()>()),
        );
        assert!(fired.is_err());
        assert!(
            started.elapsed() >= requested,
            "{ms} ms on the own wheel: early"
        );
    }
    let std_clock = StdClock::new();
    let boot = BootClock::new();
    let (std_before, boot_before) = (std_clock.now(), boot.now());
    std::thread::sleep(Duration::from_millis(10));
    let (boot_after, std_after) = (boot.now(), std_clock.now());
    // Read inside the std clock's bracket, less what separates the readings' pairs.
    assert!(
        (boot_after - boot_before) + Duration::from_millis(1) >= std_after - std_before,
        "the boot clock counted less than the std clock"
    );
}
