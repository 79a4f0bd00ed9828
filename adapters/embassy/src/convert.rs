//! Conversions between embassy ticks and readings, which keep deadlines from ending early:
//! ticks to a reading round **down**, a reading to ticks rounds **up**, and [`RESOLUTION`]
//! covers all a reading can lag the true time by. They take the rate `hz`, so host tests
//! cover every rate.

use core::time::Duration;

use punctual_core::Reading;

const NANOS_PER_SEC: u64 = 1_000_000_000;

const fn gcd(a: u64, b: u64) -> u64 {
    if b == 0 { a } else { gcd(b, a % b) }
}

/// Nanoseconds per tick at `hz` if whole (1 kHz, 1 MHz...): conversions then need no
/// 64-bit division call on a 32-bit target. `None` otherwise (32 768 Hz...).
const fn whole_nanos_per_tick(hz: u64) -> Option<u64> {
    if NANOS_PER_SEC % hz == 0 {
        Some(NANOS_PER_SEC / hz)
    } else {
        None
    }
}

/// [`reading_of_ticks`] in nanoseconds, saturating at `u64::MAX` (`Reading::END`).
#[inline(always)]
pub(crate) const fn reading_nanos_of_ticks(ticks: u64, hz: u64) -> u64 {
    match whole_nanos_per_tick(hz) {
        Some(per_tick) => ticks.saturating_mul(per_tick),
        None => Reading::since_origin(reading_of_ticks(ticks, hz)).as_nanos(),
    }
}

/// [`ticks_at_or_after`] of a reading in nanoseconds; `u64::MAX` (`Reading::END`) stays.
#[inline(always)]
pub(crate) const fn ticks_at_or_after_nanos(nanos: u64, hz: u64) -> u64 {
    if nanos == u64::MAX {
        return u64::MAX;
    }
    match whole_nanos_per_tick(hz) {
        Some(per_tick) => div_ceil(nanos, per_tick),
        None => ticks_at_or_after(Duration::from_nanos(nanos), hz),
    }
}

/// `⌈n / d⌉` by a widening multiply with `m = ⌊(2⁶⁴ − 1) / d⌋`, folded when `d` is a
/// constant: `⌊n·m / 2⁶⁴⌋` falls short of `⌊n / d⌋` by less than 2, so at most two
/// corrections make it exact (the core's tick division does the same).
#[inline(always)]
const fn div_ceil(n: u64, d: u64) -> u64 {
    let reciprocal = u64::MAX / d;
    let mut q = ((n as u128 * reciprocal as u128) >> 64) as u64;
    let mut r = n - q * d;
    // Not a loop: LLVM would turn a loop's exit value back into a division.
    if r >= d {
        q += 1;
        r -= d;
    }
    if r >= d {
        q += 1;
        r -= d;
    }
    if r == 0 { q } else { q + 1 }
}

/// The clock reading of tick `ticks` at `hz` ticks a second: `ticks / hz` seconds, rounded
/// down to a whole nanosecond. Never overflows.
pub(crate) const fn reading_of_ticks(ticks: u64, hz: u64) -> Duration {
    let secs = ticks / hz;
    // `rem < hz <= u64::MAX / 10^9` (asserted below): the product fits.
    let rem = ticks % hz;
    let nanos = rem * NANOS_PER_SEC / hz;
    Duration::new(secs, nanos as u32)
}

/// The first tick whose reading is at or after `reading`, at `hz` ticks a second:
/// `reading * hz` rounded up. `u64::MAX` (never, in practice) when it does not fit.
pub(crate) const fn ticks_at_or_after(reading: Duration, hz: u64) -> u64 {
    let whole = reading.as_secs().saturating_mul(hz);
    // `subsec_nanos < 10^9` and `hz <= u64::MAX / 10^9`: the product fits.
    let part = (reading.subsec_nanos() as u64 * hz).div_ceil(NANOS_PER_SEC);
    whole.saturating_add(part)
}

/// How far a reading of a floored tick counter can lag the true time, at `hz`: less than one
/// tick for the counter, plus what rounding the tick's reading down to a nanosecond loses.
///
/// With `g = gcd(10^9, hz)`, a tick is `m / q` ns (`m = 10^9 / g`, `q = hz / g`, in lowest
/// terms), and a reading loses at most `(q - 1) / q` ns to the rounding, so the lag is below
/// `(m + q - 1) / q` ns; this is that, rounded up. When a tick is a whole number of
/// nanoseconds (`q = 1`), it is exactly one tick.
pub(crate) const fn resolution_nanos(hz: u64) -> u64 {
    let g = gcd(NANOS_PER_SEC, hz);
    let (m, q) = (NANOS_PER_SEC / g, hz / g);
    (m + q - 1).div_ceil(q)
}

/// The wheel tick recommended at `hz`: the shortest whole number of embassy ticks that is
/// a whole number of nanoseconds and at least 1 ms.
pub(crate) const fn recommended_tick_nanos(hz: u64) -> u64 {
    // The shortest whole number of ticks that is a whole number of nanoseconds: `q` ticks,
    // `m` ns (see `resolution_nanos`).
    let g = gcd(NANOS_PER_SEC, hz);
    let unit = NANOS_PER_SEC / g;
    unit * 1_000_000u64.div_ceil(unit)
}

/// The arithmetic above multiplies values below `hz` by 10^9 in a `u64`. Every embassy rate
/// (at most 5.3 GHz) fits; a faster one fails to compile instead of wrapping.
const _: () = assert!(
    embassy_time::TICK_HZ <= u64::MAX / NANOS_PER_SEC,
    "punctual-embassy: embassy's tick rate is above 18 GHz"
);

/// One embassy tick in nanoseconds, rounded up: the [`resolution`] of [`EmbassyClock`],
/// how far its reading can lag the true time (1 ms at `tick-hz-1_000`, 976 563 ns at
/// `tick-hz-1_024`, whose tick is 976 562.5 ns).
///
/// [`resolution`]: punctual_core::Clock::resolution
/// [`EmbassyClock`]: crate::EmbassyClock
pub const RESOLUTION: Duration = Duration::from_nanos(resolution_nanos(embassy_time::TICK_HZ));

/// The recommended wheel tick: the shortest whole number of embassy ticks that is at least
/// 1 ms and whole nanoseconds, so wheel ticks end where the driver's sleeps end exactly.
///
/// | `tick-hz-…` | `TICK` | embassy ticks |
/// |---|---|---|
/// | `1_000` | 1 ms | 1 |
/// | `1_000_000` (`std`, `mock-driver`) | 1 ms | 1 000 |
/// | `32_768` | 1.953125 ms | 64 |
/// | `1_024` | 1.953125 ms | 2 |
/// | `100` | 10 ms | 1 |
///
/// A multiple of `TICK` (`TICK * 10`) trades precision for fewer turns.
pub const TICK: Duration = Duration::from_nanos(recommended_tick_nanos(embassy_time::TICK_HZ));

#[cfg(test)]
mod tests {
    use super::*;

    /// Every tick rate embassy-time-driver 0.2 offers that matters for the arithmetic: slow,
    /// binary, decimal, non-dividing, the fastest.
    const RATES: &[u64] = &[
        1,
        2,
        10,
        100,
        128,
        1_000,
        1_024,
        32_768,
        100_000,
        131_072,
        1_000_000,
        1_048_576,
        12_000_000,
        16_777_216,
        32_000_000,
        48_000_000,
        80_000_000,
        133_000_000,
        1_000_000_000,
        1_310_720_000,
        5_242_880_000,
    ];

    /// `ticks / hz` as an exact fraction of nanoseconds, compared with a reading.
    fn tick_nanos_x_hz(ticks: u64) -> u128 {
        ticks as u128 * NANOS_PER_SEC as u128
    }

    fn nanos_x_hz(reading: Duration, hz: u64) -> u128 {
        reading.as_nanos() * hz as u128
    }

    /// Tick counts to probe at `hz`: small ones, ones around whole seconds, huge ones.
    fn probe_ticks(hz: u64) -> impl Iterator<Item = u64> {
        let around = |base: u64| (0..=40u64).map(move |d| base.saturating_add(d));
        (0..200u64)
            .chain(around(hz.saturating_sub(20)))
            .chain(around(hz.saturating_mul(3_600).saturating_sub(20)))
            .chain((0..64).map(|s| 1u64 << s))
            .chain(around(u64::MAX - 40))
    }

    #[test]
    fn readings_round_down_to_the_nanosecond() {
        for &hz in RATES {
            for ticks in probe_ticks(hz) {
                let r = reading_of_ticks(ticks, hz);
                let exact = tick_nanos_x_hz(ticks); // true reading * hz, in ns
                assert!(
                    nanos_x_hz(r, hz) <= exact,
                    "{ticks} at {hz} Hz: {r:?} ahead"
                );
                assert!(
                    nanos_x_hz(r + Duration::from_nanos(1), hz) > exact,
                    "{ticks} at {hz} Hz: {r:?} more than 1 ns behind"
                );
            }
        }
    }

    #[test]
    fn ticks_round_up_and_are_the_first_such() {
        for &hz in RATES {
            for ticks in probe_ticks(hz) {
                let base = reading_of_ticks(ticks, hz);
                for offset in [0, 1, 2, 499, 500_000, 999_999_999] {
                    let Some(reading) = base.checked_add(Duration::from_nanos(offset)) else {
                        continue;
                    };
                    let t = ticks_at_or_after(reading, hz);
                    if t == u64::MAX {
                        // Saturated: only when the exact tick does not fit.
                        assert!(nanos_x_hz(reading, hz) > tick_nanos_x_hz(u64::MAX - 1));
                        continue;
                    }
                    // The sleep ends no earlier than `reading`...
                    assert!(
                        reading_of_ticks(t, hz) >= reading,
                        "{reading:?} at {hz} Hz: tick {t} reads {:?}",
                        reading_of_ticks(t, hz)
                    );
                    // ...and no later than needed.
                    if t > 0 {
                        assert!(
                            reading_of_ticks(t - 1, hz) < reading,
                            "{reading:?} at {hz} Hz: tick {t} is not the first"
                        );
                    }
                }
            }
        }
    }

    /// Up to 1 GHz a tick is at least a nanosecond, so no two ticks share a reading. (Faster,
    /// several ticks read the same: only "never before" holds, checked above.)
    #[test]
    fn a_tick_reads_as_itself() {
        for &hz in RATES.iter().filter(|&&hz| hz <= NANOS_PER_SEC) {
            for ticks in probe_ticks(hz) {
                assert_eq!(ticks_at_or_after(reading_of_ticks(ticks, hz), hz), ticks);
            }
        }
    }

    /// The division-free conversions agree with the `Duration` ones at every rate.
    #[test]
    fn nanos_conversions_agree_with_durations() {
        for &hz in RATES {
            for ticks in probe_ticks(hz) {
                let reading = Reading::since_origin(reading_of_ticks(ticks, hz));
                assert_eq!(
                    reading_nanos_of_ticks(ticks, hz),
                    reading.as_nanos(),
                    "{ticks} at {hz} Hz"
                );
                for offset in [0, 1, 2, 499, 500_000, 999_999_999] {
                    let nanos = reading.as_nanos().saturating_add(offset);
                    let expected = if nanos == u64::MAX {
                        u64::MAX
                    } else {
                        ticks_at_or_after(Duration::from_nanos(nanos), hz)
                    };
                    assert_eq!(
                        ticks_at_or_after_nanos(nanos, hz),
                        expected,
                        "{nanos} ns at {hz} Hz"
                    );
                }
            }
        }
        let divisors = [
            1,
            2,
            3,
            7,
            1_000,
            1_000_000,
            999_999_937,
            u64::MAX / 2,
            u64::MAX,
        ];
        for d in divisors {
            let near = [d - 1, d, d.saturating_add(1)];
            for n in [0, 1, u64::MAX / 3, u64::MAX - 1, u64::MAX]
                .into_iter()
                .chain(near)
            {
                assert_eq!(div_ceil(n, d), n.div_ceil(d), "⌈{n} / {d}⌉");
            }
        }
    }

    #[test]
    fn saturates_instead_of_overflowing() {
        for &hz in RATES {
            assert_eq!(ticks_at_or_after(Duration::MAX, hz), u64::MAX);
            if let Some(beyond) = reading_of_ticks(u64::MAX, hz).checked_add(Duration::from_secs(1))
            {
                assert_eq!(ticks_at_or_after(beyond, hz), u64::MAX);
            }
        }
        assert_eq!(ticks_at_or_after(Duration::ZERO, 1_000), 0);
        assert_eq!(ticks_at_or_after(Duration::from_nanos(1), 1_000), 1);
        assert_eq!(ticks_at_or_after(Duration::from_millis(1), 1_000), 1);
        assert_eq!(
            ticks_at_or_after(Duration::from_millis(1) + Duration::from_nanos(1), 1_000),
            2
        );
    }

    /// The clock contract: a reading of tick `t` is taken anywhere in `[t, t + 1)` ticks of
    /// true time, and lags it by at most the resolution.
    #[test]
    fn resolution_covers_every_lag() {
        for &hz in RATES {
            let res = resolution_nanos(hz);
            for ticks in probe_ticks(hz).filter(|&t| t < u64::MAX) {
                let reading = reading_of_ticks(ticks, hz);
                // The supremum of the true time while the counter reads `ticks`.
                let true_end = tick_nanos_x_hz(ticks + 1);
                let covered = nanos_x_hz(reading + Duration::from_nanos(res), hz);
                assert!(
                    covered >= true_end,
                    "{ticks} at {hz} Hz: lag above {res} ns"
                );
            }
        }
    }

    #[test]
    fn resolution_is_a_tick_or_a_little_more() {
        assert_eq!(resolution_nanos(1_000), 1_000_000);
        assert_eq!(resolution_nanos(1_000_000), 1_000);
        assert_eq!(resolution_nanos(100), 10_000_000);
        assert_eq!(resolution_nanos(1_000_000_000), 1);
        // 976_562.5 ns a tick: the half nanosecond a reading can lose is covered too.
        assert_eq!(resolution_nanos(1_024), 976_563);
        // 30_517.578125 ns, and a reading can lose up to 63/64 ns to the rounding.
        assert_eq!(resolution_nanos(32_768), 30_519);
        // Faster than a nanosecond: a fifth of a tick, plus up to a nanosecond of rounding.
        assert_eq!(resolution_nanos(5_242_880_000), 2);
    }

    #[test]
    fn recommended_tick_whole_ticks_nanos_near_1ms() {
        for &hz in RATES {
            let nanos = recommended_tick_nanos(hz);
            assert!(nanos >= 1_000_000, "{hz} Hz: {nanos} ns below 1 ms");
            // A whole number of ticks: nanos * hz / 10^9 is whole.
            assert_eq!(
                nanos as u128 * hz as u128 % NANOS_PER_SEC as u128,
                0,
                "{hz} Hz: {nanos} ns is not whole ticks"
            );
            // The shortest: one unit less would be below 1 ms (or not whole).
            let unit = NANOS_PER_SEC / gcd(NANOS_PER_SEC, hz);
            assert!(
                nanos - unit < 1_000_000,
                "{hz} Hz: {nanos} ns not the shortest"
            );
        }
        assert_eq!(recommended_tick_nanos(1_000), 1_000_000);
        assert_eq!(recommended_tick_nanos(1_000_000), 1_000_000);
        assert_eq!(recommended_tick_nanos(32_768), 1_953_125);
        assert_eq!(recommended_tick_nanos(1_024), 1_953_125);
        assert_eq!(recommended_tick_nanos(100), 10_000_000);
        assert_eq!(recommended_tick_nanos(1), 1_000_000_000);
    }
}
