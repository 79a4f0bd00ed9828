//! The lock-free lists that hand entries between threads: free lists and inboxes.
//!
//! Both are Treiber stacks of entry indices, linked through a field of the entries:
//! `slot_next` for the free list and the arm inbox, `cancel_link` for the cancel inbox.
//!
//! * [`FreeList`]: one per shard (see `shards`). Any thread pushes and pops. The driver
//!   pushes one turn's reclaimed entries as one chain.
//! * [`Fresh`]: a bump counter of entries never used yet, shared by all shards.
//! * A pop reads the head's successor, then swings the head past it. A head popped and
//!   pushed back meanwhile (ABA) would let a stale successor in.
//! * So a free list's head packs the index with a tag. Every successful operation
//!   increments the tag, so a compare-and-swap against a stale tag fails.
//!
//!   | bits (64-bit targets) | bits (32-bit targets) | field |
//!   |-----------------------|-----------------------|-------|
//!   | 0..32                 | 0..16                 | index + 1 (0: empty)  |
//!   | 32..64                | 16..32                | tag   |
//!
//! * The tag makes ABA unlikely, not impossible. A pop that stalls across a multiple of
//!   2<sup>32</sup> (64-bit) or 2<sup>16</sup> (32-bit) operations on its list, with the
//!   same entry back at the head, installs a stale successor.
//! * [`Inbox`]: any thread pushes. The driver takes everything at once with a swap.
//! * [`Inbox::unpush`] is the one other removal: the pushing thread takes its entry back
//!   while it is still the head.
//! * An inbox needs no tag. An entry is pushed once per life, only by its owner, who alone
//!   unpushes it. If the head reads `index` at the compare-and-swap, no take happened
//!   since the push.
//! * Pushes and unpushes of other entries above it never write its link. So the successor
//!   an unpush installs is the one its push wrote. The head is a bare index.

use crate::sync::{AtomicU32, AtomicUsize, Ordering};
use crate::wheel::entry::{Entry, Index, NIL, NextLink, Slab};

const INDEX_BITS: u32 = usize::BITS / 2;
const INDEX_MASK: usize = (1 << INDEX_BITS) - 1;

/// The head word of `index` (stored as `index + 1`, so that an empty list, `NIL`, is all
/// zero bits: see `link`) and `tag`.
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
    crate::sync::const_fn! {
        pub(crate) fn new() -> Self {
            Self { head: AtomicUsize::new(0) }
        }
    }

    /// Takes an entry for exclusive use, with its index, or `None` when this list is
    /// empty. Always inlined on 64-bit targets, as are the pushes: the arm and release
    /// paths then look each entry up once (a call per list operation was a measurable share
    /// of an arm and a release where the compiler did not inline it by itself: see
    /// docs/benchmarks.md, "Notes from the source"). Left to the compiler on 32-bit
    /// microcontrollers, where copies cost flash.
    #[cfg_attr(target_pointer_width = "64", inline(always))]
    pub(crate) fn pop<'s, S: Slab>(&self, storage: &'s S) -> Option<(Index, &'s Entry)> {
        let mut head = self.head.load(Ordering::Acquire);
        loop {
            let (index, tag) = unpack(head);
            if index == NIL {
                return None;
            }
            // A stale read (the head was popped meanwhile) is harmless: the tag has moved
            // on, so the compare-and-swap below fails.
            let entry = storage.entry(index);
            let next = entry.slot_next.load(Ordering::Relaxed);
            match self.head.compare_exchange_weak(
                head,
                pack(next, tag.wrapping_add(1)),
                Ordering::Acquire,
                Ordering::Acquire,
            ) {
                Ok(_) => {
                    // The next pop reads the new head's link: fetch it now.
                    if next != NIL {
                        crate::wheel::entry::prefetch(storage.entry(next));
                    }
                    return Some((index, entry));
                }
                Err(actual) => head = actual,
            }
        }
    }

    /// Returns an entry (`entry`, at `index`) the caller owned exclusively and has
    /// recycled.
    #[cfg_attr(target_pointer_width = "64", inline(always))]
    pub(crate) fn push(&self, index: Index, entry: &Entry) {
        self.push_chain(index, entry);
    }

    /// Returns a chain of entries the caller owned exclusively and has recycled, linked
    /// through `slot_next` from index `first` to the entry `last`, with one
    /// compare-and-swap.
    #[cfg_attr(target_pointer_width = "64", inline(always))]
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

/// A bump counter over the entries never used yet, shared by every shard: the slab is
/// touched (and a growable one grows) only when no shard has a free entry.
pub(crate) struct Fresh {
    next: AtomicU32,
}

impl Fresh {
    crate::sync::const_fn! {
        pub(crate) fn new() -> Self {
            Self { next: AtomicU32::new(0) }
        }
    }

    /// Takes up to `want` consecutive untouched entries (at least one), as the first and
    /// how many; `None` when the storage is full, or when it would have to grow and `grow`
    /// is false.
    pub(crate) fn pop_block<S: Slab>(
        &self,
        storage: &S,
        want: u32,
        grow: bool,
    ) -> Option<(Index, u32)> {
        // Whether `index` is usable: held already, or (`grow`) made so.
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
            // Release: publishes the storage `reserve` made usable (a growable segment)
            // to `touched`'s readers, which reach these entries by index, through no list.
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

    /// How many entries were ever handed out (the high-water mark of the slab). Every
    /// entry below it may be reached by index: the Acquire pairs with `pop_block`'s
    /// Release, after which the storage holds them (a growable segment is installed).
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

    /// Pushes `index`; returns `true` when the inbox was empty before.
    ///
    /// AcqRel: the push takes part in the handshake with the driver (see `Wheel`, "Waking
    /// the driver"): if it comes after the driver's [`Inbox::check`] in the head's
    /// modification order, it acquires the plan the driver published before that check.
    ///
    /// `link` is the entry's field this inbox threads through.
    #[cfg_attr(target_pointer_width = "64", inline(always))]
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

    /// Takes `index` back off the inbox if it is still the head: the driver never saw it.
    /// Returns whether it did; then the caller owns the entry as before its push. `link`
    /// is the entry's field this inbox threads through.
    ///
    /// Only the thread that owns the entry (the one that pushed it, or its deadline moved
    /// since) may call this, once per push (see the module docs for why no tag is needed).
    ///
    /// AcqRel: the compare-and-swap continues the release sequence of the pushes below
    /// the entry, so the driver's Acquire swap still sees their entries, and it is ordered
    /// with [`Inbox::check`] like a push.
    #[cfg_attr(target_pointer_width = "64", inline(always))]
    pub(crate) fn unpush(&self, link: &NextLink, index: Index) -> bool {
        if self.head.load(Ordering::Relaxed) != index {
            return false;
        }
        // The entry's own link: written by its push, and unchanged since while it is on the
        // inbox (only a push of this entry writes it).
        let next = link.load(Ordering::Relaxed);
        self.head
            .compare_exchange(index, next, Ordering::AcqRel, Ordering::Relaxed)
            .is_ok()
    }

    /// Takes every entry pushed so far; walk the result with the same link.
    pub(crate) fn take_all(&self) -> Index {
        if self.head.load(Ordering::Relaxed) == NIL {
            return NIL;
        }
        self.head.swap(NIL, Ordering::Acquire)
    }

    /// Whether the inbox is empty: the driver's side of the handshake. A read-modify-write
    /// (that changes nothing), so that it is ordered with every push in the head's
    /// modification order: either it sees a push, or the push sees what the driver
    /// published before calling this (Release).
    pub(crate) fn check(&self) -> bool {
        self.head.read_modify(Ordering::AcqRel) == NIL
    }
}
