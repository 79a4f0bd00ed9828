//! tokio's own timeout tests (`tests/tests/time_timeout.rs` and `tests/tests/time_pause.rs` in tokio),
//! with `.deadline()` and `punctual::timeout` in place of `tokio::time::timeout`: default
//! deadlines follow the runtime's clock, paused or not, with no setup.
//!
//! The paused tests run on the current-thread runtime (where tokio allows pausing); the
//! same bodies run on real time on the multi-thread runtime at the end.

use std::future::pending;
use std::time::Duration;

use punctual::prelude::*;
use tokio::sync::oneshot;
use tokio::time::{self, Instant};
use tokio_test::{assert_pending, assert_ready, assert_ready_err, assert_ready_ok, task};

fn ms(n: u64) -> Duration {
    Duration::from_millis(n)
}

#[tokio::test(start_paused = true)]
async fn simultaneous_deadline_future_completion() {
    // A future ready at its first poll wins, even against a deadline already due.
    let mut fut = task::spawn(punctual::timeout_at(Instant::now(), async {}));
    assert_ready_ok!(fut.poll());
}

#[tokio::test(start_paused = true)]
async fn completed_future_past_deadline() {
    let mut fut = task::spawn(punctual::timeout_at(Instant::now() - ms(1000), async {}));
    assert_ready_ok!(fut.poll());
}

#[tokio::test(start_paused = true)]
async fn future_and_deadline_in_future() {
    let (tx, rx) = oneshot::channel();
    let mut fut = task::spawn(punctual::timeout_at(Instant::now() + ms(100), rx));
    assert_pending!(fut.poll());
    time::advance(ms(90)).await;
    assert_pending!(fut.poll());
    tx.send(()).unwrap();
    assert!(fut.is_woken());
    assert_ready_ok!(fut.poll()).unwrap();
}

#[tokio::test(start_paused = true)]
async fn future_and_timeout_in_future() {
    let (tx, rx) = oneshot::channel();
    let mut fut = task::spawn(punctual::timeout(ms(100), rx));
    assert_pending!(fut.poll());
    time::advance(ms(90)).await;
    assert_pending!(fut.poll());
    tx.send(()).unwrap();
    assert!(fut.is_woken());
    assert_ready_ok!(fut.poll()).unwrap();
}

#[tokio::test(start_paused = true)]
async fn very_large_timeout() {
    let (tx, rx) = oneshot::channel();
    // tokio's test uses 1e12 s; punctual also takes `Duration::MAX` (never fires).
    for duration in [Duration::from_secs(1_000_000_000_000), Duration::MAX] {
        let mut fut = task::spawn(rx_copy_pending().deadline(duration));
        assert_pending!(fut.poll());
        time::advance(Duration::from_secs(86_400 * 365)).await;
        assert_pending!(fut.poll());
    }
    let mut fut = task::spawn(punctual::timeout(
        Duration::from_secs(1_000_000_000_000),
        rx,
    ));
    assert_pending!(fut.poll());
    tx.send(()).unwrap();
    assert!(fut.is_woken());
    assert_ready_ok!(fut.poll()).unwrap();
}

fn rx_copy_pending() -> impl Future<Output = ()> {
    pending()
}

#[tokio::test(start_paused = true)]
async fn deadline_now_elapses() {
    let mut fut = task::spawn(punctual::timeout_at(Instant::now(), pending::<()>()));
    // A deadline already due fires at the first poll that finds the future pending.
    assert_ready_err!(fut.poll());
}

#[tokio::test(start_paused = true)]
async fn deadline_future_elapses() {
    let mut fut = task::spawn(punctual::timeout_at(
        Instant::now() + ms(300),
        pending::<()>(),
    ));
    assert_pending!(fut.poll());
    time::advance(ms(299)).await;
    assert_pending!(fut.poll(), "never early");
    // tokio's own test advances 301 ms: timers end on its millisecond grid, and an
    // instant counts from the real clock's, so both may round up by one.
    time::advance(ms(2)).await;
    assert!(fut.is_woken());
    assert_ready_err!(fut.poll());
}

#[tokio::test(start_paused = true)]
async fn timeout_fires_on_advance_and_reports_the_duration() {
    let mut fut = task::spawn(pending::<()>().deadline(ms(500)).named("quote"));
    assert_pending!(fut.poll());
    time::advance(Duration::from_secs(10)).await;
    let err = assert_ready_err!(fut.poll());
    assert_eq!(err.duration(), ms(500));
    assert_eq!(err.name(), Some("quote"));
}

/// The first case of the report that led here: tokio's `timeout` fires here, and so must
/// the deadline, with an hour of virtual time passed and no real time.
#[tokio::test(start_paused = true)]
async fn an_inner_sleep_longer_than_the_deadline_is_cut_off() {
    let start = Instant::now();
    let real = std::time::Instant::now();
    let r = time::sleep(Duration::from_secs(3600))
        .deadline(Duration::from_secs(1))
        .await;
    assert!(r.is_err());
    assert_eq!(start.elapsed(), Duration::from_secs(1));
    assert!(
        real.elapsed() < Duration::from_secs(30),
        "virtual time, not real time"
    );
}

/// Auto-advance: a paused runtime with nothing else to do jumps to the deadline.
#[tokio::test(start_paused = true)]
async fn auto_advance_reaches_the_deadline() {
    let start = Instant::now();
    let real = std::time::Instant::now();
    assert!(
        pending::<()>()
            .deadline(Duration::from_secs(3600))
            .await
            .is_err()
    );
    assert_eq!(start.elapsed(), Duration::from_secs(3600));
    assert!(real.elapsed() < Duration::from_secs(30));
    // And sleeps: `punctual::sleep` as `tokio::time::sleep`.
    let start = Instant::now();
    punctual::sleep(ms(250)).await;
    assert_eq!(start.elapsed(), ms(250));
    punctual::sleep_until(Instant::now() + ms(10)).await;
    assert_eq!(start.elapsed(), ms(260));
}

#[tokio::test(start_paused = true)]
async fn sleep_same_task() {
    let start = Instant::now();
    punctual::sleep(ms(1)).await;
    assert_eq!(start.elapsed(), ms(1));
    let before = Instant::now();
    punctual::sleep(ms(1)).await;
    assert_eq!(Instant::now() - before, ms(1));
}

#[tokio::test(start_paused = true)]
async fn exact_1ms_advance() {
    let mut sleep = task::spawn(punctual::sleep_until(Instant::now() + ms(1)));
    assert_pending!(sleep.poll());
    time::advance(ms(1)).await;
    assert!(sleep.is_woken());
    assert_ready!(sleep.poll());
}

#[tokio::test(start_paused = true)]
async fn advance_once_with_timer() {
    let mut sleep = task::spawn(punctual::sleep(ms(1)));
    assert_pending!(sleep.poll());
    time::advance(ms(250)).await;
    assert_ready!(sleep.poll());
}

#[tokio::test(start_paused = true)]
async fn advance_multi_with_timer() {
    // Three deadlines passed by one advance each fire.
    let mut a = task::spawn(pending::<()>().deadline(ms(1)));
    let mut b = task::spawn(pending::<()>().deadline(ms(2)));
    let mut c = task::spawn(pending::<()>().deadline(ms(3)));
    assert_pending!(a.poll());
    assert_pending!(b.poll());
    assert_pending!(c.poll());
    time::advance(ms(2)).await;
    assert_ready_err!(a.poll());
    assert_ready_err!(b.poll());
    assert_pending!(c.poll());
    time::advance(ms(1)).await;
    assert_ready_err!(c.poll());
}

/// Budgets, stream deadlines and idle timeouts follow the paused clock as well.
#[tokio::test(start_paused = true)]
async fn budgets_and_streams_follow_the_paused_clock() {
    use futures_util::{StreamExt, stream};
    let start = Instant::now();
    let r = punctual::budget(ms(100), async {
        // The inner 10 s deadline is cut to the budget.
        pending::<()>().deadline(Duration::from_secs(10)).await
    })
    .await;
    // The block's own limit or the inner deadline cut to it, whichever the driver saw
    // first: both are the budget's.
    let err = r.and_then(|inner| inner).unwrap_err();
    assert!(err.is_budget());
    assert_eq!(err.duration(), ms(100));
    assert_eq!(start.elapsed(), ms(100));

    let start = Instant::now();
    let items: Vec<_> = stream::iter([1, 2])
        .chain(stream::pending())
        .idle_timeout(ms(40))
        .collect()
        .await;
    assert_eq!(items.len(), 3);
    assert!(items[2].is_err());
    assert_eq!(start.elapsed(), ms(40));

    let start = Instant::now();
    let items: Vec<_> = stream::pending::<u8>()
        .total_deadline(ms(70))
        .collect()
        .await;
    assert_eq!(items.len(), 1);
    assert_eq!(start.elapsed(), ms(70));
}

/// Deadlines spawned as tasks, and an `advance` that passes them all: each fires, in
/// order, at its own virtual time.
#[tokio::test(start_paused = true)]
async fn spawned_deadlines_fire_at_their_virtual_times() {
    let start = Instant::now();
    let tasks: Vec<_> = (1..=20u64)
        .map(|i| {
            tokio::spawn(async move {
                let r = pending::<()>().deadline(ms(i * 5)).await;
                (r.is_err(), Instant::now() - start)
            })
        })
        .collect();
    for (i, task) in (1..=20u64).zip(tasks) {
        let (fired, at) = task.await.unwrap();
        assert!(fired);
        assert_eq!(at, ms(i * 5));
    }
}

/// A crowded tick fires at tokio's first timer wake after its deadlines, as tokio's own
/// timers would, not at the wake after the tick's end (the default wheel looks at a
/// crowded tick early). Half a millisecond off tokio's millisecond ticks: the paused
/// clock then moves in whole milliseconds from there, so tokio's timers fire at 10.5,
/// 11.5 … ms after the runtime started, and the wheel's ticks (which start where the
/// thread's first deadline started) end at those instants too, where a sleep to them is
/// rounded up to the next one.
#[tokio::test(start_paused = true)]
async fn crowded_tick_fires_at_tokios_first_wake_once_due() {
    time::advance(Duration::from_micros(500)).await;
    let start = Instant::now();
    // Due 9.2 to 9.42 ms from here: one tick of the wheel (9 to 10 ms from here). tokio's
    // first wake after them is at 10 ms from here; the one after the tick's end, at 11.
    let requested: Vec<Duration> = (0..12u64)
        .map(|k| Duration::from_micros(9_200 + 20 * k))
        .collect();
    let tasks: Vec<_> = requested
        .iter()
        .map(|&d| {
            tokio::spawn(async move {
                let r = pending::<()>().deadline(d).await;
                (r.is_err(), Instant::now() - start)
            })
        })
        .collect();
    for (d, task) in requested.into_iter().zip(tasks) {
        let (fired, at) = task.await.unwrap();
        assert!(fired);
        assert_eq!(
            at,
            ms(10),
            "{d:?}: not at tokio's first wake after it (no early look)"
        );
    }
    // tokio's own timer, for comparison: the same wake.
    let before = Instant::now();
    time::sleep_until(start + Duration::from_micros(19_200)).await;
    assert_eq!(before.elapsed(), ms(10));
}

/// Outside the paused runtime (a plain thread) the same call is on real time, and a
/// runtime that is not paused runs on real time too.
#[test]
fn outside_a_runtime_real_time() {
    let start = std::time::Instant::now();
    let r = futures_executor::block_on(pending::<()>().deadline(ms(20)));
    assert!(r.is_err());
    assert!(start.elapsed() >= ms(20));
}

/// The same bodies on real time, on the multi-thread runtime: never early, and they fire.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn multi_thread_real_time() {
    let start = std::time::Instant::now();
    let r = time::sleep(Duration::from_secs(3600))
        .deadline(ms(30))
        .await;
    assert!(r.is_err());
    assert!(start.elapsed() >= ms(30));

    let (tx, rx) = oneshot::channel();
    let waiter = tokio::spawn(punctual::timeout(Duration::from_secs(30), rx));
    tx.send(5).unwrap();
    assert_eq!(waiter.await.unwrap().unwrap().unwrap(), 5);

    let tasks: Vec<_> = (0..64u64)
        .map(|i| {
            tokio::spawn(async move {
                let started = std::time::Instant::now();
                let r = pending::<()>().deadline(ms(5 + i % 7)).await;
                assert!(r.is_err());
                assert!(started.elapsed() >= ms(5 + i % 7), "early");
            })
        })
        .collect();
    for task in tasks {
        task.await.unwrap();
    }
    let at = Instant::now() + ms(15);
    assert!(punctual::timeout_at(at, pending::<()>()).await.is_err());
    assert!(Instant::now() >= at);
}

/// One `advance` that passes 200 deadlines wakes their tasks in deadline order, as tokio's
/// own timers do: the tasks finish in that order on the current-thread runtime.
#[tokio::test(start_paused = true)]
async fn one_advance_fires_in_deadline_order() {
    let order = std::sync::Arc::new(std::sync::Mutex::new(Vec::new()));
    let tasks: Vec<_> = (0..200u64)
        .map(|k| {
            let millis = (k * 7919) % 400 + 1;
            let order = std::sync::Arc::clone(&order);
            tokio::spawn(async move {
                assert!(pending::<()>().deadline(ms(millis)).await.is_err());
                order.lock().unwrap().push(millis);
            })
        })
        .collect();
    // Every task arms (the runtime polls the test between batches of tasks).
    for _ in 0..10 {
        tokio::task::yield_now().await;
    }
    let start = Instant::now();
    time::advance(ms(500)).await;
    for task in tasks {
        task.await.unwrap();
    }
    let order = order.lock().unwrap().clone();
    assert_eq!(start.elapsed(), ms(500), "armed before the advance");
    let inversions = order.windows(2).filter(|w| w[0] > w[1]).count();
    assert_eq!(inversions, 0, "{order:?}");
}
