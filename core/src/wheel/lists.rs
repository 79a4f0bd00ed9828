//! The lock-free lists that hand entries between threads, in [`SHARDS`] sets (shards) of
//! a free list, an arm inbox and a cancel inbox, each on cache lines of its own.
//!
//! * Treiber stacks of indices, through `slot_next` (free list, arm inbox) or
//!   `cancel_link` (cancel inbox). [`NeverUsed`]: a bump counter of untouched entries.
//! * [`FreeList`]: any thread pushes (a chain at once) and pops. Against ABA its head
//!   packs a tag that every successful operation increments: index + 1 in the word's low
//!   half (0: empty), the tag in its high half. ABA stays possible for a pop stalled
//!   across 2^32 (2^16 on 32-bit) operations, with the same entry back at the head.
//! * [`Inbox`]: any thread pushes; the driver takes all with a swap; the entry's owner may
//!   [`Inbox::unpush`] it while it is the head. No tag: pushes are ABA-safe, and an
//!   entry is pushed once per life onto the arm inbox it may be unpushed from.
//!
//! # Shards
//!
//! * A thread works on one shard, assigned round-robin at its first use of any wheel (one
//!   shard without `std`). An entry may be armed through one shard and released through
//!   another. An entry freed on a shard is reused there.
//! * The shards in use are bits of the plan word ([`in_use`]), set at a shard's first
//!   push and never cleared; the driver's handshake checks only their inboxes.
//! * After its push a thread reads the plan word (Acquire); if its bit is clear, it sets it
//!   by `fetch_or` (AcqRel), then reads the rest of the plan. The driver publishes the
//!   word by read-modify-write, then checks the shards it names: a later mark, or a load
//!   of the bit, acquires the plan; an earlier push is found.

use crate::sync::{AtomicU32, AtomicUsize, Ordering, Padded, padded};
use crate::wheel::SHARDS;
use crate::wheel::entry::{Entry, Index, NIL, NextLink};
use crate::wheel::storage::Slab;

const INDEX_BITS: u32 = usize::BITS / 2;
const INDEX_MASK: usize = (1 << INDEX_BITS) - 1;

/// The head word of `index` (as `index + 1`: `NIL` is 0) and `tag`.
#[inline]
fn pack(index: Index, tag: usize) -> usize {
    let stored = index.wrapping_add(1) as usize;
    debug_assert!(stored <= INDEX_MASK);
    (tag << INDEX_BITS) | stored
}

#[inline]
fn unpack(word: usize) -> (Index, usize) {
    (
        ((word & INDEX_MASK) as Index).wrapping_sub(1),
        word >> INDEX_BITS,
    )
}

/// Entries nobody owns (one shard's).
pub(crate) struct FreeList {
    head: AtomicUsize,
}

impl FreeList {
    /// Takes an entry for exclusive use, or `None` when empty.
    #[cfg_attr(target_pointer_width = "64", inline(always))]
    pub(crate) fn pop<'s, S: Slab>(&self, storage: &'s S) -> Option<(Index, &'s Entry)> {
        let mut head = self.head.load(Ordering::Acquire);
        loop {
            let (index, tag) = unpack(head);
            if index == NIL {
                return None;
            }
            // A stale read is harmless: the tag moved on, so the CAS fails.
            let entry = storage.entry(index);
            let next = entry.slot_next.load(Ordering::Relaxed);
            match self.head.compare_exchange_weak(
                head,
                pack(next, tag.wrapping_add(1)),
                Ordering::Acquire,
                Ordering::Acquire,
            ) {
                Ok(_) => {
                    if next != NIL {
                        crate::wheel::entry::prefetch(storage.entry(next));
                    }
                    return Some((index, entry));
                }
                Err(actual) => head = actual,
            }
        }
    }

    /// Returns a chain of recycled entries the caller owned alone, `first` to `last` (one
    /// entry: `last` is `first`'s).
    #[cfg_attr(target_pointer_width = "64", inline(always))]
    #[cfg_attr(not(target_pointer_width = "64"), inline(never))]
    pub(crate) fn push_chain(&self, first: Index, last: &Entry) {
        let mut head = self.head.load(Ordering::Relaxed);
        loop {
            let (next, tag) = unpack(head);
            last.slot_next.store(next, Ordering::Relaxed);
            // Release: the next owner must see the recycled entry and the link.
            match self.head.compare_exchange_weak(
                head,
                pack(first, tag.wrapping_add(1)),
                Ordering::Release,
                Ordering::Relaxed,
            ) {
                Ok(_) => return,
                Err(actual) => head = actual,
            }
        }
    }
}

/// A bump counter over the entries never used yet.
pub(crate) struct NeverUsed {
    next: AtomicU32,
}

impl NeverUsed {
    crate::sync::const_fn! {
        pub(crate) fn new() -> Self {
            Self { next: AtomicU32::new(0) }
        }
    }

    /// Takes 1 to `want` consecutive untouched entries: the first and how many. `None`
    /// when full, or when it would have to grow and `grow` is false.
    pub(crate) fn pop_block<S: Slab>(
        &self,
        storage: &S,
        want: u32,
        grow: bool,
    ) -> Option<(Index, u32)> {
        let usable =
            |index: Index| (grow || (index as usize) < storage.usable()) && storage.reserve(index);
        let mut fresh = self.next.load(Ordering::Relaxed);
        loop {
            if fresh == NIL || !usable(fresh) {
                return None;
            }
            // `reserve` says no from `MAX_ENTRIES` on, far below `NIL`: no overflow.
            let mut count = 1;
            while count < want && usable(fresh + count) {
                count += 1;
            }
            // Release: publishes `reserve`'s segment to `touched`'s readers.
            match self.next.compare_exchange_weak(
                fresh,
                fresh + count,
                Ordering::Release,
                Ordering::Relaxed,
            ) {
                Ok(_) => return Some((fresh, count)),
                Err(actual) => fresh = actual,
            }
        }
    }

    /// How many entries were ever handed out; each may be reached by index (Acquire).
    pub(crate) fn touched(&self) -> Index {
        self.next.load(Ordering::Acquire)
    }
}

/// A multi-producer stack that its single consumer empties at once.
pub(crate) struct Inbox {
    head: NextLink,
}

impl Inbox {
    crate::sync::const_fn! {
        pub(crate) fn new() -> Self {
            Self { head: NextLink::new() }
        }
    }

    /// Pushes `index` through its `link`; returns whether the inbox was empty. AcqRel: a
    /// push after the driver's [`Inbox::check`] acquires the plan published before it.
    #[cfg_attr(target_pointer_width = "64", inline(always))]
    #[cfg_attr(not(target_pointer_width = "64"), inline(never))]
    pub(crate) fn push(&self, link: &NextLink, index: Index) -> bool {
        let mut head = self.head.load(Ordering::Relaxed);
        loop {
            link.store(head, Ordering::Relaxed);
            match self
                .head
                .compare_exchange_weak(head, index, Ordering::AcqRel, Ordering::Relaxed)
            {
                Ok(_) => return head == NIL,
                Err(actual) => head = actual,
            }
        }
    }

    /// Takes `index` back if still the head (its owner only, once per push). AcqRel: keeps
    /// the release sequence of the pushes below, ordered with [`Inbox::check`].
    #[cfg_attr(target_pointer_width = "64", inline(always))]
    pub(crate) fn unpush(&self, link: &NextLink, index: Index) -> bool {
        if self.head.load(Ordering::Relaxed) != index {
            return false;
        }
        // Written by its push, unchanged while it is on the inbox.
        let next = link.load(Ordering::Relaxed);
        self.head
            .compare_exchange(index, next, Ordering::AcqRel, Ordering::Relaxed)
            .is_ok()
    }

    /// Takes every entry pushed so far; walk the result with the same link.
    pub(crate) fn take_all(&self) -> Index {
        if self.is_empty() {
            return NIL;
        }
        self.head.swap(NIL, Ordering::Acquire)
    }

    /// Whether the inbox looks empty (Relaxed: a hint, ordered with nothing).
    pub(crate) fn is_empty(&self) -> bool {
        self.head.load(Ordering::Relaxed) == NIL
    }

    /// Whether the inbox is empty: the driver's side of the handshake, a read-modify-write
    /// so that it sees a push, or the push sees what it published before (Release).
    pub(crate) fn check(&self) -> bool {
        self.head.read_modify(Ordering::AcqRel) == NIL
    }
}

/// One shard's lists, alone on its cache lines.
pub(crate) type Shard = Padded<Lists>;

pub(crate) struct Lists {
    pub(crate) free: FreeList,
    pub(crate) arm_inbox: Inbox,
    pub(crate) cancel_inbox: Inbox,
}

crate::sync::const_fn! {
    pub(crate) fn new_shard() -> Shard {
        padded(Lists {
            free: FreeList { head: AtomicUsize::new(0) },
            arm_inbox: Inbox::new(),
            cancel_inbox: Inbox::new(),
        })
    }
}

/// The plan word's bit marking `shard` in use; 0 with one shard.
#[inline]
pub(crate) const fn in_use_bit(shard: usize) -> u32 {
    if SHARDS > 1 { 2 << shard } else { 0 }
}

/// The shards a plan word marks in use, in increasing order: with one shard, that one.
#[inline]
pub(crate) fn in_use(word: u32) -> impl Iterator<Item = usize> {
    let bits = if SHARDS > 1 { word >> 1 } else { 1 };
    (0..SHARDS).filter(move |shard| bits & 1 << shard != 0)
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
