//! A budget carried into spawned tasks with `with_current_budget`, on tokio's
//! multi-thread runtime: the spawned work is bounded by the budget of the task that
//! spawned it, and so is every default deadline inside it, on whichever worker polls it.
// The budgeted blocks hand back the `JoinHandle`s of the tasks they spawn, on purpose.
#![allow(clippy::async_yields_async)]

use std::time::{Duration, Instant};

use punctual::prelude::*;

const MS: Duration = Duration::from_millis(1);

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_spawned_task_ends_with_the_budget_of_its_spawner() {
    let start = Instant::now();
    let handles = punctual::budget(150 * MS, async {
        let mut handles = Vec::new();
        for _ in 0..8 {
            // Each spawned deadline allows itself 10 s; the spawner's budget has 150 ms.
            let work =
                tokio::time::sleep(Duration::from_secs(30)).deadline(Duration::from_secs(10));
            handles.push(tokio::spawn(work.with_current_budget()));
        }
        handles
    })
    .named("request")
    .await
    .unwrap();
    for handle in handles {
        let outcome = handle.await.unwrap();
        // The spawned Budgeted's own timer, or the inner deadline cut to it.
        let elapsed = match outcome {
            Err(e) => e,
            Ok(inner) => inner.unwrap_err(),
        };
        assert!(elapsed.is_budget());
        assert_eq!(elapsed.duration(), 150 * MS);
    }
    let took = start.elapsed();
    assert!(took >= 150 * MS, "early: {took:?}");
    assert!(
        took < Duration::from_secs(5),
        "the budget did not reach the tasks: {took:?}"
    );
}

/// The spawned task sees the spawner's budget, less the time it waited to be polled
/// (the end is carried as an instant), on the wheel of the worker that polls it.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_spawned_task_sees_what_is_left_of_the_budget() {
    let handle = punctual::budget(Duration::from_secs(60), async {
        tokio::time::sleep(20 * MS).await;
        tokio::spawn(async { punctual::adapters::tower::remaining_budget() }.with_current_budget())
    })
    .await
    .unwrap();
    let left = handle
        .await
        .unwrap()
        .unwrap()
        .expect("no budget in the spawned task");
    assert!(left <= Duration::from_secs(60) - 20 * MS, "{left:?}");
    assert!(left > Duration::from_secs(30), "{left:?}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn without_a_budget_the_spawned_work_runs_unbounded() {
    let handle = tokio::spawn(async { punctual::sleep(30 * MS).await }.with_current_budget());
    assert_eq!(handle.await.unwrap(), Ok(()));
    let handle =
        tokio::spawn(async { punctual::adapters::tower::remaining_budget() }.with_current_budget());
    assert_eq!(handle.await.unwrap(), Ok(None));
}
