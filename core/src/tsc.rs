//! Upper bounds of `Instant::now()` from the processor's time-stamp counter: the start of a
//! relative deadline, read in a third of the time.
//!
//! Reading `CLOCK_MONOTONIC` (`Instant::now`) costs about 35 ns on a VM, over a third of
//! arming and cancelling a deadline. A relative deadline does not need the exact time at
//! its start, only a reading that is never behind it (so that the deadline never ends
//! early) and never far ahead (so that it ends on time). The time-stamp counter (TSC) gives
//! one for the price of an `rdtsc` and a multiplication.
//!
//! # The bound
//!
//! Each thread keeps an *anchor*: a count `c0` read before a clock reading `t0`, so the true
//! time at `c0` is at most `t0`. For a later count `c`, with the counter's period `p` (ns per
//! count) and an upper bound `P ≥ p`:
//!
//! ```text
//! true(c) = true(c0) + (c - c0) · p  ≤  t0 + (c - c0) · P
//! ```
//!
//! The right side, rounded up, is the reading. It is ahead of the true time by the anchor's
//! slack `t0 - true(c0)` plus `(c - c0) · (P - p)`:
//!
//! * A count read after `t0` (fenced) bounds the slack; a thread keeps an anchor only if
//!   that is under [`ANCHOR_SLACK_NS`] (a thread preempted in between tries again at its
//!   next start).
//! * The anchor serves only while `(c - c0) · P` is at most [`WINDOW_NS`], which keeps the
//!   second part under a microsecond. After that, or when the count went backwards (another
//!   core's counter, a resume from suspend), the thread reads the clock for a new anchor.
//!
//! So a reading is never early, and at most 2 µs plus 250 µs × (`P`/`p` − 1) (under
//! 0.6 µs) late, whatever the load.
//!
//! # The period bound `P`
//!
//! From two clock readings `t1 < t2`, with a count `a1` read after the first (fenced) and a
//! count `b2` before the second, the counter advanced at least `b2 - a1` between them, so
//! `p ≤ (t2 - t1) / (b2 - a1)`. The first reading of the process is `t1` (the best of a
//! few tries); every new anchor 10 ms or more later is a `t2`, and `P` is the least such
//! bound so far plus 1/512 (Linux slews `CLOCK_MONOTONIC` by at most 500 ppm either way, so
//! its rate may later differ by up to 1 000 ppm from the one measured). A pair whose count
//! and reading were far apart (a preemption) would give a valid but loose bound, so only
//! pairs prompt to [`ANCHOR_SLACK_NS`] count: `P` is then within 4 parts in 10 000 of the
//! true period, plus the margin. Until `P` is known (the first 10 ms after the first
//! reading), every start reads the clock.
//!
//! # Where it is used
//!
//! On x86-64 Linux, when the processor says its counter is invariant (constant rate, running
//! in every power state: CPUID `0x8000_0007`, EDX bit 8) and the kernel's clocksource is
//! `tsc` (`CLOCK_MONOTONIC` is then this very counter, which the kernel checked is in step
//! across cores). Elsewhere, and under Miri, [`upper_bound`] says `None` without reading the
//! counter, and the caller reads the clock.
//!
//! Crates such as `quanta` and `minstant` also read the TSC, but they calibrate it once
//! into a clock of their own, which drifts from `Instant` by the calibration's error: a
//! deadline measured on one and fired on the other could end early. Here every reading is
//! an `Instant` bounded from above.

use core::cell::Cell;
use core::sync::atomic::{AtomicU64, Ordering};
use core::time::Duration;
use std::sync::OnceLock;
use std::time::Instant;

/// How far from its anchor a thread extrapolates (ns): with `P` within 0.24% of the true
/// period, a reading is then at most 0.6 µs later than the anchor's slack, for one clock
/// reading per quarter millisecond on a thread that keeps starting deadlines.
const WINDOW_NS: u64 = 250_000;

/// The most an anchor's clock reading may trail its count (ns), measured by a count after.
const ANCHOR_SLACK_NS: u64 = 2_000;

/// The shortest span (ns) between the first clock reading and one that bounds the period:
/// long enough that the two readings' slack (each at most [`ANCHOR_SLACK_NS`]) loosens
/// the bound by at most 4 parts in 10 000.
const CALIBRATION_NS: u64 = 10_000_000;

/// How many times the first reading is taken, to keep the one whose count after it came
/// soonest (a preemption in between would loosen the early bounds).
const FIRST_TRIES: usize = 8;

/// [`PERIOD`] before it is known (`fetch_min` replaces it with the first bound).
const UNKNOWN: u64 = u64::MAX;
/// [`PERIOD`] where the counter is not used (`fetch_min` keeps it).
const UNUSED: u64 = 0;

/// `P`, nanoseconds per count in 32.32 fixed point, an upper bound of the counter's period
/// (see the module docs); or [`UNKNOWN`], or [`UNUSED`]. Every value stored is a bound, so
/// the least one is kept (`fetch_min`), by whichever thread found it.
static PERIOD: AtomicU64 = AtomicU64::new(UNKNOWN);

/// The instant readings here count from (ns), so that an anchor is two integers: set
/// before any clock that reads through this module is made ([`base`]).
static BASE: OnceLock<Instant> = OnceLock::new();

/// The first reading of the period's calibration: a count read before it and one after it
/// (fenced), and the reading.
static FIRST: OnceLock<First> = OnceLock::new();

/// [`FIRST`]'s reading and the counts around it.
#[derive(Clone, Copy)]
struct First {
    before: u64,
    after: u64,
    reading: Instant,
}

std::thread_local! {
    /// This thread's anchor: a count read before a clock reading, and the reading (ns
    /// since [`BASE`]).
    static ANCHOR: Cell<Option<(u64, u64)>> = const { Cell::new(None) };
}

/// The instant [`upper_bound`]'s readings count from. A clock made after the first call
/// has an origin at or after it.
pub(crate) fn base() -> Instant {
    *BASE.get_or_init(Instant::now)
}

/// A reading (ns since [`base`]) no earlier than the true time of this call and at most a
/// few µs later (see the module docs), or `None` where the counter is not used: then the
/// caller reads the clock.
#[inline]
pub(crate) fn upper_bound() -> Option<u64> {
    let period = PERIOD.load(Ordering::Relaxed);
    if period == UNUSED {
        return None;
    }
    let count = counter::read();
    // (An anchor is kept only once the period is known: `period` is not UNKNOWN here.)
    match ANCHOR
        .get()
        .and_then(|anchor| extrapolate(anchor, count, period))
    {
        Some(reading) => Some(reading),
        None => Some(reanchor(count)),
    }
}

/// The reading at `count` extrapolated from `anchor` with the period bound `period`,
/// rounded up; `None` beyond [`WINDOW_NS`] or for a count behind the anchor's (which wraps
/// to a huge span).
#[inline]
fn extrapolate((anchor_count, anchor): (u64, u64), count: u64, period: u64) -> Option<u64> {
    let fixed = count.wrapping_sub(anchor_count).checked_mul(period)?;
    let ns = fixed >> 32;
    // `+ 1`: rounds the product's dropped fraction up. (No overflow: 584 years of uptime.)
    (ns <= WINDOW_NS).then_some(anchor + ns + 1)
}

/// Reads the clock, after `count` was read; keeps the pair as this thread's anchor if the
/// read was prompt, and tightens the period bound with it.
#[cold]
fn reanchor(count: u64) -> u64 {
    let base = base();
    let now = Instant::now();
    let after = counter::read_after_clock();
    let period = tighten_period(count, after, now);
    let slack = after
        .wrapping_sub(count)
        .checked_mul(period)
        .map(|fixed| fixed >> 32);
    let prompt = period != UNKNOWN && slack.is_some_and(|ns| ns <= ANCHOR_SLACK_NS);
    let reading = nanos(now.saturating_duration_since(base));
    ANCHOR.set(prompt.then_some((count, reading)));
    reading
}

/// `d` in ns, saturating (at 584 years).
fn nanos(d: Duration) -> u64 {
    u64::try_from(d.as_nanos()).unwrap_or(u64::MAX)
}

/// Tightens the period bound with a reading `now`, a count read before it and one after
/// it, against the first reading (see the module docs); returns the bound now in force.
///
/// Either pair may be loose (a preemption between a count and its reading): the bound is
/// still a bound, only a looser one. So a candidate is used only if both pairs were prompt
/// by its own measure, [`ANCHOR_SLACK_NS`] at most, which keeps `P` within 4 parts in
/// 10 000 (plus the 1/512 margin) of the true period.
#[cold]
fn tighten_period(count: u64, after: u64, now: Instant) -> u64 {
    let first = *FIRST.get_or_init(|| {
        if !counter::usable() {
            PERIOD.store(UNUSED, Ordering::Relaxed);
        }
        (0..FIRST_TRIES)
            .map(|_| {
                let before = counter::read();
                let reading = Instant::now();
                let after = counter::read_after_clock();
                First {
                    before,
                    after,
                    reading,
                }
            })
            .min_by_key(|first| first.after.wrapping_sub(first.before))
            .expect("FIRST_TRIES is not zero")
    });
    let period = PERIOD.load(Ordering::Relaxed);
    let span = nanos(now.saturating_duration_since(first.reading));
    let counts = count.wrapping_sub(first.after);
    if period == UNUSED || span < CALIBRATION_NS || counts > i64::MAX as u64 {
        // Too soon; or `count` was read before the first reading's (this thread was
        // preempted after its count): no bound from this pair.
        return period;
    }
    if counts == 0 {
        // The counter stood still for 10 ms: not one to use.
        PERIOD.store(UNUSED, Ordering::Relaxed);
        return UNUSED;
    }
    let bound = period_bound(span, counts);
    let prompt = |from: u64, to: u64| {
        to.wrapping_sub(from)
            .checked_mul(bound)
            .is_some_and(|fixed| fixed >> 32 <= ANCHOR_SLACK_NS)
    };
    if !prompt(first.before, first.after) || !prompt(count, after) {
        return period;
    }
    PERIOD.fetch_min(bound, Ordering::Relaxed).min(bound)
}

/// `P` from a span of `span` ns over which the counter advanced at least `counts` (not
/// zero): their ratio in 32.32 fixed point, plus 1/512, rounded up; never [`UNUSED`], and
/// [`UNKNOWN`] where it would not fit.
fn period_bound(span: u64, counts: u64) -> u64 {
    let period = (u128::from(span) << 32) / u128::from(counts);
    u64::try_from(period + period / 512 + 1).unwrap_or(UNKNOWN)
}

#[cfg(all(target_arch = "x86_64", target_os = "linux", not(miri)))]
mod counter {
    use core::arch::x86_64::{__cpuid, _mm_lfence, _rdtsc};

    /// The counter, unfenced: it may run a few instructions early, which the anchor's own
    /// slack (the clock read after its count) covers many times over.
    #[inline]
    pub(super) fn read() -> u64 {
        // SAFETY: `rdtsc` is in every x86-64 processor and has no preconditions.
        unsafe { _rdtsc() }
    }

    /// The counter, read only after every earlier instruction (the clock read) completed.
    pub(super) fn read_after_clock() -> u64 {
        // SAFETY: SSE2 (`lfence`) is part of x86-64; `rdtsc` as above.
        unsafe {
            _mm_lfence();
            _rdtsc()
        }
    }

    /// Whether the counter is invariant and the kernel keeps `CLOCK_MONOTONIC` on it.
    pub(super) fn usable() -> bool {
        // `unsafe` until Rust 1.87 made `__cpuid` safe (the crate builds from 1.85).
        #[allow(unused_unsafe)]
        // SAFETY: `cpuid` is in every x86-64 processor; leaf 0x8000_0000 says which
        // extended leaves exist, and 0x8000_0007 is read only if it does.
        let invariant = unsafe {
            __cpuid(0x8000_0000).eax >= 0x8000_0007 && __cpuid(0x8000_0007).edx & (1 << 8) != 0
        };
        invariant
            && std::fs::read_to_string(
                "/sys/devices/system/clocksource/clocksource0/current_clocksource",
            )
            .is_ok_and(|source| source.trim() == "tsc")
    }
}

#[cfg(not(all(target_arch = "x86_64", target_os = "linux", not(miri))))]
mod counter {
    pub(super) fn read() -> u64 {
        0
    }

    pub(super) fn read_after_clock() -> u64 {
        0
    }

    pub(super) fn usable() -> bool {
        false
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::vec::Vec;

    /// Readings are never behind the clock read just before them, across many anchors and
    /// on several threads, and never more than the bound's 2.6 µs ahead of the clock read
    /// just after (whatever the load: a preempted anchor or calibration pair is not used).
    #[test]
    fn a_reading_is_never_behind_the_clock_nor_far_ahead() {
        let threads: Vec<_> = (0..3)
            .map(|_| {
                std::thread::spawn(|| {
                    let started = Instant::now();
                    let mut worst_ahead = 0;
                    while started.elapsed() < Duration::from_millis(30) {
                        let before = nanos(Instant::now() - base());
                        let Some(bound) = upper_bound() else {
                            return 0;
                        };
                        let after = nanos(Instant::now() - base());
                        assert!(bound >= before, "{} ns behind the clock", before - bound);
                        worst_ahead = worst_ahead.max(bound.saturating_sub(after));
                    }
                    worst_ahead
                })
            })
            .collect();
        for thread in threads {
            let worst = thread.join().unwrap();
            assert!(worst <= 2_600, "{worst} ns ahead of the clock");
        }
        // Where the counter is fit, 30 ms of readings learnt its period: the readings
        // above were extrapolated, not clock reads.
        let period = PERIOD.load(Ordering::Relaxed);
        assert_eq!(period == UNUSED, !counter::usable());
        assert_ne!(period, UNKNOWN);
    }

    #[test]
    fn extrapolation_stays_within_its_window_and_rounds_up() {
        let anchor = 7_000;
        let one_ns = 1 << 32; // a 1 GHz counter, in 32.32
        let at = |count| extrapolate((1_000, anchor), count, one_ns);
        assert_eq!(at(1_000), Some(anchor + 1));
        assert_eq!(at(1_500), Some(anchor + 501));
        assert_eq!(at(1_000 + WINDOW_NS), Some(anchor + WINDOW_NS + 1));
        assert_eq!(at(1_001 + WINDOW_NS), None, "beyond the window");
        assert_eq!(at(999), None, "a count behind the anchor's");
        assert_eq!(
            extrapolate((0, anchor), u64::MAX, one_ns),
            None,
            "the product overflows"
        );
        // A fraction of a ns is rounded up: 3 counts of 1/3 ns are at most 1 + 1 ns.
        let third = (1u64 << 32) / 3 + 1;
        assert_eq!(extrapolate((0, anchor), 3, third), Some(anchor + 2));
    }

    #[test]
    fn the_period_bound_is_above_the_measured_ratio_by_a_512th() {
        // 1 ms over 3 000 000 counts: a third of a ns per count.
        let bound = period_bound(1_000_000, 3_000_000);
        let ratio = (1u128 << 32) / 3;
        assert!(u128::from(bound) > ratio + ratio / 512);
        assert!(u128::from(bound) <= ratio + ratio / 512 + 2);
        assert_ne!(
            period_bound(0, 1),
            UNUSED,
            "a bound is never the `unused` mark"
        );
        assert_eq!(
            period_bound(u64::MAX, 1),
            UNKNOWN,
            "a bound that does not fit"
        );
    }
}
