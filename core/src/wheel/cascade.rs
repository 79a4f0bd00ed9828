//! Processing the slots a turn reaches: firing their entries or cascading them lower.
//!
//! * Slots come up in order of the tick they start at, up to the turn's tick `now`.
//! * An entry due by the turn's reading fires. A live entry due later goes back into the
//!   levels, one or more levels lower.
//! * A higher slot's live entries due by `now`, in a later tick than the one reached, go
//!   down again. So a turn that passes many ticks fires them in tick order.
//! * `elapsed` ends at `now`, and never moves back.
//! * The slot of the tick in progress may fire early, entry by entry, when its bound says
//!   one is due (the wheel's "Sub-tick firing").
//! * Cancelled entries stay linked until their cancel inbox brings them to be reclaimed.

use super::Wheel;
use super::entry::{CANCELLED, NIL};
use super::fire::late;
use super::levels::{self, Levels};
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

    /// Catches up over many rotations of the top level (see `levels`, "Beyond the
    /// range"). Applies when the turn is at least two rotations ahead of `elapsed`, and
    /// only the top level holds entries, all beyond the range. Moves `elapsed` to the end
    /// of the rotation before the earliest of their keys, or to `now` if sooner. Cancelled
    /// entries count too: a bound lower than needed only skips less.
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
}
