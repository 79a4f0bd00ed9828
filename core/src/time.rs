//! Time as the core counts it, and every conversion between its units.
//! * Only this module turns nanoseconds into ticks, a `Duration` into a reading, or back.
//! * Conversions to readings saturate at [`Reading::END`]; a limit that reaches it never
//!   ends, though a clock may read it.
//! * A reading falls in the tick of its floor; a deadline's tick is the first boundary at
//!   or after it ([`TickDivisor`]).
//! * A *span* is a duration as a deadline keeps it, `u64` nanoseconds; [`BEYOND`] never ends.
//!
//! # Dividing by the tick: a widening multiply by `m = ⌊(2⁶⁴ − 1) / t⌋`.
//! * `q̂ = ⌊n·m / 2⁶⁴⌋` never exceeds `⌊n / t⌋`, since `m ≤ 2⁶⁴ / t`;
//! * and falls short of it by less than 2: `n / t − n·m / 2⁶⁴ = n·(2⁶⁴/t − m) / 2⁶⁴`, where
//!   `2⁶⁴/t − m < 1 + 1/t ≤ 2` and `n < 2⁶⁴`. So at most two corrections make it exact.

use core::fmt;
use core::ops::{Add, Sub};
use core::time::Duration;

/// An instant on a wheel's clock: nanoseconds since the clock's origin. Compare it only
/// with readings of the same clock. Arithmetic saturates at [`Reading::ZERO`] and
/// [`Reading::END`].
///
/// # Examples
///
/// ```
/// use core::time::Duration;
/// use punctual_core::{Fixed, ManualClock, Reading, Wheel};
///
/// let wheel: Wheel<ManualClock, Fixed<4>> = Wheel::fixed(ManualClock::new(), Duration::from_millis(1));
/// let at = wheel.now() + Duration::from_millis(5);
/// assert_eq!(at, Reading::from_nanos(5_000_000));
/// assert_eq!(at - wheel.now(), Duration::from_millis(5));
/// let sleep = wheel.sleep_until(at);
/// # drop(sleep);
/// ```
#[derive(Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Default)]
pub struct Reading(u64);

impl Reading {
    /// The clock's origin.
    pub const ZERO: Self = Self(0);

    /// `u64::MAX` ns (about 584 years): the last reading a clock may give; as a limit, never.
    pub const END: Self = Self(u64::MAX);

    /// The reading `nanos` nanoseconds after the origin.
    #[inline]
    pub const fn from_nanos(nanos: u64) -> Self {
        Self(nanos)
    }

    /// The reading of [`Clock::now`](crate::Clock::now)'s `elapsed`, saturating.
    #[inline(always)]
    pub const fn since_origin(elapsed: Duration) -> Self {
        match elapsed.as_secs().checked_mul(1_000_000_000) {
            Some(nanos) => match nanos.checked_add(elapsed.subsec_nanos() as u64) {
                Some(nanos) => Self(nanos),
                None => Self::END,
            },
            None => Self::END,
        }
    }

    /// Nanoseconds since the origin.
    #[inline]
    pub const fn as_nanos(self) -> u64 {
        self.0
    }

    /// The time since the origin; [`Reading::END`] as `Duration::MAX`, so that
    /// `since_origin` round-trips.
    #[inline]
    pub const fn as_duration(self) -> Duration {
        if self.0 == u64::MAX {
            Duration::MAX
        } else {
            nanos_to_duration(self.0)
        }
    }

    /// `self + by`, or `None` past [`Reading::END`].
    #[inline]
    pub const fn checked_add(self, by: Duration) -> Option<Self> {
        let Self(by) = Self::since_origin(by);
        match self.0.checked_add(by) {
            Some(nanos) if nanos != u64::MAX => Some(Self(nanos)),
            _ => None,
        }
    }

    /// The time from `earlier` to `self`, zero if `earlier` is later.
    #[inline]
    pub const fn saturating_duration_since(self, earlier: Self) -> Duration {
        nanos_to_duration(self.0.saturating_sub(earlier.0))
    }

    /// `self + span` ns, saturating.
    #[inline]
    pub(crate) const fn after(self, span: u64) -> Self {
        Self(self.0.saturating_add(span))
    }

    /// `self - span` ns, saturating.
    #[inline]
    pub(crate) const fn before(self, span: u64) -> Self {
        Self(self.0.saturating_sub(span))
    }
}

/// Saturates at [`Reading::END`].
impl Add<Duration> for Reading {
    type Output = Self;

    #[inline]
    fn add(self, by: Duration) -> Self {
        self.after(Self::since_origin(by).0)
    }
}

/// Saturates at [`Reading::ZERO`].
impl Sub<Duration> for Reading {
    type Output = Self;

    #[inline]
    fn sub(self, by: Duration) -> Self {
        Self(self.0.saturating_sub(Self::since_origin(by).0))
    }
}

/// Zero if `earlier` is later ([`Reading::saturating_duration_since`]).
impl Sub for Reading {
    type Output = Duration;

    #[inline]
    fn sub(self, earlier: Self) -> Duration {
        self.saturating_duration_since(earlier)
    }
}

impl fmt::Debug for Reading {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if *self == Self::END {
            f.write_str("Reading::END")
        } else {
            write!(f, "Reading({:?})", self.as_duration())
        }
    }
}

/// A count of a wheel's ticks since its clock's origin.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub(crate) struct Tick(u64);

impl Tick {
    /// No turn planned (idle): past any tick a turn reaches.
    pub(crate) const IDLE: Self = Self(u64::MAX);

    #[inline]
    pub(crate) const fn new(tick: u64) -> Self {
        Self(tick)
    }

    /// The count, for the levels' slot arithmetic.
    #[inline]
    pub(crate) const fn get(self) -> u64 {
        self.0
    }

    /// `n` ticks later, saturating.
    #[inline]
    pub(crate) const fn after(self, n: u64) -> Self {
        Self(self.0.saturating_add(n))
    }
}

/// What limits a deadline.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Limit {
    /// Ends this long after the inner future first returns `Pending`.
    After(Duration),
    /// Ends when the wheel's clock reads this.
    At(Reading),
}

/// A [`Limit`] as a timer hands it to the wheel: a span from the start, or an instant.
/// `pub` only for [`RawWheel`](crate::RawWheel); not exported.
#[doc(hidden)]
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Due {
    After(u64),
    At(Reading),
}

impl From<Limit> for Due {
    #[inline]
    fn from(limit: Limit) -> Self {
        match limit {
            Limit::After(duration) => Self::After(span_of(duration)),
            Limit::At(at) => Self::At(at),
        }
    }
}

/// A span of `u64::MAX` ns or more: beyond any reading, so it never ends.
pub(crate) const BEYOND: u64 = u64::MAX;

/// `d` in saturated nanoseconds.
#[inline(always)]
pub(crate) const fn span_of(d: Duration) -> u64 {
    Reading::since_origin(d).0
}

/// The `Duration` a span stands for ([`BEYOND`]: `Duration::MAX`).
pub(crate) const fn duration_of(span: u64) -> Duration {
    Reading(span).as_duration()
}

/// `Duration::from_nanos(nanos)`, its seconds by a multiply with the reciprocal of 10⁹
/// rather than a 64-bit division (a library call of about 900 bytes on 32-bit targets).
#[cfg_attr(target_pointer_width = "64", inline)]
#[cfg_attr(not(target_pointer_width = "64"), inline(never))]
pub(crate) const fn nanos_to_duration(nanos: u64) -> Duration {
    const SECOND: TickDivisor = TickDivisor::new(1_000_000_000);
    let (secs, subsec) = SECOND.div_rem(nanos);
    // `subsec < 10⁹`: no carry into the seconds.
    Duration::new(secs, subsec as u32)
}

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
        // At most two corrections ("Dividing by the tick"). Not a loop: with a constant tick, LLVM
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

/// `TickDivisor`'s methods, on the stored form: on 32-bit targets out of line, so that
/// undoing the XOR (four words, two 64-bit constants) is not copied into every caller.
macro_rules! stored {
    ($($name:ident($arg:ident: $ty:ty) -> $out:ty;)*) => {$(
        #[cfg_attr(target_pointer_width = "64", inline(always))]
        #[cfg_attr(not(target_pointer_width = "64"), inline(never))]
        pub(crate) fn $name(&self, $arg: $ty) -> $out {
            self.get().$name($arg)
        }
    )*};
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

    #[inline(always)]
    pub(crate) const fn tick(&self) -> u64 {
        self.tick ^ Self::REFERENCE.tick
    }

    stored! {
        floor(reading: Reading) -> Tick;
        ceil(reading: Reading) -> Tick;
        tick_of(due: Reading) -> (Tick, u32);
        start(tick: Tick) -> Reading;
    }
}

#[cfg(test)]
mod tests {
    use core::time::Duration;

    use super::{Reading, nanos_to_duration};

    /// The reciprocal's seconds agree with `Duration::from_nanos` at the edges and between.
    #[test]
    fn nanos_to_duration_is_from_nanos() {
        let second = 1_000_000_000u64;
        let check = |n: u64| assert_eq!(nanos_to_duration(n), Duration::from_nanos(n), "{n} ns");
        for n in [0, 1, second - 1, second, second + 1, u64::MAX - 1, u64::MAX] {
            check(n);
        }
        for k in [2u64, 3, 59, 3_600, 86_400, u64::MAX / second] {
            for d in [0, 1] {
                check((k * second).saturating_sub(d));
                check((k * second).saturating_add(d));
            }
        }
        // xorshift64*: deterministic, no dependency.
        let mut x = 0x2545_F491_4F6C_DD1D_u64;
        let iterations = if cfg!(miri) { 100 } else { 100_000 };
        for _ in 0..iterations {
            x ^= x >> 12;
            x ^= x << 25;
            x ^= x >> 27;
            let n = x.wrapping_mul(0x9E37_79B9_7F4A_7C15);
            check(n);
            check(n >> (n % 64));
        }
        assert_eq!(Reading::END.as_duration(), Duration::MAX);
        assert_eq!(
            Reading::from_nanos(5).saturating_duration_since(Reading::from_nanos(2)),
            Duration::from_nanos(3)
        );
    }
}

#[cfg(test)]
mod divisor_tests {
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
