//! The deadline side of the wheel: arming an entry, polling it, letting go of it, and
//! where free entries come from (a thread's spare, its shard's free list, fresh blocks,
//! another shard). Any thread runs this, at any time, without a lock (see the wheel's
//! module docs, "Ground rules", "Taking back" and "Exclusive moments").

use core::task::Waker;

use super::Wheel;
use super::entry::{self, CANCELLED, Entry, FIRED, HANDLE, Index, NIL, WHEEL};
use super::plan::DEGRADED;
use super::shards::{self, Shard};
use super::storage::Storage;
use crate::clock::Clock;
use crate::sync::Ordering;
use crate::time::{Reading, Tick};

impl<C: Clock, S: Storage> Wheel<C, S> {
    /// Arms an entry due at `due`, of tick `when` (`⌈due / tick⌉`), for a deadline started
    /// in tick `start`. Returns the entry, and whether the drivers must be
    /// woken: the caller wakes them ([`Wheel::wake_driver`]) once it holds the entry's
    /// handle, so that a driver's waker that panics loses no entry. `None` when the storage
    /// is full.
    // Inlined into the start (`Wheel::start`) on 64-bit hosts, where its call and frame
    // are a measurable share of an arm + cancel (docs/benchmarks.md, "Notes from the
    // source"); firmware keeps one copy for size.
    #[cfg_attr(target_pointer_width = "64", inline(always))]
    pub(crate) fn arm(
        &self,
        due: Reading,
        when: Tick,
        start: Tick,
        waker: &Waker,
    ) -> Option<(Index, bool)> {
        debug_assert_eq!(when, self.tick_of(due).0, "tick of another deadline");
        // Cloned before an entry is taken: a `clone` that panics then takes nothing with it
        // (an entry taken and never armed would be lost to the wheel for good).
        let waker = waker.clone();
        let shard = shards::current();
        let (index, entry) = match self.take_spare() {
            Some(spare) => spare,
            None => self.take_free(shard)?,
        };
        // SAFETY: just taken (off a free list, or fresh from the bump counter), so this
        // thread owns it exclusively until the push below publishes it (see `Entry`'s
        // `Sync`).
        unsafe { entry.set_due(due) };
        // SAFETY: as above; a free entry's waker slot is idle and empty (`recycle`), and the
        // Release push below publishes the waker with the entry.
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

    /// Whether a deadline due at `due`, in the tick the driver plans to turn at, is due
    /// before the driver's turn within the tick before (see `Plan::offset`).
    #[cold]
    pub(super) fn before_planned_offset(&self, due: Reading) -> bool {
        self.tick_of(due).1 < self.plan.offset.load(Ordering::Relaxed)
    }

    /// Polls an armed entry: ready once it fired. Registers `waker` to be woken by the fire.
    pub(crate) fn poll_entry(&self, index: Index, waker: &Waker) -> bool {
        let entry = self.storage.entry(index);
        let state = entry.state.load(Ordering::Acquire);
        debug_assert_ne!(state & HANDLE, 0, "a deadline's entry it does not own");
        if state & FIRED != 0 {
            return true;
        }
        entry.waker.register(waker);
        entry.state.load(Ordering::Acquire) & FIRED != 0
    }

    /// The clock reading at which an armed entry is due; for the entry's owner.
    pub(crate) fn entry_deadline(&self, index: Index) -> Reading {
        // SAFETY: the caller owns the entry (its HANDLE bit is set), so it is not free
        // and `due` has no writer: it is written only while the entry is exclusively
        // owned, before it is published; this thread armed it or received the deadline
        // through a synchronising move.
        unsafe { self.storage.entry(index).due() }
    }

    /// Whether an armed entry has fired, without registering anything.
    pub(crate) fn entry_fired(&self, index: Index) -> bool {
        self.storage.entry(index).state.load(Ordering::Acquire) & FIRED != 0
    }

    /// Lets go of an armed entry: cancels it if it has not fired, and frees it if the wheel
    /// is done with it too. Returns whether it had fired.
    ///
    /// `span` is the deadline's requested span (ns) when the entry's deadline is its start
    /// plus that span (and the clock's resolution), so that the two tell when it started;
    /// `None` when they do not (a budget cut the deadline short, or it was armed late,
    /// after running degraded).
    pub(crate) fn release(&self, index: Index, span: Option<u64>) -> bool {
        let entry = self.storage.entry(index);
        // The deadline owns the entry: its generation cannot change until it lets go.
        let generation = entry::generation(entry.state.load(Ordering::Relaxed));
        let shard_index = shards::current();
        let shard = &self.shards[shard_index];
        // Still the head of the arm inbox: the driver never saw the entry, so nothing else
        // can reach it, and it goes straight back to the free list (see "Taking back").
        // (Only the inbox it was pushed onto can have it as head: this thread's, unless
        // the deadline moved to another thread since; then it is cancelled as below.)
        if shard.arm_inbox.unpush(&entry.slot_next, index) {
            entry.state.store(generation, Ordering::Relaxed);
            // SAFETY: taken back off the inbox, so the driver never saw it, and this
            // deadline's handle is its only owner.
            unsafe { self.free_from_handle(shard, index, entry) };
            return false;
        }
        let armed = entry::armed(generation);
        match entry.state.compare_exchange(
            armed,
            generation | WHEEL | CANCELLED,
            Ordering::AcqRel,
            Ordering::Acquire,
        ) {
            Ok(_) => {
                // The waker goes with the handle, dropped on this thread once the cancel
                // is queued: not on the driver's, at the reclaim (where a drop that panics
                // would stop the turn), and not held until then.
                // SAFETY: after the cancel, nothing else touches the waker slot until the
                // entry is reclaimed, which needs the push below: the driver takes a waker
                // only after its own transition to FIRED, which now fails; this handle was
                // the slot's one registrant, and is not registering.
                let waker = unsafe { entry.waker.take_exclusive() };
                // The tick the deadline started at stands in for "now" (no clock read on
                // this path): the plan is compared against it, which can only err towards
                // an extra wake. The deadline was due `span` after its start, plus the
                // clock's resolution. Without a span that says so, the driver is woken
                // (when the inbox was empty), as the plan cannot be judged.
                let start = span.map(|span| {
                    // SAFETY: read before the push below: until then the driver cannot
                    // reclaim the entry, so nothing writes its deadline (the next one to
                    // arm it would).
                    let due = unsafe { entry.due() };
                    self.ticks()
                        .floor(due.before(span).before(self.resolution()))
                });
                let was_empty = shard.cancel_inbox.push(&entry.cancel_link, index);
                if was_empty
                    && start.is_none_or(|start| {
                        self.planned_turn_after_push(start, shard_index) > start.after(1)
                    })
                {
                    self.wake_driver();
                }
                drop(waker);
                false
            }
            Err(actual) => {
                debug_assert_eq!(actual & (FIRED | HANDLE), FIRED | HANDLE, "bad release");
                let before = entry.state.fetch_and(!HANDLE, Ordering::AcqRel);
                if before & WHEEL == 0 {
                    // SAFETY: as `free_entry`'s.
                    unsafe { self.free_from_handle(shard, index, entry) };
                }
                self.take_handed_off();
                true
            }
        }
    }

    /// Lets go of an entry its handle has seen fired: the outcome is decided for good, so
    /// this skips the cancel attempt of [`Wheel::release`] (one locked operation less on
    /// the path of every fired deadline).
    pub(crate) fn release_fired(&self, index: Index) {
        let entry = self.storage.entry(index);
        let before = entry.state.fetch_and(!HANDLE, Ordering::AcqRel);
        debug_assert_eq!(before & (FIRED | HANDLE), FIRED | HANDLE, "not fired");
        if before & WHEEL == 0 {
            // SAFETY: as `free_entry`'s.
            unsafe { self.free_from_handle(&self.shards[shards::current()], index, entry) };
        }
        // This task was woken as the lead of a batch, most likely: wake the rest here.
        self.take_handed_off();
    }

    #[cfg(feature = "count-ready")]
    pub(crate) fn count_ready(&self) {
        self.counters.ready();
    }

    pub(crate) fn count_degraded_poll(&self) {
        self.counters.degraded_poll();
    }

    /// Leaves a degraded deadline's waker to be woken by the first turn at a later tick,
    /// and makes sure one comes: wakes the drivers unless their plan is a turn by the next
    /// tick. Returns `false` when there was no place for it (the deadline must then ask to
    /// be polled again itself).
    pub(crate) fn park_degraded(&self, waker: &Waker) -> bool {
        let tick = self.ticks().floor(self.now());
        if !self.degraded_wakers.leave(waker, tick) {
            return false;
        }
        let word = self.plan.word.fetch_or(DEGRADED, Ordering::AcqRel);
        if self.plan_of(word, tick) > tick.after(1) {
            self.wake_driver();
        }
        true
    }

    /// Wakes every driver, to turn sooner than planned.
    pub(crate) fn wake_driver(&self) {
        self.driver_wakers.wake_all();
    }

    /// Frees `entry` (at `index`), whose last ownership bit the caller just cleared, onto
    /// this thread's shard.
    #[cfg_attr(target_pointer_width = "64", inline(always))]
    pub(super) fn free_entry(&self, index: Index, entry: &Entry) {
        // SAFETY: both ownership bits are clear and the caller cleared the last one with an
        // AcqRel read-modify-write, after every access of the other owner: it owns the
        // entry exclusively until the push publishes it.
        unsafe { Self::free_to(&self.shards[shards::current()], index, entry) };
    }

    /// Frees `entry` (at `index`) from its deadline's side: into this thread's spare slot
    /// if the wheel has spares and the slot holds no entry of this wheel yet (see `spare`:
    /// another wheel's goes back to that wheel), else onto `shard`'s free list.
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
            // SAFETY: the wheel has spares, so it lives at this address for the rest of
            // the process (`with_thread_spares`'s contract);
            // `give_spare_back` is typed for it; the entry is ours, free and recycled.
            let kept =
                unsafe { crate::wheel::spare::keep(self.address(), index, Self::give_spare_back) };
            if !kept {
                shard.free.push(index, entry);
            }
            drop(old_waker);
            return;
        }
        // SAFETY: the caller's contract.
        unsafe { Self::free_to(shard, index, entry) };
    }

    /// An entry this thread kept for this wheel, if any (see `spare`).
    #[inline(always)]
    pub(super) fn take_spare(&self) -> Option<(Index, &Entry)> {
        #[cfg(all(feature = "std", not(punctual_loom)))]
        if self.spares {
            return crate::wheel::spare::take(self.address()).map(|i| (i, self.storage.entry(i)));
        }
        None
    }

    /// The wheel's address, for `spare` to tell wheels apart.
    #[cfg(all(feature = "std", not(punctual_loom)))]
    pub(super) fn address(&self) -> *const () {
        core::ptr::from_ref(self).cast()
    }

    /// Gives a kept entry back to its wheel's free list (a thread with a spare exits,
    /// or keeps another wheel's entry).
    ///
    /// # Safety
    ///
    /// * `wheel` is the address of a live `Self` (one with spares lives for the rest of
    ///   the process).
    /// * Entry `index` of it is free and recycled, and the caller owns it exclusively.
    #[cfg(all(feature = "std", not(punctual_loom)))]
    pub(super) unsafe fn give_spare_back(wheel: *const (), index: Index) {
        // SAFETY: the caller's contract.
        let wheel = unsafe { &*wheel.cast::<Self>() };
        wheel.shards[shards::current()]
            .free
            .push(index, wheel.storage.entry(index));
    }

    /// Recycles `entry` (at `index`) onto `shard`'s free list. The last deadline's waker,
    /// if the entry still held one, is dropped after the entry is back on the free list,
    /// so that a drop that panics loses no entry.
    ///
    /// # Safety
    ///
    /// * The caller owns the entry exclusively (as [`Entry::recycle`] requires).
    #[cfg_attr(target_pointer_width = "64", inline(always))]
    pub(super) unsafe fn free_to(shard: &Shard, index: Index, entry: &Entry) {
        // SAFETY: exclusive ownership, by the caller's contract, until the push publishes it.
        let old_waker = unsafe { entry.recycle() };
        shard.free.push(index, entry);
        drop(old_waker);
    }

    /// A free entry for exclusive use, with its index: from this thread's shard, else one
    /// never used yet that the storage holds already, else from another shard, else one
    /// never used yet that the storage grows for. `None` when the storage is full.
    ///
    /// Untouched entries come in blocks of whole pairs of cache lines, one block to one
    /// shard; another shard's free list has entries in whatever order they were freed,
    /// whose neighbours in memory may be in use on a third shard (two threads that started
    /// after other work then shared lines, and together did far less than twice the work
    /// of one: docs/benchmarks.md, "Notes from the source"). So a shard steals only when
    /// the storage would otherwise have to grow: it never grows while another shard has
    /// free entries.
    #[cfg_attr(target_pointer_width = "64", inline(always))]
    pub(super) fn take_free(&self, shard: usize) -> Option<(Index, &Entry)> {
        self.shards[shard]
            .free
            .pop(&self.storage)
            .or_else(|| self.take_fresh(shard, false))
            .or_else(|| self.steal(shard))
            .or_else(|| self.take_fresh(shard, true))
    }

    /// An entry from another shard's free list, with up to `FRESH_BLOCK - 1` more that go
    /// to `shard`'s list: a new thread then takes over a run of another shard's entries
    /// rather than one here and there, which another new thread would take the neighbours
    /// of (sharing their cache lines).
    #[cold]
    pub(super) fn steal(&self, shard: usize) -> Option<(Index, &Entry)> {
        // Every other shard once, starting after this one (none without shards). The
        // array's length rather than `SHARDS`, whose range is empty without `std`.
        let shards = self.shards.len();
        for k in 1..shards {
            let victim = &self.shards[(shard + k) % shards].free;
            let Some(first) = victim.pop(&self.storage) else {
                continue;
            };
            let more = (1..S::FRESH_BLOCK).map_while(|_| victim.pop(&self.storage).map(|(i, _)| i));
            self.keep(shard, more);
            return Some(first);
        }
        None
    }

    /// Puts free entries this thread owns alone (just popped, or never used) on `shard`'s
    /// free list, linked into one chain and pushed with one compare-and-swap.
    pub(super) fn keep(&self, shard: usize, entries: impl Iterator<Item = Index>) {
        let (mut chain, mut last) = (NIL, None);
        for index in entries {
            let entry = self.storage.entry(index);
            // Ours alone until the push below publishes the chain.
            entry.slot_next.store(chain, Ordering::Relaxed);
            last.get_or_insert(entry);
            chain = index;
        }
        if let Some(last) = last {
            self.shards[shard].free.push_chain(chain, last);
        }
    }

    /// An entry never used yet. Takes the storage's `FRESH_BLOCK` of them at once and
    /// keeps the rest on `shard`'s free list, so that the entries of two shards do not
    /// share cache lines. Only among the entries the storage holds already, unless `grow`.
    #[cold]
    pub(super) fn take_fresh(&self, shard: usize, grow: bool) -> Option<(Index, &Entry)> {
        let (first, count) = self.fresh.pop_block(&self.storage, S::FRESH_BLOCK, grow)?;
        // Untouched entries, ours alone since the bump; their state is a recycled entry's.
        self.keep(shard, first + 1..first + count);
        Some((first, self.storage.entry(first)))
    }
}
