//! The driver side of the wheel: taking the driver role, and a turn (reclaiming cancelled
//! entries, linking new ones, cascading and firing, waking tasks, publishing the plan).
//! Only the holder of the driver role runs a turn (see the wheel's module docs).

use super::entry::{self, CANCELLED, Entry, FIRED, HANDLE, Index, NIL, UNLINKED, WHEEL};
use super::levels::{self, Grain, Levels};
use super::link::PlainLink;
use super::plan::LAST;
use super::plan::{ACTIVE, DEGRADED};
use super::shards::{self, SHARDS, Shard};
use super::storage::Storage;
use super::{LINGER, MAX_SLEEP, Wheel};
use crate::clock::Clock;
use crate::sync::{AtomicU32, Ordering};
use crate::time::{Reading, Tick};

/// How many ticks late an entry of tick `when` fires in tick `now` (for the stats).
fn late(now: Tick, when: Tick) -> u64 {
    now.get().saturating_sub(when.get())
}

/// `role`: a thread holds the driver role.
const DRIVING: u32 = 0b01;
/// `role`: a thread asked for a turn while the role was held.
const REQUESTED: u32 = 0b10;

pub(super) struct DriverState {
    pub(super) levels: Levels,
    /// Fired entries whose tasks are still to be woken, linked through `slot_next`. Kept
    /// here rather than on the stack so that a waker that panics loses nothing: the next
    /// turn wakes the rest.
    pub(super) to_wake: PlainLink,
    /// The last of `to_wake` (meaningless while `to_wake` is `NIL`): fired entries are
    /// queued at the tail, so tasks wake in firing order.
    pub(super) to_wake_tail: PlainLink,
    /// The driver does not go idle before this tick (see "Taking back").
    pub(super) linger_until: Tick,
    /// A turn has published a plan: until then the wheel's idle mark is the one it was
    /// made with, not one a turn left, so the first turn does not linger (see "Taking
    /// back"). `false` in a new wheel, whose image is all zero bytes (see `link`).
    pub(super) started: bool,
    /// The last look at the places of degraded deadlines found one still waiting: the next
    /// turn looks again, whatever the plan word says.
    pub(super) degraded_waiting: bool,
    /// The tick of the last hand-off (see `handoff`): a turn at a later tick takes back
    /// what is still on the list.
    pub(super) handed_at: Tick,
    /// The unit of the levels' offset bounds, from the wheel's tick, set at the start of
    /// each turn (see `levels`, "Sparse slots"); here rather than in the levels, where it
    /// would take a padded word of its own.
    pub(super) grain: Grain,
    /// Whether this turn looks at dense level-0 slots early too (see `levels`, "Early
    /// looks"), read from the wheel at the start of each turn.
    pub(super) early_looks: bool,
}

impl<C: Clock, S: Storage> Wheel<C, S> {
    /// Advances to reading `now` if the driver role is free, else leaves a request for its
    /// holder. Returns the reading of the planned next turn, [`Reading::END`] if idle.
    pub(super) fn turn_at(&self, mut now: Reading, driver: Option<usize>) -> Reading {
        let mut role = self.role.load(Ordering::Relaxed);
        loop {
            let (next, success) = if role & DRIVING == 0 {
                (DRIVING, Ordering::Acquire)
            } else {
                // Release: the holder, acquiring the request, also sees our clock reading.
                (role | REQUESTED, Ordering::Release)
            };
            match self
                .role
                .compare_exchange_weak(role, next, success, Ordering::Relaxed)
            {
                Ok(_) if next == DRIVING => break,
                Ok(_) => {
                    // The holder will turn for us, and may plan anew as it does (for a
                    // deadline armed meanwhile, say), with no one to tell: the plan read
                    // now may be out of date by the time the caller sleeps on it. So ask
                    // to be turned again by the next tick boundary at the latest, never
                    // "idle".
                    let tick = self.ticks().floor(now);
                    let planned = self.plan_reading(self.planned_turn(tick));
                    let next_tick = self.tick_start(tick.after(1)).min(LAST);
                    return planned.min(next_tick);
                }
                Err(actual) => role = actual,
            }
        }
        // Lets go of the role if a waker panics during the turn, so the wheel keeps
        // working: its structure is consistent at every wake (see `wake_fired`).
        struct ReleaseOnUnwind<'a>(&'a AtomicU32);
        impl Drop for ReleaseOnUnwind<'_> {
            fn drop(&mut self) {
                self.0.store(0, Ordering::Release);
            }
        }
        let unwind = ReleaseOnUnwind(&self.role);
        // Whether a turn took the wheel out of idle (see "Waking the driver").
        let mut woke_from_idle = false;
        loop {
            // SAFETY: this thread holds the driver role (the compare-and-swap above, or the
            // failed release below), the only licence to touch `driver`; the reference
            // does not outlive this statement.
            let (planned, left_idle) = self
                .driver
                .with_mut(|state| unsafe { self.turn_locked(&mut *state, now) });
            woke_from_idle |= left_idle;
            match self
                .role
                .compare_exchange(DRIVING, 0, Ordering::Release, Ordering::Relaxed)
            {
                Ok(_) => {
                    core::mem::forget(unwind);
                    if woke_from_idle {
                        // After the role is let go: a driver woken turns at once. The
                        // turning driver knows the plan it returns.
                        self.driver_wakers.wake_all_but(driver);
                    }
                    return planned;
                }
                Err(_) => {
                    // A request came in: keep the role, take the request, and turn again
                    // with a reading no older than the requester's.
                    self.role.fetch_and(!REQUESTED, Ordering::Acquire);
                    now = now.max(self.now());
                }
            }
        }
    }

    /// Starts the wheel over, as a new wheel, for a clock whose readings no longer follow
    /// the ones it served: one that now reads another source, earlier or much later than
    /// the last turn's reading. The last turn's plan and the tick it reached are
    /// forgotten, so the next turn starts from the clock's reading then, as a new wheel's
    /// first turn does: it does not linger, and nothing is placed or fired relative to
    /// the old readings (a turn never goes below the tick it reached, which on a clock
    /// now reading earlier would fire deadlines early, and a plan far ahead of the new
    /// readings would keep arms from waking the driver). The entries it grew, its free
    /// lists and its counters stay.
    ///
    /// Only for a wheel that nothing is armed on and that no driver turns (its drivers
    /// have stopped, and will start again after this). Returns `false` and changes
    /// nothing if an entry is in use ([`occupied`](Wheel::occupied) is not 0), or a
    /// turn is in progress on another thread.
    ///
    /// # Examples
    ///
    /// ```
    /// use core::time::Duration;
    /// use punctual_core::{Fixed, ManualClock, Wheel};
    ///
    /// let wheel: Wheel<ManualClock, Fixed<8>> =
    ///     Wheel::fixed(ManualClock::new(), Duration::from_millis(1));
    /// wheel.advance(Duration::from_secs(3600));
    /// // Nothing armed, no driver: the wheel may start over for another clock.
    /// assert!(wheel.restart());
    /// ```
    pub fn restart(&self) -> bool {
        if self
            .role
            .compare_exchange(0, DRIVING, Ordering::Acquire, Ordering::Relaxed)
            .is_err()
        {
            return false;
        }
        // SAFETY: this thread holds the driver role (the compare-and-swap above), the only
        // licence to touch `driver`; the reference does not outlive the closure.
        let restarted = self.driver.with_mut(|state| unsafe {
            let state = &mut *state;
            // Empty: no entry in the levels, on the to-wake list or handed off.
            if self.occupied() != 0 || state.to_wake.get() != NIL || self.handed_off() {
                return false;
            }
            state.levels = Levels::new();
            state.linger_until = Tick::new(0);
            state.handed_at = Tick::new(0);
            state.started = false;
            true
        });
        if restarted {
            // Idle, as a new wheel is marked before its first turn; the shards' marks
            // stay (a mark only makes the driver look at a shard's inboxes).
            self.plan.next_wake.store(0, Ordering::Relaxed);
            self.plan.offset.store(0, Ordering::Relaxed);
            self.plan.word.fetch_and(!ACTIVE, Ordering::AcqRel);
        }
        if self.role.swap(0, Ordering::AcqRel) & REQUESTED != 0 {
            // A thread asked for a turn meanwhile: it is owed one.
            self.turn_at(self.now(), None);
        }
        restarted
    }

    /// One turn at reading `now`, with the driver role held. Returns the reading of the
    /// next planned turn ([`Reading::END`] if idle), and whether the turn took the wheel out
    /// of idle. (The levels count ticks as plain numbers: `Tick::get` and `Tick::new` at
    /// their edge.)
    pub(super) fn turn_locked(&self, state: &mut DriverState, reading: Reading) -> (Reading, bool) {
        // A reading older than one an earlier turn used (another thread turning, or
        // a turn at an older reading) counts as the start of the tick already reached:
        // some turn read at least that, so it fires nothing early, and an entry armed
        // from an older reading still, due before that, fires rather than going into a
        // slot behind `elapsed`.
        let reading = reading.max(self.tick_start(Tick::new(state.levels.elapsed())));
        let now = self.ticks().floor(reading);
        let mut reclaimed = false;
        // Whether a pass below published a plan over an idle word. Kept across passes: a
        // pass that takes the wheel out of idle and then finds an inbox not empty (an arm
        // that read the new plan, and woke no one since its tick was not before it) passes
        // again, and that pass reads its own plan, not idle; the driver waiting idle must
        // still be woken (see "Waking the driver").
        let mut left_idle = false;
        state.grain = self.grain();
        state.early_looks = self.early_looks();
        // A new wheel is marked idle before any turn: its first turn has not been woken
        // from an idle a turn left, and lingering then would only keep a timer (which a
        // paused runtime's clock would jump to) with nothing armed.
        let started = core::mem::replace(&mut state.started, true);
        if started && self.plan.word.load(Ordering::Relaxed) & ACTIVE == 0 {
            // Woken from idle, most likely by an arm: linger (see "Taking back").
            state.linger_until = now.after(LINGER);
        }
        loop {
            // Advance first, so new entries are placed relative to `now` (a wheel whose
            // clock starts far from zero would otherwise place them at the top level).
            self.expire(state, now, reading);
            reclaimed |= self.take_inboxes(state, now, reading);
            self.fire_early(state, reading);
            self.wake_fired(state, now);
            let degraded = self.wake_degraded(state, now);
            let elapsed = state.levels.elapsed();
            let next = state.levels.next_expiration(&self.storage);
            // Idle: nothing armed, nothing just reclaimed and no degraded deadline waiting.
            // The driver then needs no timer at all (a paused tokio clock would otherwise
            // auto-advance to it), and every arm wakes it.
            // A batch handed off (see `handoff`) keeps a turn planned by the next tick,
            // which takes it back if its lead has not taken it.
            let handed_off = self.handed_off();
            let idle = next.is_none()
                && !reclaimed
                && !degraded
                && !handed_off
                && now >= state.linger_until;
            // After reclaiming, more cancels are likely: look again within a tick, as for
            // a degraded deadline waiting. While lingering, turn when the lingering ends.
            let horizon = if reclaimed || degraded || handed_off {
                1
            } else if next.is_none() && now < state.linger_until {
                let linger_until = state.linger_until.get();
                linger_until - elapsed.min(linger_until - 1)
            } else {
                MAX_SLEEP
            };
            let mut planned = elapsed.saturating_add(horizon);
            // The reading at which to turn: the planned tick, or earlier within the tick
            // before it, when the entries of a sparse slot (or of a dense one to look at
            // early) are due then ("Sub-tick firing"); and how far into that tick before,
            // for arming threads (see `Plan::offset`; 0 unless the plan comes from such a
            // slot or a higher one).
            let mut wake = self.tick_start(Tick::new(planned));
            let mut offset = 0;
            if let Some(expiration) = next {
                if expiration.deadline <= planned {
                    planned = expiration.deadline;
                    wake = self.tick_start(Tick::new(planned));
                    if expiration.level == 0 {
                        if let Some(first) =
                            state
                                .levels
                                .first_look(expiration.slot, state.grain, state.early_looks)
                        {
                            let early = self.tick_start(Tick::new(planned - 1)).after(first.into());
                            wake = wake.min(early);
                            offset = first;
                        }
                    } else {
                        // A higher slot comes down at the start of its first key's tick,
                        // with nothing in it due before (`levels`, "Slot arithmetic"):
                        // the turn is a whole tick into the tick before, and an arm due
                        // earlier in that tick wakes the driver, to fire at its own time.
                        offset = u32::try_from(self.ticks().tick()).unwrap_or(u32::MAX);
                    }
                }
            }
            self.plan.next_wake.store(planned as u32, Ordering::Relaxed);
            self.plan.offset.store(offset, Ordering::Relaxed);
            // The driver's side of the handshake (see "Waking the driver"): the plan word
            // last, with a read-modify-write that also tells which shards are in use.
            let word = if idle {
                self.plan.word.fetch_and(!ACTIVE, Ordering::AcqRel)
            } else {
                self.plan.word.fetch_or(ACTIVE, Ordering::AcqRel)
            };
            left_idle |= !idle && word & ACTIVE == 0;
            if word & DEGRADED != 0 && !degraded {
                // A degraded deadline left its waker during this pass: look at the places
                // again before settling on a plan (see `degraded_wakers`, "Not losing the
                // wake").
                state.degraded_waiting = true;
                continue;
            }
            if shards::in_use(word).all(|shard| {
                let shard = &self.shards[shard];
                shard.arm_inbox.check() & shard.cancel_inbox.check()
            }) {
                // `END` means idle: a turn planned at or past the clock's last reading (its
                // tick boundary saturated) is the reading just before.
                return if idle {
                    (Reading::END, false)
                } else {
                    (wake.min(LAST), left_idle)
                };
            }
        }
    }

    /// Takes every shard's inboxes: reclaims cancelled entries and links new ones into the
    /// levels. Returns whether anything was reclaimed.
    /// Wakes the degraded deadlines that left their wakers before tick `now`; returns
    /// whether any still waits. Looks only when the plan word says one left a waker, or one
    /// still waited at the last look: the mark is cleared before the places are read, so a
    /// deadline that leaves its waker after the read marks the word again, which the
    /// publication of the plan sees.
    #[inline]
    fn wake_degraded(&self, state: &mut DriverState, now: Tick) -> bool {
        if !state.degraded_waiting && self.plan.word.load(Ordering::Relaxed) & DEGRADED == 0 {
            return false;
        }
        self.plan.word.fetch_and(!DEGRADED, Ordering::AcqRel);
        // Recorded before the wakes: a waker that panics leaves the rest for the next turn,
        // which must then look.
        state.degraded_waiting = true;
        state.degraded_waiting = self.degraded_wakers.wake_before(now);
        state.degraded_waiting
    }

    pub(super) fn take_inboxes(
        &self,
        state: &mut DriverState,
        now: Tick,
        reading: Reading,
    ) -> bool {
        // Cancels first, from every shard: an entry on these lists was pushed onto an arm
        // inbox before it was cancelled, so the arm inboxes taken next hold it if no
        // earlier turn took it. Every shard, not only those in use: `take_all` reads each
        // head first and swaps only a non-empty one, and no mark needs ordering here (only
        // the handshake at the end of `turn_locked` skips the shards not in use).
        let cancelled: [Index; SHARDS] =
            core::array::from_fn(|shard| self.shards[shard].cancel_inbox.take_all());
        for shard in &self.shards {
            let mut index = shard.arm_inbox.take_all();
            while index != NIL {
                let entry = self.storage.entry(index);
                // Before the entry is linked into a slot, which reuses `slot_next`.
                let next = self.next_ahead(&entry.slot_next);
                // SAFETY: driver role held; the entry came through an arm inbox.
                let due = unsafe { entry.due() };
                let (when, offset) = self.tick_of(due);
                self.counters.armed();
                if entry.state.load(Ordering::Acquire) & CANCELLED == 0 {
                    // Due at `now` (its tick may be ahead: see "Sub-tick firing"); else
                    // `when > now ≥ elapsed`, as a slot needs.
                    if due <= reading {
                        self.fire(state, index, entry, late(now, when));
                    } else {
                        state
                            .levels
                            .insert(&self.storage, index, when.get(), offset, state.grain);
                    }
                }
                index = next;
            }
        }
        let mut reclaimed = false;
        for (shard, &first) in self.shards.iter().zip(&cancelled) {
            reclaimed |= first != NIL;
            self.reclaim(state, shard, first);
        }
        reclaimed
    }

    /// Unlinks and frees the cancelled entries linked from `index` through `cancel_link`;
    /// they go back to `shard`'s free list as one chain, with one compare-and-swap.
    pub(super) fn reclaim(&self, state: &mut DriverState, shard: &Shard, mut index: Index) {
        let (mut freed, mut freed_last) = (NIL, None);
        while index != NIL {
            let entry = self.storage.entry(index);
            let next = self.next_ahead(&entry.cancel_link);
            // SAFETY: driver role held; the entry came through an arm inbox (taken in this
            // turn or an earlier one, see `take_inboxes`).
            let (when, _) = self.tick_of(unsafe { entry.due() });
            state.levels.remove(&self.storage, index, when.get());
            let before = entry.state.fetch_and(!WHEEL, Ordering::AcqRel);
            debug_assert_eq!(
                before & (HANDLE | CANCELLED),
                CANCELLED,
                "reclaiming a live entry"
            );
            self.counters.cancelled();
            // SAFETY: the handle let go (CANCELLED, HANDLE clear) and this AcqRel
            // read-modify-write cleared the last ownership bit after its accesses: the
            // entry is ours alone until the chain is pushed below.
            let old_waker = unsafe { entry.recycle() };
            // The cancelling handle took its waker with it.
            debug_assert!(old_waker.is_none(), "a cancelled entry kept its waker");
            drop(old_waker);
            entry.slot_next.store(freed, Ordering::Relaxed);
            freed_last.get_or_insert(entry);
            freed = index;
            index = next;
        }
        if let Some(last) = freed_last {
            shard.free.push_chain(freed, last);
        }
    }

    /// Processes every slot that starts at or before tick `now` (at `reading`).
    pub(super) fn expire(&self, state: &mut DriverState, now: Tick, reading: Reading) {
        loop {
            self.skip_rotations(state, now);
            let Some(expiration) = state.levels.next_expiration(&self.storage) else {
                break;
            };
            if expiration.deadline > now.get() {
                break;
            }
            state.levels.reach(&expiration);
            let mut index = state.levels.take_slot(&self.storage, &expiration);
            while index != NIL {
                let next = Levels::next_taken(&self.storage, index);
                self.fetch_ahead(next);
                let entry = self.storage.entry(index);
                // SAFETY: driver role held; the entry came through the arm inbox.
                let due = unsafe { entry.due() };
                let (when, offset) = self.tick_of(due);
                if expiration.level > 0
                    && when.get() > state.levels.elapsed()
                    && when <= now
                    && entry.state.load(Ordering::Acquire) & CANCELLED == 0
                {
                    // Due by now, in a later tick of the slot coming down than the one
                    // reached: down the levels again, so that this turn fires the ticks
                    // it passes in their order (a turn that passes many fires deadlines
                    // in deadline order, as a virtual clock's jump must).
                    state
                        .levels
                        .insert(&self.storage, index, when.get(), offset, state.grain);
                } else if due <= reading {
                    self.fire(state, index, entry, late(now, when));
                } else if entry.state.load(Ordering::Acquire) & CANCELLED == 0 {
                    // `when > now`: `due` is past this tick.
                    state
                        .levels
                        .insert(&self.storage, index, when.get(), offset, state.grain);
                }
                index = next;
            }
        }
        if now.get() > state.levels.elapsed() {
            state.levels.set_elapsed(now.get());
        }
    }

    /// Catching up over many rotations of the top level (see `levels`, "Beyond the
    /// range"): when the turn is at least two rotations ahead of `elapsed`, the levels
    /// below the top are empty and every entry on the top level is beyond the
    /// range, moves `elapsed` to the end of the rotation before the earliest of their keys'
    /// (or to `now`, if sooner), instead of re-inserting each such entry once per
    /// rotation passed. Cancelled entries count too: a bound that is lower than needed
    /// only skips less.
    fn skip_rotations(&self, state: &mut DriverState, now: Tick) {
        let rotation = levels::range(S::LEVELS);
        let elapsed = state.levels.elapsed();
        if now.get().saturating_sub(elapsed) < 2 * rotation || !state.levels.only_top(&self.storage)
        {
            return;
        }
        let mut first_due = Reading::END;
        for mut index in state.levels.top_lists(&self.storage) {
            while index != NIL {
                let entry = self.storage.entry(index);
                // SAFETY: driver role held; the entry came through an arm inbox.
                first_due = first_due.min(unsafe { entry.due() });
                index = entry.slot_next.load(Ordering::Relaxed);
            }
        }
        // The rotation of the earliest one's key, `when - 1` (`when > elapsed ≥ 0`); with
        // no entry at all (no limit that ends at `END` holds one), `elapsed` may go to `now`
        // at once, as it does at the end of `expire`.
        let first_rotation = if first_due == Reading::END {
            u64::MAX
        } else {
            (self.tick_of(first_due).0.get() - 1) / rotation
        };
        // Every key is at or after the start of `first_rotation`; an entry of the current
        // rotation (within the range) makes the target fall behind `elapsed`.
        let target = first_rotation
            .saturating_mul(rotation)
            .saturating_sub(1)
            .min(now.get());
        if target > elapsed {
            state.levels.set_elapsed(target);
        }
    }

    /// Sub-tick firing: fires the entries of the tick in progress whose own deadline has
    /// passed, if their slot is sparse, or dense with early looks on (module docs,
    /// "Sub-tick firing"; `levels`, "Early looks").
    pub(super) fn fire_early(&self, state: &mut DriverState, reading: Reading) {
        let Some(expiration) = state.levels.next_expiration(&self.storage) else {
            return;
        };
        let elapsed = state.levels.elapsed();
        // The slot of the very next tick (`deadline > elapsed` always, so no overflow).
        if expiration.level != 0 || expiration.deadline - 1 != elapsed {
            return;
        }
        let Some(bound) = state
            .levels
            .first_look(expiration.slot, state.grain, state.early_looks)
        else {
            return;
        };
        // How far into tick `elapsed` the clock reads. The bound is rounded up to a grain,
        // so an entry may be due up to a grain before it: the slot is skipped only when
        // the reading is a whole grain before the bound, and then nothing in it is due. A
        // reading that lands on an entry's own time (a virtual clock's advance) fires it.
        let into =
            (reading.as_nanos()).saturating_sub(self.tick_start(Tick::new(elapsed)).as_nanos());
        if u64::from(bound) >= into + u64::from(state.grain.unit()) {
            return;
        }
        let mut index = state.levels.level0_head(&self.storage, expiration.slot);
        let mut first = u32::MAX;
        while index != NIL {
            let entry = self.storage.entry(index);
            let next = self.next_ahead(&entry.slot_next);
            // SAFETY: driver role held; the entry came through an arm inbox.
            let due = unsafe { entry.due() };
            if entry.state.load(Ordering::Acquire) & CANCELLED != 0 {
                // Stays linked until the cancel inbox brings it; its deadline no longer
                // matters.
            } else if due <= reading {
                state
                    .levels
                    .remove(&self.storage, index, expiration.deadline);
                self.fire(state, index, entry, 0);
            } else {
                first = first.min(self.tick_of(due).1);
            }
            index = next;
        }
        state
            .levels
            .set_first(&self.storage, expiration.slot, first, state.grain);
    }

    /// The entry a list link points to, asked into the cache ahead of its use: the lists
    /// are threaded through the entries, so a walk would otherwise stall on each entry's
    /// miss in turn (see [`entry::prefetch`]).
    #[inline]
    pub(super) fn next_ahead(&self, link: &entry::NextLink) -> Index {
        let next = link.load(Ordering::Relaxed);
        self.fetch_ahead(next);
        next
    }

    /// Asks entry `index` into the cache, unless it is `NIL`.
    #[inline]
    pub(super) fn fetch_ahead(&self, index: Index) {
        if index != NIL {
            entry::prefetch(self.storage.entry(index));
        }
    }

    /// Decides `index` as fired unless it was cancelled, and queues its task to be woken.
    pub(super) fn fire(
        &self,
        state: &mut DriverState,
        index: Index,
        entry: &Entry,
        late_ticks: u64,
    ) {
        debug_assert_eq!(entry.slot_prev.load(Ordering::Relaxed), UNLINKED);
        let word = entry.state.load(Ordering::Acquire);
        if word & CANCELLED != 0 {
            return; // the cancel inbox will reclaim it
        }
        if entry
            .state
            .compare_exchange(word, word | FIRED, Ordering::AcqRel, Ordering::Acquire)
            .is_err()
        {
            return; // cancelled meanwhile
        }
        self.counters.fired(late_ticks);
        // The wheel keeps the entry (WHEEL) until its waker has been taken out. Queued at
        // the tail: tasks are woken in the order their deadlines fired.
        entry.slot_next.store(NIL, Ordering::Relaxed);
        if state.to_wake.get() == NIL {
            state.to_wake = PlainLink::new(index);
        } else {
            self.storage
                .entry(state.to_wake_tail.get())
                .slot_next
                .store(index, Ordering::Relaxed);
        }
        state.to_wake_tail = PlainLink::new(index);
    }

    /// Wakes the tasks of fired entries at tick `now`: first a hand-off list left since an
    /// earlier tick, then (with batched wakes on, see `handoff`) the first entry queued,
    /// handing the rest off, else every entry queued.
    pub(super) fn wake_fired(&self, state: &mut DriverState, now: Tick) {
        if self.take_back(state, now) {
            self.wake_queued(state);
        }
        self.hand_off(state, now);
        self.wake_queued(state);
    }

    /// Wakes the tasks of the queued fired entries, letting go of each entry first. The
    /// wheel's structure is consistent throughout, so a waker that panics (the panic
    /// reaches the caller of the turn) leaves the rest queued for the next turn.
    fn wake_queued(&self, state: &mut DriverState) {
        while state.to_wake.get() != NIL {
            let index = state.to_wake.get();
            let entry = self.storage.entry(index);
            state.to_wake = PlainLink::new(self.next_ahead(&entry.slot_next));
            entry.slot_next.store(NIL, Ordering::Relaxed);
            // Take the waker while the wheel still owns the entry, then let go.
            let waker = entry.waker.take();
            let before = entry.state.fetch_and(!WHEEL, Ordering::AcqRel);
            if before & HANDLE == 0 {
                self.free_entry(index, entry);
            }
            if let Some(waker) = waker {
                waker.wake();
            }
        }
    }
}
