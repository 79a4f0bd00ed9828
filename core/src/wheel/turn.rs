//! One turn of the wheel, by the holder of the driver role: passes (`turn_locked`) until
//! the handshake finds every inbox empty.
//!
//! * A turn never uses a reading older than the start of the tick reached; `elapsed` ends
//!   at the turn's tick `now`, and never moves back.
//! * Idle means nothing armed, reclaimed, handed off or degraded, and lingering is over.
//! * After reclaiming, with a degraded deadline waiting, or with a batch handed off, the
//!   next turn is at most one tick ahead; never more than [`MAX_SLEEP`].
//! * A pass that finds a new `DEGRADED` mark in the word it published passes again.
//! * Slots come up in order of their start tick, up to `now`. An entry due by the turn's
//!   reading fires; a live one due later goes down the levels, even if due by `now`: a
//!   turn passing many ticks fires them in tick order. A new entry due by the reading
//!   fires at once, even with its tick ahead; else it goes into the levels unless
//!   cancelled.
//! * Cancelled entries stay linked until their cancel inbox brings them. A turn takes
//!   every shard's cancel inbox before any arm inbox, so an entry to reclaim has left its
//!   arm inbox, even one armed and cancelled on different shards.
//! * A cancelled entry is unlinked, recycled and freed onto the shard whose cancel inbox
//!   brought it: one chain per shard, in one CAS, after clearing `WHEEL` (AcqRel).

use super::SHARDS;
use super::entry::{self, CANCELLED, HANDLE, Index, NIL, PlainLink, WHEEL};
use super::levels::{Grain, Levels, Walk};
use super::lists::{self, Shard};
use super::role::{ACTIVE, DEGRADED, LAST};
use super::storage::Storage;
use super::{LINGER, MAX_SLEEP, Wheel, stats};
use crate::clock::Clock;
use crate::sync::Ordering;
use crate::time::{Reading, Tick};

/// What the driver role's holder owns: the levels and the driver's bookkeeping.
pub(super) struct DriverState {
    pub(super) levels: Levels,
    /// Fired entries to wake (through `slot_next`): here, so a panicking waker loses none.
    pub(super) to_wake: PlainLink,
    /// The last of `to_wake` (meaningless while it is `NIL`).
    pub(super) to_wake_tail: PlainLink,
    /// The driver does not go idle before this tick.
    pub(super) linger_until: Tick,
    /// A turn has published a plan: until then the idle mark is a new wheel's.
    pub(super) started: bool,
    /// The last look found a degraded deadline waiting: look again, whatever the word says.
    pub(super) degraded_waiting: bool,
    pub(super) handed_at: Tick,
    /// Set from the wheel at the start of each turn, as is `precise_fires`.
    pub(super) grain: Grain,
    pub(super) precise_fires: bool,
}

/// The next turn a pass plans, before it is published.
struct NextTurn {
    idle: bool,
    tick: u64,
    /// The tick's start, or earlier within the tick before.
    wake: Reading,
    offset: u32,
}

impl<C: Clock, S: Storage> Wheel<C, S> {
    /// One turn at `reading`, with the role held. Returns the next plan's reading
    /// ([`Reading::END`]: idle), and whether the turn took the wheel out of idle.
    pub(super) fn turn_locked(&self, state: &mut DriverState, reading: Reading) -> (Reading, bool) {
        let (reading, now) = self.begin_turn(state, reading);
        let mut reclaimed = false;
        // Kept across passes: a later pass reads its own plan, not idle.
        let mut left_idle = false;
        loop {
            // Advance first, so new entries are placed relative to `now`.
            self.expire(state, now, reading);
            reclaimed |= self.take_inboxes(state, now, reading);
            self.fire_early(state, reading);
            self.wake_fired(state, now);
            let degraded = self.wake_degraded(state, now);
            let next = self.plan_next(state, now, reclaimed, degraded);
            let word = self.publish(&next);
            left_idle |= !next.idle && word & ACTIVE == 0;
            if word & DEGRADED != 0 && !degraded {
                // A degraded deadline left its waker during this pass: look again.
                state.degraded_waiting = true;
                continue;
            }
            if self.inboxes_empty(word) {
                // `END` means idle: a plan at or past it is the reading just before.
                return if next.idle {
                    (Reading::END, false)
                } else {
                    (next.wake.min(LAST), left_idle)
                };
            }
        }
    }

    /// Sets up a turn: its reading and tick, the per-turn settings, and lingering.
    #[inline(always)]
    fn begin_turn(&self, state: &mut DriverState, reading: Reading) -> (Reading, Tick) {
        let reading = reading.max(self.ticks().start(Tick::new(state.levels.hand.elapsed())));
        let now = self.ticks().floor(reading);
        // Only sparse slots use the grain: without sub-tick firing it stays unset.
        if cfg!(feature = "sub-tick") {
            state.grain = Grain::of_tick(self.ticks().tick());
        }
        state.precise_fires = self.precise_fires();
        // A new wheel's first turn does not linger.
        let started = core::mem::replace(&mut state.started, true);
        if started && self.plan.word.load(Ordering::Relaxed) & ACTIVE == 0 {
            state.linger_until = now.after(LINGER);
        }
        (reading, now)
    }

    #[inline(always)]
    fn plan_next(
        &self,
        state: &DriverState,
        now: Tick,
        reclaimed: bool,
        degraded: bool,
    ) -> NextTurn {
        let elapsed = state.levels.hand.elapsed();
        let next = state.levels.next_expiration(&self.storage);
        let handed_off = self.handed_off();
        let idle =
            next.is_none() && !reclaimed && !degraded && !handed_off && now >= state.linger_until;
        let horizon = if reclaimed || degraded || handed_off {
            1
        } else if next.is_none() && now < state.linger_until {
            let linger_until = state.linger_until.get();
            linger_until - elapsed.min(linger_until - 1)
        } else {
            MAX_SLEEP
        };
        let mut planned = elapsed.saturating_add(horizon);
        let (mut look, mut offset) = (None, 0);
        if let Some(expiration) = next.filter(|next| next.deadline <= planned) {
            planned = expiration.deadline;
            if expiration.level == 0 {
                look = state
                    .levels
                    .first_look(expiration.slot, state.grain, state.precise_fires);
                offset = look.unwrap_or(0);
            } else if cfg!(feature = "sub-tick") {
                // Nothing in a higher slot is due before its first key's tick ends.
                // (Without sub-tick firing an offset of 0 lets arms wake no one.)
                offset = u32::try_from(self.ticks().tick()).unwrap_or(u32::MAX);
            }
        }
        let mut wake = self.ticks().start(Tick::new(planned));
        if let Some(first) = look {
            // Earlier within the tick before, for a slot looked at early.
            wake = wake.min(
                self.ticks()
                    .start(Tick::new(planned - 1))
                    .after(first.into()),
            );
        }
        NextTurn {
            idle,
            tick: planned,
            wake,
            offset,
        }
    }

    /// Publishes the plan, the word last; returns the word as it was before.
    #[inline(always)]
    fn publish(&self, next: &NextTurn) -> u32 {
        self.plan
            .next_wake
            .store(next.tick as u32, Ordering::Relaxed);
        self.plan.offset.store(next.offset, Ordering::Relaxed);
        if next.idle {
            self.plan.word.fetch_and(!ACTIVE, Ordering::AcqRel)
        } else {
            self.plan.word.fetch_or(ACTIVE, Ordering::AcqRel)
        }
    }

    /// Whether every inbox of the shards `word` names is empty (both checks are made).
    #[inline(always)]
    fn inboxes_empty(&self, word: u32) -> bool {
        lists::in_use(word).all(|shard| {
            let shard = &self.shards[shard];
            shard.arm_inbox.check() & shard.cancel_inbox.check()
        })
    }

    /// Wakes degraded deadlines left before tick `now`; returns whether any still waits.
    #[inline]
    fn wake_degraded(&self, state: &mut DriverState, now: Tick) -> bool {
        if !state.degraded_waiting && self.plan.word.load(Ordering::Relaxed) & DEGRADED == 0 {
            return false;
        }
        self.plan.word.fetch_and(!DEGRADED, Ordering::AcqRel);
        // Before the wakes: a panicking waker leaves the rest for the next turn.
        state.degraded_waiting = true;
        state.degraded_waiting = self.degraded_wakers.wake_before(now);
        state.degraded_waiting
    }

    /// The entry a link points to, prefetched ([`entry::prefetch`]).
    #[inline]
    pub(super) fn next_ahead(&self, link: &entry::NextLink) -> Index {
        let next = link.load(Ordering::Relaxed);
        self.fetch_ahead(next);
        next
    }

    #[inline]
    pub(super) fn fetch_ahead(&self, index: Index) {
        if index != NIL {
            entry::prefetch(self.storage.entry(index));
        }
    }

    /// Processes every slot that starts at or before tick `now` (at `reading`).
    pub(super) fn expire(&self, state: &mut DriverState, now: Tick, reading: Reading) {
        loop {
            self.skip_rotations(state, now);
            let next = state.levels.next_expiration(&self.storage);
            let Some(expiration) = state.levels.hand.come_up(next, now.get()) else {
                break;
            };
            let mut taken = state.levels.take_slot(&self.storage, &expiration);
            while let Some((index, next)) = taken.next(&self.storage) {
                Levels::unlink_taken(&self.storage, index);
                self.fetch_ahead(next);
                self.fire_or_insert(state, index, now, reading, expiration.level);
            }
        }
        if now.get() > state.levels.hand.elapsed() {
            state.levels.hand.set_elapsed(now.get());
        }
    }

    /// Fires `index`, taken off a slot of `level` (0 for a new entry), or links it into
    /// its slot: the module docs' rules.
    #[inline(always)]
    fn fire_or_insert(
        &self,
        state: &mut DriverState,
        index: Index,
        now: Tick,
        reading: Reading,
        level: usize,
    ) {
        let entry = self.storage.entry(index);
        // SAFETY: driver role held; the entry came through an arm inbox.
        let due = unsafe { entry.due() };
        let (when, offset) = self.ticks().tick_of(due);
        let down = level > 0 && when.get() > state.levels.hand.elapsed() && when <= now;
        if due <= reading && !down {
            // A cancelled entry is left for its cancel inbox (`fire`).
            let late = now.get().saturating_sub(when.get());
            self.fire(state, index, entry, late);
        } else if entry.state.load(Ordering::Acquire) & CANCELLED == 0 {
            // Down again, or `when > now ≥ elapsed`, as a slot needs.
            state
                .levels
                .insert(&self.storage, index, when.get(), offset, state.grain);
        }
    }

    /// Skips rotations of the top level when `now` is two or more ahead. Cancelled
    /// entries count too: a lower bound only skips less.
    fn skip_rotations(&self, state: &mut DriverState, now: Tick) {
        let rotation = crate::hierarchy::range(S::LEVELS);
        let elapsed = state.levels.hand.elapsed();
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
        // The rotation of the earliest key (`when > elapsed ≥ 0`); none: up to `now`.
        let first_rotation = if first_due == Reading::END {
            u64::MAX
        } else {
            (self.ticks().tick_of(first_due).0.get() - 1) / rotation
        };
        // An entry within the range puts the target behind `elapsed`: no skip.
        let target = first_rotation
            .saturating_mul(rotation)
            .saturating_sub(1)
            .min(now.get());
        if target > elapsed {
            state.levels.hand.set_elapsed(target);
        }
    }

    /// Fires the due entries of the tick in progress's slot if it is looked at early.
    pub(super) fn fire_early(&self, state: &mut DriverState, reading: Reading) {
        if !cfg!(feature = "sub-tick") {
            return;
        }
        let elapsed = state.levels.hand.elapsed();
        // The tick in progress's slot (`deadline > elapsed` always: no overflow).
        let Some(slot) = state
            .levels
            .next_expiration(&self.storage)
            .filter(|next| next.level == 0 && next.deadline - 1 == elapsed)
            .map(|next| next.slot)
        else {
            return;
        };
        let Some(bound) = state
            .levels
            .first_look(slot, state.grain, state.precise_fires)
        else {
            return;
        };
        // An entry may be due up to a grain before the bound: skip only a whole grain
        // before it, so a reading on an entry's own time fires it.
        let into =
            (reading.as_nanos()).saturating_sub(self.ticks().start(Tick::new(elapsed)).as_nanos());
        if u64::from(bound) >= into + u64::from(state.grain.unit()) {
            return;
        }
        let mut first = u32::MAX;
        let mut walk = Walk::of(&self.storage, 0, slot);
        while let Some((index, next)) = walk.next(&self.storage) {
            self.fetch_ahead(next);
            let entry = self.storage.entry(index);
            // SAFETY: driver role held; the entry came through an arm inbox.
            let due = unsafe { entry.due() };
            if entry.state.load(Ordering::Acquire) & CANCELLED != 0 {
                // Left for its cancel inbox.
            } else if due <= reading {
                state.levels.remove(&self.storage, index, elapsed + 1);
                self.fire(state, index, entry, 0);
            } else {
                first = first.min(self.ticks().tick_of(due).1);
            }
        }
        state
            .levels
            .set_first(&self.storage, slot, first, state.grain);
    }

    /// Takes every shard's inboxes. Returns whether anything was reclaimed.
    pub(super) fn take_inboxes(
        &self,
        state: &mut DriverState,
        now: Tick,
        reading: Reading,
    ) -> bool {
        // Cancels first. Every shard, not only those in use: no mark needs ordering here.
        let cancelled: [Index; SHARDS] =
            core::array::from_fn(|shard| self.shards[shard].cancel_inbox.take_all());
        for shard in &self.shards {
            let mut index = shard.arm_inbox.take_all();
            while index != NIL {
                // Before linking it into a slot, which reuses `slot_next`.
                let next = self.next_ahead(&self.storage.entry(index).slot_next);
                self.counters.bump(stats::ARMED, true);
                self.fire_or_insert(state, index, now, reading, 0);
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

    /// Unlinks and frees the cancelled entries from `index` on, onto `shard` in one CAS.
    pub(super) fn reclaim(&self, state: &mut DriverState, shard: &Shard, mut index: Index) {
        let freed = core::iter::from_fn(|| {
            if index == NIL {
                return None;
            }
            let entry = self.storage.entry(index);
            let next = self.next_ahead(&entry.cancel_link);
            // SAFETY: driver role held; the entry came through an arm inbox.
            let (when, _) = self.ticks().tick_of(unsafe { entry.due() });
            state.levels.remove(&self.storage, index, when.get());
            let before = entry.state.fetch_and(!WHEEL, Ordering::AcqRel);
            debug_assert_eq!(
                before & (HANDLE | CANCELLED),
                CANCELLED,
                "reclaiming a live entry"
            );
            self.counters.bump(stats::CANCELLED, true);
            // SAFETY: the handle let go, and this AcqRel cleared the last ownership bit:
            // ours alone until the chain is pushed.
            let old_waker = unsafe { entry.recycle() };
            debug_assert!(old_waker.is_none(), "a cancelled entry kept its waker");
            drop(old_waker);
            Some(core::mem::replace(&mut index, next))
        });
        self.keep(shard, freed);
    }
}
