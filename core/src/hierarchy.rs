//! The levels' arithmetic, shared by the lock-free wheel (`wheel::levels`) and a delay
//! queue (`delay_queue::levels`), each with its own lists and occupancy bitmaps.
//! * Level `l` has 64 slots of `64^l` ticks; a wheel has 2 to 6 levels, a delay queue 6.
//! * An entry of tick `when > elapsed` is placed by its key `when - 1`: at the level of the
//!   highest 6-bit group where `elapsed` and the key differ, slot `(key >> 6·level) & 63`.
//!   Beyond the range it waits at the top, placed again each rotation: never early.
//! * Bit `s` of a level's bitmap is set exactly when slot `s` is non-empty.
//! * A slot comes up at its `deadline` (a level-0 slot at its key + 1, a higher one at its
//!   first key), and the hand moves to its first key; `elapsed` never moves back.
//! * A level-0 slot holds one key `k`, in progress while `elapsed = k`: an entry is on
//!   level 0 throughout the tick it comes due in.

/// The most levels a wheel has: a delay queue's, and the wheel's default.
pub(crate) const MAX_LEVELS: usize = 6;
/// Slots per level: `1 << SLOT_BITS`.
pub(crate) const SLOT_BITS: u32 = 6;
pub(crate) const SLOTS: usize = 1 << SLOT_BITS;
const SLOT_MASK: u64 = SLOTS as u64 - 1;

/// Ticks spanned by `levels` levels: one rotation of the top level.
#[inline(always)]
pub(crate) const fn range(levels: usize) -> u64 {
    1 << (SLOT_BITS as u64 * levels as u64)
}

/// The next slot to come up: its level, its index, and the tick at which it comes up.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Expiration {
    pub(crate) level: usize,
    pub(crate) slot: usize,
    pub(crate) deadline: u64,
}

impl Expiration {
    /// The first key the slot holds (a level-0 slot's one key).
    #[inline]
    pub(crate) fn first_key(&self) -> u64 {
        self.deadline - u64::from(self.level == 0)
    }
}

/// Where a wheel stands (`elapsed`), and the levels' arithmetic from there.
#[derive(Debug)]
pub(crate) struct Hand {
    elapsed: u64,
}

impl Hand {
    pub(crate) const fn new() -> Self {
        Self { elapsed: 0 }
    }

    /// The tick the wheel has been advanced to.
    #[inline]
    pub(crate) fn elapsed(&self) -> u64 {
        self.elapsed
    }

    /// Moves `elapsed` forward (never back).
    #[inline]
    pub(crate) fn set_elapsed(&mut self, tick: u64) {
        debug_assert!(tick >= self.elapsed, "elapsed moving back");
        self.elapsed = self.elapsed.max(tick);
    }

    /// The level and slot of an entry of tick `when > elapsed` on `levels` levels.
    #[inline]
    pub(crate) fn place(&self, when: u64, levels: usize) -> (usize, usize) {
        debug_assert!(when > self.elapsed, "placing an entry that is already due");
        let key = when - 1;
        let level = level_for(self.elapsed, key, levels);
        (
            level,
            ((key >> (level as u32 * SLOT_BITS)) & SLOT_MASK) as usize,
        )
    }

    /// The earliest non-empty slot of `levels` levels, `occupied` giving each bitmap.
    #[inline]
    pub(crate) fn next(
        &self,
        levels: usize,
        occupied: impl Fn(usize) -> u64,
    ) -> Option<Expiration> {
        (0..levels).find_map(|level| self.next_in_level(level, occupied(level), levels))
    }

    fn next_in_level(&self, level: usize, occupied: u64, levels: usize) -> Option<Expiration> {
        if occupied == 0 {
            return None;
        }
        let width = 1u64 << (level as u32 * SLOT_BITS);
        let now_slot = (self.elapsed / width) as u32 & SLOT_MASK as u32;
        let span = width << SLOT_BITS;
        let level_start = self.elapsed & !(span - 1);
        if level == 0 {
            // The current slot (the tick in progress) included.
            let slot = (occupied & (u64::MAX << now_slot)).trailing_zeros() as usize;
            debug_assert!(slot < SLOTS, "a level-0 slot behind the tick in progress");
            return Some(Expiration {
                level,
                slot,
                deadline: level_start + slot as u64 + 1,
            });
        }
        // The current slot holds nothing above level 0. Slots at or before it (top level
        // only: beyond the range) are a rotation later, so searched last.
        let after = occupied & ((u64::MAX << now_slot) << 1);
        let slot = if after != 0 {
            after.trailing_zeros()
        } else {
            occupied.trailing_zeros()
        } as usize;
        let mut deadline = level_start + slot as u64 * width;
        if deadline <= self.elapsed {
            debug_assert_eq!(level, levels - 1, "a lower level wrapped");
            deadline = deadline.saturating_add(span);
        }
        Some(Expiration {
            level,
            slot,
            deadline,
        })
    }

    /// `next` if it comes up by tick `now`: the hand moves to its first key (not a level-0
    /// slot's `deadline`: it may start a level-1 slot not yet come up).
    #[inline]
    pub(crate) fn come_up(&mut self, next: Option<Expiration>, now: u64) -> Option<Expiration> {
        let next = next.filter(|next| next.deadline <= now)?;
        self.set_elapsed(next.first_key());
        Some(next)
    }
}

/// The level of key `key` seen from `elapsed` (the top one beyond the range).
#[inline]
fn level_for(elapsed: u64, key: u64, levels: usize) -> usize {
    let masked = ((elapsed ^ key) | SLOT_MASK).min(range(levels) - 1);
    let significant = 63 - masked.leading_zeros();
    (significant / SLOT_BITS) as usize
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn level_for_picks_the_highest_differing_group() {
        const L: usize = MAX_LEVELS;
        assert_eq!(level_for(0, 1, L), 0);
        assert_eq!(level_for(0, 63, L), 0);
        assert_eq!(level_for(0, 64, L), 1);
        assert_eq!(level_for(63, 64, L), 1);
        assert_eq!(level_for(64, 127, L), 0);
        assert_eq!(level_for(0, 4096, L), 2);
        assert_eq!(level_for(0, range(L) - 1, L), L - 1);
        assert_eq!(
            level_for(0, range(L), L),
            L - 1,
            "beyond the range goes to the top"
        );
        assert_eq!(level_for(0, u64::MAX - 1, L), L - 1);
    }

    #[test]
    fn fewer_levels_hold_far_keys_at_their_top() {
        assert_eq!(range(4), 1 << 24);
        assert_eq!(level_for(0, (1 << 24) - 1, 4), 3);
        assert_eq!(level_for(0, 1 << 24, 4), 3);
        assert_eq!(level_for(0, 1 << 30, 4), 3);
        assert_eq!(level_for(0, u64::MAX - 1, 2), 1);
        assert_eq!(level_for(0, 4095, 2), 1);
        assert_eq!(level_for(0, 63, 2), 0);
    }
}
