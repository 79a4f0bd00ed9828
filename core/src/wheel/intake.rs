//! The driver's intake: new entries from the arm inboxes, cancelled ones from the cancel
//! inboxes.
//!
//! * A turn takes every shard's cancel inbox before any arm inbox. An entry to reclaim
//!   has then come out of whichever arm inbox it was on.
//! * A new entry fires at once if due by the turn's reading, even with its tick ahead.
//!   Otherwise it goes into the levels, unless cancelled meanwhile.
//! * A cancelled entry is unlinked from its slot, recycled, and freed onto the shard whose
//!   cancel inbox brought it. One shard's entries go back as one chain, in one CAS.
//! * Reclaiming clears `WHEEL` with AcqRel, after the handle's last access. From then the
//!   entry is the driver's alone until the chain is pushed.

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
    /// Takes every shard's inboxes: reclaims cancelled entries and links new ones into the
    /// levels. Returns whether anything was reclaimed.
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
}
