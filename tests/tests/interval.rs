//! tokio's interval tests (`tests/tests/time_interval.rs` in tokio), with
//! `punctual::interval` in place of `tokio::time::interval`, on tokio's paused clock (the
//! default wheel follows the runtime); and the resets of default sleeps and deadlines,
//! with tokio's and std's instants, as a `select!` loop uses them.

use std::future::{pending, poll_fn};
use std::pin::pin;
use std::task::Poll;
use std::time::Duration;

use futures_util::StreamExt;
use punctual::{Interval, MissedTickBehavior};
use tokio::time::{self, Instant};
use tokio_test::task;

fn ms(n: u64) -> Duration {
    Duration::from_millis(n)
}

/// The ticks ready now, in ms after `first`, until the interval is pending.
fn ready_ticks(interval: &mut Interval, first: Instant) -> Vec<u128> {
    let mut poller = task::spawn(());
    let mut ticks = Vec::new();
    while let Poll::Ready(tick) = poller.enter(|cx, _| interval.poll_tick(cx)) {
        ticks.push((tick - first).as_millis());
        assert!(ticks.len() < 100, "an interval that never waits");
    }
    ticks
}

/// A 300 ms interval with `behaviour`, its tick of 600 ms taken at 950 ms; then three more
/// advances of 300 ms. Returns the ticks ready after each step.
async fn after_a_stall(behaviour: MissedTickBehavior) -> Vec<Vec<u128>> {
    let mut interval = punctual::interval(ms(300));
    interval.set_missed_tick_behavior(behaviour);
    let first = interval.tick().await; // at once
    let mut seen = Vec::new();
    time::advance(ms(100)).await;
    seen.push(ready_ticks(&mut interval, first));
    time::advance(ms(200)).await;
    seen.push(ready_ticks(&mut interval, first));
    time::advance(ms(650)).await;
    seen.push(ready_ticks(&mut interval, first));
    for _ in 0..3 {
        time::advance(ms(300)).await;
        seen.push(ready_ticks(&mut interval, first));
    }
    seen
}

#[tokio::test(start_paused = true)]
async fn burst() {
    let seen = after_a_stall(MissedTickBehavior::Burst).await;
    let none: Vec<u128> = vec![];
    assert_eq!(
        seen,
        [
            none,
            vec![300],
            vec![600, 900],
            vec![1200],
            vec![1500],
            vec![1800]
        ]
    );
}

#[tokio::test(start_paused = true)]
async fn delay() {
    let seen = after_a_stall(MissedTickBehavior::Delay).await;
    let none: Vec<u128> = vec![];
    assert_eq!(
        seen,
        [
            none,
            vec![300],
            vec![600],
            vec![1250],
            vec![1550],
            vec![1850]
        ]
    );
}

#[tokio::test(start_paused = true)]
async fn skip() {
    let seen = after_a_stall(MissedTickBehavior::Skip).await;
    let none: Vec<u128> = vec![];
    assert_eq!(
        seen,
        [
            none,
            vec![300],
            vec![600],
            vec![1200],
            vec![1500],
            vec![1800]
        ]
    );
}

#[tokio::test(start_paused = true)]
async fn skip_is_the_default() {
    assert_eq!(
        punctual::interval(ms(1)).missed_tick_behavior(),
        MissedTickBehavior::Skip
    );
}

#[tokio::test(start_paused = true)]
async fn first_tick_is_immediate() {
    let start = Instant::now();
    let mut interval = punctual::interval(ms(100));
    interval.tick().await;
    assert_eq!(Instant::now(), start);
    interval.tick().await;
    assert_eq!(Instant::now() - start, ms(100));
}

#[tokio::test(start_paused = true)]
async fn interval_at_in_the_future() {
    let start = Instant::now();
    let mut interval = punctual::interval_at(start + ms(300), ms(100));
    let first = interval.tick().await;
    assert_eq!(Instant::now() - start, ms(300));
    time::advance(ms(100)).await;
    assert_eq!(ready_ticks(&mut interval, first), [100]);
}

#[tokio::test(start_paused = true)]
async fn reset() {
    let mut interval = punctual::interval(ms(300));
    let first = interval.tick().await;
    time::advance(ms(100)).await;
    interval.reset();
    time::advance(ms(299)).await;
    assert_eq!(ready_ticks(&mut interval, first), Vec::<u128>::new());
    time::advance(ms(1)).await;
    assert_eq!(ready_ticks(&mut interval, first), [400]);
    time::advance(ms(300)).await;
    assert_eq!(ready_ticks(&mut interval, first), [700]);
}

#[tokio::test(start_paused = true)]
async fn stream_of_ticks() {
    let start = Instant::now();
    let ticks: Vec<Instant> = punctual::interval(ms(10)).take(4).collect().await;
    assert_eq!(Instant::now() - start, ms(30));
    let gaps: Vec<Duration> = ticks.windows(2).map(|w| w[1] - w[0]).collect();
    assert_eq!(gaps, [ms(10); 3]);
}

#[test]
#[should_panic(expected = "period of zero")]
fn zero_period_panics() {
    let _ = punctual::interval(Duration::ZERO);
}

/// Off any runtime, on the global wheel: never early, and on the grid.
#[test]
fn global_wheel_interval() {
    futures_executor::block_on(async {
        let start = std::time::Instant::now();
        let mut interval = punctual::interval(ms(3));
        let first = interval.tick().await;
        for n in 1..=3 {
            let tick = interval.tick().await;
            assert!(start.elapsed() >= ms(3 * n), "early");
            assert_eq!((tick - first).as_nanos() % 3_000_000, 0, "off the grid");
        }
    });
}

/// On a `BootClock` wheel driven by a thread (as after a suspend, which no test can
/// cause): a task that stalls for ten periods gets one tick, then the next one of the
/// grid after the stall, never early.
#[test]
fn boot_clock_stall_gives_one_tick() {
    static WHEEL: std::sync::LazyLock<
        punctual::wheel::Wheel<punctual::wheel::BootClock, punctual::wheel::Growable>,
    > = std::sync::LazyLock::new(|| {
        punctual::wheel::Wheel::growable(
            punctual::wheel::BootClock::new(),
            Duration::from_millis(1),
        )
    });
    punctual::wheel::spawn_driver(&WHEEL);
    let period = ms(5);
    futures_executor::block_on(async {
        let mut interval = WHEEL.interval(period);
        let first = interval.tick().await;
        std::thread::sleep(period * 10); // the stall
        let taken = WHEEL.now();
        let late = interval.tick().await;
        assert_eq!(late - first, period, "not the tick that was due");
        let next = interval.tick().await;
        assert!(next > taken, "a burst after the stall");
        assert!(WHEEL.now() >= next, "early");
        assert_eq!(
            (next - first).as_nanos() % period.as_nanos(),
            0,
            "off the grid"
        );
    });
}

/// Off any runtime, a default sleep reset to a std instant: never before it.
#[test]
fn global_sleep_reset_to_std_instant() {
    futures_executor::block_on(async {
        let mut sleep = pin!(punctual::sleep(Duration::from_secs(60)));
        let polled = poll_fn(|cx| Poll::Ready(sleep.as_mut().poll(cx))).await;
        assert!(polled.is_pending());
        let at = std::time::Instant::now() + ms(4);
        sleep.as_mut().reset(at);
        sleep.await;
        assert!(std::time::Instant::now() >= at);
    });
}

/// An idle timeout in a `select!` loop, tokio's shape: each message pushes the sleep back;
/// it fires only after a quiet period.
#[tokio::test(start_paused = true)]
async fn sleep_reset_in_select_loop() {
    let (tx, mut rx) = tokio::sync::mpsc::channel::<u32>(8);
    let start = Instant::now();
    tokio::spawn(async move {
        for n in 0..3 {
            time::sleep(ms(40)).await;
            tx.send(n).await.unwrap();
        }
        pending::<()>().await;
    });
    let idle = punctual::sleep(ms(50));
    let mut idle = pin!(idle);
    let mut received = 0;
    loop {
        tokio::select! {
            Some(_) = rx.recv() => {
                received += 1;
                idle.as_mut().reset(Instant::now() + ms(50));
            }
            () = &mut idle => break,
        }
    }
    assert_eq!(received, 3);
    assert_eq!(Instant::now() - start, ms(170));
    // Completed: a reset runs it again.
    idle.as_mut().reset(Instant::now() + ms(5));
    idle.as_mut().await;
    assert_eq!(Instant::now() - start, ms(175));
}

/// A default deadline moved later: it fires at the new time, not the old one.
#[tokio::test(start_paused = true)]
async fn deadline_reset_later() {
    let start = Instant::now();
    let mut deadline = pin!(punctual::timeout(ms(10), pending::<()>()));
    assert!(
        poll_fn(|cx| Poll::Ready(deadline.as_mut().poll(cx)))
            .await
            .is_pending()
    );
    time::advance(ms(5)).await;
    assert!(deadline.as_mut().reset(Instant::now() + ms(20)));
    assert!(deadline.await.is_err());
    assert_eq!(Instant::now() - start, ms(25));
}

/// A default sleep's `deadline()` is the tokio instant it was given, before its first
/// poll, while pending and once complete; a sleep by duration counts from its first poll.
#[tokio::test(start_paused = true)]
async fn sleep_deadline_is_the_tokio_instant() {
    let at = Instant::now() + ms(10);
    let mut sleep = std::pin::pin!(punctual::sleep_until(at));
    assert_eq!(sleep.deadline(), at);
    assert!(futures_util::poll!(sleep.as_mut()).is_pending());
    assert_eq!(sleep.deadline(), at);
    sleep.as_mut().await;
    assert_eq!(sleep.deadline(), at);
    assert!(sleep.is_elapsed());
    sleep.as_mut().await; // complete: ready again, as tokio's

    let start = Instant::now();
    let mut by_duration = std::pin::pin!(punctual::sleep(ms(5)));
    time::advance(ms(2)).await;
    assert!(futures_util::poll!(by_duration.as_mut()).is_pending());
    assert_eq!(by_duration.deadline(), start + ms(7));

    // Never: an instant centuries away, the same at each call.
    let mut never = std::pin::pin!(punctual::sleep(Duration::MAX));
    assert!(futures_util::poll!(never.as_mut()).is_pending());
    assert!(never.deadline() > Instant::now() + Duration::from_secs(100 * 365 * 86_400));
    assert_eq!(never.deadline(), never.deadline());
}
