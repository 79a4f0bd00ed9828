//! Per-thread shards of the lists that arming and releasing touch.
//!
//! With one free list and one arm inbox, two threads that arm and release deadlines at
//! the same time fight over the same cache lines (the lists' heads, and the entries that
//! pass from one thread to the other through the free list), and together do less than
//! one thread alone. So a wheel has [`SHARDS`] shards, each with its own free list, arm
//! inbox and cancel inbox on a cache line of its own, and each thread works on one shard
//! (assigned round-robin the first time the thread touches any wheel). Two threads on
//! different shards share no line on the arm and release paths; an entry freed on a shard
//! is reused on that shard.
//!
//! Correctness never depends on the assignment: any thread may use any shard, an entry
//! may be armed through one shard and released through another (a task that moved), and
//! the driver takes every shard's inboxes in each turn (every cancel inbox before any arm
//! inbox, so that an entry it is asked to reclaim has come out of whichever arm inbox it
//! was on). A thread whose shard's free list is empty takes an entry from another shard
//! before it touches a fresh one, so shards never hold more entries than the wheel needs.
//!
//! Without `std` there are no threads to tell apart (and no thread-locals): one shard.
//!
//! # Shards in use
//!
//! The driver's handshake at the end of each turn (see `Wheel`, "Waking the driver")
//! checks the inboxes of the shards in use on its wheel, not of all [`SHARDS`]: each
//! check is a read-modify-write, and with all eight shards, sixteen of them were most of
//! the time a turn of a lightly loaded wheel took (most programs arm from one or two
//! threads). The shards pushed onto are bits of the word that also says whether the
//! driver is idle (the plan word, [`in_use`]), set at a shard's first push and never
//! cleared:
//!
//! * A thread that pushes reads the plan word (Acquire) after its push, as it reads the
//!   plan anyway to decide whether to wake the driver; if its shard's bit is clear, it
//!   sets it with a `fetch_or` (AcqRel) before reading the rest of the plan. (A cancel
//!   reads the plan only when its push found the cancel inbox empty; a later push onto
//!   the same inbox relies on that first one, as for the wake.)
//! * The driver publishes whether it is idle with a read-modify-write of the same word
//!   (AcqRel; Release is what the handshake needs), after the rest of its plan, and
//!   checks the inboxes of the shards that word names. A mark after that
//!   read-modify-write acquires the plan (so does a thread whose Acquire load finds a bit
//!   set after it, through the release sequence), so its thread sees the plan it must
//!   correct; a mark before it is found, and the shard's inboxes are checked, which the
//!   push is ordered with as before. The Acquire of that load matters: a second thread
//!   on a shard another thread just marked would otherwise read an old plan.
//!
//! Taking the inboxes needs no marks: a turn reads every shard's heads with plain loads
//! and swaps only those that are not empty.

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
