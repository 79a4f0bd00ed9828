//! [`DelayQueue`] on the default wheel: the core's queue with growable slots, a
//! [`DefaultWheel`] handle, and instants as default deadlines take them.
//! * The wheel is chosen at the first insert or poll, as a default deadline chooses it.
//! * The levels tick as every default wheel does (1 ms).

use core::pin::Pin;
use core::task::{Context, Poll};
use core::time::Duration;

use punctual_core::{GrowableSlots, Reading, WheelRef};

use crate::default_wheel::DefaultWheel;
use crate::instant::DeadlineInstant;

pub use punctual_core::{Expired, Key, StaleKey};

/// The tick of every default wheel (the global wheel, tokio runtimes', paused threads').
const TICK: Duration = Duration::from_millis(1);

/// Values that come back out when their deadline passes, by key, on the default wheel:
/// tokio-util's `DelayQueue` on any executor, `Send` and `Sync`, with memory given back as
/// it shrinks (no `shrink_to_fit` to call). See `punctual::migrating` for the mapping.
///
/// A value is never handed out before its deadline, and with a driver that is not
/// starved at most two ticks (2 ms) after it. The queue keeps one sleep on the default
/// wheel of where it is first used: the global wheel, or with the `tokio` feature the
/// wheel of the tokio runtime it is first used in (so tokio's paused clock drives it).
/// Use [`punctual_core::DelayQueue`] for a wheel of your own, or fixed slots without
/// allocation.
///
/// Keys are checked: a key whose value has left (removed, or returned expired) is refused
/// with [`StaleKey`] or `None`, never another value.
///
/// # Examples
///
/// ```
/// use std::time::Duration;
/// use futures_util::StreamExt;
///
/// # futures_executor::block_on(async {
/// let mut cache = punctual::DelayQueue::new();
/// let key = cache.insert("session-1", Duration::from_millis(30));
/// cache.insert("session-2", Duration::from_millis(5));
/// cache.reset(key, Duration::from_millis(10)).unwrap(); // seen again: later
///
/// let first = cache.next().await.unwrap();
/// assert_eq!(first.into_inner(), "session-2");
/// assert_eq!(cache.next().await.unwrap().key(), key);
/// assert!(cache.is_empty());
/// assert!(cache.remove(key).is_none()); // stale
/// # });
/// ```
#[derive(Debug)]
pub struct DelayQueue<T> {
    inner: punctual_core::DelayQueue<'static, T, GrowableSlots<T>, DefaultWheel>,
}

impl<T> DelayQueue<T> {
    /// An empty queue; it allocates at its first insert.
    pub fn new() -> Self {
        Self::with_slots(GrowableSlots::new())
    }

    /// An empty queue with room for `capacity` values; its capacity never shrinks below it.
    pub fn with_capacity(capacity: usize) -> Self {
        Self::with_slots(GrowableSlots::with_capacity(capacity))
    }

    fn with_slots(slots: GrowableSlots<T>) -> Self {
        Self {
            inner: punctual_core::DelayQueue::with_tick(DefaultWheel::new(), TICK, slots),
        }
    }

    /// Inserts `value`, to expire `timeout` from now.
    ///
    /// ```
    /// # let mut queue = punctual::DelayQueue::new();
    /// let key = queue.insert(42, std::time::Duration::from_secs(30));
    /// assert_eq!(queue.get(key), Some(&42));
    /// ```
    ///
    /// # Panics
    ///
    /// If the queue holds `u32::MAX - 1` values already; if the global wheel is used and
    /// its timer thread is not running and cannot be started
    /// ([`GlobalClock`](crate::GlobalClock)).
    pub fn insert(&mut self, value: T, timeout: Duration) -> Key {
        self.inner.insert(value, timeout)
    }

    /// Inserts `value`, to expire at `at` (a `std::time::Instant`, or a
    /// `tokio::time::Instant` with the `tokio` feature); at the next poll if it has passed.
    ///
    /// # Panics
    ///
    /// As [`DelayQueue::insert`].
    pub fn insert_at(&mut self, value: T, at: impl DeadlineInstant) -> Key {
        let at = self.reading_of(at);
        self.inner.insert_at(value, at)
    }

    /// Moves the deadline of `key`'s value to `timeout` from now.
    ///
    /// # Errors
    ///
    /// [`StaleKey`] if the value has left the queue (removed, or returned expired).
    pub fn reset(&mut self, key: Key, timeout: Duration) -> Result<(), StaleKey> {
        self.inner.reset(key, timeout)
    }

    /// Moves the deadline of `key`'s value to `at`.
    ///
    /// # Errors
    ///
    /// [`StaleKey`] if the value has left the queue (removed, or returned expired).
    pub fn reset_at(&mut self, key: Key, at: impl DeadlineInstant) -> Result<(), StaleKey> {
        let at = self.reading_of(at);
        self.inner.reset_at(key, at)
    }

    /// Takes `key`'s value out of the queue; `None` if the key is stale.
    pub fn remove(&mut self, key: Key) -> Option<T> {
        self.inner.remove(key)
    }

    /// `key`'s value, if the key is not stale.
    pub fn get(&self, key: Key) -> Option<&T> {
        self.inner.get(key)
    }

    /// `key`'s value, mutably, if the key is not stale.
    pub fn get_mut(&mut self, key: Key) -> Option<&mut T> {
        self.inner.get_mut(key)
    }

    /// Whether `key` names a value in the queue.
    pub fn contains_key(&self, key: Key) -> bool {
        self.inner.contains_key(key)
    }

    /// `key`'s deadline as a reading of the wheel's clock ([`DelayQueue::now`]), if the key
    /// is not stale.
    pub fn deadline(&self, key: Key) -> Option<Reading> {
        self.inner.deadline(key)
    }

    /// The wheel's clock now, which deadlines are readings of.
    pub fn now(&mut self) -> Reading {
        self.inner.now()
    }

    /// The key of the value that comes out next (see
    /// [`punctual_core::DelayQueue::peek`]).
    pub fn peek(&self) -> Option<Key> {
        self.inner.peek()
    }

    /// The deadline of the value that comes out next: at or before now if one is due.
    pub fn next_deadline(&self) -> Option<Reading> {
        self.inner.next_deadline()
    }

    /// Values in the queue.
    pub fn len(&self) -> usize {
        self.inner.len()
    }

    /// Whether the queue holds no value.
    pub fn is_empty(&self) -> bool {
        self.inner.is_empty()
    }

    /// Values the queue holds before it allocates again. It shrinks by itself: by halves
    /// while under a quarter is used (see [`GrowableSlots`]).
    pub fn capacity(&self) -> usize {
        self.inner.capacity()
    }

    /// Drops every value; every key becomes stale. A task waiting on the queue is woken.
    pub fn clear(&mut self) {
        self.inner.clear();
    }

    /// The next expired value, or `Pending` until one expires; `Ready(None)` if the queue
    /// is empty (it may be polled again: the task is woken when a value inserted since
    /// expires).
    ///
    /// # Panics
    ///
    /// If the global wheel is used and its timer thread is not running and cannot be
    /// started ([`GlobalClock`](crate::GlobalClock)).
    ///
    /// # Cancel safety
    ///
    /// A value leaves the queue only in the poll that returns it: dropping a future that
    /// polls the queue (`queue.next()` in a `select!`) loses nothing.
    pub fn poll_expired(&mut self, cx: &mut Context<'_>) -> Poll<Option<Expired<T>>> {
        self.inner.poll_expired(cx)
    }

    /// `at` as a reading of the wheel the queue chose.
    fn reading_of(&mut self, at: impl DeadlineInstant) -> Reading {
        self.inner.wheel().reading_at(at.reading())
    }
}

impl<T> Default for DelayQueue<T> {
    fn default() -> Self {
        Self::new()
    }
}

impl<T> futures_core::Stream for DelayQueue<T> {
    type Item = Expired<T>;

    /// [`DelayQueue::poll_expired`]: `None` while the queue is empty, not for good.
    fn poll_next(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Option<Expired<T>>> {
        self.get_mut().inner.poll_expired(cx)
    }

    fn size_hint(&self) -> (usize, Option<usize>) {
        (0, Some(self.len()))
    }
}
