//! The first entry of every slot list, and which slots are non-empty. Only the driver
//! role's holder touches them: [`Table`]'s methods are `unsafe`.
//!
//! * The storage chooses the heads' [`IndexWidth`] and the number of levels (2 to 6):
//!   [`Fixed`](crate::Fixed)'s second and third parameters. A head stores `index + 1`.
//! * A slot is `K` chains: 1 but for the growable storage (4: a walk keeps `K` misses in
//!   flight). Then a slot counts its inserts (wrapping) since it was last taken: insert
//!   `n` goes on chain `n % K`, so a walk from the last insert's chain down meets the
//!   entries last in first out.

use crate::hierarchy::{MAX_LEVELS, SLOTS};
use crate::sync::UnsafeCell;
use crate::wheel::entry::Index;

/// The most chains a slot has.
pub(crate) const MAX_CHAINS: usize = 4;

/// The width of a [`Fixed`](crate::Fixed) storage's slot heads: `u8`, `u16` or `u32`.
pub trait IndexWidth: width::Width {}

impl IndexWidth for u8 {}
impl IndexWidth for u16 {}
impl IndexWidth for u32 {}

pub(crate) mod width {
    use crate::wheel::entry::Index;

    /// How an index is kept at a width (sealed).
    pub trait Width: Copy + Send + Sync + 'static {
        /// The most entries a storage may hold at this width.
        const MAX_ENTRIES: usize;
        /// Stored `index + 1` (wrapping, so `NIL` is 0), truncated.
        fn pack(index: Index) -> Self;
        /// The index `pack` stored.
        fn unpack(self) -> Index;
    }

    macro_rules! width {
        ($($t:ty),*) => {$(
            impl Width for $t {
                const MAX_ENTRIES: usize = <$t>::MAX as usize;

                #[inline(always)]
                fn pack(index: Index) -> Self {
                    debug_assert!(
                        index.wrapping_add(1) as u64 <= <$t>::MAX as u64,
                        "an index wider than the storage's heads"
                    );
                    index.wrapping_add(1) as $t
                }

                #[inline(always)]
                fn unpack(self) -> Index {
                    (self as Index).wrapping_sub(1)
                }
            }
        )*};
    }
    width!(u8, u16, u32);
}

/// The slot heads of `L` levels at width `W`, `K` chains a slot, with their occupancy
/// bitmaps and, on `CL` levels (`L` with `K > 1`, else none), insert counts. Public only
/// to name it in [`Storage`](crate::Storage)'s sealed methods.
pub struct Heads<W, const L: usize, const K: usize = 1, const CL: usize = 0> {
    heads: UnsafeCell<[[[W; K]; SLOTS]; L]>,
    /// Bit `s` of word `l`: slot `s` of level `l` is non-empty.
    occupied: UnsafeCell<[u64; L]>,
    /// Inserts per slot since it was last taken, wrapping.
    inserts: UnsafeCell<[[u8; SLOTS]; CL]>,
}

// SAFETY: only the driver role's holder touches them (`Table`'s contract), serialised by
// the role word's Acquire and Release.
unsafe impl<W: Send, const L: usize, const K: usize, const CL: usize> Sync for Heads<W, L, K, CL> {}

/// What the levels need of a storage's heads (sealed: only [`Heads`]). Every method is
/// `unsafe`: its caller must hold the driver role.
pub trait Table: Sync {
    /// How many levels of 64 slots the wheel has.
    const LEVELS: usize;
    /// How many chains a slot has (1 to [`MAX_CHAINS`]).
    const CHAINS: usize;
    /// The first entry of each chain of a slot: `[Index; CHAINS]`.
    type Chains: Copy + AsRef<[Index]> + AsMut<[Index]> + IntoIterator<Item = Index>;

    /// The first entry of each chain of slot `slot` of level `level` (`NIL`: empty).
    unsafe fn chains(&self, level: usize, slot: usize) -> Self::Chains;

    /// Makes `index` the first entry of chain `chain` of slot `slot` of level `level`.
    unsafe fn set(&self, level: usize, slot: usize, chain: usize, index: Index);

    /// The chain that an entry put in slot `slot` of level `level` now goes on; counts it.
    unsafe fn insert_chain(&self, level: usize, slot: usize) -> usize;

    /// The chain of the last entry put in slot `slot` of level `level` (a walk starts there).
    unsafe fn last_chain(&self, level: usize, slot: usize) -> usize;

    /// Forgets the inserts into slot `slot` of level `level`, as it is emptied.
    unsafe fn forget_inserts(&self, level: usize, slot: usize);

    /// The occupancy bitmap of level `level` (bit `s`: slot `s` is non-empty).
    unsafe fn occupied(&self, level: usize) -> u64;

    /// Marks slot `slot` of level `level` non-empty or empty in its bitmap.
    unsafe fn mark(&self, level: usize, slot: usize, occupied: bool);
}

impl<W: width::Width, const L: usize, const K: usize, const CL: usize> Heads<W, L, K, CL> {
    /// A level or chain count out of range fails to compile.
    const CHECK: () = {
        assert!(
            L >= 2 && L <= MAX_LEVELS,
            "a wheel has 2 to 6 levels of 64 slots"
        );
        assert!(K.is_power_of_two() && K <= MAX_CHAINS, "1, 2 or 4 chains");
        assert!(K == 1 || CL == L, "more than one chain needs insert counts");
    };

    crate::sync::const_fn! {
        /// Every slot empty: all zero bytes.
        pub(crate) fn new() -> Self {
            #[allow(clippy::let_unit_value)]
            let () = Self::CHECK;
            Self {
                // SAFETY: `W` is `u8`, `u16` or `u32` (sealed): zero bytes are 0, packed `NIL`.
                heads: UnsafeCell::new(unsafe { core::mem::zeroed() }),
                occupied: UnsafeCell::new([0; L]),
                inserts: UnsafeCell::new([[0; SLOTS]; CL]),
            }
        }
    }
}

impl<W: width::Width, const L: usize, const K: usize, const CL: usize> Table
    for Heads<W, L, K, CL>
{
    const LEVELS: usize = L;
    const CHAINS: usize = K;
    type Chains = [Index; K];

    #[inline]
    unsafe fn chains(&self, level: usize, slot: usize) -> [Index; K] {
        // SAFETY: the caller holds the role.
        self.heads
            .with(|heads| unsafe { (*heads)[level][slot] })
            .map(W::unpack)
    }

    #[inline]
    unsafe fn set(&self, level: usize, slot: usize, chain: usize, index: Index) {
        // SAFETY: as above.
        self.heads
            .with_mut(|heads| unsafe { (*heads)[level][slot][chain] = W::pack(index) });
    }

    #[inline]
    unsafe fn insert_chain(&self, level: usize, slot: usize) -> usize {
        if K == 1 {
            return 0;
        }
        // SAFETY: as above.
        self.inserts.with_mut(|inserts| unsafe {
            let before = (*inserts)[level][slot];
            (*inserts)[level][slot] = before.wrapping_add(1);
            usize::from(before) & (K - 1)
        })
    }

    #[inline]
    unsafe fn last_chain(&self, level: usize, slot: usize) -> usize {
        if K == 1 {
            return 0;
        }
        // SAFETY: as above.
        let count = self
            .inserts
            .with(|inserts| unsafe { (*inserts)[level][slot] });
        usize::from(count).wrapping_sub(1) & (K - 1)
    }

    #[inline]
    unsafe fn forget_inserts(&self, level: usize, slot: usize) {
        if K > 1 {
            // SAFETY: as above.
            self.inserts
                .with_mut(|inserts| unsafe { (*inserts)[level][slot] = 0 });
        }
    }

    #[inline]
    unsafe fn occupied(&self, level: usize) -> u64 {
        // SAFETY: as above.
        self.occupied.with(|bits| unsafe { (*bits)[level] })
    }

    #[inline]
    unsafe fn mark(&self, level: usize, slot: usize, occupied: bool) {
        // SAFETY: as above.
        self.occupied.with_mut(|bits| unsafe {
            let bits = &mut (*bits)[level];
            *bits = (*bits & !(1 << slot)) | u64::from(occupied) << slot;
        });
    }
}

impl<W, const L: usize, const K: usize, const CL: usize> core::fmt::Debug for Heads<W, L, K, CL> {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.debug_struct("Heads")
            .field("width", &core::mem::size_of::<W>())
            .field("levels", &L)
            .field("chains", &K)
            .finish_non_exhaustive()
    }
}

#[cfg(test)]
mod tests {
    use super::width::Width;
    use crate::wheel::entry::NIL;

    #[test]
    fn every_width_stores_nil_as_zero_and_max_index() {
        assert_eq!(0u8.unpack(), NIL);
        assert_eq!(0u16.unpack(), NIL);
        assert_eq!(0u32.unpack(), NIL);
        assert_eq!(u8::pack(NIL), 0);
        for index in [0, 7, 254] {
            assert_eq!(u8::pack(index).unpack(), index);
        }
        for index in [0, 255, 65_534] {
            assert_eq!(u16::pack(index).unpack(), index);
        }
        for index in [0, 65_535, u32::MAX - 3] {
            assert_eq!(u32::pack(index).unpack(), index);
        }
    }
}
