//! Where a wheel keeps its entries: [`Fixed`] (inline, `no_std`) or [`Growable`].
//!
//! * Entries never move: an index stays valid for the wheel's life.
//! * With shards, entries go out in blocks of whole 128-byte pairs of lines.

use crate::sync::{Padded, padded};
use crate::wheel::entry::{Entry, Index};
use crate::wheel::heads::{Heads, IndexWidth};

pub(crate) mod sealed {
    use crate::wheel::entry::{Entry, Index};
    use crate::wheel::heads::Table;

    /// The entries of a wheel, by index: the sealed part of [`Storage`](crate::Storage).
    pub trait Slab: Sync {
        /// Untouched entries a shard takes at once.
        const FRESH_BLOCK: u32 = 1;

        /// The entry at `index`.
        ///
        /// # Panics
        ///
        /// If `index` was never made usable by [`Slab::reserve`].
        fn entry(&self, index: Index) -> &Entry;

        /// Makes `index` (increasing) usable, allocating if need be; `false` if it cannot.
        fn reserve(&self, index: Index) -> bool;

        /// How many entries are usable now.
        fn usable(&self) -> usize;

        /// The levels' slot heads, at the storage's width and level count.
        type Heads: Table;

        /// How many levels of 64 slots the wheel has (2 to 6).
        const LEVELS: usize = <Self::Heads as Table>::LEVELS;

        /// The levels' slot heads.
        fn heads(&self) -> &Self::Heads;
    }
}

pub(crate) use sealed::Slab;

/// Where a [`Wheel`](crate::Wheel) keeps its entries: [`Fixed`] or [`Growable`].
///
#[cfg_attr(
    not(feature = "alloc"),
    doc = "[`Growable`]: https://docs.rs/punctual-core/latest/punctual_core/struct.Growable.html"
)]
pub trait Storage: Slab {}

/// Where blocks start: a pair of cache lines.
const SEGMENT_ALIGN: usize = 128;

/// Untouched entries a shard takes at once from a large storage (one without shards).
#[cfg(not(punctual_loom))]
const BLOCK: u32 = if crate::wheel::SHARDS > 1 {
    block_of(size_of::<Entry>())
} else {
    1
};
/// A small block, as loom models need.
#[cfg(punctual_loom)]
const BLOCK: u32 = 8;

/// The fewest `size`-byte entries, at least 8, that fill whole pairs of lines.
#[cfg_attr(punctual_loom, allow(dead_code))]
const fn block_of(size: usize) -> u32 {
    let (mut a, mut b) = (size, SEGMENT_ALIGN);
    while b != 0 {
        (a, b) = (b, a % b);
    }
    let pair = SEGMENT_ALIGN / a;
    (pair * 8_usize.div_ceil(pair)) as u32
}

/// A [`Fixed`] storage's block: [`BLOCK`], at most `n / (2·SHARDS)`, at least one.
const fn fixed_block(n: usize) -> u32 {
    let share = n / (2 * crate::wheel::SHARDS);
    if share == 0 {
        1
    } else if share < BLOCK as usize {
        share as u32
    } else {
        BLOCK
    }
}

/// The most entries a wheel holds: an index is half a pointer, less the sentinels.
pub(crate) const MAX_ENTRIES: usize = if usize::BITS >= 64 {
    (u32::MAX - 2) as usize
} else {
    (u16::MAX - 1) as usize
};

/// A fixed-capacity storage of `N` entries, inline in the wheel: no allocation ever.
///
/// `W` is the width of the slot heads: `u32` (default), `u8` (at most 255 entries) or
/// `u16` (at most 65 535). Narrower is smaller (384 heads: 384 bytes as `u8`).
///
/// `L` is the number of levels, 2 to 6 (default): the range is 64<sup>`L`</sup> ticks
/// (2.2 years at 1 ms with 6); beyond it deadlines cost a turn per rotation. For example:
///
/// ```
/// use std::time::Duration;
/// use punctual_core::{Fixed, ManualClock, Wheel};
/// static SMALL: Wheel<ManualClock, Fixed<8, u8, 4>> =
///     Wheel::fixed(ManualClock::new(), Duration::from_millis(1));
/// assert_eq!(SMALL.capacity(), 8);
/// ```
///
/// With all `N` entries in use, further deadlines run *degraded*
/// ([`Deadline`](crate::Deadline)), checking the clock once a tick. A deadline dropped
/// after the driver took its entry in holds it until the driver's next turn. With `std`,
/// threads take entries in blocks (up to 16, at most `N / 16`).
///
/// # Panics
///
/// Constructing a wheel with `N` above 65 534 (32-bit targets) or 2<sup>32</sup> - 3
/// (64-bit), or above what `W` holds (255 for `u8`, 65 535 for `u16`), or with `L`
/// outside 2 to 6, fails at compile time.
// With shards, the entries come first and start on a pair of lines, as blocks assume.
#[cfg_attr(all(feature = "std", not(punctual_loom)), repr(C, align(128)))]
pub struct Fixed<const N: usize, W: IndexWidth = u32, const L: usize = 6> {
    entries: [Entry; N],
    /// Written at each insert: lines of their own with `std`.
    heads: Padded<Heads<W, L>>,
}

impl<const N: usize, W: IndexWidth, const L: usize> Fixed<N, W, L> {
    const CHECK: () = {
        assert!(N <= MAX_ENTRIES, "Fixed<N>: N exceeds the largest wheel");
        assert!(
            N <= W::MAX_ENTRIES,
            "Fixed<N, W>: N exceeds what the index width W holds (u8: 255, u16: 65 535)"
        );
    };

    crate::sync::const_fn! {
        pub(crate) fn new() -> Self {
            #[allow(clippy::let_unit_value)]
            let () = Self::CHECK;
            let entries = crate::sync::array_of![Entry::new(); N];
            Self { entries, heads: padded(Heads::new()) }
        }
    }
}

impl<const N: usize, W: IndexWidth, const L: usize> Slab for Fixed<N, W, L> {
    const FRESH_BLOCK: u32 = fixed_block(N);
    type Heads = Heads<W, L>;

    #[inline]
    fn heads(&self) -> &Heads<W, L> {
        &self.heads
    }

    #[cfg_attr(target_pointer_width = "64", inline)]
    #[cfg_attr(not(target_pointer_width = "64"), inline(never))]
    fn entry(&self, index: Index) -> &Entry {
        &self.entries[index as usize]
    }

    #[inline]
    fn reserve(&self, index: Index) -> bool {
        (index as usize) < N
    }

    fn usable(&self) -> usize {
        N
    }
}

impl<const N: usize, W: IndexWidth, const L: usize> Storage for Fixed<N, W, L> {}

impl<const N: usize, W: IndexWidth, const L: usize> core::fmt::Debug for Fixed<N, W, L> {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.debug_struct("Fixed")
            .field("capacity", &N)
            .field("levels", &L)
            .finish()
    }
}

#[cfg(feature = "alloc")]
pub use growable::Growable;

#[cfg(feature = "alloc")]
mod growable {
    extern crate alloc;

    use alloc::alloc::{alloc, dealloc, handle_alloc_error};
    use core::alloc::Layout;
    use core::ptr;

    use super::{BLOCK, Heads, MAX_ENTRIES, Padded, SEGMENT_ALIGN, Slab, Storage, padded};
    use crate::sync::{AtomicPtr, AtomicUsize, Ordering};
    use crate::wheel::entry::{Entry, Index};

    /// A segment of `len` entries, on a [`SEGMENT_ALIGN`] boundary.
    fn segment_layout(len: usize) -> Layout {
        Layout::array::<Entry>(len)
            .and_then(|layout| layout.align_to(SEGMENT_ALIGN))
            .expect("punctual: a segment's size overflows")
    }

    /// Entries in the first segment; segment `s` holds `FIRST << s`.
    const FIRST: usize = 64;
    /// Enough segments to address `MAX_ENTRIES`.
    const SEGMENTS: usize = (usize::BITS - (MAX_ENTRIES / FIRST).leading_zeros()) as usize + 1;

    /// Storage that grows on demand, in segments that double in size and never move.
    ///
    /// A segment is allocated by the first arm that needs it and installed by CAS; none is
    /// freed before the wheel drops.
    pub struct Growable {
        segments: [AtomicPtr<Entry>; SEGMENTS],
        usable: AtomicUsize,
        /// Written at each insert: lines of their own.
        heads: Padded<GrowableHeads>,
    }

    /// The growable storage's heads: four chains a slot, as its slots may hold thousands
    /// of entries, scattered over its segments.
    type GrowableHeads =
        Heads<u32, { crate::hierarchy::MAX_LEVELS }, 4, { crate::hierarchy::MAX_LEVELS }>;

    /// `(segment, offset)` of an index.
    #[inline]
    fn locate(index: Index) -> (usize, usize) {
        let index = index as usize;
        let n = index / FIRST + 1;
        let segment = (usize::BITS - 1 - n.leading_zeros()) as usize;
        (segment, index - FIRST * ((1 << segment) - 1))
    }

    impl Growable {
        crate::sync::const_fn! {
            pub(crate) fn new() -> Self {
                let segments = crate::sync::array_of![AtomicPtr::new(ptr::null_mut()); SEGMENTS];
                Self { segments, usable: AtomicUsize::new(0), heads: padded(Heads::new()) }
            }
        }
    }

    impl Slab for Growable {
        const FRESH_BLOCK: u32 = BLOCK;
        type Heads = GrowableHeads;

        #[inline]
        fn heads(&self) -> &Self::Heads {
            &self.heads
        }

        #[inline]
        fn entry(&self, index: Index) -> &Entry {
            let (segment, offset) = locate(index);
            let base = self.segments[segment].load(Ordering::Acquire);
            assert!(
                !base.is_null(),
                "punctual: entry {index} of an unallocated segment"
            );
            // SAFETY: a non-null segment holds `FIRST << segment` initialised entries
            // (Release/Acquire), `offset` is below that, and only `drop` frees it.
            unsafe { &*base.add(offset) }
        }

        fn reserve(&self, index: Index) -> bool {
            if index as usize >= MAX_ENTRIES {
                return false;
            }
            let (segment, _) = locate(index);
            if !self.segments[segment].load(Ordering::Acquire).is_null() {
                return true;
            }
            let len = FIRST << segment;
            let layout = segment_layout(len);
            // SAFETY: the layout has a non-zero size (`len >= FIRST` entries).
            let fresh = unsafe { alloc(layout) }.cast::<Entry>();
            if fresh.is_null() {
                handle_alloc_error(layout);
            }
            for offset in 0..len {
                // SAFETY: `offset < len`, within the array allocation just made.
                unsafe { fresh.add(offset).write(Entry::new()) };
            }
            match self.segments[segment].compare_exchange(
                ptr::null_mut(),
                fresh,
                Ordering::AcqRel,
                Ordering::Acquire,
            ) {
                Ok(_) => {
                    self.usable.fetch_add(len, Ordering::Relaxed);
                }
                Err(_) => {
                    // SAFETY: initialised above with `segment_layout(len)`, never published.
                    unsafe { free_segment(fresh, len) };
                }
            }
            true
        }

        fn usable(&self) -> usize {
            self.usable.load(Ordering::Relaxed)
        }
    }

    impl Storage for Growable {}

    /// Drops the `len` entries at `base` and frees their segment.
    ///
    /// # Safety
    ///
    /// * `base` has `len` initialised entries, unused, allocated with `segment_layout(len)`.
    unsafe fn free_segment(base: *mut Entry, len: usize) {
        // SAFETY: the caller's contract.
        unsafe {
            ptr::drop_in_place(ptr::slice_from_raw_parts_mut(base, len));
            dealloc(base.cast(), segment_layout(len));
        }
    }

    impl Drop for Growable {
        fn drop(&mut self) {
            for (segment, slot) in self.segments.iter_mut().enumerate() {
                let base = slot.load(Ordering::Acquire);
                if !base.is_null() {
                    // SAFETY: published by `reserve`, fully initialised; `&mut self`.
                    unsafe { free_segment(base, FIRST << segment) };
                }
            }
        }
    }

    impl core::fmt::Debug for Growable {
        fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
            f.debug_struct("Growable")
                .field("usable", &self.usable.load(Ordering::Relaxed))
                .finish()
        }
    }

    #[cfg(test)]
    mod tests {
        use super::super::block_of;
        use super::*;

        #[test]
        fn a_block_fills_whole_pairs_of_lines() {
            assert_eq!(block_of(40), 16);
            assert_eq!(block_of(48), 8);
            assert_eq!(block_of(64), 8);
            assert_eq!(block_of(200), 16);
            let bytes = BLOCK as usize * size_of::<Entry>();
            assert!(
                crate::wheel::SHARDS == 1 || bytes % SEGMENT_ALIGN == 0,
                "{bytes} bytes"
            );
            // Blocks start on a pair: every segment starts at a multiple of the block.
            assert_eq!(FIRST % BLOCK as usize, 0);
        }

        #[test]
        fn locate_is_contiguous() {
            let mut expected = (0, 0);
            for index in 0..(FIRST * 15) as Index {
                assert_eq!(locate(index), expected, "index {index}");
                expected.1 += 1;
                if expected.1 == FIRST << expected.0 {
                    expected = (expected.0 + 1, 0);
                }
            }
            let (last, _) = locate((MAX_ENTRIES - 1) as Index);
            assert!(last < SEGMENTS);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::wheel::SHARDS;
    use crate::wheel::storage::Slab;

    #[test]
    fn fixed_storage_takes_blocks_only_when_large() {
        assert_eq!(fixed_block(0), 1);
        assert_eq!(fixed_block(2 * SHARDS - 1), 1, "one at a time when small");
        assert_eq!(fixed_block(4 * SHARDS), 2.min(BLOCK));
        assert_eq!(fixed_block(4096), BLOCK, "whole blocks when large");
        assert_eq!(Fixed::<4096>::FRESH_BLOCK, BLOCK);
    }

    #[test]
    fn a_fixed_storage_s_blocks_start_on_pairs_of_lines() {
        let storage = Fixed::<64>::new();
        let first = core::ptr::from_ref(storage.entry(0)) as usize;
        if SHARDS > 1 {
            assert_eq!(first % SEGMENT_ALIGN, 0);
        }
    }
}
