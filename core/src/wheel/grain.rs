//! The unit of a level-0 slot's offset bound: a grain of `2^s` nanoseconds.
//!
//! * A bound is 16 bits of grains; `s` is the least shift that fits a whole tick's offset
//!   (saturating at `u32::MAX` ns, so `s ≤ 16`): 1 ns up to a 65 µs tick, 16 ns at 1 ms.
//! * Offsets round *up*, to at most a grain above. The tick's last grain, [`NO_BOUND`],
//!   counts as none: such entries fire at the slot's tick, less than a grain later.

/// A bound of [`NO_BOUND`] grains means none.
#[cfg(feature = "sub-tick")]
pub(super) const NO_BOUND: u16 = u16::MAX;

/// A grain, set from the wheel's tick at the start of each turn.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Grain {
    shift: u8,
}

impl Grain {
    /// Nanoseconds, all zero bytes; no turn uses it.
    pub(crate) const NANOS: Self = Self { shift: 0 };

    /// The grain of a wheel whose tick is `tick_nanos` ns.
    #[inline]
    pub(crate) fn of_tick(tick_nanos: u64) -> Self {
        let longest = tick_nanos.min(u64::from(u32::MAX));
        Self {
            shift: (u64::BITS - longest.leading_zeros()).saturating_sub(u16::BITS) as u8,
        }
    }

    /// `offset` in grains, rounded up, at most [`NO_BOUND`].
    #[cfg(feature = "sub-tick")]
    #[inline]
    pub(super) fn up(self, offset: u32) -> u16 {
        let grains = (u64::from(offset) + (1 << self.shift) - 1) >> self.shift;
        grains.min(u64::from(NO_BOUND)) as u16
    }

    /// One grain in nanoseconds.
    #[inline]
    pub(crate) fn unit(self) -> u32 {
        1 << self.shift
    }

    /// `grains` (below [`NO_BOUND`]) in nanoseconds.
    #[cfg(feature = "sub-tick")]
    #[inline]
    pub(super) fn nanos(self, grains: u16) -> u32 {
        u32::from(grains) << self.shift
    }
}

#[cfg(all(test, feature = "sub-tick"))]
mod tests {
    use super::*;

    #[test]
    fn a_grain_fits_a_tick_in_16_bits_rounding_up() {
        // Up to 65 535 ns a tick, grains are nanoseconds.
        let exact = Grain::of_tick(65_535);
        assert_eq!(exact.shift, 0);
        assert_eq!(exact.up(1), 1);
        assert_eq!(exact.up(65_534), 65_534);
        assert_eq!(exact.up(65_535), NO_BOUND, "a whole tick counts as none");
        // 1 ms: 16 ns grains, rounded up, never below the offset.
        let ms = Grain::of_tick(1_000_000);
        assert_eq!(ms.shift, 4);
        assert_eq!(ms.up(1), 1);
        assert_eq!(ms.up(16), 1);
        assert_eq!(ms.up(17), 2);
        assert_eq!(ms.up(1_000_000), 62_500);
        for offset in [1, 15, 16, 17, 999_999, 1_000_000] {
            let back = ms.nanos(ms.up(offset));
            assert!(back >= offset && back - offset < 16, "{offset} -> {back}");
        }
        // Ticks of 4.3 s and more: offsets saturate at u32::MAX, which is none.
        let long = Grain::of_tick(10_000_000_000);
        assert_eq!(long.shift, 16);
        assert_eq!(long.up(u32::MAX), NO_BOUND);
        for offset in [1, 65_536, 4_000_000_000, u32::MAX - 65_536] {
            let back = long.nanos(long.up(offset));
            assert!(
                back >= offset && back - offset < 65_536,
                "{offset} -> {back}"
            );
        }
    }
}
