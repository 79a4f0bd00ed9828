//! The first entry of every slot list, and which slots are non-empty.
//!
//! * The storage chooses the heads' [`IndexWidth`] (`u8`, `u16`, `u32`) and the number of
//!   levels (2 to 6): [`Fixed`](crate::Fixed)'s second and third parameters.
//! * Each level has 64 heads, stored as `index + 1` (`NIL` is 0), and a 64-bit bitmap.
//! * Only the driver role's holder touches them: [`Table`]'s methods are `unsafe`.

use crate::sync::UnsafeCell;
use crate::wheel::link::Index;

/// The most levels a wheel has, and the default.
pub(crate) const MAX_LEVELS: usize = 6;
/// Slots per level: `1 << SLOT_BITS`.
pub(crate) const SLOT_BITS: u32 = 6;
pub(crate) const SLOTS: usize = 1 << SLOT_BITS;

/// The width of a [`Fixed`](crate::Fixed) storage's slot heads: `u8`, `u16` or `u32`.
pub trait IndexWidth: width::Width {}

impl IndexWidth for u8 {}
impl IndexWidth for u16 {}
impl IndexWidth for u32 {}

pub(crate) mod width {
    use crate::wheel::link::Index;

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

/// The slot heads of `L` levels at width `W`, with their occupancy bitmaps. Public only
/// to name it in [`Storage`](crate::Storage)'s sealed methods.
pub struct Heads<W, const L: usize> {
    heads: UnsafeCell<[[W; SLOTS]; L]>,
    /// Bit `s` of word `l`: slot `s` of level `l` is non-empty.
    occupied: UnsafeCell<[u64; L]>,
}

// SAFETY: only the driver role's holder touches them (`Table`'s contract), serialised by
// the role word's Acquire and Release.
unsafe impl<W: Send, const L: usize> Sync for Heads<W, L> {}

/// What the levels need of a storage's heads (sealed: only [`Heads`]).
pub trait Table: Sync {
    /// How many levels of 64 slots the wheel has.
    const LEVELS: usize;

    /// The first entry of slot `slot` of level `level` (`NIL`: empty).
    ///
    /// # Safety
    ///
    /// * The caller holds the driver role.
    unsafe fn get(&self, level: usize, slot: usize) -> Index;

    /// Makes `index` the first entry of slot `slot` of level `level`.
    ///
    /// # Safety
    ///
    /// * The caller holds the driver role.
    unsafe fn set(&self, level: usize, slot: usize, index: Index);

    /// The occupancy bitmap of level `level` (bit `s`: slot `s` is non-empty).
    ///
    /// # Safety
    ///
    /// * The caller holds the driver role.
    unsafe fn occupied(&self, level: usize) -> u64;

    /// Sets the occupancy bitmap of level `level`.
    ///
    /// # Safety
    ///
    /// * The caller holds the driver role.
    unsafe fn set_occupied(&self, level: usize, bits: u64);
}

impl<W: width::Width, const L: usize> Heads<W, L> {
    /// A level count out of range fails to compile.
    const CHECK: () = assert!(
        L >= 2 && L <= MAX_LEVELS,
        "a wheel has 2 to 6 levels of 64 slots"
    );

    /// Every slot empty: all zero bytes.
    #[cfg(not(punctual_loom))]
    pub(crate) const fn new() -> Self {
        #[allow(clippy::let_unit_value)]
        let () = Self::CHECK;
        Self {
            // SAFETY: `W` is `u8`, `u16` or `u32` (sealed): zero bytes are 0, packed `NIL`.
            heads: UnsafeCell::new(unsafe { core::mem::zeroed() }),
            occupied: UnsafeCell::new([0; L]),
        }
    }

    #[cfg(punctual_loom)]
    pub(crate) fn new() -> Self {
        #[allow(clippy::let_unit_value)]
        let () = Self::CHECK;
        Self {
            // SAFETY: as above.
            heads: UnsafeCell::new(unsafe { core::mem::zeroed() }),
            occupied: UnsafeCell::new([0; L]),
        }
    }
}

impl<W: width::Width, const L: usize> Table for Heads<W, L> {
    const LEVELS: usize = L;

    #[inline]
    unsafe fn get(&self, level: usize, slot: usize) -> Index {
        // SAFETY: the caller holds the role.
        self.heads
            .with(|heads| unsafe { (*heads)[level][slot] })
            .unpack()
    }

    #[inline]
    unsafe fn set(&self, level: usize, slot: usize, index: Index) {
        // SAFETY: as above.
        self.heads
            .with_mut(|heads| unsafe { (*heads)[level][slot] = W::pack(index) });
    }

    #[inline]
    unsafe fn occupied(&self, level: usize) -> u64 {
        // SAFETY: as above.
        self.occupied.with(|bits| unsafe { (*bits)[level] })
    }

    #[inline]
    unsafe fn set_occupied(&self, level: usize, bits: u64) {
        // SAFETY: as above.
        self.occupied
            .with_mut(|occupied| unsafe { (*occupied)[level] = bits });
    }
}

impl<W, const L: usize> core::fmt::Debug for Heads<W, L> {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.debug_struct("Heads")
            .field("width", &core::mem::size_of::<W>())
            .field("levels", &L)
            .finish_non_exhaustive()
    }
}

#[cfg(test)]
mod tests {
    use super::width::Width;
    use crate::wheel::link::NIL;

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
