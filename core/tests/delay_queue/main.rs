//! The queue on a manual clock: tokio-util's `DelayQueue` cases that apply, keys, storage.
//! The random sequences against a model are in `delay_queue_model.rs`.
#![cfg(feature = "alloc")]

use core::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;
use std::task::Wake;

use core::task::{Context, Poll, Waker};
use core::time::Duration;

use punctual_core::{
    DelayQueue, Expired, Fixed, FixedSlots, Full, GrowableSlots, Key, ManualClock, Reading,
    SlotStorage, StaleKey, Wheel,
};

mod tokio_cases;
mod tokio_resets;

const TICK: Duration = Duration::from_millis(1);

type TestWheel = Wheel<ManualClock, Fixed<16>>;
type Queue<'w, T> = DelayQueue<'w, T, GrowableSlots<T>, &'w TestWheel>;

fn wheel() -> TestWheel {
    Wheel::fixed(ManualClock::new(), TICK)
}

fn ms(n: u64) -> Duration {
    Duration::from_millis(n)
}

/// A task's waker that counts its wakes.
#[derive(Default)]
struct Task(AtomicUsize);

impl Wake for Task {
    fn wake(self: Arc<Self>) {
        self.0.fetch_add(1, Ordering::SeqCst);
    }
}

/// One task polling one queue.
struct Poller {
    task: Arc<Task>,
    waker: Waker,
    seen: usize,
}

impl Poller {
    fn new() -> Self {
        let task = Arc::new(Task::default());
        Self {
            waker: Waker::from(task.clone()),
            task,
            seen: 0,
        }
    }

    /// Polls once; the wakes so far count as seen.
    fn poll<T, S: SlotStorage<T>>(
        &mut self,
        queue: &mut DelayQueue<'_, T, S, &TestWheel>,
    ) -> Poll<Option<Expired<T>>> {
        self.seen = self.task.0.load(Ordering::SeqCst);
        queue.poll_expired(&mut Context::from_waker(&self.waker))
    }

    /// Whether the task was woken since its last poll.
    fn is_woken(&self) -> bool {
        self.task.0.load(Ordering::SeqCst) > self.seen
    }
}

/// The index of the slot a key names, as its `Debug` form shows it (`Key(INDEXvGENERATION)`).
#[track_caller]
fn index(key: Key) -> u32 {
    let debug = format!("{key:?}");
    let index = debug
        .strip_prefix("Key(")
        .and_then(|rest| rest.split_once('v'))
        .and_then(|(index, _)| index.parse().ok());
    index.unwrap_or_else(|| panic!("no index in the key {debug}"))
}

/// The value of a `Ready(Some)` poll.
#[track_caller]
fn ready<T: core::fmt::Debug>(poll: Poll<Option<Expired<T>>>) -> T {
    match poll {
        Poll::Ready(Some(expired)) => expired.into_inner(),
        other => panic!("expected a value, got {other:?}"),
    }
}

#[test]
fn stale_keys_are_refused() {
    let wheel = wheel();
    let mut queue: Queue<'_, &str> = DelayQueue::new(&wheel, GrowableSlots::new());
    let mut poller = Poller::new();
    let removed = queue.insert("removed", ms(5));
    assert_eq!(queue.remove(removed), Some("removed"));
    // The slot is reused by the next insert; the old key must not reach its value.
    let fresh = queue.insert("fresh", ms(5));
    assert_eq!(index(fresh), index(removed));
    assert_eq!(queue.remove(removed), None);
    assert_eq!(queue.get(removed), None);
    assert_eq!(queue.deadline(removed), None);
    assert_eq!(queue.reset(removed, ms(1)), Err(StaleKey(removed)));
    assert_eq!(
        queue.reset_at(removed, Reading::ZERO),
        Err(StaleKey(removed))
    );
    assert!(!queue.contains_key(removed));
    assert_eq!(queue.get(fresh), Some(&"fresh"));

    wheel.advance(ms(5));
    let expired = match poller.poll(&mut queue) {
        Poll::Ready(Some(expired)) => expired,
        other => panic!("{other:?}"),
    };
    assert_eq!(expired.key(), fresh);
    assert_eq!(queue.remove(fresh), None, "an expired key is stale");
    assert!(queue.reset(fresh, ms(1)).is_err());
}

#[test]
fn keys_of_another_queue_are_refused() {
    let wheel = wheel();
    let mut small: Queue<'_, u8> = DelayQueue::new(&wheel, GrowableSlots::new());
    let mut large: Queue<'_, u8> = DelayQueue::new(&wheel, GrowableSlots::new());
    for i in 0..10 {
        large.insert(i, ms(5));
    }
    let far = large.insert(10, ms(5));
    assert_eq!(small.remove(far), None);
    assert!(small.reset(far, ms(1)).is_err());
}

#[test]
fn cleared_keys_are_stale() {
    let wheel = wheel();
    let mut queue: Queue<'_, u8> = DelayQueue::new(&wheel, GrowableSlots::new());
    let key = queue.insert(1, ms(5));
    queue.clear();
    assert!(queue.is_empty());
    let again = queue.insert(2, ms(5));
    assert_eq!(queue.remove(key), None);
    assert_eq!(queue.remove(again), Some(2));
}

#[test]
fn full_fixed_queue_gives_the_value_back() {
    let wheel = wheel();
    let mut queue = DelayQueue::new(&wheel, FixedSlots::<u32, 3>::new());
    let keys: Vec<_> = (0..3)
        .map(|i| queue.try_insert(i, ms(5)).unwrap())
        .collect();
    assert_eq!(queue.try_insert(3, ms(5)), Err(Full(3)));
    assert_eq!(queue.try_insert_at(4, Reading::ZERO), Err(Full(4)));
    assert_eq!(queue.len(), 3);
    assert_eq!(queue.remove(keys[1]), Some(1));
    let key = queue.try_insert(5, ms(1)).unwrap();
    assert_eq!(queue.remove(keys[1]), None, "the reused slot's old key");
    assert_eq!(queue.get(key), Some(&5));

    let mut poller = Poller::new();
    wheel.advance(ms(5));
    let mut out: Vec<_> = (0..3).map(|_| ready(poller.poll(&mut queue))).collect();
    out.sort_unstable();
    assert_eq!(out, [0, 2, 5]);
    assert!(matches!(poller.poll(&mut queue), Poll::Ready(None)));
    assert_eq!(queue.capacity(), 3);
}

#[test]
fn growable_capacity_shrinks_by_itself() {
    const MANY: usize = 4096;
    let wheel = wheel();
    let mut queue: Queue<'_, usize> = DelayQueue::new(&wheel, GrowableSlots::new());
    let keys: Vec<_> = (0..MANY)
        .map(|i| queue.insert(i, ms(1 + (i % 50) as u64)))
        .collect();
    assert!(queue.capacity() >= MANY);
    // The last quarter leaves: more than a quarter is still used.
    for key in &keys[MANY * 3 / 4..] {
        assert!(queue.remove(*key).is_some());
    }
    assert!(queue.capacity() >= MANY / 2);
    // All but every 100th leave: the survivors are spread over the whole range, and move.
    for (i, key) in keys[..MANY * 3 / 4].iter().enumerate() {
        if i % 100 != 0 {
            assert_eq!(queue.remove(*key), Some(i));
        }
    }
    let survivors: Vec<_> = (0..MANY * 3 / 4).step_by(100).collect();
    assert_eq!(queue.len(), survivors.len());
    assert!(queue.capacity() < 128, "capacity {}", queue.capacity());
    // Their keys, deadlines and places in the levels followed them.
    for &i in &survivors {
        assert_eq!(queue.get(keys[i]), Some(&i));
        assert_eq!(
            queue.deadline(keys[i]),
            Some(Reading::from_nanos(
                ms(1 + (i % 50) as u64).as_nanos() as u64
            ))
        );
    }
    let mut poller = Poller::new();
    let mut out = Vec::new();
    for _ in 0..50 {
        wheel.advance(TICK);
        while let Poll::Ready(Some(expired)) = poller.poll(&mut queue) {
            let i = expired.into_inner();
            assert_eq!(
                wheel.now(),
                Reading::from_nanos(ms(1 + (i % 50) as u64).as_nanos() as u64)
            );
            out.push(i);
        }
    }
    out.sort_unstable();
    assert_eq!(out, survivors);
    assert!(queue.capacity() <= 16);
}

#[test]
fn growable_inserts_take_lowest_keys() {
    let wheel = wheel();
    let mut queue: Queue<'_, usize> = DelayQueue::new(&wheel, GrowableSlots::new());
    let keys: Vec<_> = (0..200).map(|i| queue.insert(i, ms(10))).collect();
    for key in &keys[..100] {
        queue.remove(*key);
    }
    let again: Vec<_> = (0..10).map(|i| queue.insert(i, ms(10))).collect();
    assert!(again.iter().all(|&key| index(key) < 10));
    for key in &keys[..100] {
        assert_eq!(queue.get(*key), None, "a reused key's old generation");
    }
}

#[test]
fn growable_shrink_keeps_asked_capacity() {
    let wheel = wheel();
    let mut queue = DelayQueue::new(&wheel, GrowableSlots::with_capacity(1000));
    let keys: Vec<_> = (0..1000).map(|i| queue.insert(i, ms(10))).collect();
    for key in keys {
        queue.remove(key);
    }
    assert!(queue.capacity() >= 1000);
}

#[test]
fn growable_regrows_after_shrinking() {
    let wheel = wheel();
    let mut queue: Queue<'_, usize> = DelayQueue::new(&wheel, GrowableSlots::new());
    for round in 0..3 {
        let keys: Vec<_> = (0..300).map(|i| queue.insert(i, ms(10))).collect();
        for (i, key) in keys.iter().enumerate() {
            assert_eq!(queue.remove(*key), Some(i), "round {round}");
        }
        assert!(queue.capacity() <= 16);
    }
}

#[test]
fn zero_expires_at_the_next_poll() {
    let wheel = wheel();
    wheel.advance(Duration::from_micros(300));
    let mut queue: Queue<'_, u8> = DelayQueue::new(&wheel, GrowableSlots::new());
    let mut poller = Poller::new();
    queue.insert(1, Duration::ZERO);
    assert_eq!(ready(poller.poll(&mut queue)), 1);
}

#[test]
fn duration_max_never_expires() {
    let wheel = wheel();
    let mut queue: Queue<'_, u8> = DelayQueue::new(&wheel, GrowableSlots::new());
    let mut poller = Poller::new();
    let key = queue.insert(1, Duration::MAX);
    queue.insert_at(2, Reading::END);
    assert_eq!(queue.deadline(key), Some(Reading::END));
    assert!(poller.poll(&mut queue).is_pending());
    wheel.advance(Duration::from_secs(1 << 40));
    assert!(poller.poll(&mut queue).is_pending());
    assert_eq!(queue.len(), 2);
    assert_eq!(queue.remove(key), Some(1));
}

#[test]
fn sub_tick_deadline_is_never_early() {
    let wheel = wheel();
    let mut queue: Queue<'_, u8> = DelayQueue::new(&wheel, GrowableSlots::new());
    let mut poller = Poller::new();
    wheel.advance(Duration::from_micros(400));
    let key = queue.insert(1, Duration::from_micros(1_300));
    let deadline = queue.deadline(key).unwrap();
    assert_eq!(deadline, Reading::from_nanos(1_700_000));
    assert!(poller.poll(&mut queue).is_pending());
    wheel.advance(Duration::from_micros(1_299));
    assert!(poller.poll(&mut queue).is_pending());
    // Its tick boundary, 2 ms: at most a tick after the deadline.
    wheel.advance(Duration::from_micros(301));
    assert!(poller.is_woken());
    assert_eq!(ready(poller.poll(&mut queue)), 1);
}

#[test]
fn one_entry_on_the_wheel_at_most() {
    let wheel = wheel();
    let mut queue: Queue<'_, u64> = DelayQueue::new(&wheel, GrowableSlots::new());
    let mut poller = Poller::new();
    for i in 0..100 {
        queue.insert(i, ms(1 + i % 37));
    }
    assert!(poller.poll(&mut queue).is_pending());
    assert!(wheel.occupied() <= 1);
    let mut out = 0;
    for _ in 0..40 {
        wheel.advance(TICK);
        while let Poll::Ready(Some(_)) = poller.poll(&mut queue) {
            out += 1;
        }
        assert!(wheel.occupied() <= 1);
    }
    assert_eq!(out, 100);
    drop(queue);
    wheel.advance(TICK * 2);
    assert_eq!(wheel.occupied(), 0);
}

#[test]
fn expired_carries_key_and_deadline() {
    let wheel = wheel();
    let mut queue: Queue<'_, u8> = DelayQueue::new(&wheel, GrowableSlots::new());
    let mut poller = Poller::new();
    let key = queue.insert(7, ms(3));
    wheel.advance(ms(4));
    let Poll::Ready(Some(mut expired)) = poller.poll(&mut queue) else {
        panic!("not expired");
    };
    assert_eq!(expired.key(), key);
    assert_eq!(expired.deadline(), Reading::from_nanos(3_000_000));
    *expired.get_mut() += 1;
    assert_eq!(*expired.get_ref(), 8);
}

#[test]
fn try_remove_gives_key_and_deadline() {
    let wheel = wheel();
    let mut queue: Queue<'_, &str> = DelayQueue::new(&wheel, GrowableSlots::new());
    let key = queue.insert("a", ms(5));
    let removed = queue.try_remove(key).unwrap();
    assert_eq!(removed.key(), key);
    assert_eq!(removed.deadline(), Reading::ZERO + ms(5));
    assert_eq!(removed.into_inner(), "a");
    assert!(queue.try_remove(key).is_none(), "stale");
}

#[test]
fn queue_is_send_and_sync() {
    fn send_sync<T: Send + Sync>() {}
    send_sync::<Queue<'static, u8>>();
    send_sync::<DelayQueue<'static, u8, FixedSlots<u8, 4>>>();
    send_sync::<Expired<u8>>();
}

/// Emptied, the queue returns to its floor of 16 slots by itself; `compact` gives back
/// the rest, as tokio-util's.
#[test]
fn emptied_queue_returns_to_the_floor() {
    let wheel = wheel();
    let mut queue: Queue<'_, usize> = DelayQueue::new(&wheel, GrowableSlots::new());
    let keys: Vec<_> = (0..100).map(|i| queue.insert(i, ms(50))).collect();
    assert!(queue.capacity() >= 100);
    for key in keys {
        assert!(queue.remove(key).is_some());
    }
    assert_eq!(queue.capacity(), 16);
    queue.compact();
    assert_eq!(queue.capacity(), 0);

    // Below the floor it keeps what it has, until compacted.
    let a = queue.insert(1, ms(5));
    let b = queue.insert(2, ms(5));
    let kept = queue.capacity();
    queue.remove(a);
    queue.remove(b);
    assert_eq!(queue.capacity(), kept);
    queue.compact();
    assert_eq!(queue.capacity(), 0);
}

/// `compact` moves values down: their keys hold, and they expire in order, on time.
#[test]
fn compact_keeps_keys_and_deadlines() {
    let wheel = wheel();
    let mut queue: Queue<'_, u64> = DelayQueue::new(&wheel, GrowableSlots::with_capacity(64));
    let keys: Vec<_> = (0..64).map(|i| queue.insert(i, ms(10 + i))).collect();
    for (i, key) in keys.iter().enumerate() {
        if i % 8 != 7 {
            queue.remove(*key);
        }
    }
    queue.compact();
    assert_eq!(queue.capacity(), 8);
    for (i, key) in keys.iter().enumerate().filter(|(i, _)| i % 8 == 7) {
        assert_eq!(queue.get(*key), Some(&(i as u64)));
    }
    let mut poller = Poller::new();
    let mut now = 0;
    for i in (7..64).step_by(8) {
        wheel.advance(ms(10 + i - 1 - now));
        assert!(poller.poll(&mut queue).is_pending(), "{i} early");
        wheel.advance(TICK);
        now = 10 + i;
        assert_eq!(ready(poller.poll(&mut queue)), i);
    }
    assert!(queue.is_empty());
}

/// `shrink_to_fit` gives back the slots past the highest in use, moving nothing;
/// `reserve` makes room, as tokio-util's.
#[test]
fn shrink_to_fit_and_reserve() {
    let wheel = wheel();
    let mut queue: Queue<'_, u32> = DelayQueue::new(&wheel, GrowableSlots::with_capacity(40));
    let keys: Vec<_> = (0..20).map(|i| queue.insert(i, ms(5))).collect();
    for key in &keys[10..] {
        queue.remove(*key);
    }
    queue.shrink_to_fit();
    assert_eq!(queue.capacity(), 10);
    assert_eq!(queue.get(keys[9]), Some(&9));
    queue.reserve(30);
    assert!(queue.capacity() >= 40);
    assert_eq!(queue.get(keys[9]), Some(&9), "reserve moves no key");
    let more: Vec<_> = (0..30).map(|i| queue.insert(i, ms(5))).collect();
    assert_eq!(more.len() + 10, queue.len());
}
