//! Entry indices, stored biased so that a new wheel is all zero bytes (`.bss`).
//!
//! * A [`Link<BIAS>`] holds `index + BIAS`, wrapping: a bijection, so loads, stores and
//!   compare-and-swaps work on stored values unchanged.
//! * [`NIL_ZERO`] (bias 1) stores `NIL` as 0: heads, `slot_next`, `cancel_link`, the
//!   driver's lists. [`UNLINKED_ZERO`] (bias 2) stores `UNLINKED` as 0: `slot_prev`.

use crate::sync::{AtomicU32, Ordering};

/// An entry index. `NIL` ends a list.
pub(crate) type Index = u32;
pub(crate) const NIL: Index = u32::MAX;
/// `slot_prev` of an entry that is on no slot list.
pub(crate) const UNLINKED: Index = u32::MAX - 1;

/// The bias of a link that starts out `NIL`.
pub(crate) const NIL_ZERO: u32 = 1;
/// The bias of a link that starts out `UNLINKED`.
pub(crate) const UNLINKED_ZERO: u32 = 2;

#[inline(always)]
const fn encode<const BIAS: u32>(index: Index) -> u32 {
    index.wrapping_add(BIAS)
}

#[inline(always)]
const fn decode<const BIAS: u32>(stored: u32) -> Index {
    stored.wrapping_sub(BIAS)
}

/// An atomic entry index, stored biased by `BIAS`.
pub(crate) struct Link<const BIAS: u32>(AtomicU32);

impl<const BIAS: u32> Link<BIAS> {
    crate::sync::const_fn! {
        /// A link stored as zero.
        pub(crate) fn new() -> Self {
            Self(AtomicU32::new(0))
        }
    }

    #[inline(always)]
    pub(crate) fn load(&self, order: Ordering) -> Index {
        decode::<BIAS>(self.0.load(order))
    }

    #[inline(always)]
    pub(crate) fn store(&self, index: Index, order: Ordering) {
        self.0.store(encode::<BIAS>(index), order);
    }

    #[inline(always)]
    pub(crate) fn swap(&self, index: Index, order: Ordering) -> Index {
        decode::<BIAS>(self.0.swap(encode::<BIAS>(index), order))
    }

    /// A read-modify-write that changes nothing, ordered with the link's others.
    #[inline(always)]
    pub(crate) fn read_modify(&self, order: Ordering) -> Index {
        decode::<BIAS>(self.0.fetch_or(0, order))
    }

    #[inline(always)]
    pub(crate) fn compare_exchange(
        &self,
        current: Index,
        new: Index,
        success: Ordering,
        failure: Ordering,
    ) -> Result<Index, Index> {
        self.0
            .compare_exchange(
                encode::<BIAS>(current),
                encode::<BIAS>(new),
                success,
                failure,
            )
            .map(decode::<BIAS>)
            .map_err(decode::<BIAS>)
    }

    #[inline(always)]
    pub(crate) fn compare_exchange_weak(
        &self,
        current: Index,
        new: Index,
        success: Ordering,
        failure: Ordering,
    ) -> Result<Index, Index> {
        self.0
            .compare_exchange_weak(
                encode::<BIAS>(current),
                encode::<BIAS>(new),
                success,
                failure,
            )
            .map(decode::<BIAS>)
            .map_err(decode::<BIAS>)
    }
}

/// An entry index owned by the driver, stored as `index + 1`.
#[derive(Clone, Copy)]
pub(crate) struct PlainLink(u32);

impl PlainLink {
    /// `NIL`.
    pub(crate) const NIL: Self = Self(0);

    #[inline(always)]
    pub(crate) const fn get(self) -> Index {
        decode::<NIL_ZERO>(self.0)
    }

    #[inline(always)]
    pub(crate) const fn new(index: Index) -> Self {
        Self(encode::<NIL_ZERO>(index))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::wheel::entry::{NIL, UNLINKED};

    #[test]
    fn zero_bytes_read_as_the_initial_index() {
        assert_eq!(Link::<NIL_ZERO>::new().load(Ordering::Relaxed), NIL);
        assert_eq!(
            Link::<UNLINKED_ZERO>::new().load(Ordering::Relaxed),
            UNLINKED
        );
        assert_eq!(PlainLink::NIL.get(), NIL);
    }

    #[test]
    fn every_index_round_trips() {
        for index in [0, 1, 2, 1000, u32::MAX - 3, UNLINKED, NIL] {
            let next = Link::<NIL_ZERO>::new();
            next.store(index, Ordering::Relaxed);
            assert_eq!(next.load(Ordering::Relaxed), index);
            let prev = Link::<UNLINKED_ZERO>::new();
            prev.store(index, Ordering::Relaxed);
            assert_eq!(prev.load(Ordering::Relaxed), index);
            assert_eq!(PlainLink::new(index).get(), index);
        }
        let link = Link::<NIL_ZERO>::new();
        assert_eq!(
            link.compare_exchange(NIL, 7, Ordering::Relaxed, Ordering::Relaxed),
            Ok(NIL)
        );
        assert_eq!(
            link.compare_exchange(NIL, 8, Ordering::Relaxed, Ordering::Relaxed),
            Err(7)
        );
        assert_eq!(link.swap(NIL, Ordering::Relaxed), 7);
        assert_eq!(link.read_modify(Ordering::Relaxed), NIL);
    }
}
