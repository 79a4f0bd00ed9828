//! Upper bounds of `Instant::now()` from the processor's time-stamp counter: the start of a
//! relative deadline, for threads that start deadlines often, in under half the time.
//!
//! Reading `CLOCK_MONOTONIC` (`Instant::now`) costs about 35 ns on a VM, a third of arming
//! and cancelling a deadline. A relative deadline does not need the exact time at its
//! start, only a reading that is never behind it (so that the deadline never ends early)
//! and never far ahead (so that it ends on time). The time-stamp counter (TSC) gives one
//! for the price of an `rdtsc` and a multiplication.
//!
//! # The bound
//!
//! A thread that starts deadlines often keeps an *anchor*: a count `c0` read before a clock
//! reading `t0`, so the true time at `c0` is at most `t0`. For a later count `c`, with the
//! counter's period `p` (ns per count) and an upper bound `P ≥ p`:
//!
//! ```text
//! true(c) = true(c0) + (c - c0) · p  ≤  t0 + (c - c0) · P
//! ```
//!
//! The right side, rounded up, is the reading. It is ahead of the true time by the anchor's
//! slack `t0 - true(c0)` plus `(c - c0) · (P - p)`:
//!
//! * A count read after `t0` (fenced) bounds the slack; an anchor is kept only if that is
//!   at most [`ANCHOR_SLACK_NS`] (a thread preempted in between tries again later).
//! * The anchor serves only while `(c - c0) · P` is at most [`WINDOW_NS`]. After that, or
//!   when the count went backwards (another core's counter, a resume from suspend), the
//!   thread reads the clock for a new anchor.
//!
//! With `P` at most 1.26 `p` (below), a reading is never early, and at most 1 µs +
//! 4 µs × (1 − 1/1.26), under 1.9 µs, late, whatever the load (under 2.2 µs while NTP
//! slows the clock by the most it can, 10%: then `P` is up to 1.39 `p`). On average a
//! busy thread's readings are about 0.5 µs late: the window is short because each µs of
//! it adds a fifth of a µs to the lateness, and long enough that the clock read it saves
//! pays for the new anchor many times over.
//!
//! # The period bound `P`
//!
//! From two clock readings `t1 < t2`, with a count `a1` read after the first (fenced) and a
//! count `b2` before the second, the counter advanced at least `b2 - a1` between them, so
//! their average period was at most `(t2 - t1) / (b2 - a1)`. The first reading is `t1`
//! (the best of a few tries); a new anchor 10 ms or more later is a `t2` (at most one per
//! millisecond is tried), and `P` is the least such bound so far plus a quarter. Only pairs
//! prompt to [`ANCHOR_SLACK_NS`] count, which keeps the bound within 2 parts in 10 000 of
//! the average.
//!
//! The quarter is for `CLOCK_MONOTONIC`'s own rate, which NTP moves: Linux lets it run up
//! to 10% fast or slow by the tick adjustment (chrony slews by up to 8.3% that way), plus
//! 500 ppm of frequency, so the rate now may exceed the average measured by up to 1.1 /
//! 0.9 = 1.22 times. A suspend stops `CLOCK_MONOTONIC` while the counter runs on: it would
//! make the average look too short, so a pair across a suspend (or a step of the wall
//! clock: `SystemTime` minus `Instant` moved) starts the calibration over instead.
//!
//! Every new anchor also checks the old one: extrapolated to the count read after the new
//! clock reading, it must not be behind that reading. If it is, some premise failed (the
//! kernel changed clocksource, say), and the counter is not used again in this process.
//! Until `P` is known (10 ms after the first anchor), every start reads the clock.
//!
//! # Threads that start deadlines seldom
//!
//! A thread with no anchor reads the clock, as before, and pays nothing more. It takes an
//! anchor when it starts two deadlines within [`BUSY_NS`], and drops it when its anchor
//! has been out of use for [`QUIET_NS`].
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
use std::sync::{Mutex, OnceLock};
use std::time::{Instant, SystemTime};

/// How far from its anchor a thread extrapolates (ns, at `P`).
const WINDOW_NS: u64 = 4_000;

/// The most an anchor's clock reading may trail its count (ns), measured by a count after.
const ANCHOR_SLACK_NS: u64 = 1_000;

/// The shortest span (ns) between the first clock reading and one that bounds the period:
/// with both pairs prompt to [`ANCHOR_SLACK_NS`], the bound is then within 2 parts in
/// 10 000 of the average period.
const CALIBRATION_NS: u64 = 10_000_000;

/// How often the period bound is tightened (ns), at most.
const CALIBRATE_EVERY_NS: u64 = 1_000_000;

/// How many times the first reading is taken, to keep the one whose count after it came
/// soonest.
const FIRST_TRIES: usize = 8;

/// Two starts this close (ns) make a thread take an anchor.
const BUSY_NS: u64 = 50_000;

/// An anchor out of use this long (ns) is dropped: the thread reads the clock again.
const QUIET_NS: u64 = 1_000_000;

/// How far `SystemTime` minus `Instant` may move (ns) before the calibration starts over
/// (a suspend, or a step of the wall clock). Two readings of it differ by their own
/// slack, tens of ns.
const OFFSET_MOVED_NS: i128 = 100_000;

/// [`PERIOD`] before it is known (`fetch_min` replaces it with the first bound).
const UNKNOWN: u64 = u64::MAX;
/// [`PERIOD`] where the counter is not used (`fetch_min` keeps it).
const UNUSED: u64 = 0;

/// `P`, nanoseconds per count in 32.32 fixed point, an upper bound of the counter's period
/// (see the module docs); or [`UNKNOWN`], or [`UNUSED`]. Every value stored is a bound, so
/// the least one is kept (`fetch_min`), by whichever thread found it.
static PERIOD: AtomicU64 = AtomicU64::new(UNKNOWN);

/// The reading (ns since [`base`]) from which the next calibration may be tried.
static NEXT_CALIBRATION: AtomicU64 = AtomicU64::new(0);

/// The instant readings here count from (ns), so that an anchor is two integers.
static BASE: OnceLock<Instant> = OnceLock::new();

/// The first reading of the period's calibration, taken (again) when a calibration is first
/// tried and whenever the wall clock's offset moved. Locked only by a thread that
/// calibrates, which skips its turn if another one holds it.
static FIRST: Mutex<Option<First>> = Mutex::new(None);

/// A clock reading with the counts around it: a calibration's first reading.
#[derive(Clone, Copy, Debug)]
struct First {
    /// A count read before the reading.
    before: u64,
    /// A count read after it (fenced).
    after: u64,
    reading: Instant,
    /// `SystemTime` minus `Instant` at the reading (ns): moves on a suspend or a step.
    offset: i128,
}

/// What a thread knows: an anchor, or when it last read the clock without one.
#[derive(Clone, Copy, Debug, PartialEq)]
enum Mode {
    /// The reading (ns since [`base`]) of the thread's last start.
    Idle { last: u64 },
    /// A count read before a clock reading (ns since [`base`]), prompt to
    /// [`ANCHOR_SLACK_NS`], taken while [`PERIOD`] was known.
    Anchored { count: u64, reading: u64 },
}

std::thread_local! {
    static MODE: Cell<Mode> = const { Cell::new(Mode::Idle { last: 0 }) };
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
    Some(match MODE.get() {
        Mode::Anchored { count, reading } => {
            let now = counter::read();
            if let Some(bound) = extrapolate((count, reading), now, period) {
                #[cfg(test)]
                tests::EXTRAPOLATED.fetch_add(1, Ordering::Relaxed);
                return Some(bound);
            }
            anchor(Some((count, reading)), now, false)
        }
        Mode::Idle { last } => read_without_anchor(last),
    })
}

/// The reading at `count` extrapolated from `anchor` with the period bound `period`,
/// rounded up; `None` beyond [`WINDOW_NS`] or for a count behind the anchor's (which wraps
/// to a huge span).
#[inline]
fn extrapolate((anchor_count, anchor): (u64, u64), count: u64, period: u64) -> Option<u64> {
    let ns = count.wrapping_sub(anchor_count).checked_mul(period)? >> 32;
    // `+ 1`: rounds the product's dropped fraction up. (No overflow: 584 years of uptime.)
    (ns <= WINDOW_NS).then_some(anchor + ns + 1)
}

/// Whether the bound from `anchor` still held at `after`, a count read after a clock
/// reading `reading`: the true time at `after` was at least `reading`.
fn bound_held((anchor_count, anchor): (u64, u64), after: u64, reading: u64, period: u64) -> bool {
    let counts = after.wrapping_sub(anchor_count);
    if counts > i64::MAX as u64 {
        // `after` read behind the anchor's count: nothing to check.
        return true;
    }
    let bound = u128::from(anchor) + ((u128::from(counts) * u128::from(period)) >> 32) + 1;
    bound >= u128::from(reading)
}

/// A start on a thread without an anchor: reads the clock, and takes an anchor if the
/// thread's last start was within [`BUSY_NS`].
#[inline(never)]
fn read_without_anchor(last: u64) -> u64 {
    let reading = nanos(Instant::now().saturating_duration_since(base()));
    if reading.saturating_sub(last) <= BUSY_NS {
        // Busy: an anchor for the next starts (this one has its reading). While the period
        // is unknown, an anchor is of use only to calibrate, at most once a millisecond.
        let known = PERIOD.load(Ordering::Relaxed) != UNKNOWN;
        let due = !known && calibration_due(reading);
        if known || due {
            anchor(None, counter::read(), due);
            return reading;
        }
    }
    MODE.set(Mode::Idle { last: reading });
    reading
}

/// Whether a calibration may be tried at `reading` (at most one per
/// [`CALIBRATE_EVERY_NS`], by any thread).
fn calibration_due(reading: u64) -> bool {
    let next = NEXT_CALIBRATION.load(Ordering::Relaxed);
    reading >= next
        && NEXT_CALIBRATION
            .compare_exchange(
                next,
                reading.saturating_add(CALIBRATE_EVERY_NS),
                Ordering::Relaxed,
                Ordering::Relaxed,
            )
            .is_ok()
}

/// Reads the clock, after `count` was read, for a new anchor: checks that the old one
/// (if any) still held, tightens the period bound when due (`due`: the caller took this
/// millisecond's turn), and keeps the new pair as the thread's anchor if it was prompt and
/// the thread is not going quiet. Returns the reading.
#[cold]
#[inline(never)]
fn anchor(old: Option<(u64, u64)>, count: u64, due: bool) -> u64 {
    let now = Instant::now();
    let after = counter::read_after_clock();
    let reading = nanos(now.saturating_duration_since(base()));
    let mut period = PERIOD.load(Ordering::Relaxed);
    if let Some(old) = old {
        if !bound_held(old, after, reading, period) {
            PERIOD.store(UNUSED, Ordering::Relaxed);
            MODE.set(Mode::Idle { last: reading });
            return reading;
        }
    }
    if due || calibration_due(reading) {
        period = calibrate(count, after, now);
    }
    let quiet = old.is_some_and(|(old_count, _)| {
        count
            .wrapping_sub(old_count)
            .checked_mul(period)
            .is_none_or(|fixed| fixed >> 32 > QUIET_NS)
    });
    let prompt = period != UNKNOWN
        && period != UNUSED
        && after
            .wrapping_sub(count)
            .checked_mul(period)
            .is_some_and(|fixed| fixed >> 32 <= ANCHOR_SLACK_NS);
    MODE.set(if prompt && !quiet {
        Mode::Anchored { count, reading }
    } else {
        Mode::Idle { last: reading }
    });
    reading
}

/// `d` in ns, saturating (at 584 years).
fn nanos(d: Duration) -> u64 {
    u64::try_from(d.as_nanos()).unwrap_or(u64::MAX)
}

/// `SystemTime` minus `Instant` at `at` (ns; a reading of the wall clock just after).
fn wall_offset(at: Instant) -> i128 {
    let wall = SystemTime::now()
        .duration_since(SystemTime::UNIX_EPOCH)
        .map_or(0, |d| d.as_nanos() as i128);
    wall - at.saturating_duration_since(base()).as_nanos() as i128
}

/// Takes a calibration's first reading: the best of [`FIRST_TRIES`].
fn first_reading() -> First {
    let best = (0..FIRST_TRIES)
        .map(|_| {
            let before = counter::read();
            let reading = Instant::now();
            let after = counter::read_after_clock();
            (before, after, reading)
        })
        .min_by_key(|&(before, after, _)| after.wrapping_sub(before))
        .expect("FIRST_TRIES is not zero");
    First {
        before: best.0,
        after: best.1,
        reading: best.2,
        offset: wall_offset(best.2),
    }
}

/// Tightens the period bound with a reading `now`, a count read before it and one after
/// it, against the calibration's first reading (see the module docs); returns the bound
/// now in force. The first call takes the first reading (after checking that the counter
/// is fit); a call that finds the wall clock's offset moved takes it again.
#[cold]
fn calibrate(count: u64, after: u64, now: Instant) -> u64 {
    let Ok(mut first) = FIRST.try_lock() else {
        // Another thread calibrates: its bound will do.
        return PERIOD.load(Ordering::Relaxed);
    };
    let Some(from) = *first else {
        if !counter::usable() {
            PERIOD.store(UNUSED, Ordering::Relaxed);
            return UNUSED;
        }
        *first = Some(first_reading());
        return PERIOD.load(Ordering::Relaxed);
    };
    if (wall_offset(now) - from.offset).abs() > OFFSET_MOVED_NS {
        *first = Some(first_reading());
        return PERIOD.load(Ordering::Relaxed);
    }
    let span = nanos(now.saturating_duration_since(from.reading));
    match period_bound(from, count, after, span) {
        Some(bound) => PERIOD.fetch_min(bound, Ordering::Relaxed).min(bound),
        None => PERIOD.load(Ordering::Relaxed),
    }
}

/// `P` from the first reading `first` and a reading `span` ns later with counts `count`
/// before it and `after` after it: the average period, in 32.32 fixed point, plus a
/// quarter, rounded up. `None` if the span is too short, if either pair was not prompt to
/// [`ANCHOR_SLACK_NS`], or if `count` was read before `first.after` (its thread was
/// preempted between its count and its reading).
fn period_bound(first: First, count: u64, after: u64, span: u64) -> Option<u64> {
    let counts = count.wrapping_sub(first.after);
    if span < CALIBRATION_NS || counts == 0 || counts > i64::MAX as u64 {
        return None;
    }
    let average = (u128::from(span) << 32) / u128::from(counts);
    // At least 1 (never UNUSED); UNKNOWN where it does not fit.
    let bound = u64::try_from(average + average / 4 + 1).unwrap_or(UNKNOWN);
    let prompt = |from: u64, to: u64| {
        to.wrapping_sub(from)
            .checked_mul(bound)
            .is_some_and(|fixed| fixed >> 32 <= ANCHOR_SLACK_NS)
    };
    (prompt(first.before, first.after) && prompt(count, after)).then_some(bound)
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
    use core::sync::atomic::AtomicUsize;
    use std::vec::Vec;

    /// Readings extrapolated from an anchor, in this test process.
    pub(super) static EXTRAPOLATED: AtomicUsize = AtomicUsize::new(0);

    /// Readings are never behind the clock read just before them, across many anchors and
    /// on several threads, and never more than the bound's 2.2 µs ahead of the clock read
    /// just after (whatever the load: a preempted anchor or calibration pair is not used).
    /// Where the counter is fit, most of them were extrapolated.
    #[test]
    fn a_reading_is_never_behind_the_clock_nor_far_ahead() {
        let threads: Vec<_> = (0..3)
            .map(|_| {
                std::thread::spawn(|| {
                    let started = Instant::now();
                    let mut worst_ahead = 0;
                    let mut readings = 0usize;
                    while started.elapsed() < Duration::from_millis(40) {
                        let before = nanos(Instant::now() - base());
                        let Some(bound) = upper_bound() else {
                            return (0, readings);
                        };
                        let after = nanos(Instant::now() - base());
                        assert!(bound >= before, "{} ns behind the clock", before - bound);
                        worst_ahead = worst_ahead.max(bound.saturating_sub(after));
                        readings += 1;
                    }
                    (worst_ahead, readings)
                })
            })
            .collect();
        let mut readings = 0;
        for thread in threads {
            let (worst, of) = thread.join().unwrap();
            assert!(worst <= 2_200, "{worst} ns ahead of the clock");
            readings += of;
        }
        let period = PERIOD.load(Ordering::Relaxed);
        assert_eq!(period == UNUSED, !counter::usable());
        if period != UNUSED {
            assert_ne!(period, UNKNOWN, "40 ms of starts did not learn the period");
            let extrapolated = EXTRAPOLATED.load(Ordering::Relaxed);
            assert!(
                extrapolated > readings / 4,
                "{extrapolated} of {readings} readings extrapolated"
            );
        }
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
    fn an_old_anchor_that_fell_behind_the_clock_is_caught() {
        let one_ns = 1 << 32;
        // Anchored at count 1 000, reading 5 000: at count 3 000 the bound is 7 001.
        assert!(bound_held((1_000, 5_000), 3_000, 7_001, one_ns));
        assert!(
            !bound_held((1_000, 5_000), 3_000, 7_002, one_ns),
            "the clock ran faster"
        );
        // Far beyond any window (a thread quiet for an hour) the check still holds.
        assert!(bound_held(
            (0, 0),
            3_600_000_000_000,
            3_600_000_000_000,
            one_ns
        ));
        assert!(
            bound_held((5_000, 0), 4_000, u64::MAX, one_ns),
            "a count behind the anchor's"
        );
    }

    fn first(before: u64, after: u64) -> First {
        First {
            before,
            after,
            reading: Instant::now(),
            offset: 0,
        }
    }

    #[test]
    fn the_period_bound_is_a_quarter_above_the_average_of_prompt_pairs() {
        // 10 ms over 30 000 000 counts: a third of a ns per count.
        let from = first(900, 1_000);
        let bound = period_bound(from, 30_001_000, 30_001_100, 10_000_000).unwrap();
        let third = (1u128 << 32) / 3;
        assert!(u128::from(bound) > third + third / 4);
        assert!(u128::from(bound) <= third + third / 4 + 2);
        assert_ne!(bound, UNUSED);
        // Too soon after the first reading.
        assert_eq!(period_bound(from, 3_001_000, 3_001_100, 1_000_000), None);
        // Either pair's count and reading 1.3 µs apart (a preemption): not prompt.
        assert_eq!(
            period_bound(first(0, 4_000), 30_004_000, 30_004_100, 10_000_000),
            None
        );
        assert_eq!(period_bound(from, 30_001_000, 30_005_000, 10_000_000), None);
        // A count read before the first reading's (its thread was preempted after it).
        assert_eq!(period_bound(from, 999, 30_001_100, 10_000_000), None);
        assert_eq!(
            period_bound(from, 1_000, 1_100, 10_000_000),
            None,
            "a counter that stood"
        );
    }
}
