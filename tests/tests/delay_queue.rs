//! `punctual::DelayQueue` on the default wheels: tokio's paused clock (tokio-util's
//! `DelayQueue` tests' own setting), real time on the global wheel under any executor, and
//! a queue moved between tasks of a multi-thread runtime.

use std::time::Duration;

use futures_util::StreamExt;
use punctual::DelayQueue;
use tokio::time::{self, Instant};
use tokio_test::{assert_pending, assert_ready, task};

fn ms(n: u64) -> Duration {
    Duration::from_millis(n)
}

macro_rules! poll {
    ($queue:ident) => {
        $queue.enter(|cx, mut queue| queue.poll_expired(cx))
    };
}

#[tokio::test(start_paused = true)]
async fn follows_tokio_paused_clock() {
    let mut queue = task::spawn(DelayQueue::new());
    queue.insert("hour", Duration::from_secs(3600));
    assert_pending!(poll!(queue));
    time::advance(Duration::from_secs(3599)).await;
    assert!(!queue.is_woken());
    assert_pending!(poll!(queue));
    time::advance(Duration::from_secs(1)).await;
    assert!(queue.is_woken());
    let expired = assert_ready!(poll!(queue)).unwrap();
    assert_eq!(expired.into_inner(), "hour");
}

#[tokio::test(start_paused = true)]
async fn insert_at_tokio_instant() {
    let mut queue = task::spawn(DelayQueue::new());
    let start = Instant::now();
    let key = queue.insert_at("at", start + ms(250));
    queue.insert_at("past", start - ms(5));
    let first = assert_ready!(poll!(queue)).unwrap();
    assert_eq!(first.into_inner(), "past");
    assert_pending!(poll!(queue));
    time::sleep_until(start + ms(249)).await;
    assert_pending!(poll!(queue));
    time::sleep_until(start + ms(250)).await;
    let expired = assert_ready!(poll!(queue)).unwrap();
    assert_eq!(expired.key(), key);
    assert!(Instant::now() >= start + ms(250));
}

#[tokio::test(start_paused = true)]
async fn stream_in_deadline_order() {
    let mut queue = DelayQueue::new();
    for delay in [30u64, 10, 20, 40] {
        queue.insert(delay, ms(delay));
    }
    let start = Instant::now();
    let mut out = Vec::new();
    while let Some(expired) = queue.next().await {
        let elapsed = Instant::now() - start;
        let delay = expired.into_inner();
        assert!(elapsed >= ms(delay), "early: {elapsed:?} for {delay}");
        assert!(elapsed <= ms(delay + 2), "late: {elapsed:?} for {delay}");
        out.push(delay);
    }
    assert_eq!(out, [10, 20, 30, 40]);
}

#[tokio::test(start_paused = true)]
async fn reset_and_remove_by_key() {
    let mut queue = task::spawn(DelayQueue::new());
    let a = queue.insert('a', ms(10));
    let b = queue.insert('b', ms(20));
    assert_pending!(poll!(queue));
    queue.reset(a, ms(30)).unwrap();
    assert_eq!(queue.remove(b), Some('b'));
    assert_eq!(queue.remove(b), None);
    assert!(queue.reset(b, ms(1)).is_err());
    time::advance(ms(29)).await;
    assert_pending!(poll!(queue));
    time::advance(ms(1)).await;
    assert_eq!(assert_ready!(poll!(queue)).unwrap().into_inner(), 'a');
    assert!(assert_ready!(poll!(queue)).is_none());
}

#[test]
fn real_time_never_early() {
    futures_executor::block_on(async {
        let mut queue = DelayQueue::new();
        let start = std::time::Instant::now();
        for delay in [3u64, 1, 2] {
            queue.insert(delay, ms(delay));
        }
        let mut out = Vec::new();
        while let Some(expired) = queue.next().await {
            let delay = expired.into_inner();
            assert!(start.elapsed() >= ms(delay), "early");
            out.push(delay);
        }
        assert_eq!(out, [1, 2, 3]);
    });
}

#[test]
fn real_time_under_smol() {
    smol::block_on(async {
        let mut queue = DelayQueue::new();
        let start = std::time::Instant::now();
        queue.insert_at((), start + ms(5));
        queue.next().await.unwrap();
        assert!(start.elapsed() >= ms(5));
    });
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn queue_moves_between_tasks() {
    let mut queue = DelayQueue::new();
    let key = queue.insert(1u32, ms(5));
    let queue = tokio::spawn(async move {
        let expired = queue.next().await.unwrap();
        assert_eq!(expired.key(), key);
        queue
    })
    .await
    .unwrap();
    assert!(queue.is_empty());
}

#[test]
fn queue_is_send_and_sync() {
    fn send_sync<T: Send + Sync>() {}
    send_sync::<DelayQueue<String>>();
}

/// Deadlines come back as the tokio instants given, as tokio-util's: by key, for the next
/// value, from `try_remove` and on the expired value.
#[tokio::test(start_paused = true)]
async fn deadlines_are_tokio_instants() {
    let mut queue = DelayQueue::new();
    let at = Instant::now() + ms(30);
    let key = queue.insert_at("a", at);
    let other = queue.insert_at("b", at + ms(5));
    assert_eq!(queue.deadline(key), Some(at));
    assert_eq!(queue.next_deadline(), Some(at));
    let removed = queue.try_remove(other).unwrap();
    assert_eq!(removed.deadline(), at + ms(5));
    let expired = queue.next().await.unwrap();
    assert_eq!(expired.deadline(), at);
    assert!(Instant::now() >= expired.deadline());
}
