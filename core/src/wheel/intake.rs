//! The driver's intake: new entries from arm inboxes, cancelled ones from cancel inboxes.
//!
//! * A turn takes every shard's cancel inbox before any arm inbox: an entry to reclaim
//!   has then left its arm inbox, even one armed and cancelled on different shards.
//! * A new entry fires at once if due by the turn's reading, even with its tick ahead;
//!   else it goes into the levels, unless cancelled meanwhile.
//! * A cancelled entry is unlinked, recycled and freed onto the shard whose cancel inbox
//!   brought it: one chain per shard, in one CAS, after clearing `WHEEL` (AcqRel).

use super::Wheel;
use super::entry::{CANCELLED, HANDLE, Index, NIL, WHEEL};
use super::fire::late;
use super::shards::{SHARDS, Shard};
use super::storage::Storage;
use super::turn::DriverState;
use crate::clock::Clock;
use crate::sync::Ordering;
use crate::time::{Reading, Tick};

impl<C: Clock, S: Storage> Wheel<C, S> {
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
                let entry = self.storage.entry(index);
                // Before linking it into a slot, which reuses `slot_next`.
                let next = self.next_ahead(&entry.slot_next);
                // SAFETY: driver role held; the entry came through an arm inbox.
                let due = unsafe { entry.due() };
                let (when, offset) = self.ticks().tick_of(due);
                self.counters.armed();
                if entry.state.load(Ordering::Acquire) & CANCELLED == 0 {
                    // Else `when > now ≥ elapsed`, as a slot needs.
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

    /// Unlinks and frees the cancelled entries from `index` on, onto `shard` in one CAS.
    pub(super) fn reclaim(&self, state: &mut DriverState, shard: &Shard, mut index: Index) {
        let (mut freed, mut freed_last) = (NIL, None);
        while index != NIL {
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
            self.counters.cancelled();
            // SAFETY: the handle let go, and this AcqRel cleared the last ownership bit:
            // ours alone until the chain is pushed.
            let old_waker = unsafe { entry.recycle() };
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
}
