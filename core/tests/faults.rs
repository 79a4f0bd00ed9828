//! Faults and bad input, on the manual clock: each test asserts the behaviour the
//! docs promise when something goes wrong around a deadline.
//!
//! * **Odd limits** not covered by `semantics.rs`: durations whose end overflows the clock
//!   (`Duration`, the tick counter, or the manual clock's `u64` nanoseconds), and instants
//!   beyond the wheel's range seen from a clock that started late.
//! * **Long uptime**: deadlines armed on *both sides* of the tick counter's 32-bit wrap, of
//!   the top level's rotation (multiples of 2^36 ticks) and of the clock's end
//!   (`u64::MAX` ns): none lost, none early, none more than two ticks late. A simulated
//!   driver that sleeps exactly until the turn the wheel plans (as the thread and tokio
//!   drivers do) must never oversleep a deadline, across those wraps and with arms that
//!   come in while it sleeps (the wrap bug that stopped tokio's timers after 12 days).
//! * **A full fixed wheel under load** from several threads: never early, never hangs,
//!   degraded polls counted.
//! * **An inner future that panics** while polled (or while dropped by the fire): the entry
//!   is released, the wheel keeps working, nothing leaks. **A waker that panics** when the
//!   wheel fires its deadline: the panic reaches the turning thread, and the wheel must
//!   keep firing everything else.
//! * **Moving a deadline between threads**, polled with a different waker each time: the
//!   latest waker is woken, also while another thread turns the wheel meanwhile.
//! * **Dropping a deadline on one thread while another thread's turn fires it**, many
//!   times over, on a small wheel whose entries are reused all the time.
//! * **A stopped driver**: armed deadlines wait (documented on [`Driver`]), nothing is lost,
//!   and they fire once anything turns the wheel again.
//! * **A manual clock moved backwards** panics with a clear message and changes nothing.
//! * **Polling after completion** panics naming the type, for the types and paths
//!   `semantics.rs` does not cover (`Budgeted`, `Within`, degraded deadlines, accessors).
//!
//! The threaded tests run under a watchdog: one that hangs fails with a report of what it
//! was waiting for instead of hanging `cargo test`.

mod support;

use core::future::{Future, Pending, pending, ready};
use core::pin::{Pin, pin};
use core::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering::SeqCst};
use core::task::{Context, Poll, Waker};
use core::time::Duration;
use std::panic::{AssertUnwindSafe, catch_unwind, resume_unwind};
use std::sync::mpsc::{self, RecvTimeoutError};
use std::sync::{Arc, Mutex};
use std::task::Wake;
use std::thread;

use punctual_core::{
    Budget, Clock, Deadline, Elapsed, Fixed, Growable, ManualClock, Sleep, Sleeper, Storage, Wheel,
};

const TICK: Duration = Duration::from_millis(1);
/// A threaded test that has not finished after this long has hung.
const WATCHDOG: Duration = Duration::from_secs(120);

fn ms(n: u64) -> Duration {
    Duration::from_millis(n)
}

fn ns(n: u64) -> Duration {
    Duration::from_nanos(n)
}

/// `n` ticks of `tick`, saturating at `Duration::MAX`.
fn ticks(tick: Duration, n: u64) -> Duration {
    duration_of(tick.as_nanos() * u128::from(n))
}

fn duration_of(nanos: u128) -> Duration {
    let secs = u64::try_from(nanos / 1_000_000_000).unwrap_or(u64::MAX);
    if secs == u64::MAX {
        return Duration::MAX;
    }
    Duration::new(secs, (nanos % 1_000_000_000) as u32)
}

/// The manual clock's last reading.
const CLOCK_END: Duration = Duration::from_nanos(u64::MAX);

// ---- helpers --------------------------------------------------------------------------

use support::CountingWaker;

/// A small xorshift generator: random but reproducible.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }

    fn below(&mut self, n: u64) -> u64 {
        self.next() % n
    }
}

/// Runs `body` on its own thread; fails the test with `report()` if it has not finished
/// within [`WATCHDOG`], and with its own message if it panicked.
fn watchdog<T: Send + 'static>(
    name: &str,
    report: impl Fn() -> String,
    body: impl FnOnce() -> T + Send + 'static,
) -> T {
    let (done_tx, done_rx) = mpsc::channel();
    let handle = thread::Builder::new()
        .name(name.into())
        .spawn(move || {
            let out = body();
            let _ = done_tx.send(());
            out
        })
        .unwrap();
    match done_rx.recv_timeout(WATCHDOG) {
        Ok(()) | Err(RecvTimeoutError::Disconnected) => match handle.join() {
            Ok(out) => out,
            Err(panic) => resume_unwind(panic),
        },
        Err(RecvTimeoutError::Timeout) => {
            panic!("{name}: still running after {WATCHDOG:?}: {}", report())
        }
    }
}

/// Joins `handle`, re-raising its panic.
fn join<T>(handle: thread::ScopedJoinHandle<'_, T>) -> T {
    handle.join().unwrap_or_else(|panic| resume_unwind(panic))
}

fn is_elapsed<T: core::fmt::Debug>(poll: Poll<Result<T, Elapsed>>) -> Elapsed {
    match poll {
        Poll::Ready(Err(elapsed)) => elapsed,
        other => panic!("expected Ready(Err(Elapsed)), got {other:?}"),
    }
}

// ---- odd limits -----------------------------------------------------------------------

#[test]
fn durations_that_overflow_the_clock_never_fire_and_hold_no_entry() {
    // Documented on `Deadline` ("Odd limits"): a deadline beyond the last tick the wheel
    // can count never fires and holds no entry. Each of these ends beyond it, by
    // overflowing `Duration` (start + duration), or the tick counter (a 1 ns tick).
    let start = Duration::from_secs(7) + ns(3);
    let ms_wheel: Wheel<ManualClock, Fixed<1>> =
        Wheel::fixed(ManualClock::starting_at(start), TICK);
    let ns_wheel: Wheel<ManualClock, Fixed<1>> =
        Wheel::fixed(ManualClock::starting_at(start), ns(1));
    let w = CountingWaker::new();
    let overflow_duration = Duration::MAX - Duration::from_secs(1);
    for wheel in [&ms_wheel, &ns_wheel] {
        let mut a = pin!(wheel.deadline(overflow_duration, pending::<()>()));
        let mut b = pin!(wheel.sleep(Duration::new(u64::MAX, 999_999_999)));
        assert!(w.poll(a.as_mut()).is_pending());
        assert!(w.poll(b.as_mut()).is_pending());
        assert_eq!(wheel.occupied(), 0, "an uncountable deadline took an entry");
        assert_eq!(wheel.degraded_polls(), 0);
        // To the end of the clock: never fired, never woken.
        assert_eq!(wheel.advance(Duration::MAX), CLOCK_END);
        assert!(w.poll(a.as_mut()).is_pending());
        assert!(w.poll(b.as_mut()).is_pending());
    }
    // At a 1 ns tick, `u64::MAX` ns after a non-zero start is past `u64::MAX` ticks.
    let wheel: Wheel<ManualClock, Fixed<1>> = Wheel::fixed(ManualClock::starting_at(start), ns(1));
    let mut c = pin!(wheel.sleep(CLOCK_END));
    assert!(w.poll(c.as_mut()).is_pending());
    assert_eq!(wheel.occupied(), 0);
    wheel.advance(Duration::MAX);
    assert!(w.poll(c.as_mut()).is_pending());
    assert_eq!(w.wakes(), 0);
    // The single entry of each wheel is still free for a real deadline.
    let mut d = pin!(wheel.deadline(ns(0), pending::<()>()));
    assert!(w.poll(d.as_mut()).is_ready());
}

#[test]
fn a_deadline_past_the_clocks_end_never_fires_and_holds_no_entry() {
    // An entry keeps its deadline as a reading in `u64` nanoseconds, so a deadline that
    // ends at or after `u64::MAX` ns (the manual clock's last reading, about 584 years)
    // stands for "never", whatever the tick: a relative one that runs past it and an
    // instant beyond it alike. Neither fires, nor holds an entry.
    let start = CLOCK_END - Duration::from_secs(3600);
    let wheel: Wheel<ManualClock, Growable> =
        Wheel::growable(ManualClock::starting_at(start), TICK);
    let w = CountingWaker::new();
    let mut beyond = Box::pin(wheel.deadline(Duration::from_secs(7200), pending::<()>()));
    let mut at_beyond = Box::pin(wheel.sleep_until(CLOCK_END + TICK));
    assert!(w.poll(beyond.as_mut()).is_pending());
    assert!(w.poll(at_beyond.as_mut()).is_pending());
    assert_eq!(wheel.occupied(), 0);
    for _ in 0..4 {
        wheel.advance(Duration::from_secs(1000));
        assert!(w.poll(beyond.as_mut()).is_pending());
        assert!(w.poll(at_beyond.as_mut()).is_pending());
    }
    assert_eq!(wheel.clock().now(), CLOCK_END);
    assert_eq!(w.wakes(), 0);
    drop((beyond, at_beyond));
    wheel.advance(Duration::ZERO);
    assert_eq!(wheel.occupied(), 0);
    let stats = wheel.stats();
    assert_eq!(
        (stats.armed, stats.fired, stats.cancelled),
        (0, 0, 0),
        "{stats}"
    );
}

#[test]
fn a_limit_of_u64_max_nanoseconds_or_more_never_fires_even_at_the_clocks_end() {
    // A deadline keeps its limit in `u64` nanoseconds: from `u64::MAX` on it stands for
    // "never", even for an instant the manual clock can reach (it ends at `u64::MAX` ns).
    let wheel: Wheel<ManualClock, Fixed<2>> =
        Wheel::fixed(ManualClock::starting_at(CLOCK_END - ms(5)), TICK);
    let w = CountingWaker::new();
    let mut at_end = pin!(wheel.sleep_until(CLOCK_END));
    let mut after_max = pin!(wheel.sleep(Duration::from_nanos(u64::MAX)));
    let mut just_below = pin!(wheel.sleep_until(CLOCK_END - ms(2)));
    // A relative limit that ends exactly there (the fast path of arming).
    let mut to_end = pin!(wheel.sleep(ms(5)));
    assert!(w.poll(at_end.as_mut()).is_pending());
    assert!(w.poll(after_max.as_mut()).is_pending());
    assert!(w.poll(just_below.as_mut()).is_pending());
    assert!(w.poll(to_end.as_mut()).is_pending());
    assert_eq!(
        wheel.occupied(),
        1,
        "only the instant below `u64::MAX` ns holds an entry"
    );
    wheel.advance(Duration::MAX);
    assert_eq!(wheel.clock().now(), CLOCK_END);
    assert!(w.poll(just_below.as_mut()).is_ready());
    assert!(w.poll(at_end.as_mut()).is_pending());
    assert!(w.poll(after_max.as_mut()).is_pending());
    assert!(w.poll(to_end.as_mut()).is_pending());

    // Whatever the tick: with ticks of over a second, `Duration::MAX` is a countable tick,
    // yet such a limit still holds no entry.
    for tick in [Duration::from_secs(2), Duration::from_secs(3600)] {
        let wheel: Wheel<ManualClock, Fixed<2>> = Wheel::fixed(ManualClock::new(), tick);
        let mut at_max = pin!(wheel.sleep_until(Duration::MAX));
        let mut after_max = pin!(wheel.sleep(Duration::MAX));
        assert!(w.poll(at_max.as_mut()).is_pending());
        assert!(w.poll(after_max.as_mut()).is_pending());
        assert_eq!(wheel.occupied(), 0, "tick {tick:?}");
    }
}

#[test]
fn instants_beyond_the_wheels_range_from_a_late_start_are_never_early_nor_lost() {
    // `semantics.rs` parks a relative deadline beyond the range from a clock near zero;
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

// ---- long uptime ----------------------------------------------------------------------

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
}

impl<'w, S: Storage> Uptime<'w, S> {
    fn new(wheel: &'w Wheel<ManualClock, S>) -> Self {
        Self {
            wheel,
            tick: wheel.tick().as_nanos(),
            items: Vec::new(),
            armed: 0,
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
            Item::Deadline(Box::pin(self.wheel.deadline_at(at, pending())))
        } else {
            Item::Sleep(Box::pin(self.wheel.sleep_until(at)))
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
                    assert_eq!(e.duration(), tracked.duration, "{}", tracked.label);
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
        assert_eq!(stats.lateness[3], 0, "fired 3+ ticks late: {stats}");
    }
}

/// Deadline lengths, in ticks, that straddle every level boundary and the wheel's range.
const SPREAD: [u64; 16] = [
    1,
    2,
    3,
    5,
    63,
    64,
    65,
    4095,
    4097,
    (1 << 18) + 1,
    (1 << 24) - 1,
    (1 << 30) + 7,
    (1 << 32) + 1,
    (1 << 36) - 1,
    (1 << 36) + 3,
    (1 << 38) + 11,
];

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
fn long_uptime_deadlines_on_both_sides_of_the_32_bit_tick_wrap() {
    for (tick, seed) in [(TICK, 1), (Duration::from_micros(1), 2), (ns(977), 3)] {
        let wrap = ticks(tick, 1 << 32);
        for before in [tick, 2 * tick + ns(1), ticks(tick, 64)] {
            both_sides(tick, wrap, before, seed);
        }
    }
}

#[test]
fn long_uptime_deadlines_on_both_sides_of_the_top_levels_rotation() {
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
    for (tick, before) in [(TICK, ms(50)), (ns(1), ns(300)), (ns(977), ns(97_700))] {
        both_sides(tick, CLOCK_END, before, 9);
    }
}

// ---- the driver's plan across wraps -----------------------------------------------------

#[test]
fn an_arm_earlier_than_the_drivers_plan_wakes_it_across_the_32_bit_wrap() {
    // The plan is kept as the low 32 bits of its tick and rebuilt near the arming tick.
    // Just below 2^32 ticks, the arming tick's low bits are large and the plan's small.
    let t = |n: u64| ticks(TICK, n);
    let wrap = 1u64 << 32;
    let wheel: Wheel<ManualClock, Fixed<8>> =
        Wheel::fixed(ManualClock::starting_at(t(wrap - 2)), TICK);
    let driver = CountingWaker::new();
    let w = CountingWaker::new();
    // Idle as a turn left it (a new wheel's first turn does not linger); the next turn
    // lingers.
    assert_eq!(wheel.turn(), Duration::MAX);
    wheel.register_driver(&driver.waker);
    let _ = wheel.turn();

    // Due at 2^32 + 4: earlier than any plan of an empty wheel.
    let mut a = pin!(wheel.sleep(t(6)));
    assert!(w.poll(a.as_mut()).is_pending());
    assert_eq!(driver.wakes(), 1, "the first arm did not wake the driver");
    wheel.register_driver(&driver.waker);
    // `a` sits on the top level (its tick differs from now in bit 32): the plan is the
    // turn that cascades it, at 2^32, whose low 32 bits are 0.
    assert_eq!(wheel.turn(), t(wrap));
    assert_eq!(wheel.next_turn(), t(wrap));

    // Due at 2^32 (the plan itself) and at 2^32 + 3: not earlier, no wake.
    let mut b = pin!(wheel.sleep(t(2)));
    let mut c = pin!(wheel.deadline(t(5), pending::<()>()));
    assert!(w.poll(b.as_mut()).is_pending());
    assert!(w.poll(c.as_mut()).is_pending());
    assert_eq!(
        driver.wakes(),
        1,
        "an arm not earlier than the plan woke the driver"
    );
    // Due at 2^32 - 1: earlier, so it wakes the driver.
    let mut d = pin!(wheel.sleep(t(1)));
    assert!(w.poll(d.as_mut()).is_pending());
    assert_eq!(
        driver.wakes(),
        2,
        "an arm earlier than the plan did not wake the driver"
    );
    wheel.register_driver(&driver.waker);
    assert_eq!(wheel.turn(), t(wrap - 1));

    // The driver sleeps until each plan in turn, across the wrap.
    let mut fired = Vec::new();
    for _ in 0..4 {
        let plan = wheel.next_turn();
        wheel.clock().set(plan);
        wheel.register_driver(&driver.waker);
        let _ = wheel.turn();
        fired.push((plan, w.wakes()));
    }
    assert_eq!(
        fired,
        [
            (t(wrap - 1), 1),
            (t(wrap), 2),
            (t(wrap + 3), 3),
            (t(wrap + 4), 4)
        ],
        "fired (plan, wakes so far)"
    );
    assert!(w.poll(a.as_mut()).is_ready());
    assert!(w.poll(b.as_mut()).is_ready());
    assert_eq!(is_elapsed(w.poll(c.as_mut())).duration(), t(5));
    assert!(w.poll(d.as_mut()).is_ready());

    // Nothing armed: the driver lingers until 16 ticks after the arm that woke it from
    // idle (the first one, at 2^32 - 2), then goes idle.
    assert_eq!(wheel.next_turn(), t(wrap + 14));
    wheel.clock().set(t(wrap + 14));
    assert_eq!(wheel.turn(), Duration::MAX);
    // Idle: it waits for a wake only, and any arm wakes it.
    assert_eq!(wheel.next_turn(), Duration::MAX);
    let wakes = driver.wakes();
    let mut e = pin!(wheel.sleep(t(100)));
    assert!(w.poll(e.as_mut()).is_pending());
    assert_eq!(
        driver.wakes(),
        wakes + 1,
        "an arm did not wake the idle driver"
    );
    // On the far side: the arming tick's low bits are small now.
    wheel.register_driver(&driver.waker);
    let plan = wheel.turn();
    let wakes = driver.wakes();
    let mut f = pin!(wheel.sleep(t(99)));
    assert!(w.poll(f.as_mut()).is_pending());
    let earlier = plan > wheel.clock().now() + t(99);
    assert_eq!(
        driver.wakes(),
        wakes + usize::from(earlier),
        "plan {plan:?}"
    );
    assert_eq!(wheel.occupied(), 2);
}

/// One simulated driver run: the driver turns, sleeps exactly until the planned turn (or
/// until an arm wakes it), and turns again; meanwhile deadlines of random lengths are
/// armed at random moments of its sleep. Every deadline must fire within two ticks of its
/// time: a driver that trusts the plan never oversleeps one.
fn sleeping_driver(tick: Duration, start: Duration, seed: u64, arms: usize) {
    let wheel: Wheel<ManualClock, Growable> =
        Wheel::growable(ManualClock::starting_at(start), tick);
    let tick_ns = tick.as_nanos();
    let driver = CountingWaker::new();
    let mut rng = Rng(seed);
    struct Armed<'w> {
        sleep: Pin<Box<Sleep<'w>>>,
        waker: CountingWaker,
        requested: u128,
    }
    let mut live: Vec<Armed<'_>> = Vec::new();
    let mut armed = 0;
    let mut turns = 0u64;
    let mut fired = 0;
    wheel.register_driver(&driver.waker);
    let mut wakes_seen = driver.wakes();
    let mut plan = wheel.turn();
    loop {
        turns += 1;
        assert!(turns < 1_000_000, "the driver is spinning");
        let now = wheel.clock().now();
        assert!(plan > now, "planned {plan:?} at {now:?}");
        if let Some(earliest) = live.iter().map(|a| a.requested).min() {
            let earliest_tick = earliest.div_ceil(tick_ns) * tick_ns;
            assert!(
                earliest_tick > CLOCK_END.as_nanos() || plan.as_nanos() <= earliest_tick,
                "the plan {plan:?} oversleeps a deadline at {earliest} ns (now {now:?})"
            );
        }
        // `Duration::MAX`: nothing to turn for before the clock's end (idle, or only
        // deadlines past it). The driver waits for a wake only, with no timer.
        let waits_for_a_wake = plan == Duration::MAX;
        // Arm something while the driver sleeps, now and then (an idle driver sleeps
        // until something is armed).
        if armed < arms && (waits_for_a_wake || rng.below(3) == 0) {
            let gap = if waits_for_a_wake {
                ticks(tick, 1 << 33).as_nanos()
            } else {
                plan.saturating_sub(now).as_nanos()
            };
            let at =
                (now.as_nanos() + u128::from(rng.next()) % gap.max(1)).min(CLOCK_END.as_nanos());
            wheel.clock().set(duration_of(at));
            let n = match rng.below(4) {
                0 => rng.below(8),
                1 => SPREAD[rng.below(SPREAD.len() as u64) as usize],
                2 => rng.below(1 << 33),
                _ => rng.below(1 << 38),
            };
            let duration = ticks(tick, n) + ns(rng.below(tick_ns as u64));
            let waker = CountingWaker::new();
            let mut sleep = Box::pin(wheel.sleep(duration));
            if waker.poll(sleep.as_mut()).is_pending() {
                live.push(Armed {
                    sleep,
                    waker,
                    requested: at + duration.as_nanos(),
                });
            }
            armed += 1;
        }
        // Sleep until the plan, unless woken.
        if driver.wakes() == wakes_seen {
            if waits_for_a_wake {
                if armed == arms {
                    break;
                }
                continue; // sleeping until the next arm
            }
            wheel.clock().set(plan.min(CLOCK_END));
        }
        wheel.register_driver(&driver.waker);
        wakes_seen = driver.wakes();
        plan = wheel.turn();
        let now = wheel.clock().now().as_nanos();
        live.retain_mut(|a| {
            if a.waker.wakes() > 0 {
                assert!(
                    now >= a.requested,
                    "woken early: {} ns at {now}",
                    a.requested
                );
                assert!(a.waker.poll(a.sleep.as_mut()).is_ready());
                fired += 1;
                false
            } else {
                assert!(
                    now < a.requested + 2 * tick_ns,
                    "the driver overslept a deadline due at {} ns: now {now}",
                    a.requested
                );
                true
            }
        });
        if armed == arms && live.iter().all(|a| a.requested >= CLOCK_END.as_nanos()) {
            break;
        }
    }
    assert!(fired > 0);
    for a in &live {
        assert!(
            a.requested + 2 * tick_ns > CLOCK_END.as_nanos(),
            "a deadline due at {} ns never fired: the driver was never woken for it",
            a.requested
        );
    }
    let stats = wheel.stats();
    assert_eq!(stats.lateness[2] + stats.lateness[3], 0, "{stats}");
}

#[test]
fn a_driver_that_sleeps_until_its_plan_never_oversleeps_across_wraps() {
    let near_2_32 = |tick| ticks(tick, (1 << 32) - 5);
    let cases = [
        (TICK, Duration::ZERO),
        (TICK, near_2_32(TICK)),
        (TICK, ticks(TICK, (1 << 31) - 3)),
        (TICK, ticks(TICK, (3 << 36) - 100)),
        (
            Duration::from_micros(1),
            near_2_32(Duration::from_micros(1)),
        ),
        (ns(1), near_2_32(ns(1))),
        (TICK, CLOCK_END - Duration::from_secs(1 << 33)),
        (ns(1), CLOCK_END - ns(1 << 40)),
    ];
    for (seed, (tick, start)) in cases.into_iter().enumerate() {
        sleeping_driver(tick, start, seed as u64 + 11, 300);
    }
}

// ---- a full wheel under load ----------------------------------------------------------

#[test]
fn a_full_fixed_wheel_under_threads_is_never_early_never_hangs_and_counts_degraded_polls() {
    // A 4-entry wheel and 4 threads of deadlines: the wheel is full (4 one-hour sleeps hold
    // it) for the first part of the run, then mostly full. Inner futures are sleeps on a
    // second wheel on the same clock, finishing just before, at, or just after their
    // deadline. One thread turns both wheels, a tick at a time.
    const THREADS: usize = 4;
    let per_thread: u64 = if cfg!(debug_assertions) { 60 } else { 1000 };
    static CLOCK: ManualClock = ManualClock::new();
    static FULL: Wheel<&ManualClock, Fixed<4>> = Wheel::fixed(&CLOCK, TICK);
    static INNER: Wheel<&ManualClock, Growable> = Wheel::growable(&CLOCK, TICK);
    static DONE: [AtomicU64; THREADS] = [const { AtomicU64::new(0) }; THREADS];
    let w = CountingWaker::new();
    let mut blockers: Vec<_> = (0..4)
        .map(|_| Box::pin(FULL.sleep(Duration::from_secs(3600))))
        .collect();
    for b in &mut blockers {
        assert!(w.poll(b.as_mut()).is_pending());
    }
    assert_eq!(FULL.occupied(), 4);

    let report = || {
        let done: Vec<u64> = DONE.iter().map(|d| d.load(SeqCst)).collect();
        format!(
            "deadlines done per thread {done:?} of {per_thread}; clock {:?}; {}",
            CLOCK.now(),
            FULL.stats()
        )
    };
    watchdog("full-wheel", report, move || {
        let stop = AtomicBool::new(false);
        let stop = &stop;
        thread::scope(|s| {
            let ticker = s.spawn(move || {
                let mut blockers = Some(blockers);
                while !stop.load(SeqCst) {
                    CLOCK.advance(TICK / 2);
                    let _ = FULL.turn();
                    let _ = INNER.turn();
                    // Free the wheel's entries, under load, once the full wheel has been
                    // seen by the workers for a while.
                    if CLOCK.now() > ms(100) && FULL.degraded_polls() > 0 {
                        blockers = None;
                    }
                    thread::yield_now();
                }
                drop(blockers);
            });
            let workers: Vec<_> = (0..THREADS)
                .map(|t| {
                    s.spawn(move || {
                        let mut rng = Rng(0x9e37_79b9 + t as u64);
                        let mut outcomes = [0u64; 2];
                        for _ in 0..per_thread {
                            let d = ticks(TICK, rng.below(9)) + ns(rng.below(1_000_000));
                            let inner_d = match rng.below(4) {
                                0 => d.saturating_sub(TICK),
                                1 => d,
                                2 => d + ns(1),
                                _ => d + TICK,
                            };
                            let t0 = CLOCK.now();
                            let r =
                                futures_executor::block_on(FULL.deadline(d, INNER.sleep(inner_d)));
                            let end = CLOCK.now();
                            match r {
                                Ok(()) => {
                                    assert!(end >= t0 + inner_d, "inner sleep early");
                                    outcomes[0] += 1;
                                }
                                Err(e) => {
                                    assert_eq!(e.duration(), d);
                                    assert!(
                                        end >= t0 + d,
                                        "fired early: {d:?} from {t0:?} at {end:?}"
                                    );
                                    outcomes[1] += 1;
                                }
                            }
                            DONE[t].fetch_add(1, SeqCst);
                        }
                        outcomes
                    })
                })
                .collect();
            let outcomes: Vec<[u64; 2]> = workers.into_iter().map(join).collect();
            stop.store(true, SeqCst);
            join(ticker);
            let total: u64 = outcomes.iter().map(|o| o[0] + o[1]).sum();
            assert_eq!(total, per_thread * THREADS as u64);
        });
    });
    let _ = FULL.turn();
    let _ = INNER.turn();
    let stats = FULL.stats();
    assert!(
        stats.degraded_polls > 0,
        "no poll found the wheel full: {stats}"
    );
    assert_eq!(FULL.occupied(), 0, "{stats}");
    assert_eq!(INNER.occupied(), 0, "{}", INNER.stats());
    assert_eq!(stats.armed, stats.fired + stats.cancelled, "{stats}");
}

// ---- an inner future that panics ------------------------------------------------------

/// An inner future that is pending until told to panic (while polled, or when dropped).
#[derive(Default)]
struct Bomb {
    polls: Arc<AtomicUsize>,
    ready_on_poll: Arc<AtomicBool>,
    explode_on_poll: Arc<AtomicBool>,
    explode_on_drop: Arc<AtomicBool>,
    drops: Arc<AtomicUsize>,
}

impl Bomb {
    fn handle(&self) -> Self {
        Self {
            polls: self.polls.clone(),
            ready_on_poll: self.ready_on_poll.clone(),
            explode_on_poll: self.explode_on_poll.clone(),
            explode_on_drop: self.explode_on_drop.clone(),
            drops: self.drops.clone(),
        }
    }
}

impl Future for Bomb {
    type Output = ();

    fn poll(self: Pin<&mut Self>, _: &mut Context<'_>) -> Poll<()> {
        self.polls.fetch_add(1, SeqCst);
        if self.explode_on_poll.load(SeqCst) {
            panic!("inner future exploded while polled");
        }
        if self.ready_on_poll.load(SeqCst) {
            return Poll::Ready(());
        }
        Poll::Pending
    }
}

impl Drop for Bomb {
    fn drop(&mut self) {
        self.drops.fetch_add(1, SeqCst);
        if self.explode_on_drop.swap(false, SeqCst) && !thread::panicking() {
            panic!("inner future exploded while dropped");
        }
    }
}

fn quietly<R>(f: impl FnOnce() -> R) -> thread::Result<R> {
    catch_unwind(AssertUnwindSafe(f))
}

#[test]
fn an_inner_future_that_panics_releases_its_entry_and_the_wheel_keeps_working() {
    fn check<S: Storage>(wheel: &Wheel<ManualClock, S>) {
        let w = CountingWaker::new();

        // At the first poll, before anything is armed.
        let bomb = Bomb::default();
        bomb.explode_on_poll.store(true, SeqCst);
        let mut d = Box::pin(wheel.deadline(ms(10), bomb.handle()));
        assert!(quietly(|| w.poll(d.as_mut())).is_err());
        assert_eq!(wheel.occupied(), 0, "armed by a panicking first poll");
        drop(d);
        assert_eq!(bomb.drops.load(SeqCst), 1, "the inner future, once");

        // At a later poll: the deadline is armed, and still owns its entry after the
        // panic; dropping it (as an executor drops a panicked task) releases it.
        let bomb = Bomb::default();
        let mut d = Box::pin(wheel.deadline(ms(10), bomb.handle()));
        assert!(w.poll(d.as_mut()).is_pending());
        assert_eq!(wheel.occupied(), 1);
        bomb.explode_on_poll.store(true, SeqCst);
        assert!(quietly(|| w.poll(d.as_mut())).is_err());
        drop(d);
        let _ = wheel.turn();
        assert_eq!(wheel.occupied(), 0, "a panicked deadline's entry leaked");

        // The deadline owned by the panicking frame: dropped while unwinding.
        let bomb = Bomb::default();
        let bomb_handle = bomb.handle();
        assert!(
            quietly(|| {
                let mut d = Box::pin(wheel.deadline(ms(10), bomb_handle));
                assert!(w.poll(d.as_mut()).is_pending());
                bomb.explode_on_poll.store(true, SeqCst);
                let _ = w.poll(d.as_mut());
            })
            .is_err()
        );
        let _ = wheel.turn();
        assert_eq!(wheel.occupied(), 0, "an entry leaked through unwinding");

        // The inner future panics in its destructor, run by the fire: the entry has been
        // released already, and the inner future is dropped once.
        let bomb = Bomb::default();
        let mut d = Box::pin(wheel.deadline(ms(10), bomb.handle()));
        assert!(w.poll(d.as_mut()).is_pending());
        bomb.explode_on_drop.store(true, SeqCst);
        wheel.advance(ms(10));
        assert!(quietly(|| w.poll(d.as_mut())).is_err());
        assert_eq!(wheel.occupied(), 0, "the fired entry leaked");
        drop(d);
        assert_eq!(bomb.drops.load(SeqCst), 1, "dropped twice, or never");

        // The inner future completes, and panics in its destructor: dropped once, and the
        // entry is released when the deadline is dropped (as the task is).
        let bomb = Bomb::default();
        let mut d = Box::pin(wheel.deadline(ms(10), bomb.handle()));
        assert!(w.poll(d.as_mut()).is_pending());
        bomb.ready_on_poll.store(true, SeqCst);
        bomb.explode_on_drop.store(true, SeqCst);
        assert!(quietly(|| w.poll(d.as_mut())).is_err());
        drop(d);
        let _ = wheel.turn();
        assert_eq!(wheel.occupied(), 0, "the completed deadline's entry leaked");
        assert_eq!(bomb.drops.load(SeqCst), 1, "dropped twice, or never");

        // A pending deadline dropped, whose inner future panics in its destructor: the
        // entry is released all the same, and the inner future dropped once.
        let bomb = Bomb::default();
        let mut d = Box::pin(wheel.deadline(ms(10), bomb.handle()));
        assert!(w.poll(d.as_mut()).is_pending());
        bomb.explode_on_drop.store(true, SeqCst);
        assert!(quietly(move || drop(d)).is_err());
        let _ = wheel.turn();
        assert_eq!(wheel.occupied(), 0, "the dropped deadline's entry leaked");
        assert_eq!(bomb.drops.load(SeqCst), 1, "dropped twice, or never");

        // The same, on a timer that fires at the first pending poll.
        let bomb = Bomb::default();
        bomb.explode_on_drop.store(true, SeqCst);
        let mut d = Box::pin(wheel.deadline(Duration::ZERO, bomb.handle()));
        assert!(quietly(|| w.poll(d.as_mut())).is_err());
        drop(d);
        assert_eq!(bomb.drops.load(SeqCst), 1);

        // The wheel still works: a deadline fires on time, a met one is Ok.
        let mut d = Box::pin(wheel.deadline(ms(3), pending::<()>()));
        let mut met = Box::pin(wheel.deadline(ms(3), ready(5)));
        assert!(w.poll(d.as_mut()).is_pending());
        assert_eq!(w.poll(met.as_mut()), Poll::Ready(Ok(5)));
        wheel.advance(ms(3) - ns(1));
        assert!(w.poll(d.as_mut()).is_pending());
        wheel.advance(ns(1));
        assert_eq!(is_elapsed(w.poll(d.as_mut())).duration(), ms(3));
        assert_eq!(wheel.occupied(), 0);
        let stats = wheel.stats();
        assert_eq!(stats.armed, stats.fired + stats.cancelled, "{stats}");
    }
    check(&Wheel::<ManualClock, Fixed<2>>::fixed(
        ManualClock::new(),
        TICK,
    ));
    check(&Wheel::<ManualClock, Growable>::growable(
        ManualClock::starting_at(ticks(TICK, (1 << 32) - 7)),
        TICK,
    ));
}

/// A waker whose destructor panics (a bug in some executor).
struct PanicsOnDrop;

impl Wake for PanicsOnDrop {
    fn wake(self: Arc<Self>) {}
}

impl Drop for PanicsOnDrop {
    fn drop(&mut self) {
        if !thread::panicking() {
            panic!("waker dropped");
        }
    }
}

/// Polls `d` once (it arms) with a waker whose drop panics, and lets go of that waker:
/// the entry holds its last clone, so dropping that one panics.
fn poll_leaving_a_bomb<F: Future>(d: Pin<&mut F>) {
    let bomb = Waker::from(Arc::new(PanicsOnDrop));
    assert!(d.poll(&mut Context::from_waker(&bomb)).is_pending());
    drop(bomb);
}

#[test]
fn a_waker_that_panics_when_replaced_leaves_the_entry_with_its_one_owner() {
    // Re-polling with another waker drops the old one inside the wheel; its panic unwinds
    // through the deadline's poll. The entry is released exactly once (as the poll
    // unwinds), the deadline is poisoned, and nothing releases the entry again under a
    // later deadline that reused it.
    let wheel: Wheel<ManualClock, Fixed<4>> = Wheel::fixed(ManualClock::new(), TICK);
    let w = CountingWaker::new();
    let mut d = Box::pin(wheel.sleep(ms(50)));
    poll_leaving_a_bomb(d.as_mut());
    wheel.advance(Duration::ZERO); // the driver takes the entry in
    assert!(
        quietly(|| w.poll(d.as_mut())).is_err(),
        "the old waker's drop panics"
    );
    wheel.advance(Duration::ZERO);
    assert_eq!(wheel.occupied(), 0, "released once, as the poll unwound");
    let again = quietly(|| w.poll(d.as_mut())).unwrap_err();
    assert_eq!(
        again.downcast_ref::<&str>(),
        Some(&"a deadline polled again after its poll panicked")
    );

    // Another deadline on the same entry, then the first one dropped: no second release.
    let other_w = CountingWaker::new();
    let mut other = Box::pin(wheel.sleep(ms(100)));
    assert!(other_w.poll(other.as_mut()).is_pending());
    wheel.advance(Duration::ZERO);
    drop(d);
    wheel.advance(Duration::ZERO);
    assert_eq!(wheel.occupied(), 1, "only `other` holds an entry");
    wheel.advance(ms(100));
    assert_eq!(other_w.wakes(), 1, "`other` fired and was woken");
    assert!(other_w.poll(other.as_mut()).is_ready());
    drop(other);
    assert_eq!(wheel.occupied(), 0);
    let stats = wheel.stats();
    assert_eq!(stats.armed, stats.fired + stats.cancelled, "{stats}");
}

#[test]
fn a_waker_that_panics_when_dropped_with_its_cancelled_deadline_loses_no_entry() {
    // The entry holds the last clone of a waker whose drop panics; the deadline is
    // dropped (cancelled), once before the driver took its entry in and once after. The
    // panic may reach whoever drops the deadline, but never a turn of the driver, and the
    // wheel's only entry is not lost with it.
    let wheel: Wheel<ManualClock, Fixed<1>> = Wheel::fixed(ManualClock::new(), TICK);
    for taken_in in [false, true] {
        let mut d = Box::pin(wheel.sleep(ms(50)));
        poll_leaving_a_bomb(d.as_mut());
        if taken_in {
            wheel.advance(Duration::ZERO);
        }
        let _ = quietly(|| drop(d));
        assert!(
            quietly(|| wheel.advance(Duration::ZERO)).is_ok(),
            "a turn panicked dropping a cancelled deadline's waker (taken in: {taken_in})"
        );
        assert_eq!(wheel.occupied(), 0, "taken in: {taken_in}");
        let w = CountingWaker::new();
        let mut next = pin!(wheel.sleep(ms(5)));
        assert!(w.poll(next.as_mut()).is_pending());
        assert_eq!(
            wheel.occupied(),
            1,
            "the only entry was lost (taken in: {taken_in})"
        );
        wheel.advance(ms(5));
        assert!(w.poll(next.as_mut()).is_ready());
    }
    assert_eq!(wheel.degraded_polls(), 0);
}

#[test]
fn a_driver_waker_that_panics_when_an_arm_wakes_it_loses_no_entry() {
    // An arm earlier than the plan wakes the driver, on the arming thread; that waker's
    // panic unwinds through the deadline's first poll. The entry must come back (the
    // deadline already held it), and the wheel's only entry serves the next deadline.
    let wheel: Wheel<ManualClock, Fixed<1>> = Wheel::fixed(ManualClock::new(), TICK);
    // Turned before the driver registers: a turn out of idle wakes the drivers too.
    assert!(wheel.turn() > TICK, "the driver plans beyond the next tick");
    wheel.register_driver(&Waker::from(Arc::new(PanickingWaker)));
    let w = CountingWaker::new();
    let mut d = Box::pin(wheel.sleep(ms(1)));
    assert!(
        quietly(|| w.poll(d.as_mut())).is_err(),
        "the driver's waker panics"
    );
    drop(d);
    wheel.advance(Duration::ZERO);
    assert_eq!(wheel.occupied(), 0, "the entry was lost with the panic");
    let mut next = pin!(wheel.sleep(ms(5)));
    assert!(w.poll(next.as_mut()).is_pending());
    wheel.advance(ms(5));
    assert!(w.poll(next.as_mut()).is_ready());
    assert_eq!(wheel.degraded_polls(), 0);
}

/// A waker whose `clone` panics (a bug in some executor), built by hand: `Wake`'s clone is
/// an `Arc` clone, which cannot panic.
fn clone_panics() -> Waker {
    use core::task::{RawWaker, RawWakerVTable};
    fn clone(_: *const ()) -> RawWaker {
        panic!("waker clone exploded");
    }
    fn noop(_: *const ()) {}
    static VTABLE: RawWakerVTable = RawWakerVTable::new(clone, noop, noop, noop);
    // SAFETY: every function of the vtable ignores the data pointer; none touches memory.
    unsafe { Waker::from_raw(RawWaker::new(core::ptr::null(), &VTABLE)) }
}

#[test]
fn a_waker_whose_clone_panics_at_the_first_poll_takes_no_entry() {
    // The clone happens as the deadline arms; its panic unwinds through the poll. The
    // wheel's only entry must not be lost with it: the next deadline arms normally.
    let wheel: Wheel<ManualClock, Fixed<1>> = Wheel::fixed(ManualClock::new(), TICK);
    let mut d = Box::pin(wheel.sleep(ms(5)));
    let bomb = clone_panics();
    assert!(quietly(|| Pin::new(&mut d).poll(&mut Context::from_waker(&bomb))).is_err());
    drop(d);
    let w = CountingWaker::new();
    let mut next = pin!(wheel.sleep(ms(5)));
    assert!(w.poll(next.as_mut()).is_pending());
    assert_eq!(wheel.occupied(), 1, "the only entry was lost");
    wheel.advance(ms(5));
    assert_eq!(w.wakes(), 1);
    assert!(w.poll(next.as_mut()).is_ready());
    assert_eq!(wheel.degraded_polls(), 0, "the next deadline ran degraded");
}

#[test]
fn a_deadline_polled_again_after_its_poll_panicked_panics_without_polling_its_future() {
    // The first poll panics in the waker's `clone` as the deadline arms. Polled again once
    // its inner future is ready (and past its time), it must panic as documented, not
    // poll the future and hand out its `Ok`.
    let wheel: Wheel<ManualClock, Fixed<4>> = Wheel::fixed(ManualClock::new(), TICK);
    let ready_now = Arc::new(AtomicBool::new(false));
    let flag = ready_now.clone();
    let inner = core::future::poll_fn(move |_| {
        if flag.load(SeqCst) {
            Poll::Ready(7)
        } else {
            Poll::Pending
        }
    });
    let mut d = Box::pin(wheel.deadline(ms(5), inner));
    let bomb = clone_panics();
    assert!(quietly(|| Pin::new(&mut d).poll(&mut Context::from_waker(&bomb))).is_err());
    ready_now.store(true, SeqCst);
    wheel.advance(ms(50));
    let w = CountingWaker::new();
    let again = quietly(|| w.poll(d.as_mut())).expect_err("polled again after a panic");
    assert_eq!(
        again.downcast_ref::<&str>(),
        Some(&"a deadline polled again after its poll panicked")
    );
}

#[test]
fn a_waker_whose_clone_panics_when_registered_leaves_the_entry_usable() {
    // A deadline the driver took in is polled again with a waker whose clone panics,
    // inside the waker slot's registration. The slot must be given back as the poll
    // unwinds: a later deadline that reuses the entry is woken when it fires. So must the
    // driver's slot, after a driver's registration panicked the same way.
    let wheel: Wheel<ManualClock, Fixed<1>> = Wheel::fixed(ManualClock::new(), TICK);
    let w = CountingWaker::new();
    let mut d = Box::pin(wheel.sleep(ms(50)));
    assert!(w.poll(d.as_mut()).is_pending());
    wheel.advance(Duration::ZERO); // the driver takes the entry in
    let bomb = clone_panics();
    assert!(quietly(|| Pin::new(&mut d).poll(&mut Context::from_waker(&bomb))).is_err());
    drop(d);
    wheel.advance(Duration::ZERO); // reclaims the entry (a debug check fired here)
    assert_eq!(wheel.occupied(), 0);

    let other_w = CountingWaker::new();
    let mut other = pin!(wheel.sleep(ms(5)));
    assert!(other_w.poll(other.as_mut()).is_pending());
    wheel.advance(ms(5));
    assert_eq!(
        other_w.wakes(),
        1,
        "the deadline on the reused entry was not woken"
    );
    assert!(other_w.poll(other.as_mut()).is_ready());

    assert!(quietly(|| wheel.register_driver(&bomb)).is_err());
    let driver = CountingWaker::new();
    wheel.register_driver(&driver.waker);
    let plan = wheel.turn();
    assert!(
        plan > wheel.clock().now() + TICK,
        "the driver plans a turn beyond the next tick"
    );
    let mut early = pin!(wheel.sleep(ms(1)));
    assert!(w.poll(early.as_mut()).is_pending());
    assert!(
        driver.wakes() > 0,
        "the driver's slot stayed busy: no arm wakes it"
    );
}

/// A waker whose `wake` panics (a bug in some executor or adapter).
struct PanickingWaker;

impl Wake for PanickingWaker {
    fn wake(self: Arc<Self>) {
        panic!("waker exploded");
    }
}

#[test]
fn a_waker_that_panics_when_its_deadline_fires_does_not_stop_the_wheel() {
    // The panic reaches the thread that turns the wheel (here the one calling `advance`),
    // like any panic in a waker. But the wheel must keep working for every other
    // deadline: one task's broken waker must not silence the timers of all the others
    // (on the global wheel, every deadline in the process).
    let wheel: Wheel<ManualClock, Fixed<4>> = Wheel::fixed(ManualClock::new(), TICK);
    let boom = Waker::from(Arc::new(PanickingWaker));
    let mut broken = pin!(wheel.sleep(ms(1)));
    assert!(
        broken
            .as_mut()
            .poll(&mut Context::from_waker(&boom))
            .is_pending()
    );
    assert!(
        quietly(|| wheel.advance(ms(1))).is_err(),
        "the wake did not panic"
    );

    let w = CountingWaker::new();
    let mut later = pin!(wheel.sleep(ms(1)));
    assert!(w.poll(later.as_mut()).is_pending());
    wheel.advance(ms(3));
    assert_eq!(
        w.wakes(),
        1,
        "after one waker panicked, the wheel no longer fires anything: {}",
        wheel.stats()
    );
    assert!(w.poll(later.as_mut()).is_ready());
}

// ---- moving a deadline between threads ------------------------------------------------

#[test]
fn a_deadline_moved_between_threads_wakes_the_waker_of_its_last_poll() {
    let wheel: Wheel<ManualClock, Growable> = Wheel::growable(ManualClock::new(), TICK);
    let wakers: Vec<CountingWaker> = (0..4).map(|_| CountingWaker::new()).collect();
    let mut d = Box::pin(wheel.deadline(ms(10), pending::<()>()));
    let mut s = Box::pin(wheel.sleep(ms(10)));
    thread::scope(|scope| {
        // Each hop polls on another thread, with that thread's waker.
        for w in &wakers[..3] {
            (d, s) = join(scope.spawn(move || {
                assert!(w.poll(d.as_mut()).is_pending());
                assert!(w.poll(s.as_mut()).is_pending());
                (d, s)
            }));
        }
        wheel.advance(ms(10));
        assert_eq!(
            wakers[0].wakes() + wakers[1].wakes(),
            0,
            "an old waker was woken"
        );
        assert_eq!(wakers[2].wakes(), 2, "the latest waker was not woken");
        // And it completes on yet another thread.
        let w = &wakers[3];
        join(scope.spawn(move || {
            assert_eq!(is_elapsed(w.poll(d.as_mut())).duration(), ms(10));
            assert!(w.poll(s.as_mut()).is_ready());
        }));
    });
    assert_eq!(wheel.occupied(), 0);
}

/// Sets a flag and unparks a thread when woken.
struct Flag {
    woken: AtomicBool,
    thread: thread::Thread,
}

impl Wake for Flag {
    fn wake(self: Arc<Self>) {
        self.wake_by_ref();
    }

    fn wake_by_ref(self: &Arc<Self>) {
        self.woken.store(true, SeqCst);
        self.thread.unpark();
    }
}

type Hopping = Pin<Box<Deadline<'static, Pending<()>>>>;

/// A deadline on its way around the ring of threads.
struct Hop {
    id: usize,
    deadline: Hopping,
    hops_left: u32,
    /// Clock reading before its first poll, and its duration.
    t0: Duration,
    d: Duration,
}

#[test]
fn a_deadline_hopping_threads_while_the_wheel_turns_never_loses_its_wakeup() {
    // Deadlines travel a ring of threads, polled on each with a fresh waker, while another
    // thread turns the wheel. When a deadline stops travelling it waits for the waker of
    // its last poll only: a lost wakeup leaves it waiting, and the watchdog names it.
    const RING: usize = 3;
    // Under Miri (`ci/miri.sh`, several scheduling seeds) a few dozen: enough for every
    // cross-thread hand-off of an entry and its waker slot to run there.
    let count = if cfg!(miri) {
        24
    } else if cfg!(debug_assertions) {
        400
    } else {
        4000
    };
    static WHEEL: Wheel<ManualClock, Growable> = Wheel::growable(ManualClock::new(), TICK);
    let waiting: Arc<Mutex<Vec<usize>>> = Arc::default();
    let done = Arc::new(AtomicUsize::new(0));
    let report = {
        let (waiting, done) = (waiting.clone(), done.clone());
        move || {
            format!(
                "{} of {count} done; waiting on their last waker: {:?}; clock {:?}; {}",
                done.load(SeqCst),
                waiting.lock().unwrap(),
                WHEEL.clock().now(),
                WHEEL.stats()
            )
        }
    };
    watchdog("hopping", report, move || {
        let (senders, receivers): (Vec<_>, Vec<_>) =
            (0..RING).map(|_| mpsc::channel::<Hop>()).unzip();
        let stop = AtomicBool::new(false);
        let stop = &stop;
        thread::scope(|s| {
            let ticker = s.spawn(move || {
                while !stop.load(SeqCst) {
                    WHEEL.advance(TICK / 8);
                    thread::yield_now();
                }
            });
            for (i, rx) in receivers.into_iter().enumerate() {
                let next = senders[(i + 1) % RING].clone();
                let (waiting, done) = (waiting.clone(), done.clone());
                s.spawn(move || {
                    let mut parked: Vec<(Hop, Arc<Flag>)> = Vec::new();
                    loop {
                        match rx.recv_timeout(Duration::from_micros(200)) {
                            Ok(mut hop) => {
                                let flag = Arc::new(Flag {
                                    woken: AtomicBool::new(false),
                                    thread: thread::current(),
                                });
                                let waker = Waker::from(flag.clone());
                                let poll =
                                    hop.deadline.as_mut().poll(&mut Context::from_waker(&waker));
                                if let Poll::Ready(r) = poll {
                                    let now = WHEEL.clock().now();
                                    assert!(r.is_err());
                                    assert!(now >= hop.t0 + hop.d, "deadline {} early", hop.id);
                                    done.fetch_add(1, SeqCst);
                                } else if hop.hops_left > 0 {
                                    hop.hops_left -= 1;
                                    next.send(hop).unwrap();
                                } else {
                                    waiting.lock().unwrap().push(hop.id);
                                    parked.push((hop, flag));
                                }
                            }
                            Err(RecvTimeoutError::Timeout | RecvTimeoutError::Disconnected) => {
                                if done.load(SeqCst) == count {
                                    break;
                                }
                            }
                        }
                        // Poll the parked deadlines whose last waker was woken.
                        let mut i = 0;
                        while i < parked.len() {
                            if !parked[i].1.woken.load(SeqCst) {
                                i += 1;
                                continue;
                            }
                            let (mut hop, _) = parked.swap_remove(i);
                            let flag = Arc::new(Flag {
                                woken: AtomicBool::new(false),
                                thread: thread::current(),
                            });
                            let waker = Waker::from(flag.clone());
                            match hop.deadline.as_mut().poll(&mut Context::from_waker(&waker)) {
                                Poll::Ready(r) => {
                                    assert!(r.is_err());
                                    let now = WHEEL.clock().now();
                                    assert!(now >= hop.t0 + hop.d, "deadline {} early", hop.id);
                                    waiting.lock().unwrap().retain(|&id| id != hop.id);
                                    done.fetch_add(1, SeqCst);
                                }
                                // A spurious wake (a register racing the fire): wait again.
                                Poll::Pending => parked.push((hop, flag)),
                            }
                        }
                    }
                });
            }
            let mut rng = Rng(77);
            for id in 0..count {
                let d = ticks(TICK, rng.below(6)) + ns(rng.below(1_000_000));
                let t0 = WHEEL.clock().now();
                let hop = Hop {
                    id,
                    deadline: Box::pin(WHEEL.deadline(d, pending())),
                    hops_left: rng.below(5) as u32,
                    t0,
                    d,
                };
                senders[id % RING].send(hop).unwrap();
                if id % 64 == 0 {
                    thread::sleep(Duration::from_micros(100));
                }
            }
            drop(senders);
            while done.load(SeqCst) < count {
                thread::sleep(Duration::from_millis(1));
            }
            stop.store(true, SeqCst);
            join(ticker);
        });
    });
    let _ = WHEEL.advance(Duration::ZERO);
    assert_eq!(WHEEL.occupied(), 0, "{}", WHEEL.stats());
}

// ---- a growable wheel grown by two threads at once ------------------------------------

#[test]
fn two_threads_arming_the_first_deadlines_of_a_growable_wheel_each_get_an_entry() {
    // Both threads find the wheel's first segment missing and allocate it; one installs
    // its copy and the other frees its own and uses the winner's. Each deadline gets an
    // entry of its own, fires once, and nothing leaks.
    let rounds = if cfg!(miri) { 4 } else { 200 };
    for _ in 0..rounds {
        let wheel: Wheel<ManualClock, Growable> = Wheel::growable(ManualClock::new(), TICK);
        let start = std::sync::Barrier::new(2);
        let fired: usize = thread::scope(|s| {
            let threads: Vec<_> = (0..2)
                .map(|_| {
                    s.spawn(|| {
                        let w = CountingWaker::new();
                        let mut sleep = Box::pin(wheel.sleep(TICK));
                        start.wait();
                        assert!(w.poll(sleep.as_mut()).is_pending());
                        (sleep, w)
                    })
                })
                .collect();
            let mut armed: Vec<_> = threads.into_iter().map(join).collect();
            assert_eq!(wheel.occupied(), 2, "{}", wheel.stats());
            wheel.advance(TICK);
            armed
                .iter_mut()
                .map(|(sleep, w)| {
                    assert_eq!(w.wakes(), 1);
                    usize::from(w.poll(sleep.as_mut()).is_ready())
                })
                .sum()
        });
        assert_eq!(fired, 2);
        assert_eq!(wheel.occupied(), 0);
    }
}

// ---- dropping a deadline while the driver fires it ------------------------------------

#[test]
fn deadlines_dropped_on_other_threads_while_the_driver_fires_them() {
    // A 32-entry wheel, so entries are reused constantly (a driver touching an entry after
    // its deadline let go would hit the next deadline's). One thread turns the wheel a
    // tick at a time; deadlines of 0 to 2 ticks are armed on the main thread and dropped
    // by two other threads after a random spin, some after one more poll: right around
    // the moment the turning thread fires them. The wheel's debug assertions check every
    // transition.
    // Under Miri (`ci/miri.sh`, several scheduling seeds) a few rounds with short spins.
    let (rounds, max_spin) = if cfg!(miri) {
        (12, 200)
    } else if cfg!(debug_assertions) {
        (400, 20_000)
    } else {
        (2000, 20_000)
    };
    const BATCH: usize = 12;
    static WHEEL: Wheel<ManualClock, Fixed<32>> = Wheel::fixed(ManualClock::new(), TICK);
    static ROUND: AtomicUsize = AtomicUsize::new(0);
    let report = || {
        format!(
            "round {} of {rounds}; {}",
            ROUND.load(SeqCst),
            WHEEL.stats()
        )
    };
    let outcome_counts = watchdog("drop-while-firing", report, move || {
        let stop = AtomicBool::new(false);
        let stop = &stop;
        thread::scope(|s| {
            let ticker = s.spawn(move || {
                while !stop.load(SeqCst) {
                    WHEEL.advance(TICK / 2);
                }
            });
            type Job = (Pin<Box<Sleep<'static>>>, u64, bool);
            let (senders, droppers): (Vec<mpsc::Sender<Job>>, Vec<_>) = (0..2)
                .map(|_| {
                    let (tx, rx) = mpsc::channel::<Job>();
                    let handle = s.spawn(move || {
                        let w = CountingWaker::new();
                        let mut fired_seen = 0usize;
                        for (mut sleep, spin, poll_first) in rx {
                            for _ in 0..spin {
                                core::hint::spin_loop();
                            }
                            if poll_first && w.poll(sleep.as_mut()).is_ready() {
                                fired_seen += 1;
                            }
                            drop(sleep);
                        }
                        fired_seen
                    });
                    (tx, handle)
                })
                .unzip();
            let mut rng = Rng(5);
            let w = CountingWaker::new();
            for round in 0..rounds {
                ROUND.store(round, SeqCst);
                for i in 0..BATCH {
                    let d = ticks(TICK, rng.below(3)) + ns(rng.below(1_000_000));
                    let mut sleep = Box::pin(WHEEL.sleep(d));
                    if w.poll(sleep.as_mut()).is_ready() {
                        continue;
                    }
                    let job = (sleep, rng.below(max_spin), rng.below(2) == 0);
                    senders[i % 2].send(job).unwrap();
                }
                // Let the droppers catch up now and then, so the wheel does not stay full.
                while WHEEL.occupied() > 2 * BATCH {
                    thread::yield_now();
                }
            }
            drop(senders);
            let seen: usize = droppers.into_iter().map(join).sum();
            stop.store(true, SeqCst);
            join(ticker);
            seen
        })
    });
    let _ = WHEEL.advance(Duration::ZERO);
    let stats = WHEEL.stats();
    assert_eq!(WHEEL.occupied(), 0, "{stats}");
    assert_eq!(stats.armed, stats.fired + stats.cancelled, "{stats}");
    // That the run met both outcomes, which its sizes make certain on real threads. Under
    // Miri a dozen rounds on one scheduling seed may well not: there it checks the
    // hand-offs that did happen for undefined behaviour.
    if !cfg!(miri) {
        assert!(
            stats.fired > 0 && stats.cancelled > 0,
            "no race happened: {stats}"
        );
        assert!(outcome_counts > 0, "no dropper saw a fire: {stats}");
    }
}

// ---- a stopped driver -----------------------------------------------------------------

/// A runtime's sleep that never completes: the test polls the driver by hand.
struct NeverSleeper;

impl Sleeper for NeverSleeper {
    type Sleep = Pending<()>;

    fn sleep_until(&mut self, _: Duration) -> Pending<()> {
        pending()
    }
}

#[test]
fn a_stopped_driver_loses_nothing_and_deadlines_fire_at_the_next_turn() {
    // `Driver` docs: "Dropping the driver stops the wheel: armed deadlines no longer fire
    // until another driver (or `Wheel::turn`) turns it. Nothing is lost; they fire late,
    // once it does."
    let wheel: Wheel<ManualClock, Fixed<8>> = Wheel::fixed(ManualClock::new(), TICK);
    let driver_waker = CountingWaker::new();
    let mut driver = Box::pin(wheel.driver(NeverSleeper));
    assert!(driver_waker.poll(driver.as_mut()).is_pending());

    let ws: Vec<CountingWaker> = (0..4).map(|_| CountingWaker::new()).collect();
    let mut a = pin!(wheel.sleep(ms(10)));
    let mut b = pin!(wheel.deadline(ms(20), pending::<()>()));
    let mut c = pin!(wheel.sleep(Duration::from_secs(30)));
    let mut gone = Box::pin(wheel.sleep(ms(15)));
    assert!(ws[0].poll(a.as_mut()).is_pending());
    assert!(ws[1].poll(b.as_mut()).is_pending());
    assert!(ws[2].poll(c.as_mut()).is_pending());
    assert!(ws[3].poll(gone.as_mut()).is_pending());
    assert!(driver_waker.wakes() > 0, "the first arm wakes the driver");
    assert!(driver_waker.poll(driver.as_mut()).is_pending());
    drop(driver);

    // The clock moves on, nothing turns the wheel: nothing fires, nothing is woken.
    wheel.clock().advance(ms(25));
    drop(gone); // a cancel while stopped
    assert!(ws[0].poll(a.as_mut()).is_pending());
    assert!(ws[1].poll(b.as_mut()).is_pending());
    assert_eq!(ws.iter().map(CountingWaker::wakes).sum::<usize>(), 0);
    assert_eq!(wheel.occupied(), 4);

    // A new driver turns it: the two overdue deadlines fire once each, late, and the
    // cancelled one is reclaimed.
    let mut driver = Box::pin(wheel.driver(NeverSleeper));
    assert!(driver_waker.poll(driver.as_mut()).is_pending());
    assert_eq!((ws[0].wakes(), ws[1].wakes(), ws[2].wakes()), (1, 1, 0));
    assert!(ws[0].poll(a.as_mut()).is_ready());
    assert_eq!(is_elapsed(ws[1].poll(b.as_mut())).duration(), ms(20));
    assert_eq!(ws[3].wakes(), 0, "a cancelled deadline was woken");
    assert_eq!(wheel.occupied(), 1);
    let stats = wheel.stats();
    assert_eq!((stats.fired, stats.cancelled), (2, 1), "{stats}");
    assert_eq!(stats.lateness[3], 2, "both fired 5+ ticks late: {stats}");
    drop(driver);

    // Without any driver, `turn` alone does the same.
    wheel.clock().advance(Duration::from_secs(30));
    assert_eq!(ws[2].wakes(), 0);
    let _ = wheel.turn();
    assert_eq!(ws[2].wakes(), 1);
    assert!(ws[2].poll(c.as_mut()).is_ready());
    assert_eq!(wheel.occupied(), 0);
}

// ---- several drivers on one wheel -----------------------------------------------------

/// A runtime's sleep that never completes, and remembers the time it was asked for.
struct RecordingSleeper(Arc<Mutex<Vec<Duration>>>);

impl Sleeper for RecordingSleeper {
    type Sleep = Pending<()>;

    fn sleep_until(&mut self, at: Duration) -> Pending<()> {
        self.0.lock().unwrap().push(at);
        pending()
    }
}

#[test]
fn a_driver_is_still_woken_after_another_driver_of_its_wheel_stops() {
    // Two drivers, idle: each registered its waker, the second last. The second stops.
    // A deadline armed then must wake the first, which is still there to turn the wheel
    // (with one waker for every driver, the arm woke the stopped one alone).
    let wheel: Wheel<ManualClock, Fixed<8>> = Wheel::fixed(ManualClock::new(), TICK);
    let (first_waker, second_waker) = (CountingWaker::new(), CountingWaker::new());
    let mut first = Box::pin(wheel.driver(NeverSleeper));
    let mut second = Box::pin(wheel.driver(NeverSleeper));
    assert!(first_waker.poll(first.as_mut()).is_pending());
    assert!(second_waker.poll(second.as_mut()).is_pending());
    drop(second);

    let w = CountingWaker::new();
    let mut d = pin!(wheel.deadline(ms(5), pending::<()>()));
    assert!(w.poll(d.as_mut()).is_pending());
    assert!(
        first_waker.wakes() > 0,
        "the remaining driver was not woken"
    );
    wheel.clock().advance(ms(5));
    assert!(first_waker.poll(first.as_mut()).is_pending());
    assert_eq!(w.wakes(), 1, "the remaining driver's turn fired nothing");
    assert!(is_elapsed(w.poll(d.as_mut())).duration() == ms(5));
}

#[test]
fn a_fourth_driver_at_once_turns_the_wheel_every_tick_until_a_place_frees_up() {
    // Three drivers hold the wheel's places for wakers; a fourth has none, so nothing
    // would wake it: it must never wait idle, and sleeps at most a tick at a time. Once
    // one of the three stops, it takes that place and sleeps as the wheel plans.
    let wheel: Wheel<ManualClock, Fixed<8>> = Wheel::fixed(ManualClock::new(), TICK);
    let wakers: Vec<CountingWaker> = (0..4).map(|_| CountingWaker::new()).collect();
    let mut three: Vec<_> = (0..3)
        .map(|_| Box::pin(wheel.driver(NeverSleeper)))
        .collect();
    for (driver, waker) in three.iter_mut().zip(&wakers) {
        assert!(waker.poll(driver.as_mut()).is_pending());
    }
    let asked = Arc::new(Mutex::new(Vec::new()));
    let mut fourth = Box::pin(wheel.driver(RecordingSleeper(asked.clone())));
    // Lingering over, nothing armed: the wheel goes idle.
    let mut plan = wheel.turn();
    while plan != Duration::MAX {
        wheel.clock().set(plan);
        plan = wheel.turn();
    }
    let now = wheel.clock().now();
    assert!(wakers[3].poll(fourth.as_mut()).is_pending());
    let last = *asked
        .lock()
        .unwrap()
        .last()
        .expect("the fourth driver never slept");
    assert!(
        last <= now + TICK,
        "a driver nothing wakes slept until {last:?} at {now:?}"
    );

    // One of the three stops: the fourth takes its place and sleeps as the wheel plans,
    // and is woken when the wheel needs it sooner (here, to reclaim a cancelled deadline).
    drop(three.pop());
    let w = CountingWaker::new();
    let mut d = Box::pin(wheel.deadline(ms(30), pending::<()>()));
    assert!(w.poll(d.as_mut()).is_pending());
    assert!(wakers[3].poll(fourth.as_mut()).is_pending());
    let last = *asked.lock().unwrap().last().unwrap();
    assert!(
        last > now + TICK,
        "the fourth driver still sleeps a tick at a time: {last:?}"
    );
    let before = wakers[3].wakes();
    drop(d);
    assert!(
        wakers[3].wakes() > before,
        "the fourth driver, now in a place, was not woken"
    );
}

#[test]
fn a_driver_whose_waker_panics_does_not_keep_the_wake_from_the_others() {
    // Two drivers; the first one's waker panics when woken. A wake for a sooner turn
    // must still reach the second.
    let wheel: Wheel<ManualClock, Fixed<4>> = Wheel::fixed(ManualClock::new(), TICK);
    // Turned before the drivers register: a turn out of idle wakes the drivers too.
    assert!(wheel.turn() > TICK, "the drivers plan beyond the next tick");
    let mut broken = wheel.driver_slot();
    let mut healthy = wheel.driver_slot();
    assert!(broken.register(&Waker::from(Arc::new(PanickingWaker))));
    let driver = CountingWaker::new();
    assert!(healthy.register(&driver.waker));
    let w = CountingWaker::new();
    let mut d = Box::pin(wheel.sleep(ms(1)));
    assert!(
        quietly(|| w.poll(d.as_mut())).is_err(),
        "the broken waker panics"
    );
    assert_eq!(driver.wakes(), 1, "the healthy driver was not woken");
    drop(d);
    drop((broken, healthy));
}

#[test]
fn a_driver_waker_that_panics_when_a_turn_leaves_idle_keeps_the_wheel_working() {
    // A turn that takes the wheel out of idle wakes the drivers once it has let go of the
    // driver role; a waker that panics then reaches the turn's caller, after the others
    // are woken, and the wheel keeps working.
    let wheel: Wheel<ManualClock, Fixed<4>> = Wheel::fixed(ManualClock::new(), TICK);
    // Idle as a turn left it (a new wheel's first turn does not linger).
    assert_eq!(wheel.turn(), Duration::MAX);
    let mut broken = wheel.driver_slot();
    let mut healthy = wheel.driver_slot();
    assert!(broken.register(&Waker::from(Arc::new(PanickingWaker))));
    let driver = CountingWaker::new();
    assert!(healthy.register(&driver.waker));
    assert!(quietly(|| wheel.turn()).is_err(), "the broken waker panics");
    assert_eq!(driver.wakes(), 1, "the healthy driver was not woken");
    assert!(wheel.next_turn() < Duration::MAX, "the turn's plan stands");
    let w = CountingWaker::new();
    let mut d = pin!(wheel.sleep(ms(2)));
    assert!(w.poll(d.as_mut()).is_pending());
    wheel.advance(ms(2));
    assert!(w.poll(d.as_mut()).is_ready());
    drop((broken, healthy));
}

/// A waker that, when woken, waits for a signal before it returns: it keeps whoever
/// turns the wheel inside the turn.
struct BlockingWaker {
    woken: mpsc::SyncSender<()>,
    resume: Mutex<mpsc::Receiver<()>>,
}

impl Wake for BlockingWaker {
    fn wake(self: Arc<Self>) {
        self.wake_by_ref();
    }

    fn wake_by_ref(self: &Arc<Self>) {
        let _ = self.woken.send(());
        let _ = self.resume.lock().unwrap().recv_timeout(WATCHDOG);
    }
}

#[test]
fn a_turn_left_to_the_role_holder_asks_to_be_turned_again_within_a_tick() {
    // One thread turns the wheel and is held up inside its turn (by a slow waker). A
    // driver's turn meanwhile leaves it a request and returns at once; the holder will
    // plan anew, and nothing tells the driver, so the plan it is given must not be a
    // stale one far ahead (or "idle"): it must be asked to turn again within a tick.
    static WHEEL: std::sync::LazyLock<Wheel<ManualClock, Fixed<8>>> =
        std::sync::LazyLock::new(|| Wheel::fixed(ManualClock::new(), TICK));
    let far = CountingWaker::new();
    let mut later = Box::pin(WHEEL.sleep(ms(30)));
    assert!(far.poll(later.as_mut()).is_pending());
    let _ = WHEEL.turn(); // plans ahead: lingering, then the 30 ms deadline

    let (woken_tx, woken_rx) = mpsc::sync_channel(1);
    let (resume_tx, resume_rx) = mpsc::channel();
    let slow = Waker::from(Arc::new(BlockingWaker {
        woken: woken_tx,
        resume: Mutex::new(resume_rx),
    }));
    let mut soon = Box::pin(WHEEL.sleep(ms(1)));
    assert!(
        soon.as_mut()
            .poll(&mut Context::from_waker(&slow))
            .is_pending()
    );
    WHEEL.clock().advance(ms(1));
    let holder = thread::spawn(|| WHEEL.turn());
    woken_rx
        .recv_timeout(WATCHDOG)
        .expect("the holder never fired the deadline");

    // The holder is inside its turn: this one is left to it.
    let plan = WHEEL.turn();
    resume_tx.send(()).unwrap();
    holder.join().unwrap();
    assert!(plan <= ms(2), "a turn left to the holder planned {plan:?}");
    drop(later);
}

// ---- a manual clock moved backwards ---------------------------------------------------

#[test]
#[should_panic(expected = "ManualClock::set: cannot move the clock backwards from 10ms to 9ms")]
fn setting_a_manual_clock_backwards_panics_with_a_clear_message() {
    let clock = ManualClock::starting_at(ms(10));
    clock.set(ms(9));
}

#[test]
fn a_refused_backwards_set_changes_nothing_and_fires_nothing_early() {
    let wheel: Wheel<ManualClock, Fixed<4>> = Wheel::fixed(ManualClock::new(), TICK);
    let w = CountingWaker::new();
    wheel.advance(ms(100));
    let mut d = pin!(wheel.deadline(ms(10), pending::<()>()));
    assert!(w.poll(d.as_mut()).is_pending());
    // Moving it to the same reading is not backwards.
    wheel.clock().set(ms(100));
    assert!(quietly(|| wheel.clock().set(ms(50))).is_err());
    assert_eq!(
        wheel.clock().now(),
        ms(100),
        "a refused set moved the clock"
    );
    // Turning to an earlier reading (a stale one) is a no-op.
    assert_eq!(wheel.advance_to(ms(50)), ms(110));
    assert!(w.poll(d.as_mut()).is_pending());
    wheel.advance(ms(10) - ns(1));
    assert_eq!(w.wakes(), 0);
    assert!(w.poll(d.as_mut()).is_pending());
    wheel.advance(ns(1));
    assert_eq!(w.wakes(), 1);
    assert!(w.poll(d.as_mut()).is_ready());
    // A turn to a reading ahead of the clock is clamped to the clock: nothing fires early.
    let mut e = pin!(wheel.sleep(ms(5)));
    assert!(w.poll(e.as_mut()).is_pending());
    let _ = wheel.advance_to(ms(200));
    assert_eq!(w.wakes(), 1, "advance_to ran ahead of the clock");
    assert!(w.poll(e.as_mut()).is_pending());
}

// ---- polling after completion ---------------------------------------------------------

#[test]
#[should_panic(expected = "`Budgeted` polled after completion")]
fn polling_a_completed_budget_panics() {
    let wheel: Wheel<ManualClock, Fixed<2>> = Wheel::fixed(ManualClock::new(), TICK);
    let w = CountingWaker::new();
    let mut b = pin!(wheel.budget(ms(5), pending::<()>()));
    assert!(w.poll(b.as_mut()).is_pending());
    wheel.advance(ms(5));
    assert!(w.poll(b.as_mut()).is_ready());
    let _ = w.poll(b.as_mut());
}

#[test]
#[should_panic(expected = "`Deadline` polled after completion")]
fn polling_a_completed_deadline_within_a_budget_panics() {
    let wheel: Wheel<ManualClock, Fixed<2>> = Wheel::fixed(ManualClock::new(), TICK);
    let w = CountingWaker::new();
    let budget = Budget::new(&wheel, ms(3), ms(3));
    let mut d = pin!(wheel.deadline(ms(10), pending::<()>()).within(budget));
    assert!(w.poll(d.as_mut()).is_pending());
    wheel.advance(ms(3));
    assert!(is_elapsed(w.poll(d.as_mut())).is_budget());
    let _ = w.poll(d.as_mut());
}

#[test]
#[should_panic(expected = "`Deadline` polled after completion")]
fn polling_a_completed_degraded_deadline_panics() {
    let wheel: Wheel<ManualClock, Fixed<1>> = Wheel::fixed(ManualClock::new(), TICK);
    let w = CountingWaker::new();
    let mut blocker = pin!(wheel.sleep(ms(50)));
    assert!(w.poll(blocker.as_mut()).is_pending());
    let mut d = pin!(wheel.deadline(ms(2), pending::<()>()));
    assert!(w.poll(d.as_mut()).is_pending());
    assert_eq!(wheel.degraded_polls(), 1);
    wheel.advance(ms(2));
    is_elapsed(w.poll(d.as_mut()));
    let _ = w.poll(d.as_mut());
}

#[test]
fn accessors_of_a_completed_deadline_panic_naming_the_type_and_method() {
    let wheel: Wheel<ManualClock, Fixed<2>> = Wheel::fixed(ManualClock::new(), TICK);
    let w = CountingWaker::new();
    let message = |r: thread::Result<()>| {
        let panic = r.expect_err("did not panic");
        panic
            .downcast_ref::<&str>()
            .map(|s| s.to_string())
            .or_else(|| panic.downcast_ref::<String>().cloned())
            .unwrap()
    };
    let mut d = Box::pin(wheel.deadline(ms(2), ready(1)));
    assert_eq!(w.poll(d.as_mut()), Poll::Ready(Ok(1)));
    assert_eq!(
        message(quietly(|| {
            let _ = d.get_ref();
        })),
        "`Deadline::get_ref` called after completion"
    );
    assert_eq!(
        message(quietly(|| {
            let _inner = d.as_mut().get_pin_mut();
        })),
        "`Deadline::get_pin_mut` called after completion"
    );
    let mut d = wheel.deadline(Duration::ZERO, pending::<()>());
    is_elapsed(w.poll(Pin::new(&mut d)));
    assert_eq!(
        message(quietly(|| {
            let _inner = d.get_mut();
        })),
        "`Deadline::get_mut` called after completion"
    );
    assert_eq!(
        message(quietly(|| {
            let _inner = d.into_inner();
        })),
        "`Deadline::into_inner` called after completion"
    );
    // A boxed future, freed at the fire: naming the deadline then would copy a dangling box.
    let boxed: Pin<Box<dyn Future<Output = ()>>> = Box::pin(pending());
    let mut d = wheel.deadline(Duration::ZERO, boxed);
    is_elapsed(w.poll(Pin::new(&mut d)));
    assert_eq!(
        message(quietly(|| {
            let _named = d.named("late");
        })),
        "`Deadline::named` called after completion"
    );
    assert_eq!(wheel.occupied(), 0);
}

/// The accessors of a deadline still running give the live inner future: pinned in
/// place, or moved out with the timer released (its entry freed, nothing fires).
#[test]
fn accessors_of_a_running_deadline_reach_the_inner_future() {
    let wheel: Wheel<ManualClock, Fixed<2>> = Wheel::fixed(ManualClock::new(), TICK);
    let w = CountingWaker::new();
    // An inner future that counts its polls, and whose output is the count.
    let polls = std::cell::Cell::new(0);
    let counting = || {
        core::future::poll_fn(|_| {
            polls.set(polls.get() + 1);
            if polls.get() < 3 {
                Poll::Pending
            } else {
                Poll::Ready(polls.get())
            }
        })
    };
    let mut d = Box::pin(wheel.deadline(ms(5), counting()));
    assert!(w.poll(d.as_mut()).is_pending());
    assert_eq!(wheel.occupied(), 1);
    // Polled through the pinned accessor, the inner future sees the poll; the deadline
    // still runs and completes with the output.
    assert!(w.poll(d.as_mut().get_pin_mut()).is_pending());
    assert_eq!(polls.get(), 2);
    assert_eq!(w.poll(d.as_mut()), Poll::Ready(Ok(3)));
    assert_eq!(wheel.occupied(), 0);

    // Moved out: the timer lets go of its entry, and the future runs on its own.
    polls.set(0);
    let mut d = wheel.deadline(ms(5), Box::pin(counting())).named("moved");
    assert!(w.poll(Pin::new(&mut d)).is_pending());
    assert_eq!(wheel.occupied(), 1);
    let mut inner = d.into_inner();
    assert_eq!(wheel.occupied(), 0);
    wheel.advance(ms(10));
    assert_eq!(w.wakes(), 0, "the released deadline fired");
    assert!(w.poll(inner.as_mut()).is_pending());
    assert_eq!(w.poll(inner.as_mut()), Poll::Ready(3));
}

/// A manual clock whose reading, on the thread that sets one, is a stale one: what a
/// thread sees that read the clock and was then preempted before it used the reading.
struct StaleClock(ManualClock);

thread_local! {
    static STALE: core::cell::Cell<Option<Duration>> = const { core::cell::Cell::new(None) };
}

impl Clock for StaleClock {
    fn now(&self) -> Duration {
        STALE.with(|s| s.get()).unwrap_or_else(|| self.0.now())
    }
}

#[test]
fn a_turn_on_a_stale_reading_fires_what_an_earlier_turn_made_due_and_nothing_early() {
    // The wheel was turned at 11.2 ms (tick 11 reached). Then a deadline armed from a
    // reading of 10.5 ms (due 10.95 ms) and a turn from a reading of 10.9 ms meet: the
    // deadline is due before the tick already reached, so it fires (the true time is past
    // it), rather than going into a slot behind the wheel, to fire a rotation late.
    let wheel: Wheel<StaleClock, Fixed<4>> = Wheel::fixed(StaleClock(ManualClock::new()), TICK);
    let w = CountingWaker::new();
    let us = Duration::from_micros;
    wheel.clock().0.advance(us(11_200));
    wheel.turn();
    STALE.with(|s| s.set(Some(us(10_500))));
    let mut d = pin!(wheel.sleep(us(450)));
    assert!(w.poll(d.as_mut()).is_pending());
    // Not yet due on a reading taken in the same stale moment.
    let mut later = pin!(wheel.sleep(us(1_000)));
    assert!(w.poll(later.as_mut()).is_pending());
    STALE.with(|s| s.set(Some(us(10_900))));
    wheel.turn();
    STALE.with(|s| s.set(None));
    assert_eq!(
        w.wakes(),
        1,
        "the deadline due before the tick reached did not fire"
    );
    assert!(w.poll(d.as_mut()).is_ready());
    // Due at 11.5 ms: after the true time (11.2 ms), so it waits, and fires on time.
    assert!(w.poll(later.as_mut()).is_pending());
    wheel.clock().0.advance(us(299));
    wheel.turn();
    assert!(w.poll(later.as_mut()).is_pending());
    wheel.clock().0.advance(us(1));
    wheel.turn();
    assert!(w.poll(later.as_mut()).is_ready());
}

#[test]
fn a_lingering_plan_past_the_clocks_last_tick_is_not_read_as_idle() {
    // 1 ns ticks, 10 ns before the manual clock's last reading: after a fire, the driver
    // lingers 16 ticks, past the last one. `next_turn` (and a turn left to the role's
    // holder) rebuild that plan from its low 32 bits, saturating at tick `u64::MAX`,
    // which must not read as "idle": the wheel still plans a turn.
    let wheel: Wheel<ManualClock, Fixed<2>> =
        Wheel::fixed(ManualClock::starting_at(CLOCK_END - ns(10)), ns(1));
    let w = CountingWaker::new();
    let mut d = pin!(wheel.sleep(ns(3)));
    assert!(w.poll(d.as_mut()).is_pending());
    wheel.advance(ns(3));
    assert!(w.poll(d.as_mut()).is_ready());
    let planned = wheel.turn();
    assert_ne!(
        planned,
        Duration::MAX,
        "the lingering wheel planned no turn"
    );
    assert_ne!(wheel.next_turn(), Duration::MAX, "next_turn read as idle");
}

#[test]
fn a_turn_planned_past_the_clocks_end_is_not_read_as_idle() {
    // (`Wheel::turn` and `Wheel::next_turn` alike.)
    // Hour-long ticks, three hours before the manual clock's last reading: a deadline due
    // half an hour before the end has its tick boundary past `u64::MAX` ns (and no
    // sub-tick turn: an offset into an hour-long tick is more than the levels keep). The wheel still has it armed, so the planned turn
    // must not read as "idle" (`Duration::MAX`, which tells a driver to wait for its waker
    // alone): it is the clock's last reading. (The deadline fires by its tick, which this
    // clock never reaches; a real clock would take 584 years to.)
    let hour = Duration::from_secs(3600);
    let wheel: Wheel<ManualClock, Fixed<2>> =
        Wheel::fixed(ManualClock::starting_at(CLOCK_END - 3 * hour), hour);
    let w = CountingWaker::new();
    let mut d = pin!(wheel.sleep(hour * 5 / 2));
    assert!(w.poll(d.as_mut()).is_pending());
    assert_eq!(
        wheel.turn(),
        CLOCK_END - ns(1),
        "an armed wheel planned no turn"
    );
    assert_eq!(
        wheel.next_turn(),
        CLOCK_END - ns(1),
        "an armed wheel's next turn read as idle"
    );
    wheel.advance(hour * 5 / 2 - ns(1));
    assert_eq!(w.wakes(), 0, "early");
    assert!(w.poll(d.as_mut()).is_pending());
}

#[test]
fn a_deadline_dropped_while_its_wake_waits_behind_a_panicked_one_frees_its_entry() {
    // Two deadlines fire in one turn and the first wake panics: the other's entry stays
    // queued, held by the wheel. Its deadline is dropped meanwhile (letting go of its
    // handle), so the turn that wakes the rest must free the entry: on a two-entry wheel,
    // two new deadlines then arm without degrading. (`occupied` cannot tell.)
    let wheel: Wheel<ManualClock, Fixed<2>> = Wheel::fixed(ManualClock::new(), TICK);
    let boom = Waker::from(Arc::new(PanickingWaker));
    let mut a = Box::pin(wheel.sleep(ms(1)));
    let mut b = Box::pin(wheel.sleep(ms(1)));
    assert!(
        a.as_mut()
            .poll(&mut Context::from_waker(&boom))
            .is_pending()
    );
    assert!(
        b.as_mut()
            .poll(&mut Context::from_waker(&boom))
            .is_pending()
    );
    assert!(
        quietly(|| wheel.advance(ms(1))).is_err(),
        "the wake did not panic"
    );
    drop(a);
    drop(b);
    // Wakes the queued one (whose waker panics again).
    assert!(quietly(|| wheel.turn()).is_err(), "no wake was left queued");
    let w = CountingWaker::new();
    let mut c = pin!(wheel.sleep(ms(5)));
    let mut d = pin!(wheel.sleep(ms(5)));
    assert!(w.poll(c.as_mut()).is_pending());
    assert!(w.poll(d.as_mut()).is_pending());
    assert_eq!(
        wheel.degraded_polls(),
        0,
        "an entry was lost: {}",
        wheel.stats()
    );
    wheel.advance(ms(5));
    assert!(w.poll(c.as_mut()).is_ready() && w.poll(d.as_mut()).is_ready());
}
