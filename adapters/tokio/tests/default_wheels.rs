//! `default_wheels` under a host of this test's own, without the `punctual` facade: the
//! runtime's own drivers on real time (the alarm only without them), tokio's timer on a
//! paused clock, the value kept with each wheel,
//! and the orphan driver after a shutdown.

use std::future::{Future, poll_fn};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{LazyLock, mpsc};
use std::task::Poll;
use std::time::Duration;

use punctual_core::{Growable, Limit, Reading, Sleep, StdClock, Wheel};
use punctual_tokio::RuntimeClock;
use punctual_tokio::default_wheels::{Claim, DefaultWheels, Host};
use tokio::runtime::{Builder, Runtime};

/// The reference clock, and a wheel on it driven by a thread: the alarms.
static CLOCK: LazyLock<StdClock> = LazyLock::new(StdClock::new);
static ALARM_WHEEL: LazyLock<&'static Wheel<StdClock, Growable>> = LazyLock::new(|| {
    let wheel = Wheel::growable(*CLOCK, Duration::from_millis(1)).leak();
    punctual_thread::spawn_driver(wheel);
    wheel
});
static ALARMS: AtomicUsize = AtomicUsize::new(0);

struct TestHost;

impl Host for TestHost {
    /// Whether the wheel was made pausable.
    type Choice = bool;
    type Alarm = Sleep<'static, &'static Wheel<StdClock, Growable>>;

    fn reference_clock(&self) -> &'static StdClock {
        &CLOCK
    }

    fn choice(&self, _: &'static Wheel<RuntimeClock, Growable>, pausable: bool) -> bool {
        pausable
    }

    fn alarm(&self, at: Reading) -> Self::Alarm {
        ALARMS.fetch_add(1, Ordering::Relaxed);
        Sleep::new(*ALARM_WHEEL, Limit::At(at))
    }
}

static WHEELS: DefaultWheels<TestHost> = DefaultWheels::new(TestHost);

std::thread_local! {
    static CLAIM: Claim<TestHost> = const { Claim::new() };
}

fn wheel_here() -> &'static Wheel<RuntimeClock, Growable> {
    WHEELS.current(&CLAIM).expect("inside a runtime").wheel()
}

fn current_thread() -> Runtime {
    Builder::new_current_thread().enable_time().build().unwrap()
}

#[test]
fn no_wheel_outside_a_runtime() {
    assert!(WHEELS.current(&CLAIM).is_none());
}

/// A real-time deadline on a runtime built with `drivers`, and whether an alarm (a sleep
/// outside the runtime) took part in firing it.
fn fires_with_alarm(build: impl FnOnce(&mut Builder) -> &mut Builder) -> bool {
    let rt = build(&mut Builder::new_current_thread()).build().unwrap();
    rt.block_on(async {
        let before = ALARMS.load(Ordering::Relaxed);
        let started = std::time::Instant::now();
        let slow = std::future::pending::<()>();
        let r = wheel_here().deadline(Duration::from_millis(5), slow).await;
        assert!(r.is_err());
        assert!(started.elapsed() >= Duration::from_millis(5), "early");
        ALARMS.load(Ordering::Relaxed) > before
    })
}

#[test]
fn real_time_deadline_fires_inside_a_runtime_with_drivers() {
    // The runtime's reactor (a timerfd, on Linux) or its timer: no alarm.
    assert!(!fires_with_alarm(Builder::enable_all));
    assert!(!fires_with_alarm(Builder::enable_time));
}

#[test]
fn real_time_deadline_fires_by_the_alarm_without_drivers() {
    assert!(fires_with_alarm(|b| b));
    // The reactor alone, on Linux: a timerfd, no alarm.
    assert_eq!(
        fires_with_alarm(Builder::enable_io),
        !cfg!(target_os = "linux")
    );
}

#[tokio::test(start_paused = true)]
async fn paused_deadline_fires_on_virtual_time() {
    let started = tokio::time::Instant::now();
    let slow = std::future::pending::<()>();
    let r = wheel_here().deadline(Duration::from_secs(3600), slow).await;
    assert!(r.is_err());
    assert_eq!(started.elapsed(), Duration::from_secs(3600));
}

#[test]
fn choice_is_made_for_the_flavour() {
    let rt = current_thread();
    assert!(rt.block_on(async { *WHEELS.current(&CLAIM).unwrap().choice() }));
    drop(rt); // the thread's wheel serves no other runtime while this one lives
    let rt = Builder::new_multi_thread()
        .worker_threads(1)
        .enable_time()
        .build()
        .unwrap();
    assert!(!rt.block_on(async { *WHEELS.current(&CLAIM).unwrap().choice() }));
}

#[test]
fn orphaned_deadline_fires_after_shutdown() {
    let rt = current_thread();
    let wheel = rt.block_on(async { wheel_here() });
    let slow = std::future::pending::<()>();
    let mut deadline = Box::pin(wheel.deadline(Duration::from_millis(20), slow));
    rt.block_on(async {
        let poll = poll_fn(|cx| Poll::Ready(deadline.as_mut().poll(cx)));
        assert!(poll.await.is_pending(), "armed");
        tokio::task::yield_now().await; // the driver task runs
    });
    drop(rt);
    // Nothing of the runtime is left: the orphan driver fires it.
    let (fired, outcome) = mpsc::channel();
    std::thread::spawn(move || fired.send(futures_executor::block_on(deadline).is_err()));
    let outcome = outcome.recv_timeout(Duration::from_secs(10));
    assert_eq!(outcome, Ok(true), "not fired after the shutdown");
}
