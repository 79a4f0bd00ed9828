//! The deadline side: arming, polling and letting go of an entry, on any thread.
//!
//! * A free entry comes from the thread's spare, its shard's free list, a fresh block,
//!   then another shard; the storage grows only after that.
//! * A panic loses no entry: the waker is cloned before an entry is taken, the drivers
//!   woken once the deadline holds its handle, an old waker dropped once its entry is on
//!   a list. A cancel drops its waker itself, after its push.

use core::task::Waker;
use core::time::Duration;

use super::entry::{self, CANCELLED, Entry, FIRED, HANDLE, Index, NIL, WHEEL};
use super::lists::{self, Shard};
use super::role::DEGRADED;
use super::start::{Outcome, Started};
use super::storage::Storage;
use super::{MAX_SLEEP, Wheel, stats};
use crate::clock::Clock;
use crate::future::timer::{Armed, RawWheel};
use crate::sync::Ordering;
use crate::time::{Due, Limit, Reading, Tick};

impl<C: Clock, S: Storage> Wheel<C, S> {
    /// Arms an entry due at `due`, of tick `when`, for a deadline started in tick `start`.
    /// Returns it and whether to [`wake_drivers`](RawWheel::wake_drivers); `None`: full.
    #[cfg_attr(target_pointer_width = "64", inline(always))]
    pub(crate) fn arm(
        &self,
        due: Reading,
        when: Tick,
        start: Tick,
        waker: &Waker,
    ) -> Option<(Index, bool)> {
        debug_assert_eq!(
            when,
            self.ticks().tick_of(due).0,
            "tick of another deadline"
        );
        let waker = waker.clone();
        let shard = lists::current();
        let (index, entry) = match self.take_spare() {
            Some(spare) => spare,
            None => self.take_free(shard)?,
        };
        // SAFETY: just taken, so ours alone until the Release push below publishes it.
        unsafe { entry.set_due(due) };
        // SAFETY: as above; a free entry's waker slot is empty (`recycle`).
        unsafe { entry.waker.set_exclusive(waker) };
        let generation = entry::generation(entry.state.load(Ordering::Relaxed));
        entry
            .state
            .store(entry::armed(generation), Ordering::Relaxed);
        self.shards[shard].arm_inbox.push(&entry.slot_next, index);
        let planned = self.planned_turn_after_push(start, shard);
        let wake = when < planned || (when == planned && self.before_planned_offset(due));
        Some((index, wake))
    }

    /// Whether `due`, in the planned tick, is before the planned `Plan::offset`.
    #[cold]
    pub(super) fn before_planned_offset(&self, due: Reading) -> bool {
        self.ticks().tick_of(due).1 < self.plan.offset.load(Ordering::Relaxed)
    }

    /// The start tick of a deadline due at `due` after `span`, to stand in for "now" when
    /// its cancel reads the plan; `None`: read the clock. An older tick errs only towards
    /// an extra wake while the plan, at most `MAX_SLEEP` ticks past a turn before the
    /// entry's tick, is rebuilt exactly near it: so only for `span + resolution` under
    /// `MAX_SLEEP - 2` ticks (the entry's tick under `MAX_SLEEP` ticks after the start's).
    #[inline]
    fn trusted_start(&self, due: Reading, span: u64) -> Option<Tick> {
        let resolution = self.resolution();
        let longest = (MAX_SLEEP - 2).saturating_mul(self.ticks().tick());
        (span.saturating_add(resolution) < longest)
            .then(|| self.ticks().floor(due.before(span).before(resolution)))
    }

    /// Frees `entry` from its deadline's side: kept as a spare, or onto `shard`'s list.
    ///
    /// # Safety
    ///
    /// * The caller owns the entry exclusively (as [`Entry::recycle`] requires).
    #[cfg_attr(target_pointer_width = "64", inline(always))]
    pub(super) unsafe fn free_from_handle(&self, shard: &Shard, index: Index, entry: &Entry) {
        #[cfg(all(feature = "std", not(punctual_loom)))]
        if self.spares {
            // SAFETY: exclusive ownership, by the caller's contract.
            let old_waker = unsafe { entry.recycle() };
            // SAFETY: with spares the wheel never moves (`with_thread_spares`);
            // `give_spare_back` is typed for it; the entry is ours, free and recycled.
            if !unsafe { crate::wheel::spare::keep(self.address(), index, Self::give_spare_back) } {
                shard.free.push_chain(index, entry);
            }
            drop(old_waker);
            return;
        }
        // SAFETY: the caller's contract. (One copy of the plain free on 32-bit targets.)
        unsafe { Self::free_to(shard, index, entry) };
    }

    /// Recycles `entry` onto `shard`'s free list, then drops its old waker.
    ///
    /// # Safety
    ///
    /// * The caller owns the entry exclusively (as [`Entry::recycle`] requires).
    #[cfg_attr(target_pointer_width = "64", inline(always))]
    pub(super) unsafe fn free_to(shard: &Shard, index: Index, entry: &Entry) {
        // SAFETY: the caller's contract.
        let old_waker = unsafe { entry.recycle() };
        shard.free.push_chain(index, entry);
        drop(old_waker);
    }

    /// An entry this thread kept for this wheel, if any.
    #[inline(always)]
    pub(super) fn take_spare(&self) -> Option<(Index, &Entry)> {
        #[cfg(all(feature = "std", not(punctual_loom)))]
        if self.spares {
            return crate::wheel::spare::take(self.address()).map(|i| (i, self.storage.entry(i)));
        }
        None
    }

    /// The wheel's address, by which `spare` tells wheels apart.
    #[cfg(all(feature = "std", not(punctual_loom)))]
    pub(super) fn address(&self) -> *const () {
        core::ptr::from_ref(self).cast()
    }

    /// Gives a kept entry back to its wheel's free list.
    ///
    /// # Safety
    ///
    /// * `wheel` is the address of a live `Self`; its entry `index` is free, recycled and
    ///   the caller's alone.
    #[cfg(all(feature = "std", not(punctual_loom)))]
    pub(super) unsafe fn give_spare_back(wheel: *const (), index: Index) {
        // SAFETY: the caller's contract.
        let wheel = unsafe { &*wheel.cast::<Self>() };
        wheel.shards[lists::current()]
            .free
            .push_chain(index, wheel.storage.entry(index));
    }

    /// A free entry for exclusive use, in the module docs' order. `None`: full.
    #[cfg_attr(target_pointer_width = "64", inline(always))]
    pub(super) fn take_free(&self, shard: usize) -> Option<(Index, &Entry)> {
        self.shards[shard]
            .free
            .pop(&self.storage)
            .or_else(|| self.take_never_used(shard, false))
            .or_else(|| self.steal(shard))
            .or_else(|| self.take_never_used(shard, true))
    }

    /// An entry from another shard, with up to `FRESH_BLOCK - 1` more moved to `shard`.
    #[cold]
    pub(super) fn steal(&self, shard: usize) -> Option<(Index, &Entry)> {
        // The array's length rather than `SHARDS`, whose range is empty without `std`.
        let shards = self.shards.len();
        for k in 1..shards {
            let victim = &self.shards[(shard + k) % shards].free;
            let Some(first) = victim.pop(&self.storage) else {
                continue;
            };
            let more = (1..S::FRESH_BLOCK).map_while(|_| victim.pop(&self.storage).map(|(i, _)| i));
            self.keep(&self.shards[shard], more);
            return Some(first);
        }
        None
    }

    /// Pushes free entries this thread owns alone onto `shard`'s free list, in one CAS.
    pub(super) fn keep(&self, shard: &Shard, entries: impl Iterator<Item = Index>) {
        let (mut chain, mut last) = (NIL, None);
        for index in entries {
            let entry = self.storage.entry(index);
            entry.slot_next.store(chain, Ordering::Relaxed);
            last.get_or_insert(entry);
            chain = index;
        }
        if let Some(last) = last {
            shard.free.push_chain(chain, last);
        }
    }

    /// A fresh entry, from a block whose rest goes to `shard`; grows only if `grow`.
    #[cold]
    #[cfg_attr(not(target_pointer_width = "64"), inline(never))]
    pub(super) fn take_never_used(&self, shard: usize, grow: bool) -> Option<(Index, &Entry)> {
        let (first, count) = self
            .never_used
            .pop_block(&self.storage, S::FRESH_BLOCK, grow)?;
        // Ours alone since the bump; their state is a recycled entry's.
        self.keep(&self.shards[shard], first + 1..first + count);
        Some((first, self.storage.entry(first)))
    }
}

impl<C: Clock, S: Storage> RawWheel for Wheel<C, S> {
    /// Starts a deadline due at `due`, or at `cap` if earlier, from the clock's reading.
    #[inline]
    fn start(&self, due: Due, cap: Option<Reading>, waker: &Waker) -> Started {
        let now = self.now();
        let (own, requested) = self.resolve(due, now);
        let cap = cap.filter(|&cap| cap != Reading::END);
        let (target, capped) = match (own, cap) {
            (Some(own), Some(cap)) if cap < own => (Some(cap), true),
            (None, Some(cap)) => (Some(cap), true),
            (own, _) => (own, false),
        };
        let outcome = match target {
            None => Outcome::Never,
            Some(target) if target <= now => Outcome::Passed,
            // `now < target < END`.
            Some(target) => {
                let when = self.ticks().ceil(target);
                match self.arm(target, when, self.ticks().floor(now), waker) {
                    Some((index, wake)) => Outcome::Armed(index, wake),
                    None => Outcome::Full(target, now),
                }
            }
        };
        Started {
            outcome,
            requested,
            capped,
        }
    }

    fn target(&self, limit: Limit) -> Option<Reading> {
        self.resolve(limit.into(), self.now()).0
    }

    /// Polls an armed entry: ready once fired; else registers `waker` for the fire.
    fn poll_armed(&self, armed: &Armed, waker: &Waker) -> bool {
        let entry = self.storage.entry(armed.index);
        let state = entry.state.load(Ordering::Acquire);
        debug_assert_ne!(state & HANDLE, 0, "a deadline's entry it does not own");
        if state & FIRED != 0 {
            return true;
        }
        entry.waker.register(waker);
        entry.state.load(Ordering::Acquire) & FIRED != 0
    }

    /// Whether an armed entry has fired, without registering anything.
    fn has_fired(&self, armed: &Armed) -> bool {
        let entry = self.storage.entry(armed.index);
        entry.state.load(Ordering::Acquire) & FIRED != 0
    }

    /// Lets go of an armed entry, cancelling it if not fired; returns whether it fired.
    /// `armed.span`: the requested span, if the deadline is its start plus that and
    /// resolution.
    fn release(&self, armed: &Armed) -> bool {
        let (index, entry) = (armed.index, self.storage.entry(armed.index));
        let generation = entry::generation(entry.state.load(Ordering::Relaxed));
        let shard_index = lists::current();
        let shard = &self.shards[shard_index];
        // Only the inbox it was pushed onto can have it as head; a deadline that moved
        // to another thread since cancels below.
        if shard.arm_inbox.unpush(&entry.slot_next, index) {
            entry.state.store(generation, Ordering::Relaxed);
            // SAFETY: taken back before the driver saw it: the handle is its only owner.
            unsafe { self.free_from_handle(shard, index, entry) };
            return false;
        }
        match entry.state.compare_exchange(
            entry::armed(generation),
            generation | WHEEL | CANCELLED,
            Ordering::AcqRel,
            Ordering::Acquire,
        ) {
            Ok(_) => {
                // SAFETY: an exclusive moment until the push below (the driver's CAS to
                // FIRED now fails); this handle was the slot's one registrant.
                let waker = unsafe { entry.waker.take_exclusive() };
                // SAFETY: before the push below the entry cannot be reclaimed and armed
                // again, so nothing writes its deadline.
                let due = unsafe { entry.due() };
                // The start tick stands in for "now"; without a trusted span (a capped
                // timer, a long one), a clock reading's tick, at most the entry's own.
                let now = armed
                    .span
                    .and_then(|span| self.trusted_start(due, span))
                    .unwrap_or_else(|| self.ticks().floor(self.now()).min(self.ticks().ceil(due)));
                let was_empty = shard.cancel_inbox.push(&entry.cancel_link, index);
                if was_empty && self.planned_turn_after_push(now, shard_index) > now.after(1) {
                    self.wake_drivers();
                }
                drop(waker);
                false
            }
            Err(actual) => {
                debug_assert_eq!(actual & (FIRED | HANDLE), FIRED | HANDLE, "bad release");
                self.release_fired(armed);
                true
            }
        }
    }

    /// [`RawWheel::release`] of an entry its handle has seen fired: no cancel attempt.
    fn release_fired(&self, armed: &Armed) {
        let entry = self.storage.entry(armed.index);
        let before = entry.state.fetch_and(!HANDLE, Ordering::AcqRel);
        debug_assert_eq!(before & (FIRED | HANDLE), FIRED | HANDLE, "not fired");
        if before & WHEEL == 0 {
            // SAFETY: this AcqRel cleared the last ownership bit: the entry is ours alone.
            unsafe { self.free_from_handle(&self.shards[lists::current()], armed.index, entry) };
        }
        if self.handed_off() {
            self.wake_handed_off();
        }
    }

    /// The reading an armed entry is due at; for the entry's owner.
    fn deadline_of(&self, armed: &Armed) -> Reading {
        // SAFETY: the caller owns the entry (HANDLE): `due` has no writer.
        unsafe { self.storage.entry(armed.index).due() }
    }

    fn now(&self) -> Reading {
        Wheel::now(self)
    }

    fn tick(&self) -> Duration {
        Wheel::tick(self)
    }

    /// Wakes every driver, to turn sooner than planned.
    fn wake_drivers(&self) {
        self.driver_wakers.wake_all();
    }

    /// Leaves a degraded deadline's waker for the first turn at a tick after `now`'s, the
    /// reading its target was found later than (no second read); `false`: no place.
    fn degraded_poll(&self, waker: &Waker, now: Reading) -> bool {
        self.counters.bump(stats::DEGRADED_POLLS, false);
        let tick = self.ticks().floor(now);
        if !self.degraded_wakers.leave(waker, tick) {
            return false;
        }
        let word = self.plan.word.fetch_or(DEGRADED, Ordering::AcqRel);
        if self.plan_of(word, tick) > tick.after(1) {
            self.wake_drivers();
        }
        true
    }

    fn count_refused(&self) {
        self.counters.bump(stats::REFUSED, false);
    }

    fn count_overrun(&self) {
        self.counters.bump(stats::OVERRUNS, false);
    }
}
