//! [`DelayQueue`]: values that come back out when their deadline passes, by key.
//!
//! # Layout
//!
//! * `slots`: where values live ([`FixedSlots`], and `growable`'s `GrowableSlots`, which
//!   finds free slots and handles with `free_set`).
//! * `levels`: the queue's lists over those slots, on the wheel's `hierarchy`, and the due
//!   list.
//! * `key`: [`Key`], [`Expired`], and the errors [`StaleKey`] and [`Full`].
//! * `own_clock`: the handle of the queue's one sleep on the punctual wheel.
//! * `prefetch`: a cache hint for the drain.
//!
//! # Ground rules
//!
//! * Every method takes `&mut self`: one owner, no atomics, no lock.
//! * Deadlines are readings of the wheel the handle chose (chosen at the first insert or
//!   poll); the levels tick with the tick given at construction, on the same grid.
//! * A value reaches the due list only once the clock has read its tick boundary, or its
//!   deadline at insert: never early.
//! * At most one [`Sleep`] is armed on the wheel, at a tick boundary at or before every
//!   value's tick (`floor_tick`; the earliest tick after a pending poll); when it fires, a
//!   poll moves what is due to the due list, cascading higher slots on the way.
//! * While a task waits (its waker kept from a pending poll), every change that moves the
//!   earliest slot re-arms the sleep with that waker, or wakes it if a value is due or the
//!   queue is empty: no lost wakeup.
//! * A key is valid while the storage finds it (its generation matches) and its slot holds
//!   a value; a growable storage may move the value to another slot, and the levels
//!   relink it there.

use core::future::Future;
use core::marker::PhantomData;
use core::pin::Pin;
use core::task::{Context, Poll, Waker};
use core::time::Duration;
use core::{borrow::Borrow, fmt};

use crate::clock::{Clock, ClockInstant};
use crate::future::sleep::Sleep;
use crate::future::timer::{RawWheel, WheelRef};
use crate::time::{Limit, Reading, TickDivisor, span_of};
use crate::wheel::Wheel;
use crate::wheel::storage::Storage;
use levels::Levels;
use own_clock::OwnClock;

#[cfg(feature = "alloc")]
mod free_set;
#[cfg(feature = "alloc")]
mod growable;
mod key;
mod levels;
mod own_clock;
mod prefetch;
mod slots;
#[cfg(all(test, feature = "std"))]
mod tests;

#[cfg(feature = "alloc")]
pub use growable::GrowableSlots;
pub use key::{Expired, Full, Key, StaleKey};
pub use slots::{FixedSlots, SlotStorage};

/// Rounds of a poll that finds its new sleep already passed before it asks to be polled
/// again (the clock moved between the reads).
const POLL_ROUNDS: usize = 4;

/// A set of values, each with a deadline, that hands each value back once its deadline
/// has passed: the keyed timer set for cache expiry, session reaping and rate limiting.
/// tokio-util's `DelayQueue`, on a punctual wheel, on any executor and in `no_std`.
///
/// * [`try_insert`](Self::try_insert) (or [`insert`] on growable slots)
///   gives a [`Key`]; [`reset`](Self::reset) moves a value's deadline and
///   [`remove`](Self::remove) takes it back, by key.
/// * [`poll_expired`](Self::poll_expired), or the [`Stream`](futures_core::Stream), hands
///   out expired values in deadline order (by tick; within a tick in no set order).
///
/// # Timing
///
/// Deadlines are readings of the wheel's clock, and values expire by the wheel's rules: a
/// value is **never handed out before its deadline**, and with a driver that is not starved
/// it is ready **at most two ticks after it** (`docs/design.md`, rules 2 and 3). The
/// queue keeps its own wheel of the same tick and arms one [`Sleep`] on the punctual wheel
/// for its earliest slot, so the wheel's driver drives it. A relative deadline counts
/// from the insert (as tokio-util's). `Duration::MAX` and [`Reading::END`] never expire.
///
/// # Keys
///
/// A key is valid from its insert until its value leaves the queue. A stale key is refused
/// ([`StaleKey`], or `None`): never a panic, never another value, even once its slot
/// holds a new one.
///
/// # Storage
///
/// [`FixedSlots<T, N>`](FixedSlots) holds `N` values inline, with no allocation (an insert
/// into a full queue returns [`Full`] with the value); [`GrowableSlots`] grows, and gives
/// memory back as it shrinks, down to 16 slots ([`compact`]: all).
/// A value costs itself (in an `Option`) and 28 bytes (fixed) or 32 (growable).
///
/// # Examples
///
/// ```
/// use core::task::{Context, Poll, Waker};
/// use core::time::Duration;
/// use punctual_core::{DelayQueue, Fixed, FixedSlots, ManualClock, Wheel};
///
/// let wheel: Wheel<ManualClock, Fixed<4>> = Wheel::fixed(ManualClock::new(), Duration::from_millis(1));
/// let mut sessions = DelayQueue::new(&wheel, FixedSlots::<&str, 8>::new());
/// let alice = sessions.try_insert("alice", Duration::from_millis(30)).unwrap();
/// sessions.try_insert("bob", Duration::from_millis(20)).unwrap();
///
/// let mut cx = Context::from_waker(Waker::noop());
/// assert!(sessions.poll_expired(&mut cx).is_pending());
/// sessions.reset(alice, Duration::from_millis(50)).unwrap(); // alice was active
///
/// wheel.advance(Duration::from_millis(20));
/// let Poll::Ready(Some(bob)) = sessions.poll_expired(&mut cx) else { panic!() };
/// assert_eq!(bob.into_inner(), "bob");
/// assert!(sessions.poll_expired(&mut cx).is_pending());
/// assert_eq!(sessions.remove(alice), Some("alice"));
/// assert_eq!(sessions.remove(alice), None); // stale
/// ```
#[cfg_attr(
    feature = "alloc",
    doc = "\n[`GrowableSlots`]: crate::GrowableSlots\n[`insert`]: DelayQueue::insert\n[`compact`]: DelayQueue::compact"
)]
#[cfg_attr(
    not(feature = "alloc"),
    doc = "\n[`GrowableSlots`]: https://docs.rs/punctual-core/latest/punctual_core/struct.GrowableSlots.html\n[`insert`]: https://docs.rs/punctual-core/latest/punctual_core/struct.DelayQueue.html#method.insert\n[`compact`]: https://docs.rs/punctual-core/latest/punctual_core/struct.DelayQueue.html#method.compact"
)]
pub struct DelayQueue<'w, T, S, W = &'w dyn RawWheel>
where
    W: WheelRef,
{
    slots: S,
    levels: Levels,
    wheel: OwnClock<W>,
    /// The one sleep on the wheel, and the tick it ends at.
    sleep: Option<(Sleep<'w, OwnClock<W>>, u64)>,
    /// The waker of the task that last found nothing expired.
    waker: Option<Waker>,
    /// At or before the tick of every value in the levels: the sleep's target, made the
    /// earliest tick by a poll that finds it before the earliest slot.
    floor_tick: u64,
    values: PhantomData<T>,
}

impl<'w, T, S: SlotStorage<T>, C: Clock, WS: Storage> DelayQueue<'w, T, S, &'w Wheel<C, WS>> {
    /// An empty queue on `wheel`, with the wheel's tick, keeping values in `slots`.
    pub fn new(wheel: &'w Wheel<C, WS>, slots: S) -> Self {
        Self::with_tick(wheel, wheel.tick(), slots)
    }
}

impl<'w, T, S: SlotStorage<T>, W: WheelRef> DelayQueue<'w, T, S, W> {
    /// An empty queue on the wheel `wheel` reaches, whose tick is `tick`, keeping values in
    /// `slots`. A handle that chooses its wheel late (`punctual`'s default wheel) chooses at
    /// the first insert or poll.
    ///
    /// `tick` should be the wheel's: a longer one makes values later by the difference, a
    /// shorter one wakes the queue's task more often. Never early either way.
    ///
    /// # Panics
    ///
    /// If `tick` is zero.
    pub fn with_tick(wheel: W, tick: Duration, slots: S) -> Self {
        Self {
            slots,
            levels: Levels::new(TickDivisor::new(span_of(tick))),
            wheel: OwnClock(wheel),
            sleep: None,
            waker: None,
            floor_tick: u64::MAX,
            values: PhantomData,
        }
    }

    /// The wheel's handle, once it has chosen its wheel: deadlines are readings of that
    /// wheel's clock.
    pub fn wheel(&mut self) -> W {
        self.wheel.choose();
        self.wheel.0
    }

    /// The wheel's clock now, which deadlines are readings of.
    pub fn now(&mut self) -> Reading {
        self.wheel.choose();
        self.wheel.get().now()
    }

    /// Inserts `value`, to expire `timeout` from now.
    ///
    /// # Errors
    ///
    /// [`Full`], with the value, when the slots are full (a [`FixedSlots`] queue).
    pub fn try_insert(&mut self, value: T, timeout: Duration) -> Result<Key, Full<T>> {
        let (deadline, due) = self.deadline_after(timeout);
        self.insert_reading(value, deadline, due)
    }

    /// Inserts `value`, to expire at `at`: a [`Reading`] of the wheel's clock, or an
    /// instant the handle takes ([`ClockInstant`]). A reading reads no clock: an `at`
    /// already passed expires at the next poll, or, within the tick the queue last polled
    /// in, at that tick's end.
    ///
    /// # Errors
    ///
    /// [`Full`], with the value, when the slots are full (a [`FixedSlots`] queue).
    pub fn try_insert_at(&mut self, value: T, at: impl ClockInstant<W>) -> Result<Key, Full<T>> {
        let at = self.reading_of(at);
        self.insert_reading(value, at, false)
    }

    /// Moves the deadline of `key`'s value to `timeout` from now.
    ///
    /// # Errors
    ///
    /// [`StaleKey`] if the value has left the queue (removed, or returned expired).
    pub fn reset(&mut self, key: impl Borrow<Key>, timeout: Duration) -> Result<(), StaleKey> {
        let index = self.index_of(key)?;
        let (deadline, due) = self.deadline_after(timeout);
        self.move_to(index, deadline, due);
        Ok(())
    }

    /// Moves the deadline of `key`'s value to `at`, as [`try_insert_at`](Self::try_insert_at).
    ///
    /// # Errors
    ///
    /// [`StaleKey`] if the value has left the queue (removed, or returned expired).
    pub fn reset_at(
        &mut self,
        key: impl Borrow<Key>,
        at: impl ClockInstant<W>,
    ) -> Result<(), StaleKey> {
        let index = self.index_of(key)?;
        let at = self.reading_of(at);
        self.move_to(index, at, false);
        Ok(())
    }

    /// `at` as a reading of the wheel the handle chose (choosing it now if not yet).
    fn reading_of(&mut self, at: impl ClockInstant<W>) -> Reading {
        self.wheel.choose();
        let at = at.reading_on(&self.wheel.0);
        self.wheel.0.reading_at(at)
    }

    /// Takes `key`'s value out of the queue; `None` if the key is stale.
    pub fn remove(&mut self, key: impl Borrow<Key>) -> Option<T> {
        let index = self.index_of(key).ok()?;
        let (value, _) = self.take(index);
        if self.is_empty() {
            self.wake_waiting();
        }
        Some(value)
    }

    /// `key`'s deadline as the handle names instants (a `Reading` on a wheel of your own),
    /// if the key is not stale.
    pub fn deadline(&self, key: impl Borrow<Key>) -> Option<W::Instant> {
        let index = self.index_of(key).ok()?;
        let at = Reading::from_nanos(self.slots.slots()[index as usize].deadline);
        Some(self.wheel.instant_of(at))
    }

    /// The key of the value that comes out next: the first of those already due, else the
    /// one with the earliest deadline. Walks the values of the earliest slot.
    pub fn peek(&self) -> Option<Key> {
        let slots = self.slots.slots();
        let index = self
            .levels
            .first_due()
            .or_else(|| self.levels.earliest(slots))?;
        Some(self.slots.key_at(index))
    }

    /// The deadline of the value that comes out next ([`peek`](Self::peek)): at or before
    /// now if one is due.
    pub fn next_deadline(&self) -> Option<W::Instant> {
        self.peek().and_then(|key| self.deadline(key))
    }

    /// Values in the queue.
    pub fn len(&self) -> usize {
        self.slots.len()
    }

    /// Whether the queue holds no value.
    pub fn is_empty(&self) -> bool {
        self.slots.len() == 0
    }

    /// Values the queue can hold before its slots grow (or, fixed, at all).
    pub fn capacity(&self) -> usize {
        self.slots.capacity()
    }

    /// Drops every value; every key becomes stale. A task waiting on the queue is woken.
    pub fn clear(&mut self) {
        self.levels.clear();
        self.floor_tick = u64::MAX;
        self.slots.clear();
        self.wake_waiting();
    }

    /// The next expired value, or `Pending` until one expires (the task is woken then);
    /// `Ready(None)` if the queue is empty. Values come out in deadline order, by tick.
    ///
    /// After `Ready(None)` the queue may be polled again, and the
    /// [`Stream`](futures_core::Stream) goes on (it is not fused): the task that polled is
    /// woken when a value inserted since expires.
    ///
    /// # Cancel safety
    ///
    /// A value leaves the queue only in the poll that returns it: dropping a future that
    /// polls the queue (`queue.next()` in a `select!`) loses nothing.
    pub fn poll_expired(&mut self, cx: &mut Context<'_>) -> Poll<Option<Expired<T, W::Instant>>> {
        self.wheel.choose();
        for _ in 0..POLL_ROUNDS {
            // Values already due come out first, with no clock read.
            if self.levels.first_due().is_none() {
                let now = self.wheel.get().now();
                let now_tick = self.levels.floor(now);
                self.levels.advance(self.slots.slots_mut(), now_tick);
            }
            if let Some(index) = self.levels.first_due() {
                self.waker = None;
                prefetch::after(&self.slots, index);
                let (value, (key, deadline)) = self.take(index);
                return Poll::Ready(Some(Expired {
                    value,
                    key,
                    deadline: self.wheel.instant_of(deadline),
                }));
            }
            if !self.waker.as_ref().is_some_and(|w| w.will_wake(cx.waker())) {
                self.waker = Some(cx.waker().clone());
            }
            let Some(expiration) = self.levels.next_expiration() else {
                self.sleep = None;
                return Poll::Ready(None);
            };
            if self.floor_tick <= expiration.first_key() {
                // The floor is behind: make it the earliest tick, walking a higher slot.
                self.floor_tick = self.levels.earliest_tick(self.slots.slots(), expiration);
            }
            if self.arm(self.floor_tick, cx).is_pending() {
                return Poll::Pending;
            }
        }
        cx.waker().wake_by_ref();
        Poll::Pending
    }

    /// The deadline `timeout` from now, and whether it is due already.
    fn deadline_after(&mut self, timeout: Duration) -> (Reading, bool) {
        self.wheel.choose();
        let deadline = self
            .wheel
            .get()
            .target(Limit::After(timeout))
            .unwrap_or(Reading::END);
        (deadline, timeout.is_zero())
    }

    fn insert_reading(&mut self, value: T, deadline: Reading, due: bool) -> Result<Key, Full<T>> {
        let Some((key, index)) = self.slots.occupy() else {
            return Err(Full(value));
        };
        let slots = self.slots.slots_mut();
        let slot = &mut slots[index as usize];
        slot.deadline = deadline.as_nanos();
        slot.value = Some(value);
        self.levels.insert(slots, index, due);
        self.rearm_for(deadline, due);
        Ok(key)
    }

    fn move_to(&mut self, index: u32, deadline: Reading, due: bool) {
        let slots = self.slots.slots_mut();
        if !due && self.levels.keeps_place(slots, index, deadline.as_nanos()) {
            // Most resets of a long timeout: same slot, nothing to relink.
            slots[index as usize].deadline = deadline.as_nanos();
        } else {
            self.levels.unlink(slots, index);
            slots[index as usize].deadline = deadline.as_nanos();
            self.levels.insert(slots, index, due);
        }
        self.rearm_for(deadline, due);
    }

    /// The slot of `key` (by value, or by reference as tokio-util's), if it holds its value.
    fn index_of(&self, key: impl Borrow<Key>) -> Result<u32, StaleKey> {
        let key = *key.borrow();
        self.slots.find(key).ok_or(StaleKey(key))
    }

    /// Takes the value at `index` out of the levels and its slot, which it frees.
    fn take(&mut self, index: u32) -> (T, (Key, Reading)) {
        let key = self.slots.key_at(index);
        let slots = self.slots.slots_mut();
        self.levels.unlink(slots, index);
        let slot = &mut slots[index as usize];
        let value = slot.value.take().expect("an occupied slot has a value");
        let deadline = Reading::from_nanos(slot.deadline);
        if self.slots.vacate(index) {
            let levels = &mut self.levels;
            self.slots
                .compact(|slots, from, to| levels.relocate(slots, from, to));
        }
        if self.slots.len() == 0 {
            // Nothing to wait for: the wheel's entry goes back.
            self.sleep = None;
        }
        (value, (key, deadline))
    }

    /// After a value's deadline became `deadline` (an insert or a reset): lowers the floor,
    /// and while a task waits, wakes it if the value is due, or arms the sleep for the
    /// value's tick with its waker if that is before the armed one.
    fn rearm_for(&mut self, deadline: Reading, due: bool) {
        let tick = self.levels.tick_of(deadline.as_nanos());
        if !due {
            self.floor_tick = self.floor_tick.min(tick);
        }
        if !due && matches!(self.sleep, Some((_, armed)) if armed <= tick) {
            return;
        }
        let Some(waker) = self.waker.clone() else {
            return;
        };
        if due || self.arm(tick, &mut Context::from_waker(&waker)).is_ready() {
            self.wake_waiting();
        }
    }

    /// Wakes the waiting task, if any, and lets the sleep go: its next poll re-arms.
    fn wake_waiting(&mut self) {
        self.sleep = None;
        if let Some(waker) = self.waker.take() {
            waker.wake();
        }
    }

    /// Polls the sleep for `tick`, arming a new one if the armed sleep is for another tick.
    /// `Ready` if it has passed (the sleep is gone then).
    fn arm(&mut self, tick: u64, cx: &mut Context<'_>) -> Poll<()> {
        if !matches!(self.sleep, Some((_, armed)) if armed == tick) {
            let at = self.levels.reading_of(tick);
            self.sleep = Some((Sleep::new(self.wheel, Limit::At(at)), tick));
        }
        let Some((sleep, _)) = self.sleep.as_mut() else {
            return Poll::Ready(());
        };
        let poll = Pin::new(sleep).poll(cx);
        if poll.is_ready() {
            self.sleep = None;
        }
        poll
    }
}

// The values are never pinned: `poll_next` takes the queue out of its pin.
impl<T, S, W: WheelRef> Unpin for DelayQueue<'_, T, S, W> {}

impl<T, S: SlotStorage<T>, W: WheelRef> futures_core::Stream for DelayQueue<'_, T, S, W> {
    type Item = Expired<T, W::Instant>;

    /// [`DelayQueue::poll_expired`]: `None` while the queue is empty, not for good.
    fn poll_next(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
    ) -> Poll<Option<Expired<T, W::Instant>>> {
        self.get_mut().poll_expired(cx)
    }

    fn size_hint(&self) -> (usize, Option<usize>) {
        (0, Some(self.len()))
    }
}

impl<T, S: fmt::Debug, W: WheelRef> fmt::Debug for DelayQueue<'_, T, S, W> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("DelayQueue")
            .field("slots", &self.slots)
            .field("levels", &self.levels)
            .field("sleep_tick", &self.sleep.as_ref().map(|(_, tick)| tick))
            .finish_non_exhaustive()
    }
}
