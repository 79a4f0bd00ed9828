//! Budgets in blocking code: `Budget::current()` takes the caller's budget to a closure run
//! on another thread, where it tells the work when to stop, and `Budget::enter` makes
//! default deadlines end by it, on tokio's blocking pool (paused clock) and on plain
//! threads.

use std::sync::mpsc;
use std::time::{Duration, Instant};

use punctual::Budget;
use punctual::prelude::*;

const MS: Duration = Duration::from_millis(1);

// tokio does not auto-advance a paused clock while blocking tasks run: these tests move
// it by hand.

#[tokio::test(start_paused = true)]
async fn spawn_blocking_work_stops_when_the_budget_ends() {
    let (done, stopped) = mpsc::channel();
    let (started, start) = mpsc::channel();
    // The closure takes the budget where it is made; it runs on the blocking pool.
    let job = punctual::budget(100 * MS, async {
        let budget = Budget::current();
        move || {
            started.send(budget.remaining()).unwrap();
            while !budget.expired() {
                std::thread::sleep(MS);
            }
            done.send(budget.check()).unwrap();
        }
    })
    .await
    .unwrap();
    let work = tokio::task::spawn_blocking(job);
    let left = start.recv().unwrap();
    assert_eq!(left, Some(100 * MS), "the caller's budget came along");
    tokio::time::advance(99 * MS).await;
    assert!(stopped.recv_timeout(20 * MS).is_err(), "stopped early");
    tokio::time::advance(MS).await;
    let elapsed = stopped.recv().unwrap().unwrap_err();
    assert!(elapsed.is_budget());
    assert_eq!(elapsed.duration(), 100 * MS);
    work.await.unwrap();
}

#[tokio::test(start_paused = true)]
async fn a_deadline_inside_the_closure_ends_by_the_budget() {
    let job = punctual::budget(50 * MS, async {
        let budget = Budget::current();
        move || {
            budget.enter(|| {
                // A deadline of its own, longer than the budget: the budget wins.
                let handle = tokio::runtime::Handle::current();
                handle.block_on(std::future::pending::<()>().deadline(Duration::from_secs(10)))
            })
        }
    })
    .await
    .unwrap();
    let work = tokio::task::spawn_blocking(job);
    // Let the blocking thread start its deadline, then move the clock past the budget.
    std::thread::sleep(5 * MS);
    while !work.is_finished() {
        tokio::time::advance(MS).await;
        std::thread::sleep(MS);
    }
    let inner = work.await.unwrap().unwrap_err();
    assert!(inner.is_budget(), "{inner:?}");
}

#[test]
fn without_a_budget_nothing_expires() {
    let budget = Budget::current();
    assert_eq!(budget.remaining(), None);
    assert!(!budget.expired());
    assert!(budget.check().is_ok());
    assert_eq!(budget.enter(|| 7), 7);
}

#[test]
fn plain_threads_stop_on_time_never_early() {
    futures_executor::block_on(async {
        let start = Instant::now();
        let worker = punctual::budget(30 * MS, async {
            let carried = Budget::current();
            std::thread::spawn(move || {
                carried.enter(|| {
                    // Inside `enter`, the budget in force is the carried one.
                    let budget = Budget::current();
                    while budget.check().is_ok() {
                        std::thread::sleep(MS);
                    }
                    // A default deadline started now, past the budget, ends at once.
                    futures_executor::block_on(
                        std::future::pending::<()>().deadline(Duration::from_secs(10)),
                    )
                })
            })
        })
        .await
        .unwrap();
        let inner = worker.join().unwrap().unwrap_err();
        assert!(inner.is_budget());
        assert!(
            start.elapsed() >= 30 * MS,
            "stopped early: {:?}",
            start.elapsed()
        );
    });
}

/// `with_current_budget` carries the budget to a future polled on a plain thread: a
/// deadline of a second there ends with the 50 ms budget.
#[test]
fn a_future_carried_to_a_plain_thread_ends_with_the_budget() {
    futures_executor::block_on(async {
        let handle = punctual::budget(50 * MS, async {
            let slow = std::future::pending::<()>().deadline(Duration::from_secs(1));
            let bounded = slow.with_current_budget();
            std::thread::spawn(move || futures_executor::block_on(bounded))
        })
        .await
        .unwrap();
        let err = handle.join().unwrap().unwrap_err();
        assert!(err.is_budget());
        assert_eq!(err.duration(), 50 * MS);
    });
}
