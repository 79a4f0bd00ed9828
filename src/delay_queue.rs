//! tokio-util's `DelayQueue` on the default wheel: the core's queue with growable slots and
//! a [`DefaultWheel`] handle (chosen at the first insert or poll), ticking at 1 ms.

use core::ops::{Deref, DerefMut};
use core::pin::Pin;
use core::task::{Context, Poll};
use core::time::Duration;

use punctual_core::GrowableSlots;

use crate::default_wheel::DefaultWheel;

pub use punctual_core::{Key, StaleKey};

/// A value whose deadline has passed, with its (stale) key and its deadline: a
/// `tokio::time::Instant` with `tokio`, else a `std::time::Instant`, as tokio-util's.
pub type Expired<T> = punctual_core::Expired<T, crate::default_wheel::Now>;

/// The tick of every default wheel (the global wheel, tokio runtimes', paused threads').
const TICK: Duration = Duration::from_millis(1);

/// Values that come back out when their deadline passes, by key, on the default wheel:
/// tokio-util's `DelayQueue` on any executor, `Send` and `Sync` (see `punctual::migrating`).
///
/// * A value is never handed out before its deadline, and with a driver that is not
///   starved at most two ticks (2 ms) after it, on the default wheel of where the queue is
///   first used (with `tokio`, its runtime's: a paused clock drives it).
/// * Memory is given back as it shrinks; a stale key is refused ([`StaleKey`] or `None`).
/// * Its methods are [`punctual_core::DelayQueue`]'s, through `Deref`, with instants as
///   [`Expired`]'s. The core's queue also takes a wheel of your own, or fixed slots.
///
/// # Panics
///
/// An insert panics if the queue holds `u32::MAX - 1` values already; an insert, reset or
/// poll, if the global wheel's timer thread cannot be started
/// ([`GlobalClock`](crate::wheel::GlobalClock)).
///
/// # Cancel safety
///
/// A value leaves the queue only in the poll that returns it: dropping `queue.next()`
/// loses nothing.
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
pub struct DelayQueue<T>(Core<T>);

type Core<T> = punctual_core::DelayQueue<'static, T, GrowableSlots<T>, DefaultWheel>;

impl<T> DelayQueue<T> {
    /// An empty queue; it allocates at its first insert.
    pub fn new() -> Self {
        Self::with_slots(GrowableSlots::new())
    }

    /// An empty queue with room for `capacity` values; it never shrinks below it by itself.
    pub fn with_capacity(capacity: usize) -> Self {
        Self::with_slots(GrowableSlots::with_capacity(capacity))
    }

    fn with_slots(slots: GrowableSlots<T>) -> Self {
        Self(Core::with_tick(DefaultWheel::new(), TICK, slots))
    }
}

impl<T> Deref for DelayQueue<T> {
    type Target = punctual_core::DelayQueue<'static, T, GrowableSlots<T>, DefaultWheel>;

    fn deref(&self) -> &Self::Target {
        &self.0
    }
}

impl<T> DerefMut for DelayQueue<T> {
    fn deref_mut(&mut self) -> &mut Self::Target {
        &mut self.0
    }
}

impl<T> Default for DelayQueue<T> {
    fn default() -> Self {
        Self::new()
    }
}

impl<T> futures_core::Stream for DelayQueue<T> {
    type Item = Expired<T>;

    /// [`poll_expired`](punctual_core::DelayQueue::poll_expired).
    fn poll_next(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Option<Expired<T>>> {
        self.get_mut().0.poll_expired(cx)
    }

    fn size_hint(&self) -> (usize, Option<usize>) {
        (0, Some(self.len()))
    }
}
