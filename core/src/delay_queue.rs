//! [`DelayQueue`]: values that come back out when their deadline passes, by key.
//! * One owner (`&mut self`): no atomics. Deadlines are readings of the chosen wheel; the
//!   levels tick on the same grid.
//! * A value is due once the clock has read its tick boundary (or a zero timeout): never
//!   early. At most one timer is armed, at or before every value's tick.
//! * While a task waits, a change that moves the earliest slot re-arms or wakes it.

use core::marker::PhantomData;
use core::pin::Pin;
use core::task::{Context, Poll, Waker};
use core::time::Duration;
use core::{borrow::Borrow, fmt};

use crate::clock::{Clock, ClockInstant};
use crate::future::timer::{RawWheel, Timer, WheelRef};
use crate::time::{Limit, Reading, TickDivisor, span_of};
use crate::wheel::Wheel;
use crate::wheel::storage::Storage;
use levels::Levels;

#[cfg(feature = "alloc")]
mod growable;
mod key;
mod levels;
mod slots;

#[cfg(feature = "alloc")]
pub use growable::GrowableSlots;
pub use key::{Expired, Full, Key, StaleKey};
use slots::prefetch;
pub use slots::{FixedSlots, SlotStorage};

/// Rounds of a poll whose new sleep has already passed, before it asks to be polled again.
const POLL_ROUNDS: usize = 4;

/// Values with deadlines, each handed back once its deadline has passed: tokio-util's
/// `DelayQueue` on a punctual wheel, on any executor and in `no_std`.
///
/// * A value is **never handed out before its deadline**, and with a driver that is not
///   starved **at most two ticks after it**, by tick (within a tick in no set order).
///   `Duration::MAX` and [`Reading::END`] never expire.
/// * A stale key (its value gone) is refused ([`StaleKey`], or `None`), never a panic.
/// * [`FixedSlots<T, N>`](FixedSlots) holds `N` values with no allocation (a full queue
///   returns [`Full`]); `GrowableSlots` grows and gives memory back as it shrinks.
///
/// # Examples
///
/// ```
/// use core::task::{Context, Poll, Waker};
/// use core::time::Duration;
/// use punctual_core::{DelayQueue, Fixed, FixedSlots, ManualClock, Wheel};
///
/// let wheel: Wheel<ManualClock, Fixed<4>> = Wheel::fixed(ManualClock::new(), Duration::from_millis(1));
/// let mut sessions = DelayQueue::new(&wheel, FixedSlots::<&str, 2>::new());
/// let alice = sessions.try_insert("alice", Duration::from_millis(30)).unwrap();
/// sessions.try_insert("bob", Duration::from_millis(20)).unwrap();
/// assert_eq!(sessions.try_insert("carol", Duration::ZERO).unwrap_err().into_inner(), "carol");
///
/// let mut cx = Context::from_waker(Waker::noop());
/// assert!(sessions.poll_expired(&mut cx).is_pending());
/// sessions.reset(alice, Duration::from_millis(50)).unwrap(); // alice was active
/// wheel.advance(Duration::from_millis(20));
/// let Poll::Ready(Some(bob)) = sessions.poll_expired(&mut cx) else { panic!() };
/// assert_eq!(bob.into_inner(), "bob");
/// assert!(sessions.poll_expired(&mut cx).is_pending());
/// assert_eq!(sessions.remove(alice), Some("alice"));
/// assert_eq!(sessions.remove(alice), None); // stale
/// ```
pub struct DelayQueue<'w, T, S, W = &'w dyn RawWheel>
where
    W: WheelRef,
{
    slots: S,
    levels: Levels,
    wheel: W,
    /// The one timer on the wheel, and the tick it ends at.
    sleep: Option<(Timer<W>, u64)>,
    /// The waker of the task that last found nothing expired.
    waker: Option<Waker>,
    /// At or before the tick of every value in the levels: the sleep's target.
    floor_tick: u64,
    values: PhantomData<(T, &'w ())>,
}

impl<'w, T, S: SlotStorage<T>, C: Clock, WS: Storage> DelayQueue<'w, T, S, &'w Wheel<C, WS>> {
    /// An empty queue on `wheel`, with the wheel's tick, keeping values in `slots`.
    pub fn new(wheel: &'w Wheel<C, WS>, slots: S) -> Self {
        Self::with_tick(wheel, wheel.tick(), slots)
    }
}

impl<'w, T, S: SlotStorage<T>, W: WheelRef> DelayQueue<'w, T, S, W> {
    /// An empty queue on the wheel `wheel` reaches (chosen at the first insert or poll),
    /// with levels of `tick` (the wheel's, best), keeping values in `slots`.
    ///
    /// # Panics
    ///
    /// If `tick` is zero.
    pub fn with_tick(wheel: W, tick: Duration, slots: S) -> Self {
        Self {
            slots,
            levels: Levels::new(TickDivisor::new(span_of(tick))),
            wheel,
            sleep: None,
            waker: None,
            floor_tick: u64::MAX,
            values: PhantomData,
        }
    }

    /// The wheel's handle, once it has chosen its wheel.
    pub fn wheel(&mut self) -> W {
        self.wheel.choose();
        self.wheel
    }

    /// The wheel's clock now.
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
        let deadline = self.deadline_after(timeout);
        self.insert_reading(value, deadline)
    }

    /// Inserts `value`, to expire at `at` (a [`Reading`], or an instant the handle takes);
    /// an `at` already passed expires at the next poll, or at the end of the tick polled in.
    ///
    /// # Errors
    ///
    /// [`Full`], with the value, when the slots are full (a [`FixedSlots`] queue).
    pub fn try_insert_at(&mut self, value: T, at: impl ClockInstant<W>) -> Result<Key, Full<T>> {
        let at = self.reading_of(at);
        self.insert_reading(value, at)
    }

    /// Moves the deadline of `key`'s value to `timeout` from now.
    ///
    /// # Errors
    ///
    /// [`StaleKey`] if the value has left the queue.
    pub fn reset(&mut self, key: impl Borrow<Key>, timeout: Duration) -> Result<(), StaleKey> {
        let index = self.index_of(key)?;
        let deadline = self.deadline_after(timeout);
        self.place(index, deadline, true);
        Ok(())
    }

    /// Moves the deadline of `key`'s value to `at`, as [`try_insert_at`](Self::try_insert_at).
    ///
    /// # Errors
    ///
    /// [`StaleKey`] if the value has left the queue.
    pub fn reset_at(
        &mut self,
        key: impl Borrow<Key>,
        at: impl ClockInstant<W>,
    ) -> Result<(), StaleKey> {
        let index = self.index_of(key)?;
        let at = self.reading_of(at);
        self.place(index, at, true);
        Ok(())
    }

    fn reading_of(&mut self, at: impl ClockInstant<W>) -> (Reading, bool) {
        self.wheel.choose();
        let at = at.reading_on(&self.wheel);
        (self.wheel.reading_at(at), false)
    }

    /// Takes `key`'s value out of the queue; `None` if the key is stale.
    pub fn remove(&mut self, key: impl Borrow<Key>) -> Option<T> {
        let index = self.index_of(key).ok()?;
        Some(self.take(index).value)
    }

    /// `key`'s deadline as the handle names instants, unless the key is stale.
    pub fn deadline(&self, key: impl Borrow<Key>) -> Option<W::Instant> {
        let index = self.index_of(key).ok()?;
        let at = Reading::from_nanos(self.slots.slots()[index as usize].deadline);
        Some(self.wheel.instant_of(at))
    }

    /// The key of the value that comes out next: the first due, else the earliest deadline.
    pub fn peek(&self) -> Option<Key> {
        let due = self.levels.first_due();
        let index = due.or_else(|| self.levels.earliest(self.slots.slots()))?;
        Some(self.slots.key_at(index))
    }

    /// The deadline of the value that comes out next ([`peek`](Self::peek)).
    pub fn next_deadline(&self) -> Option<W::Instant> {
        self.peek().and_then(|key| self.deadline(key))
    }

    /// The number of values in the queue.
    pub fn len(&self) -> usize {
        self.slots.len()
    }

    /// Whether the queue holds no value.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Values the queue can hold before its slots grow.
    pub fn capacity(&self) -> usize {
        self.slots.capacity()
    }

    /// Drops every value, staling every key; a waiting task is woken.
    pub fn clear(&mut self) {
        self.levels.clear();
        self.floor_tick = u64::MAX;
        self.slots.clear();
        self.wake_waiting();
    }

    /// The next expired value, or `Pending` until one expires (the task is woken then);
    /// `Ready(None)` while the queue is empty (not fused).
    ///
    /// # Cancel safety
    ///
    /// A value leaves the queue only in the poll that returns it: dropping `queue.next()`
    /// loses nothing.
    pub fn poll_expired(&mut self, cx: &mut Context<'_>) -> Poll<Option<Expired<T, W::Instant>>> {
        self.wheel.choose();
        for _ in 0..POLL_ROUNDS {
            // Values already due come out first, with no clock read.
            if self.levels.first_due().is_none() {
                let now_tick = self.levels.tick.floor(self.wheel.get().now()).get();
                self.levels.advance(self.slots.slots_mut(), now_tick);
            }
            if let Some(index) = self.levels.first_due() {
                self.waker = None;
                // Drains jump around the slots: load the next key and the slot after.
                let all = self.slots.slots();
                if let Some(next) = all.get(all[index as usize].next as usize) {
                    self.slots.prefetch_key(next.key);
                    if let Some(following) = all.get(next.next as usize) {
                        prefetch(following);
                    }
                }
                return Poll::Ready(Some(self.take(index)));
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
        let deadline = self.wheel.get().target(Limit::After(timeout));
        (deadline.unwrap_or(Reading::END), timeout.is_zero())
    }

    fn insert_reading(&mut self, value: T, deadline: (Reading, bool)) -> Result<Key, Full<T>> {
        let Some((key, index)) = self.slots.occupy() else {
            return Err(Full(value));
        };
        self.slots.slots_mut()[index as usize].value = Some(value);
        self.place(index, deadline, false);
        Ok(key)
    }

    /// Gives the value at `index` its deadline, placing it (moving it, if `placed` and it
    /// must), and re-arms for it.
    fn place(&mut self, index: u32, (deadline, due): (Reading, bool), placed: bool) {
        let slots = self.slots.slots_mut();
        // Most resets of a long timeout keep their slot: nothing to relink.
        let keep = placed && !due && self.levels.keeps_place(slots, index, deadline.as_nanos());
        if placed && !keep {
            self.levels.unlink(slots, index);
        }
        slots[index as usize].deadline = deadline.as_nanos();
        if !keep {
            self.levels.insert(slots, index, due);
        }
        self.rearm_for(deadline, due);
    }

    /// The slot of `key`'s value, unless the key is stale.
    fn index_of(&self, key: impl Borrow<Key>) -> Result<u32, StaleKey> {
        let key = *key.borrow();
        self.slots.find(key).ok_or(StaleKey(key))
    }

    /// Takes the value at `index` out of the levels and frees its slot; an emptied queue
    /// wakes its task and lets the sleep go.
    fn take(&mut self, index: u32) -> Expired<T, W::Instant> {
        let key = self.slots.key_at(index);
        let slots = self.slots.slots_mut();
        self.levels.unlink(slots, index);
        let slot = &mut slots[index as usize];
        let value = slot.value.take().expect("an occupied slot has a value");
        let deadline = Reading::from_nanos(slot.deadline);
        self.slots.vacate(index, &mut self.levels);
        if self.slots.len() == 0 {
            self.wake_waiting();
        }
        Expired {
            value,
            key,
            deadline: self.wheel.instant_of(deadline),
        }
    }

    /// After a value's deadline became `deadline`: lowers the floor, and while a task
    /// waits, wakes it if the value is due, or arms the sleep for an earlier tick.
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

    /// Wakes the waiting task, if any, and lets the sleep go.
    fn wake_waiting(&mut self) {
        self.sleep = None;
        if let Some(waker) = self.waker.take() {
            waker.wake();
        }
    }

    /// Polls the timer for `tick` (armed anew if for another tick); `Ready` if it passed.
    fn arm(&mut self, tick: u64, cx: &mut Context<'_>) -> Poll<()> {
        if !matches!(self.sleep, Some((_, armed)) if armed == tick) {
            // At a reading of the chosen wheel's own clock, not one of the handle's.
            let mut timer = Timer::new(self.wheel, Limit::At(Reading::END));
            let at = tick.saturating_mul(self.levels.tick.tick());
            timer.reset_on_wheel(Reading::from_nanos(at));
            self.sleep = Some((timer, tick));
        }
        let (timer, _) = self.sleep.as_mut().expect("armed above");
        let Poll::Ready(fired) = timer.poll_fired(cx, None) else {
            return Poll::Pending;
        };
        fired.elapsed(None, None); // the `tracing` event, as a sleep's
        self.sleep = None;
        Poll::Ready(())
    }
}

// Values are never pinned.
impl<T, S, W: WheelRef> Unpin for DelayQueue<'_, T, S, W> {}

impl<T, S: SlotStorage<T>, W: WheelRef> futures_core::Stream for DelayQueue<'_, T, S, W> {
    type Item = Expired<T, W::Instant>;

    /// [`DelayQueue::poll_expired`].
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
            .field("sleep_tick", &self.sleep.as_ref().map(|(_, tick)| tick))
            .finish_non_exhaustive()
    }
}
