//! [`Key`]s, [`Expired`] values and the queue's errors, and what the queue does by key alone.
//! * A key names one insert: an index and its generation, which changes each time the
//!   value leaves, so an old key never matches.

use core::borrow::Borrow;
use core::fmt;

use super::{DelayQueue, SlotStorage};
use crate::future::timer::WheelRef;
use crate::time::Reading;

/// Names a value in a [`DelayQueue`] until it leaves the queue; then
/// the key is *stale* and refused ([`StaleKey`], or `None`). 8 bytes, `Copy`; methods take
/// it by value or by reference. It could match again only after its slot's 2³²nd reuse.
#[derive(Clone, Copy, PartialEq, Eq, Hash)]
pub struct Key {
    pub(crate) index: u32,
    pub(crate) generation: u32,
}

impl fmt::Debug for Key {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "Key({}v{})", self.index, self.generation)
    }
}

/// A value whose deadline has passed, from [`poll_expired`](crate::DelayQueue::poll_expired):
/// the value, its (now stale) key and its deadline as the handle names instants
/// ([`WheelRef::Instant`]).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Expired<T, I = Reading> {
    pub(crate) value: T,
    pub(crate) key: Key,
    pub(crate) deadline: I,
}

impl<T, I: Copy> Expired<T, I> {
    /// The value.
    pub fn get_ref(&self) -> &T {
        &self.value
    }

    /// The value, mutably.
    pub fn get_mut(&mut self) -> &mut T {
        &mut self.value
    }

    /// Takes the value.
    pub fn into_inner(self) -> T {
        self.value
    }

    /// The key the value had, now stale.
    pub fn key(&self) -> Key {
        self.key
    }

    /// The deadline the value had: it expired at or after it, never before.
    pub fn deadline(&self) -> I {
        self.deadline
    }
}

/// A key whose value has left the queue, or a key of another queue. Nothing was changed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct StaleKey(pub Key);

impl fmt::Display for StaleKey {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "stale delay queue key {:?}: its value was removed or has expired",
            self.0
        )
    }
}

impl core::error::Error for StaleKey {}

/// An insert into a fixed-capacity queue that is full; the value is given back.
#[derive(Clone, Copy, PartialEq, Eq)]
pub struct Full<T>(pub T);

impl<T> Full<T> {
    /// The value that was not inserted.
    pub fn into_inner(self) -> T {
        self.0
    }
}

impl<T> fmt::Debug for Full<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("Full(..)")
    }
}

impl<T> fmt::Display for Full<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("the delay queue is full")
    }
}

impl<T> core::error::Error for Full<T> {}

impl<T, S: SlotStorage<T>, W: WheelRef> DelayQueue<'_, T, S, W> {
    /// `key`'s value, unless the key is stale.
    pub fn get(&self, key: impl Borrow<Key>) -> Option<&T> {
        let index = self.index_of(key).ok()?;
        self.slots.slots()[index as usize].value.as_ref()
    }

    /// `key`'s value, mutably, unless the key is stale.
    pub fn get_mut(&mut self, key: impl Borrow<Key>) -> Option<&mut T> {
        let index = self.index_of(key).ok()?;
        self.slots.slots_mut()[index as usize].value.as_mut()
    }

    /// Whether `key` names a value in the queue.
    pub fn contains_key(&self, key: impl Borrow<Key>) -> bool {
        self.index_of(key).is_ok()
    }

    /// Takes `key`'s value out of the queue, with its key and deadline; `None` if the key
    /// is stale.
    pub fn try_remove(&mut self, key: impl Borrow<Key>) -> Option<Expired<T, W::Instant>> {
        let index = self.index_of(key).ok()?;
        Some(self.take(index))
    }
}
