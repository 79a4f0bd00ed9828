//! Division by the wheel's tick with a widening multiply by `m = ⌊(2⁶⁴ − 1) / t⌋`.
//! * `q̂ = ⌊n·m / 2⁶⁴⌋` never exceeds `⌊n / t⌋`, since `m ≤ 2⁶⁴ / t`;
//! * and falls short of it by less than 2: `n / t − n·m / 2⁶⁴ = n·(2⁶⁴/t − m) / 2⁶⁴`, where
//!   `2⁶⁴/t − m < 1 + 1/t ≤ 2` and `n < 2⁶⁴`. So at most two corrections make it exact.

use super::{Reading, Tick};

/// Divides `u64` nanoseconds by a fixed tick.
#[derive(Debug, Clone, Copy)]
pub(crate) struct TickDivisor {
    tick: u64,
    reciprocal: u64,
}

impl TickDivisor {
    /// Panics if `tick` is zero.
    pub(crate) const fn new(tick: u64) -> Self {
        assert!(tick > 0, "punctual: a wheel's tick must be at least 1 ns");
        Self {
            tick,
            reciprocal: u64::MAX / tick,
        }
    }

    /// The tick, in nanoseconds.
    #[inline]
    pub(crate) const fn tick(&self) -> u64 {
        self.tick
    }

    /// `⌊n / tick⌋` and `n mod tick`.
    // Out of line on 32-bit targets, where each copy of the multiply costs flash.
    #[cfg_attr(target_pointer_width = "64", inline)]
    #[cfg_attr(not(target_pointer_width = "64"), inline(never))]
    pub(crate) const fn div_rem(&self, n: u64) -> (u64, u64) {
        let mut q = ((n as u128 * self.reciprocal as u128) >> 64) as u64;
        let mut r = n - q * self.tick;
        // At most two corrections (module docs). Not a loop: with a constant tick, LLVM
        // would turn a loop's exit value back into a 64-bit division.
        if r >= self.tick {
            q += 1;
            r -= self.tick;
        }
        if r >= self.tick {
            q += 1;
            r -= self.tick;
        }
        debug_assert!(r < self.tick);
        (q, r)
    }

    /// The tick a reading falls in: `⌊reading / tick⌋`.
    #[inline]
    pub(crate) const fn floor(&self, reading: Reading) -> Tick {
        Tick(self.div_rem(reading.0).0)
    }

    /// The first tick boundary at or after a reading: `⌈reading / tick⌉`.
    #[inline]
    pub(crate) const fn ceil(&self, reading: Reading) -> Tick {
        let (q, r) = self.div_rem(reading.0);
        Tick(if r == 0 { q } else { q + 1 })
    }

    /// The tick of a deadline due at `due` (`ceil`), and how far into the tick before it
    /// `due` is (a whole tick on a boundary), saturated to `u32` (see `levels`).
    // Out of line on 32-bit targets, where each copy of the multiply costs flash.
    #[cfg_attr(target_pointer_width = "64", inline)]
    #[cfg_attr(not(target_pointer_width = "64"), inline(never))]
    pub(crate) fn tick_of(&self, due: Reading) -> (Tick, u32) {
        let (q, r) = self.div_rem(due.0);
        let (when, offset) = if r == 0 { (q, self.tick) } else { (q + 1, r) };
        (Tick(when), u32::try_from(offset).unwrap_or(u32::MAX))
    }

    /// The reading at which `tick` begins, saturating at [`Reading::END`].
    #[cfg_attr(target_pointer_width = "64", inline)]
    #[cfg_attr(not(target_pointer_width = "64"), inline(never))]
    pub(crate) fn start(&self, tick: Tick) -> Reading {
        Reading(u64::try_from(u128::from(tick.0) * u128::from(self.tick)).unwrap_or(u64::MAX))
    }
}

/// A [`TickDivisor`] XORed with a 1 ms tick's, so that a new wheel of that tick is all zeros.
#[derive(Debug, Clone, Copy)]
pub(crate) struct StoredTick {
    tick: u64,
    reciprocal: u64,
}

impl StoredTick {
    const REFERENCE: TickDivisor = TickDivisor::new(1_000_000);

    pub(crate) const fn new(divisor: TickDivisor) -> Self {
        Self {
            tick: divisor.tick ^ Self::REFERENCE.tick,
            reciprocal: divisor.reciprocal ^ Self::REFERENCE.reciprocal,
        }
    }

    #[inline(always)]
    pub(crate) const fn get(&self) -> TickDivisor {
        TickDivisor {
            tick: self.tick ^ Self::REFERENCE.tick,
            reciprocal: self.reciprocal ^ Self::REFERENCE.reciprocal,
        }
    }

    // The divisions, on the stored form: on 32-bit targets out of line, so that undoing
    // the XOR (four words, two 64-bit constants) is not copied into every caller.

    /// [`TickDivisor::tick`].
    #[inline(always)]
    pub(crate) const fn tick(&self) -> u64 {
        self.tick ^ Self::REFERENCE.tick
    }

    /// [`TickDivisor::floor`].
    #[cfg_attr(target_pointer_width = "64", inline(always))]
    #[cfg_attr(not(target_pointer_width = "64"), inline(never))]
    pub(crate) fn floor(&self, reading: Reading) -> Tick {
        self.get().floor(reading)
    }

    /// [`TickDivisor::ceil`].
    #[cfg_attr(target_pointer_width = "64", inline(always))]
    #[cfg_attr(not(target_pointer_width = "64"), inline(never))]
    pub(crate) fn ceil(&self, reading: Reading) -> Tick {
        self.get().ceil(reading)
    }

    /// [`TickDivisor::tick_of`].
    #[cfg_attr(target_pointer_width = "64", inline(always))]
    #[cfg_attr(not(target_pointer_width = "64"), inline(never))]
    pub(crate) fn tick_of(&self, due: Reading) -> (Tick, u32) {
        self.get().tick_of(due)
    }

    /// [`TickDivisor::start`].
    #[cfg_attr(target_pointer_width = "64", inline(always))]
    #[cfg_attr(not(target_pointer_width = "64"), inline(never))]
    pub(crate) fn start(&self, tick: Tick) -> Reading {
        self.get().start(tick)
    }
}

#[cfg(test)]
mod tests {
    use super::{Reading, StoredTick, TickDivisor};

    #[test]
    fn stored_tick_round_trips_and_1ms_is_zero() {
        for tick in [1, 999_999, 1_000_000, 1_000_001, u64::MAX] {
            let stored = StoredTick::new(TickDivisor::new(tick));
            assert_eq!(stored.get().tick(), tick);
            assert_eq!(
                stored.get().div_rem(u64::MAX - 5),
                ((u64::MAX - 5) / tick, (u64::MAX - 5) % tick)
            );
        }
        let ms = StoredTick::new(TickDivisor::new(1_000_000));
        assert_eq!((ms.tick, ms.reciprocal), (0, 0));
    }

    fn check(tick: u64, n: u64) {
        let d = TickDivisor::new(tick);
        assert_eq!(d.div_rem(n), (n / tick, n % tick), "{n} / {tick}");
        let reading = Reading::from_nanos(n);
        assert_eq!(d.floor(reading).get(), n / tick, "⌊{n} / {tick}⌋");
        assert_eq!(d.ceil(reading).get(), n.div_ceil(tick), "⌈{n} / {tick}⌉");
    }

    #[test]
    fn agrees_with_division_at_the_edges() {
        let ticks = [
            1,
            2,
            3,
            7,
            1_000,
            100_000,
            1_000_000,
            999_999_937,
            u64::MAX / 2,
            u64::MAX - 1,
            u64::MAX,
        ];
        for &tick in &ticks {
            for base in [
                0,
                tick,
                tick.saturating_mul(2),
                u64::MAX / 3,
                u64::MAX - tick,
                u64::MAX,
            ] {
                for delta in [0u64, 1, 2] {
                    check(tick, base.saturating_sub(delta));
                    check(tick, base.saturating_add(delta));
                }
            }
        }
    }

    #[test]
    fn agrees_with_division_on_random_inputs() {
        // xorshift64*: deterministic, no dependency.
        let mut x = 0x9E37_79B9_7F4A_7C15_u64;
        let mut next = || {
            x ^= x >> 12;
            x ^= x << 25;
            x ^= x >> 27;
            x.wrapping_mul(0x2545_F491_4F6C_DD1D)
        };
        let iterations = if cfg!(miri) { 200 } else { 200_000 };
        for _ in 0..iterations {
            let tick = match next() % 3 {
                0 => next() % 10_000_000 + 1,
                1 => next() >> (next() % 64),
                _ => next(),
            }
            .max(1);
            check(tick, next());
            check(tick, next() >> (next() % 64));
        }
    }

    #[test]
    fn tick_starts_saturate() {
        let d = TickDivisor::new(1_000_000);
        assert_eq!(
            d.start(d.floor(Reading::END)),
            Reading::from_nanos(u64::MAX / 1_000_000 * 1_000_000)
        );
        assert_eq!(d.start(super::Tick::new(u64::MAX)), Reading::END);
    }
}
