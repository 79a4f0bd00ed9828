//! Per-thread shards of the lists that arming and releasing touch: [`SHARDS`] sets of a
//! free list, an arm inbox and a cancel inbox, each on cache lines of its own.
//!
//! * A thread works on one shard, assigned round-robin at its first use of any wheel
//!   (one shard without `std`). Correctness never depends on it: an entry may be armed
//!   through one shard and released through another.
//! * An entry freed on a shard is reused there. A shard takes another's free entries
//!   before fresh ones that need the storage to grow.
//!
//! # Shards in use
//!
//! The driver's handshake checks only the inboxes of the shards in use: bits of the plan
//! word ([`in_use`]), set at a shard's first push and never cleared.
//!
//! * After its push a thread reads the plan word (Acquire); if its bit is clear, it sets
//!   it with a `fetch_or` (AcqRel), then reads the rest of the plan.
//! * The driver publishes the word by read-modify-write (AcqRel), then checks the shards
//!   it names: a later mark, or a load of the bit, acquires the plan; an earlier is found.
//! * A cancel reads the plan only when its push found the cancel inbox empty.
//! * Taking the inboxes needs no marks: a turn takes every shard's non-empty ones.

use crate::sync::Padded;

use crate::wheel::lists::{FreeList, Inbox};

/// Shards per wheel.
#[cfg(all(feature = "std", not(punctual_loom)))]
pub(crate) const SHARDS: usize = 8;
/// Two under loom: enough to model entries crossing shards.
#[cfg(all(punctual_loom, not(punctual_loom_one_shard)))]
pub(crate) const SHARDS: usize = 2;
/// One under loom with `punctual_loom_one_shard`, to model firmware's single shard.
#[cfg(all(punctual_loom, punctual_loom_one_shard))]
pub(crate) const SHARDS: usize = 1;
/// Shards per wheel.
#[cfg(all(not(feature = "std"), not(punctual_loom)))]
pub(crate) const SHARDS: usize = 1;

/// One shard's lists, alone on its cache lines.
pub(crate) type Shard = Padded<Lists>;

pub(crate) struct Lists {
    pub(crate) free: FreeList,
    pub(crate) arm_inbox: Inbox,
    pub(crate) cancel_inbox: Inbox,
}

crate::sync::const_fn! {
    pub(crate) fn new_shard() -> Shard {
        Padded::new(Lists {
            free: FreeList::new(),
            arm_inbox: Inbox::new(),
            cancel_inbox: Inbox::new(),
        })
    }
}

const _: () = assert!(
    SHARDS <= 30,
    "one bit per shard beside the plan word's idle bit and its top bit"
);

/// The plan word's bit marking `shard` in use; 0 with one shard.
#[inline]
pub(crate) const fn in_use_bit(shard: usize) -> u32 {
    if SHARDS > 1 { 2 << shard } else { 0 }
}

/// The shards a plan word marks in use: with one shard, always that one.
#[inline]
pub(crate) const fn in_use(word: u32) -> Shards {
    Shards(if SHARDS > 1 {
        (word >> 1) & ((1 << SHARDS) - 1)
    } else {
        1
    })
}

/// A set of shards, iterated in increasing order.
#[derive(Clone, Copy)]
pub(crate) struct Shards(u32);

impl Iterator for Shards {
    type Item = usize;

    #[inline]
    fn next(&mut self) -> Option<usize> {
        if self.0 == 0 {
            return None;
        }
        let shard = self.0.trailing_zeros() as usize;
        self.0 &= self.0 - 1;
        Some(shard)
    }
}

/// The shard this thread works on.
#[cfg(all(feature = "std", not(punctual_loom)))]
#[inline]
pub(crate) fn current() -> usize {
    use core::cell::Cell;
    use core::sync::atomic::{AtomicUsize, Ordering};

    static NEXT: AtomicUsize = AtomicUsize::new(0);
    std::thread_local! {
        static SHARD: Cell<usize> = const { Cell::new(usize::MAX) };
    }
    SHARD.with(|shard| {
        let mut index = shard.get();
        if index == usize::MAX {
            index = NEXT.fetch_add(1, Ordering::Relaxed) % SHARDS;
            shard.set(index);
        }
        index
    })
}

/// The shard this thread works on, round-robin per loom execution.
#[cfg(punctual_loom)]
pub(crate) fn current() -> usize {
    use loom::sync::atomic::{AtomicUsize, Ordering};

    loom::lazy_static! {
        static ref NEXT: AtomicUsize = AtomicUsize::new(0);
    }
    loom::thread_local! {
        static SHARD: usize = NEXT.fetch_add(1, Ordering::Relaxed) % SHARDS;
    }
    SHARD.with(|shard| *shard)
}

/// The shard this thread works on: the only one.
#[cfg(all(not(feature = "std"), not(punctual_loom)))]
#[inline]
pub(crate) fn current() -> usize {
    0
}
