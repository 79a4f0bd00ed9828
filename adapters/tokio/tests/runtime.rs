//! punctual-tokio on real runtimes: paused time, both flavors, tokio's cooperative budget,
//! and what happens to armed deadlines when the runtime shuts down.

use core::future::Future;
use core::pin::{Pin, pin};
use core::sync::atomic::{AtomicBool, Ordering};
use core::task::{Context, Poll, Waker};
use std::sync::Arc;
use std::time::Duration;

use punctual_core::{Clock, Fixed, Growable, Reading, Wheel};
use punctual_tokio::{TokioClock, TokioWheel};
use tokio::runtime::{Builder, Runtime};
use tokio::time::Instant;

/// A future that never completes and sets its flag when dropped.
struct NeverWithDropFlag(Arc<AtomicBool>);

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

fn flag() -> Arc<AtomicBool> {
    Arc::new(AtomicBool::new(false))
}

async fn settle() {
    for _ in 0..16 {
        tokio::task::yield_now().await;
    }
}

// ---- paused time ----------------------------------------------------------------------

/// With nothing armed the driver holds no tokio timer, so a paused runtime waiting on
/// another thread does not auto-advance because of punctual (it used to jump 12 days per
/// turn, centuries within a fraction of a second).
#[tokio::test(start_paused = true)]
async fn paused_idle_wheel_holds_no_timer() {
    let wheel = punctual_tokio::start();
    settle().await;
    let started = Instant::now();
    let (tx, rx) = tokio::sync::oneshot::channel();
    std::thread::spawn(move || {
        std::thread::sleep(Duration::from_millis(100));
        let _ = tx.send(());
    });
    rx.await.unwrap();
    assert!(
        started.elapsed() < Duration::from_secs(1),
        "tokio's paused clock ran {:?} ahead while the wheel was idle",
        started.elapsed()
    );
    // And the idle driver still wakes for the next arm.
    let r = wheel
        .deadline(Duration::from_millis(5), std::future::pending::<()>())
        .await;
    assert!(r.is_err());
}

/// A new wheel's first turn, with nothing ever armed, keeps no timer either: a paused
/// runtime that waits on another thread does not move its clock at all (it used to keep
/// a timer 16 ticks ahead, which the paused clock auto-advanced to).
#[tokio::test(start_paused = true)]
async fn paused_new_wheel_moves_no_time_with_nothing_armed() {
    let _wheel = punctual_tokio::start();
    settle().await; // the driver's first turn
    let started = Instant::now();
    let (tx, rx) = tokio::sync::oneshot::channel();
    let sender = std::thread::spawn(move || {
        std::thread::sleep(Duration::from_millis(30));
        let _ = tx.send(());
    });
    rx.await.unwrap();
    sender.join().unwrap();
    assert_eq!(
        started.elapsed(),
        Duration::ZERO,
        "tokio's paused clock moved with nothing armed"
    );
}

#[tokio::test(start_paused = true)]
async fn paused_fires_when_advanced_never_before() {
    let wheel = punctual_tokio::start();
    let requested = Duration::from_millis(10);
    let start = Instant::now();
    let task = tokio::spawn(wheel.deadline(requested, std::future::pending::<()>()));
    settle().await; // the deadline is armed at `start`

    tokio::time::advance(requested - Duration::from_nanos(1)).await;
    settle().await;
    assert!(!task.is_finished(), "fired before tokio's time reached it");

    tokio::time::advance(Duration::from_nanos(1)).await;
    let result = task.await.unwrap();
    assert_eq!(result.unwrap_err().duration(), requested);
    let elapsed = start.elapsed();
    assert!(elapsed >= requested, "early: {elapsed:?}");
    assert!(elapsed <= requested + 2 * wheel.tick(), "late: {elapsed:?}");
}

#[tokio::test(start_paused = true)]
async fn paused_auto_advance_is_exact_to_the_tick() {
    let wheel = punctual_tokio::start();
    for requested in [
        Duration::from_micros(1),
        Duration::from_micros(1_500),
        Duration::from_secs(1),
        Duration::from_secs(3600),
        Duration::from_secs(86_400 * 10),
    ] {
        let start = Instant::now();
        let r = wheel
            .deadline(requested, std::future::pending::<()>())
            .await;
        assert!(r.is_err());
        let elapsed = start.elapsed();
        assert!(elapsed >= requested, "{requested:?}: early: {elapsed:?}");
        assert!(
            elapsed <= requested + wheel.tick(),
            "{requested:?}: late: {elapsed:?}"
        );
    }
}

#[tokio::test(start_paused = true)]
async fn paused_deadline_at_a_tokio_instant() {
    let wheel = punctual_tokio::start();
    // The wheel takes tokio's own instant, and a reading of its clock, alike.
    let at = Instant::now() + Duration::from_millis(250);
    let r = wheel.deadline_at(at, std::future::pending::<()>()).await;
    assert!(r.is_err());
    assert_eq!(Instant::now(), at);
    let later = at + Duration::from_millis(40);
    wheel.sleep_until(later).await;
    assert_eq!(Instant::now(), later);
    let reading = wheel.clock().reading_of(later + Duration::from_millis(10));
    wheel.sleep_until(reading).await;
    assert_eq!(wheel.now(), reading);
}

#[tokio::test(start_paused = true)]
async fn a_second_driver_aborted_leaves_the_first_driving() {
    // Two drivers on one wheel; the one started last is aborted while both are idle.
    // The first must still be woken by new deadlines (each driver keeps a waker of its
    // own on the wheel) and fire them on time.
    let wheel = punctual_tokio::start();
    settle().await;
    let second = punctual_tokio::spawn_driver(wheel);
    settle().await;
    second.abort();
    settle().await;
    let dropped = flag();
    let start = Instant::now();
    let r = wheel
        .deadline(Duration::from_millis(5), NeverWithDropFlag(dropped.clone()))
        .await;
    assert!(r.is_err(), "the deadline did not fire");
    assert!(dropped.load(Ordering::SeqCst));
    let took = start.elapsed();
    assert!(
        took >= Duration::from_millis(5) && took <= Duration::from_millis(7),
        "fired after {took:?}"
    );
}

/// A turn by hand on the idle wheel plans a turn (it lingers) that no driver was woken
/// for; an arm later than that plan wakes no one. The turn wakes the idle driver, or the
/// wheel would stop for good (a 50 ms deadline used to be pending after 10 s).
#[tokio::test(start_paused = true)]
async fn turn_by_hand_on_idle_wheel_does_not_stop_driver() {
    let wheel = punctual_tokio::start();
    tokio::time::sleep(Duration::from_millis(100)).await;
    settle().await;
    assert_eq!(wheel.next_turn(), Reading::END, "idle");
    let _ = wheel.turn();
    let fired = fires_within_ten_seconds(wheel).await;
    assert!(fired, "the deadline had not fired after 10 s");
}

/// Whether a 50 ms deadline on `wheel` fires within 10 s of tokio time.
async fn fires_within_ten_seconds(wheel: &TokioWheel) -> bool {
    let deadline = wheel.deadline(Duration::from_millis(50), std::future::pending::<()>());
    matches!(
        tokio::time::timeout(Duration::from_secs(10), deadline).await,
        Ok(Err(_))
    )
}

/// A fourth driver has no place for its waker and turns every tick, so on an idle wheel
/// it keeps planning lingering turns; aborted, it leaves the three others idle unless
/// its turns and its stop wake them.
#[tokio::test(start_paused = true)]
async fn aborted_driver_without_place_leaves_others_driving() {
    let wheel = punctual_tokio::start();
    let others = [(); 2].map(|()| punctual_tokio::spawn_driver(wheel));
    let placeless = punctual_tokio::spawn_driver(wheel);
    tokio::time::sleep(Duration::from_millis(100)).await;
    placeless.abort();
    settle().await;
    let fired = fires_within_ten_seconds(wheel).await;
    for other in others {
        other.abort();
    }
    assert!(fired, "the deadline had not fired after 10 s");
}

#[tokio::test(start_paused = true)]
async fn paused_inner_that_finishes_in_time_wins() {
    let wheel = punctual_tokio::start();
    let inner = async {
        tokio::time::sleep(Duration::from_millis(99)).await;
        "done"
    };
    assert_eq!(
        wheel.deadline(Duration::from_millis(100), inner).await,
        Ok("done")
    );
}

// ---- both flavors, real time ----------------------------------------------------------

/// A full fixed wheel on a paused clock: the deadline that finds no free entry waits for
/// the next tick's turn instead of asking to be polled again at once, so the runtime goes
/// idle and auto-advances, and every deadline fires at its time. (Polled again at once, it
/// kept the runtime busy: no time passed and nothing fired.) Run on a thread of its own,
/// so that a hang fails the test instead of stalling it.
#[test]
fn paused_full_fixed_wheel_auto_advances_fires_all() {
    let (done, report) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        let rt = Builder::new_current_thread()
            .enable_time()
            .start_paused(true)
            .build()
            .unwrap();
        let fired_at = rt.block_on(async {
            let wheel: &'static Wheel<TokioClock, Fixed<2>> = Box::leak(Box::new(Wheel::fixed(
                TokioClock::new(),
                Duration::from_millis(1),
            )));
            let _driver = punctual_tokio::spawn_driver(wheel);
            let started = Instant::now();
            let after = |ms| async move {
                let out = wheel
                    .deadline(Duration::from_millis(ms), core::future::pending::<()>())
                    .await;
                assert!(out.is_err());
                started.elapsed()
            };
            let (a, b, c) = tokio::join!(after(10), after(20), after(30));
            (a, b, c, wheel.degraded_polls())
        });
        let _ = done.send(fired_at);
    });
    let (a, b, c, degraded_polls) = report
        .recv_timeout(Duration::from_secs(20))
        .expect("a full fixed wheel on a paused clock hung");
    let ms = Duration::from_millis;
    // Never early; the armed two within their tick, the degraded one within two.
    assert!(a >= ms(10) && a <= ms(11), "10 ms deadline fired at {a:?}");
    assert!(b >= ms(20) && b <= ms(21), "20 ms deadline fired at {b:?}");
    assert!(c >= ms(30) && c <= ms(32), "30 ms deadline fired at {c:?}");
    // It ran degraded until the first entry came free, polled about once a tick.
    assert!(
        (1..=20).contains(&degraded_polls),
        "{degraded_polls} degraded polls for 10 ticks of waiting"
    );
}

fn many_deadlines_fire_and_none_early(rt: &Runtime) {
    rt.block_on(async {
        let wheel = punctual_tokio::start();
        let tasks: Vec<_> = (0..64u32)
            .map(|i| {
                tokio::spawn(async move {
                    let requested = Duration::from_millis(u64::from(1 + i % 20));
                    let start = std::time::Instant::now();
                    let dropped = flag();
                    let r = wheel
                        .deadline(requested, NeverWithDropFlag(dropped.clone()))
                        .await;
                    assert!(r.is_err());
                    assert!(dropped.load(Ordering::SeqCst), "inner alive after Err");
                    assert!(start.elapsed() >= requested, "fired early");
                })
            })
            .collect();
        for task in tasks {
            task.await.unwrap();
        }
        // Met deadlines give the output.
        let met = tokio::spawn(wheel.deadline(Duration::from_secs(10), async { 5 }));
        assert_eq!(met.await.unwrap(), Ok(5));
    });
}

#[test]
fn current_thread_real_time() {
    let rt = Builder::new_current_thread().enable_time().build().unwrap();
    many_deadlines_fire_and_none_early(&rt);
}

#[test]
fn multi_thread_real_time() {
    let rt = Builder::new_multi_thread()
        .worker_threads(2)
        .enable_time()
        .build()
        .unwrap();
    many_deadlines_fire_and_none_early(&rt);
}

#[test]
fn wheel_of_your_own_with_a_fixed_capacity() {
    let rt = Builder::new_multi_thread()
        .worker_threads(2)
        .enable_time()
        .build()
        .unwrap();
    rt.block_on(async {
        let wheel: &'static Wheel<TokioClock, punctual_core::Fixed<8>> = Box::leak(Box::new(
            Wheel::fixed(TokioClock::new(), Duration::from_millis(2)),
        ));
        let driver = punctual_tokio::spawn_driver(wheel);
        let r = wheel
            .deadline(Duration::from_millis(4), std::future::pending::<()>())
            .await;
        assert!(r.is_err());
        driver.abort();
        assert!(driver.await.unwrap_err().is_cancelled());
    });
}

// ---- cooperative budget ---------------------------------------------------------------

/// An inner future that spends its task's whole budget on every poll (through a tokio
/// channel that is always ready) and so keeps returning `Pending`: the deadline still
/// cuts it off, because the fire is decided by the driver task.
#[test]
fn budget_exhausting_inner_is_still_cut_off() {
    let rt = Builder::new_current_thread().enable_time().build().unwrap();
    rt.block_on(async {
        let wheel = punctual_tokio::start();
        let (tx, mut rx) = tokio::sync::mpsc::unbounded_channel::<()>();
        let spin = async move {
            loop {
                tx.send(()).unwrap();
                rx.recv().await.unwrap();
            }
        };
        let start = std::time::Instant::now();
        let task = tokio::spawn(wheel.deadline(Duration::from_millis(20), spin));
        let r = task.await.unwrap();
        assert!(r.is_err());
        assert!(start.elapsed() >= Duration::from_millis(20));
    });
}

// ---- runtime shutdown -----------------------------------------------------------------

struct Armed {
    wheel: &'static TokioWheel,
    driver: tokio::task::JoinHandle<()>,
    tasks: Vec<tokio::task::JoinHandle<()>>,
    flags: Vec<Arc<AtomicBool>>,
}

/// Starts a wheel and its driver on `rt`, and spawns tasks that await hour-long deadlines
/// (and a sleep); returns once all of them are armed.
fn arm_on(rt: &Runtime) -> Armed {
    rt.block_on(async {
        let clock = TokioClock::new();
        let wheel: &'static TokioWheel = Box::leak(Box::new(Wheel::<_, Growable>::growable(
            clock,
            Duration::from_millis(1),
        )));
        let driver = punctual_tokio::spawn_driver(wheel);
        let flags: Vec<_> = (0..4).map(|_| flag()).collect();
        let mut tasks: Vec<_> = flags
            .iter()
            .map(|dropped| {
                let inner = NeverWithDropFlag(dropped.clone());
                tokio::spawn(async move {
                    let _ = wheel.deadline(Duration::from_secs(3600), inner).await;
                    unreachable!("an hour-long deadline completed");
                })
            })
            .collect();
        tasks.push(tokio::spawn(async move {
            wheel.sleep(Duration::from_secs(3600)).await;
            unreachable!("an hour-long sleep completed");
        }));
        // Wait (bounded) until all five entries are armed.
        let waited = std::time::Instant::now();
        while wheel.occupied() < 5 {
            assert!(waited.elapsed() < Duration::from_secs(10), "not armed");
            tokio::time::sleep(Duration::from_millis(1)).await;
        }
        Armed {
            wheel,
            driver,
            tasks,
            flags,
        }
    })
}

/// After the runtime is gone: every task was dropped (not hung), its inner futures with
/// it; the driver task is gone; a deadline still alive elsewhere never fires but drops
/// cleanly; turning the wheel by hand still works.
fn check_after_shutdown(armed: Armed) {
    for dropped in &armed.flags {
        assert!(dropped.load(Ordering::SeqCst), "inner future not dropped");
    }
    for task in armed.tasks {
        let err = futures_executor::block_on(task).unwrap_err();
        assert!(err.is_cancelled(), "{err}");
    }
    let err = futures_executor::block_on(armed.driver).unwrap_err();
    assert!(err.is_cancelled(), "{err}");

    // A deadline armed now, outside any runtime: nothing drives the wheel, so it never
    // fires (polled for a while), and dropping it is fine.
    let wheel = armed.wheel;
    let mut cx = Context::from_waker(Waker::noop());
    let dropped = flag();
    let mut orphan =
        pin!(wheel.deadline(Duration::from_millis(1), NeverWithDropFlag(dropped.clone())));
    assert!(orphan.as_mut().poll(&mut cx).is_pending());
    std::thread::sleep(Duration::from_millis(20));
    assert!(
        orphan.as_mut().poll(&mut cx).is_pending(),
        "fired without a driver"
    );
    assert!(!dropped.load(Ordering::SeqCst));

    // Turning the wheel by hand (or spawning a new driver) picks it up again.
    wheel.turn();
    match orphan.as_mut().poll(&mut cx) {
        Poll::Ready(Err(_)) => {}
        other => panic!("expected the deadline to fire after a turn, got {other:?}"),
    }
    assert!(dropped.load(Ordering::SeqCst));

    // Another one, just dropped while armed: its release wakes the dead driver's waker.
    let mut abandoned = pin!(wheel.sleep(Duration::from_secs(60)));
    assert!(abandoned.as_mut().poll(&mut cx).is_pending());
}

#[test]
fn current_thread_dropped_with_armed_deadlines() {
    let rt = Builder::new_current_thread().enable_time().build().unwrap();
    let armed = arm_on(&rt);
    drop(rt);
    check_after_shutdown(armed);
}

#[test]
fn multi_thread_dropped_with_armed_deadlines() {
    let rt = Builder::new_multi_thread()
        .worker_threads(2)
        .enable_time()
        .build()
        .unwrap();
    let armed = arm_on(&rt);
    drop(rt);
    check_after_shutdown(armed);
}

#[test]
fn multi_thread_shutdown_timeout_with_armed_deadlines() {
    let rt = Builder::new_multi_thread()
        .worker_threads(2)
        .enable_time()
        .build()
        .unwrap();
    let armed = arm_on(&rt);
    let start = std::time::Instant::now();
    rt.shutdown_timeout(Duration::from_secs(10));
    // Nothing blocks shutdown: the timeout is not waited out.
    assert!(start.elapsed() < Duration::from_secs(5));
    check_after_shutdown(armed);
}

#[test]
fn shutdown_background_with_armed_deadlines() {
    let rt = Builder::new_multi_thread()
        .worker_threads(2)
        .enable_time()
        .build()
        .unwrap();
    let armed = arm_on(&rt);
    rt.shutdown_background();
    // Background shutdown drops the tasks on the workers, soon: wait for it, bounded.
    let start = std::time::Instant::now();
    while !armed.flags.iter().all(|f| f.load(Ordering::SeqCst)) {
        assert!(
            start.elapsed() < Duration::from_secs(10),
            "tasks not dropped"
        );
        std::thread::sleep(Duration::from_millis(1));
    }
    check_after_shutdown(armed);
}

#[test]
fn paused_runtime_dropped_with_armed_deadlines() {
    let rt = Builder::new_current_thread()
        .enable_time()
        .start_paused(true)
        .build()
        .unwrap();
    let armed = arm_on(&rt);
    drop(rt);
    for dropped in &armed.flags {
        assert!(dropped.load(Ordering::SeqCst), "inner future not dropped");
    }
    for task in armed.tasks {
        assert!(futures_executor::block_on(task).unwrap_err().is_cancelled());
    }
}

// ---- misuse ---------------------------------------------------------------------------

#[test]
#[should_panic(expected = "punctual_tokio::start needs a tokio runtime")]
fn start_outside_a_runtime_panics() {
    let _ = punctual_tokio::start();
}

#[test]
#[should_panic(expected = "timers are disabled")]
fn start_without_time_panics_at_the_call_site() {
    let rt = Builder::new_current_thread().build().unwrap();
    rt.block_on(async {
        let _ = punctual_tokio::start();
    });
}

#[test]
fn clock_reads_the_runtime_it_runs_in() {
    let rt = Builder::new_current_thread()
        .enable_time()
        .start_paused(true)
        .build()
        .unwrap();
    rt.block_on(async {
        let clock = TokioClock::new();
        tokio::time::advance(Duration::from_secs(5)).await;
        assert_eq!(clock.now(), Duration::from_secs(5));
    });
}

#[tokio::test(start_paused = true)]
async fn paused_crowded_tick_over_1ms_is_looked_at_early() {
    // A 5 ms tick, and twenty deadlines within one tick (0.1, 0.3 … 3.9 ms into it). The
    // wheel of `start_with_tick` looks early, so each fires at tokio's first millisecond after it,
    // not at the tick's end; none fires before its time.
    let wheel = punctual_tokio::start_with_tick(Duration::from_millis(5));
    let tick = wheel.tick();
    let now = wheel.clock().now();
    let into = Duration::from_nanos((now.as_nanos() % tick.as_nanos()) as u64);
    if !into.is_zero() {
        tokio::time::advance(tick - into).await; // to a tick boundary
    }
    let start = Instant::now();
    let tasks: Vec<_> = (0..20u64)
        .map(|k| {
            let requested = Duration::from_micros(100 + 200 * k);
            let deadline = wheel.deadline(requested, std::future::pending::<()>());
            tokio::spawn(async move {
                assert!(deadline.await.is_err());
                (requested, start.elapsed())
            })
        })
        .collect();
    let mut fired = Vec::new();
    for task in tasks {
        fired.push(task.await.unwrap());
    }
    for &(requested, at) in &fired {
        assert!(at >= requested, "early: {requested:?} fired at {at:?}");
        assert!(
            at < requested + Duration::from_millis(1),
            "{requested:?} of a crowded tick fired at {at:?}, not at tokio's first \
             millisecond after it"
        );
    }
}

/// A driver sleeping with a `TurningSleeper` (its wakes turn the wheel) fires deadlines.
#[tokio::test(start_paused = true)]
async fn turning_sleeper_drives_a_wheel() {
    use punctual_tokio::{TokioSleeper, TurningSleeper};
    let wheel: &'static Wheel<TokioClock, Growable> =
        Wheel::growable(TokioClock::new(), Duration::from_millis(1))
            .with_precise_fires()
            .leak();
    let sleeper = TurningSleeper::new(TokioSleeper::new(wheel.clock()), wheel);
    tokio::spawn(async move { match wheel.driver(sleeper).await {} });
    let started = Instant::now();
    let r = wheel
        .deadline(Duration::from_millis(10), std::future::pending::<()>())
        .await;
    assert!(r.is_err());
    assert!(started.elapsed() >= Duration::from_millis(10));
}
