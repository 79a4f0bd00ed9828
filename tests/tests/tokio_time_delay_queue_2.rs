//! tokio-util's `tests/time_delay_queue.rs`, part 2 of 2, run against punctual: from the
//! tokio project (<https://github.com/tokio-rs/tokio>, MIT licence, Copyright (c) Tokio
//! Contributors), with only its imports changed (`mod tokio` maps `tokio::time`'s timers
//! to punctual's, `tokio_shim/mod.rs`; `DelayQueue` is punctual's). Lines that differ on
//! purpose, as docs/migrating.md says, are marked `// punctual:`.
//!
//! `PAUSED`: as in part 1 (`tokio_time_delay_queue.rs`), tests that pause tokio's clock
//! inside a running runtime and count whole milliseconds are paused from the start.

#![allow(clippy::disallowed_names)]
#![warn(rust_2018_idioms)]
// punctual: no `full` feature gate; resets return `Err(StaleKey)` where tokio-util panics;
// in two parts, each with all imports; keys are `Copy`, and `&key` works too.
#![allow(unused_must_use, unused_imports, dead_code)]
#![allow(clippy::needless_borrows_for_generic_args)]

use futures_util::StreamExt;
#[path = "tokio_shim/mod.rs"]
mod tokio;
use self::tokio::time::{self, Duration, Instant, sleep, sleep_until};
use punctual::DelayQueue;
use tokio_test::{assert_pending, assert_ready, task};

macro_rules! poll {
    ($queue:ident) => {
        $queue.enter(|cx, mut queue| queue.poll_expired(cx))
    };
}

macro_rules! assert_ready_some {
    ($e:expr) => {{
        match assert_ready!($e) {
            Some(v) => v,
            None => panic!("None"),
        }
    }};
}
#[tokio::test]
async fn reset_first_expiring_item_to_expire_later() {
    time::pause();

    let mut queue = task::spawn(DelayQueue::new());

    let now = Instant::now();

    let one = queue.insert_at("one", now + ms(200));
    let _two = queue.insert_at("two", now + ms(250));

    assert_pending!(poll!(queue));

    queue.reset_at(&one, now + ms(300));
    sleep(ms(250)).await;

    assert!(queue.is_woken());

    let entry = assert_ready_some!(poll!(queue)).into_inner();
    assert_eq!(entry, "two");
}

#[tokio::test(start_paused = true)] // punctual: see `PAUSED` at the top.
async fn insert_before_first_after_poll() {
    // time::pause(); // punctual: paused from the start instead.

    let mut queue = task::spawn(DelayQueue::new());

    let now = Instant::now();

    let _one = queue.insert_at("one", now + ms(200));

    assert_pending!(poll!(queue));

    let _two = queue.insert_at("two", now + ms(100));

    sleep(ms(99)).await;

    assert_pending!(poll!(queue));

    sleep(ms(1)).await;

    assert!(queue.is_woken());

    let entry = assert_ready_some!(poll!(queue)).into_inner();
    assert_eq!(entry, "two");
}

#[tokio::test]
async fn insert_after_ready_poll() {
    time::pause();

    let mut queue = task::spawn(DelayQueue::new());

    let now = Instant::now();

    queue.insert_at("1", now + ms(100));
    queue.insert_at("2", now + ms(100));
    queue.insert_at("3", now + ms(100));

    assert_pending!(poll!(queue));

    sleep(ms(100)).await;

    assert!(queue.is_woken());

    let mut res = vec![];

    while res.len() < 3 {
        let entry = assert_ready_some!(poll!(queue));
        res.push(entry.into_inner());
        queue.insert_at("foo", now + ms(500));
    }

    res.sort_unstable();

    assert_eq!("1", res[0]);
    assert_eq!("2", res[1]);
    assert_eq!("3", res[2]);
}

#[tokio::test(start_paused = true)] // punctual: see `PAUSED` at the top.
async fn reset_later_after_slot_starts() {
    // time::pause(); // punctual: paused from the start instead.

    let mut queue = task::spawn(DelayQueue::new());

    let now = Instant::now();

    let foo = queue.insert_at("foo", now + ms(100));

    assert_pending!(poll!(queue));

    sleep_until(now + Duration::from_millis(80)).await;

    assert!(!queue.is_woken());

    // At this point the queue hasn't been polled, so `elapsed` on the wheel
    // for the queue is still at 0 and hence the 1ms resolution slots cover
    // [0-64).  Resetting the time on the entry to 120 causes it to get put in
    // the [64-128) slot.  As the queue knows that the first entry is within
    // that slot, but doesn't know when, it must wake immediately to advance
    // the wheel.
    queue.reset_at(&foo, now + ms(120));
    assert!(!queue.is_woken()); // punctual: a reset re-arms the queue itself, waking no one.

    assert_pending!(poll!(queue));

    sleep_until(now + Duration::from_millis(119)).await;
    // assert!(!queue.is_woken()); // punctual: the old time may wake the task once (never with a value).

    sleep(ms(1)).await;
    assert!(queue.is_woken());

    let entry = assert_ready_some!(poll!(queue)).into_inner();
    assert_eq!(entry, "foo");
}

#[tokio::test]
async fn reset_inserted_expired() {
    time::pause();

    // Instants before the start of the test seem to break in wasm.
    time::sleep(ms(1000)).await;

    let mut queue = task::spawn(DelayQueue::new());
    let now = Instant::now();

    let key = queue.insert_at("foo", now - ms(100));

    // this causes the panic described in #2473
    queue.reset_at(&key, now + ms(100));

    assert_eq!(1, queue.len());

    sleep(ms(200)).await;

    let entry = assert_ready_some!(poll!(queue)).into_inner();
    assert_eq!(entry, "foo");

    assert_eq!(queue.len(), 0);
}

#[tokio::test(start_paused = true)] // punctual: see `PAUSED` at the top.
async fn reset_earlier_after_slot_starts() {
    // time::pause(); // punctual: paused from the start instead.

    let mut queue = task::spawn(DelayQueue::new());

    let now = Instant::now();

    let foo = queue.insert_at("foo", now + ms(200));

    assert_pending!(poll!(queue));

    sleep_until(now + Duration::from_millis(80)).await;

    assert!(!queue.is_woken());

    // At this point the queue hasn't been polled, so `elapsed` on the wheel
    // for the queue is still at 0 and hence the 1ms resolution slots cover
    // [0-64).  Resetting the time on the entry to 120 causes it to get put in
    // the [64-128) slot.  As the queue knows that the first entry is within
    // that slot, but doesn't know when, it must wake immediately to advance
    // the wheel.
    queue.reset_at(&foo, now + ms(120));
    assert!(!queue.is_woken()); // punctual: a reset re-arms the queue itself, waking no one.

    assert_pending!(poll!(queue));

    sleep_until(now + Duration::from_millis(119)).await;
    assert!(!queue.is_woken());

    sleep(ms(1)).await;
    assert!(queue.is_woken());

    let entry = assert_ready_some!(poll!(queue)).into_inner();
    assert_eq!(entry, "foo");
}

#[tokio::test]
async fn insert_in_past_after_poll_fires_immediately() {
    time::pause();

    let mut queue = task::spawn(DelayQueue::new());

    let now = Instant::now();

    queue.insert_at("foo", now + ms(200));

    assert_pending!(poll!(queue));

    sleep(ms(80)).await;

    assert!(!queue.is_woken());
    queue.insert_at("bar", now + ms(40));

    assert!(queue.is_woken());

    let entry = assert_ready_some!(poll!(queue)).into_inner();
    assert_eq!(entry, "bar");
}

#[tokio::test(start_paused = true)]
async fn compact_expire_empty() {
    let mut queue = task::spawn(DelayQueue::new());

    let now = Instant::now();

    queue.insert_at("foo1", now + ms(10));
    queue.insert_at("foo2", now + ms(10));

    sleep(ms(10)).await;

    let mut res = vec![];
    while res.len() < 2 {
        let entry = assert_ready_some!(poll!(queue));
        res.push(entry.into_inner());
    }

    queue.compact();

    assert_eq!(queue.len(), 0);
    assert_eq!(queue.capacity(), 0);
}

#[tokio::test(start_paused = true)]
async fn compact_remove_empty() {
    let mut queue = task::spawn(DelayQueue::new());

    let now = Instant::now();

    let key1 = queue.insert_at("foo1", now + ms(10));
    let key2 = queue.insert_at("foo2", now + ms(10));

    queue.remove(&key1);
    queue.remove(&key2);

    queue.compact();

    assert_eq!(queue.len(), 0);
    assert_eq!(queue.capacity(), 0);
}

#[tokio::test(start_paused = true)]
// Trigger a re-mapping of keys in the slab due to a `compact` call and
// test removal of re-mapped keys
async fn compact_remove_remapped_keys() {
    let mut queue = task::spawn(DelayQueue::new());

    let now = Instant::now();

    queue.insert_at("foo1", now + ms(10));
    queue.insert_at("foo2", now + ms(10));

    // should be assigned indices 3 and 4
    let key3 = queue.insert_at("foo3", now + ms(20));
    let key4 = queue.insert_at("foo4", now + ms(20));

    sleep(ms(10)).await;

    let mut res = vec![];
    while res.len() < 2 {
        let entry = assert_ready_some!(poll!(queue));
        res.push(entry.into_inner());
    }

    // items corresponding to `foo3` and `foo4` will be assigned
    // new indices here
    queue.compact();

    queue.insert_at("foo5", now + ms(10));

    // test removal of re-mapped keys
    let expired3 = queue.remove(&key3);
    let expired4 = queue.remove(&key4);

    assert_eq!(expired3.unwrap(), "foo3"); // punctual: `remove` gives `Option<T>` (`None` if stale).
    assert_eq!(expired4.unwrap(), "foo4"); // punctual: `remove` gives `Option<T>` (`None` if stale).

    queue.compact();
    assert_eq!(queue.len(), 1);
    assert_eq!(queue.capacity(), 1);
}

#[tokio::test(start_paused = true)]
async fn compact_change_deadline() {
    let mut queue = task::spawn(DelayQueue::new());

    let mut now = Instant::now();

    queue.insert_at("foo1", now + ms(10));
    queue.insert_at("foo2", now + ms(10));

    // should be assigned indices 3 and 4
    queue.insert_at("foo3", now + ms(20));
    let key4 = queue.insert_at("foo4", now + ms(20));

    sleep(ms(10)).await;

    let mut res = vec![];
    while res.len() < 2 {
        let entry = assert_ready_some!(poll!(queue));
        res.push(entry.into_inner());
    }

    // items corresponding to `foo3` and `foo4` should be assigned
    // new indices
    queue.compact();

    now = Instant::now();

    queue.insert_at("foo5", now + ms(10));
    let key6 = queue.insert_at("foo6", now + ms(10));

    queue.reset_at(&key4, now + ms(20));
    queue.reset_at(&key6, now + ms(20));

    // foo3 and foo5 will expire
    sleep(ms(10)).await;

    while res.len() < 4 {
        let entry = assert_ready_some!(poll!(queue));
        res.push(entry.into_inner());
    }

    sleep(ms(10)).await;

    while res.len() < 6 {
        let entry = assert_ready_some!(poll!(queue));
        res.push(entry.into_inner());
    }

    let entry = assert_ready!(poll!(queue));
    assert!(entry.is_none());
}

#[tokio::test(start_paused = true)]
async fn item_expiry_greater_than_wheel() {
    // This function tests that a delay queue that has existed for at least 2^36 milliseconds won't panic when a new item is inserted.
    let mut queue = DelayQueue::new();
    for _ in 0..2 {
        tokio::time::advance(Duration::from_millis(1 << 35)).await;
        queue.insert(0, Duration::from_millis(0));
        queue.next().await;
    }
    // This should not panic
    let no_panic = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
        queue.insert(1, Duration::from_millis(1));
    }));
    assert!(no_panic.is_ok());
}

#[cfg_attr(target_os = "wasi", ignore = "FIXME: Does not seem to work with WASI")]
#[tokio::test(start_paused = true)]
#[cfg(panic = "unwind")]
async fn remove_after_compact() {
    let now = Instant::now();
    let mut queue = DelayQueue::new();

    let foo_key = queue.insert_at("foo", now + ms(10));
    queue.insert_at("bar", now + ms(20));
    queue.remove(&foo_key);
    queue.compact();

    let panic = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
        queue.remove(&foo_key);
    }));
    assert!(panic.is_ok()); // punctual: a stale key gives `None`, where tokio-util panics.
}

#[cfg_attr(target_os = "wasi", ignore = "FIXME: Does not seem to work with WASI")]
#[tokio::test(start_paused = true)]
#[cfg(panic = "unwind")]
async fn remove_after_compact_poll() {
    let now = Instant::now();
    let mut queue = task::spawn(DelayQueue::new());

    let foo_key = queue.insert_at("foo", now + ms(10));
    queue.insert_at("bar", now + ms(20));

    sleep(ms(10)).await;
    assert_eq!(assert_ready_some!(poll!(queue)).key(), foo_key);

    queue.compact();

    let panic = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
        queue.remove(&foo_key);
    }));
    assert!(panic.is_ok()); // punctual: a stale key gives `None`, where tokio-util panics.
}

#[tokio::test(start_paused = true)]
async fn peek() {
    let mut queue = task::spawn(DelayQueue::new());

    let now = Instant::now();

    let key = queue.insert_at("foo", now + ms(5));
    let key2 = queue.insert_at("bar", now);
    let key3 = queue.insert_at("baz", now + ms(10));

    assert_eq!(queue.peek(), Some(key2));

    sleep(ms(6)).await;

    assert_eq!(queue.peek(), Some(key2));

    let entry = assert_ready_some!(poll!(queue));
    assert_eq!(entry.get_ref(), &"bar");

    assert_eq!(queue.peek(), Some(key));

    let entry = assert_ready_some!(poll!(queue));
    assert_eq!(entry.get_ref(), &"foo");

    assert_eq!(queue.peek(), Some(key3));

    assert_pending!(poll!(queue));

    sleep(ms(5)).await;

    assert_eq!(queue.peek(), Some(key3));

    let entry = assert_ready_some!(poll!(queue));
    assert_eq!(entry.get_ref(), &"baz");

    assert!(queue.peek().is_none());
}

#[tokio::test(start_paused = true)]
async fn wake_after_remove_last() {
    let mut queue = task::spawn(DelayQueue::new());
    let key = queue.insert("foo", ms(1000));

    assert_pending!(poll!(queue));

    queue.remove(&key);

    assert!(queue.is_woken());
    assert!(assert_ready!(poll!(queue)).is_none());
}

#[tokio::test(start_paused = true)]
async fn wake_after_clear() {
    let mut queue = task::spawn(DelayQueue::new());
    queue.insert("foo", ms(1000));

    assert_pending!(poll!(queue));
    assert!(!queue.is_woken());

    queue.clear();

    assert!(queue.is_woken());
    assert!(assert_ready!(poll!(queue)).is_none());
}

fn ms(n: u64) -> Duration {
    Duration::from_millis(n)
}
