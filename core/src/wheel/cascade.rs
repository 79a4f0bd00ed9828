//! The slots a turn reaches: firing their entries or cascading them lower.
//!
//! * Slots come up in order of their start tick, up to the turn's tick `now`.
//! * An entry due by the turn's reading fires; a live one due later goes down the levels,
//!   even if due by `now`: a turn passing many ticks fires them in tick order.
//! * `elapsed` ends at `now`, and never moves back.
//! * The tick in progress's slot may fire entry by entry, when its bound says one is due.
//!   Cancelled entries stay linked until their cancel inbox brings them.

use super::Wheel;
use super::entry::{CANCELLED, NIL};
use super::fire::late;
use super::levels::{Levels, Walk};
use super::storage::Storage;
use super::turn::DriverState;
use crate::clock::Clock;
use crate::sync::Ordering;
use crate::time::{Reading, Tick};

impl<C: Clock, S: Storage> Wheel<C, S> {
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
                let entry = self.storage.entry(index);
                // SAFETY: driver role held; the entry came through the arm inbox.
                let due = unsafe { entry.due() };
                let (when, offset) = self.ticks().tick_of(due);
                if expiration.level > 0
                    && when.get() > state.levels.hand.elapsed()
                    && when <= now
                    && entry.state.load(Ordering::Acquire) & CANCELLED == 0
                {
                    // Due by now, in a later tick than the one reached: down again.
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
            }
        }
        if now.get() > state.levels.hand.elapsed() {
            state.levels.hand.set_elapsed(now.get());
        }
    }

    /// Skips rotations of the top level (`levels`, "Beyond the range") when `now` is two
    /// or more ahead. Cancelled entries count too: a lower bound only skips less.
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

    /// Fires the due entries of the tick in progress's slot, if sparse or precise fires are on
    /// (never without `sub-tick`).
    pub(super) fn fire_early(&self, state: &mut DriverState, reading: Reading) {
        if !cfg!(feature = "sub-tick") {
            return;
        }
        let Some(expiration) = state.levels.next_expiration(&self.storage) else {
            return;
        };
        let elapsed = state.levels.hand.elapsed();
        // `deadline > elapsed` always: no overflow.
        if expiration.level != 0 || expiration.deadline - 1 != elapsed {
            return;
        }
        let Some(bound) =
            state
                .levels
                .first_look(expiration.slot, state.grain, state.precise_fires)
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
        let mut walk = Walk::of(&self.storage, 0, expiration.slot);
        while let Some((index, next)) = walk.next(&self.storage) {
            self.fetch_ahead(next);
            let entry = self.storage.entry(index);
            // SAFETY: driver role held; the entry came through an arm inbox.
            let due = unsafe { entry.due() };
            if entry.state.load(Ordering::Acquire) & CANCELLED != 0 {
                // Left for its cancel inbox.
            } else if due <= reading {
                state
                    .levels
                    .remove(&self.storage, index, expiration.deadline);
                self.fire(state, index, entry, 0);
            } else {
                first = first.min(self.ticks().tick_of(due).1);
            }
        }
        state
            .levels
            .set_first(&self.storage, expiration.slot, first, state.grain);
    }
}
