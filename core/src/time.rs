//! Division by the wheel's tick without a divide instruction.
//!
//! Every arm turns a clock reading into ticks. A 64-bit `div` costs tens of cycles on
//! common x86-64 parts (and a `u128` one, a library call), which is a measurable share of
//! arming a deadline. The tick never changes, so [`TickDivisor`] keeps its reciprocal,
//! `m = ⌊(2⁶⁴ − 1) / t⌋`, and divides with one widening multiply and a correction:
//!
//! * `q̂ = ⌊n·m / 2⁶⁴⌋` never exceeds `⌊n / t⌋`, since `m ≤ 2⁶⁴ / t`;
//! * and falls short of it by less than 2: `n / t − n·m / 2⁶⁴ = n·(2⁶⁴/t − m) / 2⁶⁴`, where
//!   `2⁶⁴/t − m < 1 + 1/t ≤ 2` and `n < 2⁶⁴`.
//!
//! So at most two steps of "while the remainder is at least `t`, add one" make it exact.

use core::time::Duration;

/// Divides `u64` nanoseconds by a fixed tick.
#[derive(Debug, Clone, Copy)]
pub(crate) struct TickDivisor {
    tick: u64,
    reciprocal: u64,
}

impl TickDivisor {
    /// # Panics
    ///
    /// If `tick` is zero.
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
    #[inline]
    pub(crate) const fn div_rem(&self, n: u64) -> (u64, u64) {
        let mut q = ((n as u128 * self.reciprocal as u128) >> 64) as u64;
        let mut r = n - q * self.tick;
        // At most two corrections (module docs).
        while r >= self.tick {
            q += 1;
            r -= self.tick;
        }
        (q, r)
    }

    /// `⌊n / tick⌋`.
    #[inline]
    pub(crate) const fn floor(&self, n: u64) -> u64 {
        self.div_rem(n).0
    }

    /// `⌈n / tick⌉`.
    #[inline]
    pub(crate) const fn ceil(&self, n: u64) -> u64 {
        let (q, r) = self.div_rem(n);
        if r == 0 { q } else { q + 1 }
    }

    /// `⌊n / tick⌋` for a `u128` (a `Duration`'s nanoseconds), saturating at `u64::MAX`.
    #[inline]
    pub(crate) fn floor_u128(&self, n: u128) -> u64 {
        match u64::try_from(n) {
            Ok(n) => self.floor(n),
            Err(_) => (n / self.tick as u128).min(u64::MAX as u128) as u64,
        }
    }
}

/// What limits a deadline: a duration from its first poll, or an instant on the wheel's
/// clock (a reading of [`Clock::now`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Limit {
    /// Ends this long after the inner future first returns `Pending`.
    After(Duration),
    /// Ends when the wheel's clock reads this.
    At(Duration),
}

/// `d` in nanoseconds, if that fits a `u64` (below about 584 years).
#[inline]
pub(crate) fn nanos_u64(d: Duration) -> Option<u64> {
    d.as_secs()
        .checked_mul(1_000_000_000)?
        .checked_add(u64::from(d.subsec_nanos()))
}

/// A span of `u64::MAX` nanoseconds or more: beyond any clock reading (about 584 years),
/// so it never ends (as `Duration::MAX`).
pub(crate) const BEYOND: u64 = u64::MAX;

/// `d` in saturated nanoseconds (a `Duration` is 16 bytes; a deadline keeps 8).
pub(crate) const fn span_of(d: Duration) -> u64 {
    let nanos = d.as_nanos();
    if nanos >= BEYOND as u128 {
        BEYOND
    } else {
        nanos as u64
    }
}

/// The `Duration` a span stands for.
pub(crate) const fn duration_of(span: u64) -> Duration {
    if span == BEYOND {
        Duration::MAX
    } else {
        Duration::from_nanos(span)
    }
}

#[cfg(test)]
mod tests {
    use super::TickDivisor;

    fn check(tick: u64, n: u64) {
        let d = TickDivisor::new(tick);
        assert_eq!(d.div_rem(n), (n / tick, n % tick), "{n} / {tick}");
        assert_eq!(d.ceil(n), n.div_ceil(tick), "⌈{n} / {tick}⌉");
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
    fn wide_readings_saturate() {
        let d = TickDivisor::new(1_000_000);
        assert_eq!(d.floor_u128(u128::MAX), u64::MAX);
        assert_eq!(
            d.floor_u128(u64::MAX as u128 + 1),
            (u64::MAX as u128 + 1).div_euclid(1_000_000) as u64
        );
        assert_eq!(
            TickDivisor::new(1).floor_u128(u64::MAX as u128 + 5),
            u64::MAX
        );
    }
}
