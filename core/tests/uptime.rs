//! Long uptimes: deadlines armed where the tick counter wraps its low 32 bits, where the
//! top level rotates (multiples of 2^36 ticks), near the clock's end (`u64::MAX` ns), and
//! from a clock that has run for rotations of the top level: none lost, none early, none
//! more than two ticks late. One harness ([`Uptime`]) runs every case; the cases differ in
//! what they arm and how the clock moves:
//!
//! * **stepped**: sleeps of a few ticks up to a few level boundaries, armed just below a
//!   wrap, the clock stepped a tick (or half a tick) at a time and every sleep polled at
//!   every step;
//! * **both sides**: deadlines and sleeps of every length that straddles a level boundary
//!   (with sub-tick offsets), armed before a wrap and again after it, some dropped, the
//!   clock moved to every point that matters for each (1 ns before its time, at it, one
//!   and two ticks after);
//! * **late start**: instants beyond the wheel's range, seen from a clock that has run for
//!   five rotations of the top level.
#![cfg(all(feature = "alloc", feature = "stats"))]

mod support;

use core::future::{Pending, pending};
use core::pin::Pin;
use core::task::Poll;
use core::time::Duration;

use punctual_core::{Clock, Deadline, Growable, ManualClock, Reading, Sleep, Storage, Wheel};
use support::{CLOCK_END, CountingWaker, Rng, SPREAD, TICK, duration_of, ms, ns, ticks};

/// Something armed on the wheel, as the uptime tests track it.
enum Item<'w> {
    Sleep(Pin<Box<Sleep<'w>>>),
    Deadline(Pin<Box<Deadline<'w, Pending<()>>>>),
}

struct Tracked<'w> {
    item: Option<Item<'w>>,
    waker: CountingWaker,
    /// Wakes counted when it was last polled.
    wakes_at_poll: usize,
    /// The clock reading before which it must not complete (nanoseconds).
    requested: u128,
    /// The duration `Elapsed` carries.
    duration: Duration,
    label: String,
}

/// Arms sleeps and deadlines on a manual-clock wheel and moves the clock to every point
/// that matters for them (1 ns before each requested time, at it, one and two ticks
/// after), checking at each: nothing woken or completed early, everything woken and
/// complete by two ticks late.
struct Uptime<'w, S: Storage> {
    wheel: &'w Wheel<ManualClock, S>,
    tick: u128,
    items: Vec<Tracked<'w>>,
    armed: usize,
    /// Whether the clock moved by more than a tick at a time (then turns come late, and
    /// so do the fires they make).
    coarse: bool,
}

impl<'w, S: Storage> Uptime<'w, S> {
    fn new(wheel: &'w Wheel<ManualClock, S>) -> Self {
        Self {
            wheel,
            tick: wheel.tick().as_nanos(),
            items: Vec::new(),
            armed: 0,
            coarse: false,
        }
    }

    fn now(&self) -> u128 {
        self.wheel.clock().now().as_nanos()
    }

    /// A relative deadline (`deadline`) or sleep, started now.
    fn arm_after(&mut self, duration: Duration, deadline: bool) {
        let now = self.now();
        let item = if deadline {
            Item::Deadline(Box::pin(self.wheel.deadline(duration, pending())))
        } else {
            Item::Sleep(Box::pin(self.wheel.sleep(duration)))
        };
        let label = format!("{duration:?} after {now} ns");
        self.push(item, now + duration.as_nanos(), duration, label);
    }

    /// An absolute deadline (`deadline`) or sleep.
    fn arm_at(&mut self, at: Duration, deadline: bool) {
        let now = self.now();
        let item = if deadline {
            Item::Deadline(Box::pin(
                self.wheel.deadline_at(Reading::since_origin(at), pending()),
            ))
        } else {
            Item::Sleep(Box::pin(self.wheel.sleep_until(Reading::since_origin(at))))
        };
        let duration = at.saturating_sub(Duration::from_nanos(now as u64));
        let label = format!("at {at:?}, from {now} ns");
        self.push(item, at.as_nanos(), duration, label);
    }

    fn push(&mut self, item: Item<'w>, requested: u128, duration: Duration, label: String) {
        let mut tracked = Tracked {
            item: Some(item),
            waker: CountingWaker::new(),
            wakes_at_poll: 0,
            requested,
            duration,
            label,
        };
        let occupied = self.wheel.occupied();
        let now = self.now();
        if Self::poll(&mut tracked, now) {
            // Only a limit already past completes at its first poll.
            assert!(
                tracked.requested <= now,
                "{}: complete at once",
                tracked.label
            );
            return;
        }
        if self.wheel.occupied() > occupied {
            self.armed += 1;
        }
        self.items.push(tracked);
    }

    /// Polls a live item; returns whether it completed (checking that is not early).
    fn poll(tracked: &mut Tracked<'w>, now: u128) -> bool {
        tracked.wakes_at_poll = tracked.waker.wakes();
        let done = match tracked.item.as_mut().expect("polled a finished item") {
            Item::Sleep(s) => tracked.waker.poll(s.as_mut()).is_ready(),
            Item::Deadline(d) => match tracked.waker.poll(d.as_mut()) {
                Poll::Pending => false,
                Poll::Ready(Ok(())) => panic!("{}: `pending()` completed", tracked.label),
                Poll::Ready(Err(e)) => {
                    // A deadline at an instant reports that instant, one of a duration
                    // its duration.
                    match e.instant() {
                        Some(at) => {
                            assert_eq!(
                                u128::from(at.as_nanos()),
                                tracked.requested,
                                "{}",
                                tracked.label
                            );
                        }
                        None => assert_eq!(e.duration(), tracked.duration, "{}", tracked.label),
                    }
                    true
                }
            },
        };
        if done {
            assert!(
                now >= tracked.requested,
                "{}: completed early, at {now} ns",
                tracked.label
            );
            tracked.item = None;
        }
        done
    }

    /// Drops the `n`-th live item, if there is one.
    fn drop_live(&mut self, n: usize) {
        if let Some(tracked) = self.items.iter_mut().filter(|t| t.item.is_some()).nth(n) {
            tracked.item = None;
        }
    }

    /// Moves the clock to `to`, turns the wheel, and checks everything live.
    fn step_to(&mut self, to: u128) {
        self.wheel.clock().set(duration_of(to));
        let _ = self.wheel.turn();
        let now = self.now();
        let tick = self.tick;
        for tracked in &mut self.items {
            if tracked.item.is_none() {
                continue;
            }
            let woken = tracked.waker.wakes() > tracked.wakes_at_poll;
            if now < tracked.requested {
                assert!(!woken, "{}: woken early, at {now} ns", tracked.label);
            } else if woken {
                assert!(
                    Self::poll(tracked, now),
                    "{}: woken at {now} ns but not complete",
                    tracked.label
                );
            } else {
                assert!(
                    now < tracked.requested + 2 * tick,
                    "{}: not fired two ticks after its time, at {now} ns",
                    tracked.label
                );
            }
        }
    }

    /// Steps the clock by `step` until two ticks past the latest requested time, checking
    /// at every step as [`step_to`](Self::step_to) does, and polling every item not due
    /// yet: it stays pending.
    fn step_every(&mut self, step: Duration) {
        let last = self
            .items
            .iter()
            .filter(|t| t.item.is_some())
            .map(|t| t.requested)
            .max()
            .expect("nothing armed");
        self.coarse |= step.as_nanos() > self.tick;
        while self.now() < last + 2 * self.tick {
            self.step_to(self.now() + step.as_nanos());
            let now = self.now();
            for tracked in &mut self.items {
                if tracked.item.is_some() && now < tracked.requested {
                    assert!(!Self::poll(tracked, now), "{}: early", tracked.label);
                }
            }
        }
    }

    /// Visits every point that matters for the live items, up to `end`, then `end`.
    fn run_until(&mut self, end: Duration) {
        let end = end.as_nanos().min(CLOCK_END.as_nanos());
        let mut points: Vec<u128> = self
            .items
            .iter()
            .filter(|t| t.item.is_some())
            .flat_map(|t| {
                let r = t.requested;
                [
                    r.saturating_sub(1),
                    r,
                    r + self.tick,
                    r + 2 * self.tick - 1,
                    r + 2 * self.tick,
                ]
            })
            .filter(|&p| p > self.now() && p <= end)
            .collect();
        points.sort_unstable();
        points.dedup();
        for point in points {
            self.step_to(point);
        }
        if end > self.now() {
            self.step_to(end);
        }
    }

    /// Whether the clock, which ends at `u64::MAX` ns, cannot reach two ticks past the
    /// requested time of `tracked` (so it need not fire).
    fn unreachable(&self, tracked: &Tracked<'_>) -> bool {
        tracked.requested + 2 * self.tick > CLOCK_END.as_nanos()
    }

    /// Checks that everything the clock reached has completed, then drops the rest and
    /// checks that the wheel holds nothing. `never` items are expected to stay pending
    /// (the clock ends before two ticks past their time).
    fn finish(mut self, never: usize) {
        let end = self.now();
        let pending: Vec<&str> = self
            .items
            .iter()
            .filter(|t| t.item.is_some())
            .map(|t| {
                assert!(t.requested + 2 * self.tick > end, "{}: lost", t.label);
                t.label.as_str()
            })
            .collect();
        assert_eq!(pending.len(), never, "still pending: {pending:?}");
        for tracked in &mut self.items {
            tracked.item = None;
        }
        let _ = self.wheel.turn();
        assert_eq!(self.wheel.occupied(), 0, "{}", self.wheel.stats());
        let stats = self.wheel.stats();
        // Deadlines released before any turn took them in are taken back and counted
        // nowhere.
        assert!(stats.armed <= self.armed, "{stats}");
        assert_eq!(stats.armed, stats.fired + stats.cancelled, "{stats}");
        if !self.coarse {
            assert_eq!(stats.lateness[3], 0, "fired 3+ ticks late: {stats}");
        }
    }
}

/// Starts a wheel's clock at `start`, arms sleeps of every duration in `durations` (in
/// ticks), and steps the clock by `step` until all are due, polling each at every step
/// before its time: each is never early, and fired (woken, ready) at most two ticks late.
fn stepped(tick: Duration, start: Duration, durations: &[u64], step: Duration) {
    let wheel: Wheel<ManualClock, Growable> =
        Wheel::growable(ManualClock::starting_at(start), tick);
    let mut run = Uptime::new(&wheel);
    for &n in durations {
        run.arm_after(ticks(tick, n), false);
    }
    assert_eq!(wheel.occupied(), durations.len());
    run.step_every(step);
    run.finish(0);
}

#[test]
#[cfg_attr(
    miri,
    ignore = "thousands of turns; the same code paths run under Miri in the smaller tests"
)]
fn long_uptime_tick_counts_around_2_pow_32() {
    let durations = [1, 2, 3, 4, 5, 6, 7, 8, 10, 63, 64, 65, 100];
    for tick in [TICK, Duration::from_micros(1)] {
        for below in [1u64, 3, 5, 64] {
            let start = ticks(tick, (1 << 32) - below);
            stepped(tick, start, &durations, tick);
            stepped(tick, start + tick / 3, &durations, tick / 2);
        }
    }
}

#[test]
#[cfg_attr(
    miri,
    ignore = "thousands of turns; the same code paths run under Miri in the smaller tests"
)]
fn long_uptime_ticks_just_below_multiples_of_2_36() {
    let durations = [1, 2, 5, 63, 64, 4095, 4096, 4097];
    for multiple in [1u64, 2, 5] {
        for below in [1u64, 2, 4096] {
            let start = ticks(TICK, (multiple << 36) - below);
            stepped(TICK, start, &durations, ms(1));
        }
    }
    // Larger jumps across the top level's rotation.
    let start = ticks(TICK, (3 << 36) - 7);
    stepped(
        TICK,
        start,
        &[10, 1 << 20, (1 << 30) + 5, (1 << 36) + 9],
        ms(1 << 19),
    );
}

/// Arms deadlines and sleeps before `wrap` (a reading), crosses it, arms more on the
/// other side (some due before the first ones), drops a few, and runs until everything
/// that can fire has.
fn both_sides(tick: Duration, wrap: Duration, before: Duration, seed: u64) {
    let start = wrap.saturating_sub(before);
    let wheel: Wheel<ManualClock, Growable> =
        Wheel::growable(ManualClock::starting_at(start), tick);
    let mut rng = Rng(seed);
    let mut run = Uptime::new(&wheel);
    let mut sub_tick = || ns(rng.below(tick.as_nanos() as u64));
    for (i, &n) in SPREAD.iter().enumerate() {
        run.arm_after(ticks(tick, n) + sub_tick(), i % 2 == 0);
    }
    run.arm_at(wrap, true);
    run.arm_at(wrap + tick, false);
    run.arm_at(wrap.saturating_sub(ns(1)), true);
    // Across the wrap, one tick at a time around it.
    let mut at = start;
    while at < wrap.saturating_add(3 * tick).min(CLOCK_END) {
        at = at.saturating_add(tick / 3 + ns(1));
        run.step_to(at.as_nanos().min(CLOCK_END.as_nanos()));
    }
    for (i, &n) in SPREAD.iter().enumerate() {
        run.arm_after(ticks(tick, n) + sub_tick(), i % 3 == 0);
    }
    run.arm_at(start + tick, true); // already past: completes at its first poll
    run.drop_live(3);
    run.drop_live(7);
    run.drop_live(11);
    run.run_until(CLOCK_END);
    let never = run
        .items
        .iter()
        .filter(|t| t.item.is_some() && run.unreachable(t))
        .count();
    run.finish(never);
}

#[test]
#[cfg_attr(
    miri,
    ignore = "thousands of turns; the same code paths run under Miri in the smaller tests"
)]
fn long_uptime_deadlines_around_the_32_bit_wrap() {
    for (tick, seed) in [(TICK, 1), (Duration::from_micros(1), 2), (ns(977), 3)] {
        let wrap = ticks(tick, 1 << 32);
        for before in [tick, 2 * tick + ns(1), ticks(tick, 64)] {
            both_sides(tick, wrap, before, seed);
        }
    }
}

#[test]
#[cfg_attr(
    miri,
    ignore = "thousands of turns; the same code paths run under Miri in the smaller tests"
)]
fn long_uptime_deadlines_around_a_top_rotation() {
    for multiple in [1u64, 2, 7] {
        let wrap = ticks(TICK, multiple << 36);
        for before in [TICK, ticks(TICK, 4096) + ns(5)] {
            both_sides(TICK, wrap, before, multiple);
        }
    }
}

#[test]
fn long_uptime_deadlines_near_the_end_of_the_clock() {
    // The manual clock ends at `u64::MAX` ns: deadlines due before it fire, those due after
    // it never do. At a 1 ns tick, the tick counter ends there too.
    // Under Miri, the first case only (a 1 ms tick, from 50 ms before the end).
    let cases = [(TICK, ms(50)), (ns(1), ns(300)), (ns(977), ns(97_700))];
    let cases = if cfg!(miri) { &cases[..1] } else { &cases[..] };
    for &(tick, before) in cases {
        both_sides(tick, CLOCK_END, before, 9);
    }
}

#[test]
#[cfg_attr(
    miri,
    ignore = "thousands of turns; the same code paths run under Miri in the smaller tests"
)]
fn far_instants_from_late_start_never_early_or_lost() {
    // `limits.rs` holds a relative deadline beyond the range from a clock near zero;
    // here absolute instants are, from a clock that has run for 5 rotations of the top
    // level and a bit (so every level's current slot is mid-way).
    let start = ticks(TICK, (5 << 36) + (37 << 30) + 12_345) + Duration::from_micros(250);
    let wheel: Wheel<ManualClock, Growable> =
        Wheel::growable(ManualClock::starting_at(start), TICK);
    let mut run = Uptime::new(&wheel);
    run.arm_at(start + ticks(TICK, (1 << 36) + 1), true);
    run.arm_at(start + ticks(TICK, (1 << 37) + 99) + ns(1), false);
    run.arm_at(start + ticks(TICK, 3 << 38), true);
    run.arm_after(ticks(TICK, (1 << 36) - 1), false);
    run.arm_after(ticks(TICK, 1 << 36), true);
    run.arm_after(ticks(TICK, (1 << 41) + 3), true);
    run.run_until(CLOCK_END);
    run.finish(0);
}
