//! Per-thread shards of the lists that arming and releasing touch.
//!
//! A wheel has [`SHARDS`] shards, each with a free list, an arm inbox and a cancel inbox
//! on cache lines of its own. Each thread works on one shard, assigned round-robin the
//! first time it touches any wheel. Without `std` there is one shard.
//!
//! * Correctness never depends on the assignment: any thread may use any shard.
//! * An entry may be armed through one shard and released through another.
//! * The driver takes every shard's inboxes in each turn, every cancel inbox first.
//! * An entry freed on a shard is reused on that shard.
//! * A thread whose shard's free list is empty takes an entry from another shard before a
//!   fresh one. So shards never hold more entries than the wheel needs.
//!
//! # Shards in use
//!
//! The driver's handshake at the end of a turn (the wheel's "Waking the driver") checks
//! only the inboxes of the shards in use. They are bits of the plan word ([`in_use`]),
//! set at a shard's first push and never cleared.
//!
//! * A thread reads the plan word (Acquire) after its push, as it reads the plan anyway.
//! * If its shard's bit is clear, it sets it with a `fetch_or` (AcqRel) before reading
//!   the rest of the plan.
//! * A cancel reads the plan only when its push found the cancel inbox empty. A later push
//!   onto the same inbox relies on that first one, as for the wake.
//! * The driver publishes the word with a read-modify-write (AcqRel), after the rest of
//!   its plan. It then checks the inboxes of the shards the word names.
//! * A mark after that read-modify-write acquires the plan, so its thread sees the plan
//!   it must correct.
//! * A mark before it is found, and the shard's inboxes are checked as before.
//! * A thread whose Acquire load finds a bit set after the driver's write also acquires
//!   the plan, through the release sequence. Without Acquire, a second thread on a newly
//!   marked shard could read an old plan.
//! * Taking the inboxes needs no marks: a turn reads every shard's heads with plain loads,
//!   and swaps only those not empty.

use crate::sync::Padded;

use crate::wheel::lists::{FreeList, Inbox};

/// Shards per wheel.
#[cfg(all(feature = "std", not(punctual_loom)))]
pub(crate) const SHARDS: usize = 8;
/// Shards per wheel: two under loom, enough to model entries crossing shards.
#[cfg(all(punctual_loom, not(punctual_loom_one_shard)))]
pub(crate) const SHARDS: usize = 2;
/// Shards per wheel: one under loom with `punctual_loom_one_shard`, to model the hand-offs
/// as firmware compiles them (without `std`, one shard: see [`in_use_bit`] and [`in_use`]).
#[cfg(all(punctual_loom, punctual_loom_one_shard))]
pub(crate) const SHARDS: usize = 1;
/// Shards per wheel.
#[cfg(all(not(feature = "std"), not(punctual_loom)))]
pub(crate) const SHARDS: usize = 1;

/// One shard's lists, alone on its cache lines (with `std`, [`Padded`](crate::sync::Padded): 128 bytes on x86-64,
/// where adjacent-line prefetching pairs 64-byte lines; 32 on 32-bit Arm).
pub(crate) type Shard = Padded<Lists>;

/// The lists of one shard.
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

/// The plan word's bit that marks `shard` in use (see "Shards in use"). Bit 0 is the
/// wheel's; with one shard there is nothing to mark, and this is 0.
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

/// The shard this thread works on: under loom, assigned round-robin per execution, so
/// that the threads of a model use different shards.
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
