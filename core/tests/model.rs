//! Model-based property test of the wheel (`DESIGN.md` section 4): random sequences of
//! arm / cancel / advance / re-poll operations on a wheel with a manual clock, checked
//! after every operation against a plain reference (a `BTreeMap` of the live deadlines and
//! their requested times).
//!
//! What is checked:
//!
//! * **Never early**: no deadline completes before the manual clock reaches its requested
//!   time (start reading + duration, or the `deadline_at` instant).
//! * **At most two ticks late**: every armed deadline has been woken, and completes when
//!   polled, by the first advance that reaches its requested time + 2 ticks.
//! * **Cancelled ones never fire**, and replaced or finished wakers are never woken again.
//! * **Occupancy**: `occupied()` equals the number of live armed deadlines plus the
//!   cancels the wheel has not reclaimed yet; every turn (each advance) reclaims them all.
//! * **Full wheel** (`Fixed<4>`): a deadline that finds no free entry runs degraded: it
//!   re-wakes its task on every poll (counted by `degraded_polls()`), never completes
//!   early, completes when polled at or after its time, and arms once an entry is free.
//! * **Odd limits**: zero durations and instants in the past complete at their first
//!   poll; limits ending at or past `u64::MAX` ns never fire and hold no entry.
//!
//! The number of cases per storage kind defaults to [`DEFAULT_CASES`]; set
//! `PROPTEST_CASES` to change it.

mod support;

use core::future::{Future, Pending, pending};
use core::pin::Pin;
use core::task::{Context, Poll, Waker};
use core::time::Duration;
use std::collections::BTreeMap;

use proptest::prelude::*;
use proptest::test_runner::{Config, TestCaseError};
use punctual_core::{
    Clock, Deadline, Elapsed, Fixed, Growable, ManualClock, Sleep, Storage, Wheel,
};

/// Cases per storage kind when `PROPTEST_CASES` is not set.
const DEFAULT_CASES: u32 = 1024;
/// Entries of the fixed wheel: small, so that it fills up.
const FIXED_CAPACITY: usize = 4;

// ---- the operations -------------------------------------------------------------------

/// A duration in ticks of the case's wheel, plus a sub-tick part.
#[derive(Debug, Clone, Copy)]
enum Span {
    /// `ticks` ticks plus `frac % tick` nanoseconds.
    Ticks { ticks: u64, frac: u64 },
    /// `Duration::MAX`.
    Max,
    /// Far beyond the last tick the wheel can count (`u64::MAX` ticks).
    Uncountable,
}

impl Span {
    fn duration(self, tick: u128) -> Duration {
        match self {
            Span::Ticks { ticks, frac } => {
                let nanos = u128::from(ticks) * tick + u128::from(frac) % tick;
                nanos_to_duration(nanos)
            }
            Span::Max => Duration::MAX,
            Span::Uncountable => Duration::from_secs(u64::MAX / 2),
        }
    }
}

#[derive(Debug, Clone, Copy)]
enum Kind {
    Sleep,
    Deadline { named: bool },
}

#[derive(Debug, Clone, Copy)]
enum Limit {
    /// `sleep(d)` / `deadline(fut, d)`.
    After(Span),
    /// `sleep_until` / `deadline_at` at `now + span` or, with `past`, `now - span`.
    At { span: Span, past: bool },
}

/// Where to move the clock relative to a live deadline's requested time.
#[derive(Debug, Clone, Copy)]
enum Near {
    OneNsBefore,
    At,
    OneNsAfter,
    OneTickAfter,
    TwoTicksAfterLessOneNs,
    TwoTicksAfter,
}

#[derive(Debug, Clone, Copy)]
enum Op {
    /// Makes a deadline and polls it once with a fresh counting waker (it arms then).
    Arm { kind: Kind, limit: Limit },
    /// Drops a live deadline.
    Cancel { pick: usize },
    /// Advances the clock and turns the wheel, then polls every woken deadline.
    Advance(Span),
    /// Advances to near the requested time of a live deadline (no-op if that is past).
    AdvanceNear { pick: usize, near: Near },
    /// Polls a live deadline with a new waker.
    Repoll { pick: usize },
}

#[derive(Debug, Clone, Copy)]
enum Start {
    Zero,
    /// `ticks` ticks plus a sub-tick part.
    Ticks {
        ticks: u64,
        frac: u64,
    },
}

#[derive(Debug, Clone)]
struct Case {
    tick: Duration,
    start: Start,
    ops: Vec<Op>,
}

// ---- strategies -----------------------------------------------------------------------

fn boundary_ticks() -> impl Strategy<Value = u64> {
    let bases = vec![
        63u64,
        64,
        4095,
        4096,
        262_143,
        262_144,
        1 << 24,
        1 << 30,
        1 << 31,
        1 << 32,
        1 << 36,
    ];
    (prop::sample::select(bases), -2i64..=2).prop_map(|(b, d)| b.saturating_add_signed(d))
}

fn frac() -> impl Strategy<Value = u64> {
    prop_oneof![2 => Just(0u64), 1 => any::<u64>(), 1 => Just(u64::MAX)]
}

/// Deadline lengths: zero, small, around level boundaries, large, beyond the wheel's range,
/// and beyond what the wheel can count.
fn span_for_deadline() -> impl Strategy<Value = Span> {
    let ticks = prop_oneof![
        3 => Just(0u64),
        6 => 1u64..8,
        2 => 8u64..300,
        6 => boundary_ticks(),
        3 => 0u64..(1 << 37),
        1 => (1u64 << 36)..(1 << 41),
    ];
    prop_oneof![
        18 => (ticks, frac()).prop_map(|(ticks, frac)| Span::Ticks { ticks, frac }),
        1 => Just(Span::Max),
        1 => Just(Span::Uncountable),
    ]
}

/// Clock advances: zero, one tick, sub-tick amounts, a few ticks, across level boundaries,
/// and big jumps.
fn span_for_advance() -> impl Strategy<Value = Span> {
    prop_oneof![
        3 => Just(Span::Ticks { ticks: 0, frac: 0 }),
        4 => Just(Span::Ticks { ticks: 1, frac: 0 }),
        4 => any::<u64>().prop_map(|frac| Span::Ticks { ticks: 0, frac }),
        4 => (1u64..70, frac()).prop_map(|(ticks, frac)| Span::Ticks { ticks, frac }),
        3 => (boundary_ticks(), frac()).prop_map(|(ticks, frac)| Span::Ticks { ticks, frac }),
        2 => (0u64..(1 << 37)).prop_map(|ticks| Span::Ticks { ticks, frac: 0 }),
    ]
}

fn op() -> impl Strategy<Value = Op> {
    let kind = prop_oneof![
        Just(Kind::Sleep),
        any::<bool>().prop_map(|named| Kind::Deadline { named })
    ];
    let limit = prop_oneof![
        4 => span_for_deadline().prop_map(Limit::After),
        1 => (span_for_deadline(), any::<bool>())
            .prop_map(|(span, past)| Limit::At { span, past }),
    ];
    let near = prop_oneof![
        Just(Near::OneNsBefore),
        Just(Near::At),
        Just(Near::OneNsAfter),
        Just(Near::OneTickAfter),
        Just(Near::TwoTicksAfterLessOneNs),
        Just(Near::TwoTicksAfter),
    ];
    prop_oneof![
        8 => (kind, limit).prop_map(|(kind, limit)| Op::Arm { kind, limit }),
        2 => any::<usize>().prop_map(|pick| Op::Cancel { pick }),
        5 => span_for_advance().prop_map(Op::Advance),
        4 => (any::<usize>(), near).prop_map(|(pick, near)| Op::AdvanceNear { pick, near }),
        2 => any::<usize>().prop_map(|pick| Op::Repoll { pick }),
    ]
}

fn case() -> impl Strategy<Value = Case> {
    let tick = prop_oneof![
        3 => Just(Duration::from_millis(1)),
        1 => Just(Duration::from_micros(1)),
        1 => Just(Duration::from_nanos(977)),
    ];
    // Long uptimes: tick counts just below 2^32 and multiples of 2^36, or anywhere.
    let below = |base: u64| (1u64..70, frac()).prop_map(move |(b, frac)| (base - b, frac));
    let start = prop_oneof![
        4 => Just(Start::Zero),
        1 => below(1 << 32).prop_map(|(ticks, frac)| Start::Ticks { ticks, frac }),
        1 => (1u64..4).prop_flat_map(move |m| below(m << 36))
            .prop_map(|(ticks, frac)| Start::Ticks { ticks, frac }),
        1 => (0u64..(1 << 40), frac()).prop_map(|(ticks, frac)| Start::Ticks { ticks, frac }),
    ];
    (tick, start, prop::collection::vec(op(), 1..48)).prop_map(|(tick, start, ops)| Case {
        tick,
        start,
        ops,
    })
}

// ---- the system under test ------------------------------------------------------------

use support::CountingWaker;

enum Fut<'w> {
    Sleep(Pin<Box<Sleep<'w>>>),
    Deadline(Pin<Box<Deadline<'w, Pending<()>>>>),
}

impl Fut<'_> {
    /// `Ready(None)` for a completed sleep, `Ready(Some(e))` for a fired deadline.
    fn poll(&mut self, waker: &Waker) -> Result<Poll<Option<Elapsed>>, String> {
        let mut cx = Context::from_waker(waker);
        match self {
            Fut::Sleep(s) => Ok(s.as_mut().poll(&mut cx).map(|()| None)),
            Fut::Deadline(d) => match d.as_mut().poll(&mut cx) {
                Poll::Pending => Ok(Poll::Pending),
                Poll::Ready(Err(elapsed)) => Ok(Poll::Ready(Some(elapsed))),
                Poll::Ready(Ok(())) => Err("a deadline on `pending()` returned Ok".into()),
            },
        }
    }
}

// ---- the reference --------------------------------------------------------------------

/// What the reference expects of a live deadline.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Mode {
    /// Holds an entry of the wheel.
    Armed,
    /// Found the wheel full: checks the clock on each poll.
    Degraded,
    /// Beyond the last countable tick: never fires, holds no entry.
    Never,
}

struct Live<'w> {
    fut: Fut<'w>,
    waker: CountingWaker,
    /// Wakes counted when the last poll began: more since means "woken".
    wakes_at_poll: usize,
    /// Requested time, in clock nanoseconds (`None`: never).
    target: Option<u128>,
    /// The duration `Elapsed` must carry.
    requested: Duration,
    name: Option<&'static str>,
    mode: Mode,
    /// For failure messages.
    op: Op,
}

impl Live<'_> {
    fn woken(&self) -> bool {
        self.waker.wakes() > self.wakes_at_poll
    }
}

struct Model<'w, S: Storage> {
    wheel: &'w Wheel<ManualClock, S>,
    /// `None` for a growable wheel.
    capacity: Option<usize>,
    tick: u128,
    now: u128,
    /// The reference: live deadlines by id.
    live: BTreeMap<u64, Live<'w>>,
    next_id: u64,
    /// Live deadlines that hold an entry.
    armed: usize,
    /// Cancelled entries the wheel has not reclaimed yet (until its next turn).
    unreclaimed: usize,
    /// The arm inbox since the last turn, oldest first: a release whose entry is on top
    /// takes it back at once (nothing to reclaim).
    arm_inbox: Vec<u64>,
    degraded_polls: usize,
    /// Wakers that must never be woken again (cancelled, finished or replaced), with
    /// their wake count at that moment.
    retired: Vec<(CountingWaker, usize, String)>,
    step: usize,
}

macro_rules! ensure {
    ($cond:expr, $($fmt:tt)*) => {
        if !$cond {
            return Err(TestCaseError::fail(format!($($fmt)*)));
        }
    };
}

const MAX_NANOS: u128 = u64::MAX as u128;

fn nanos_to_duration(nanos: u128) -> Duration {
    let secs = nanos / 1_000_000_000;
    match u64::try_from(secs) {
        Ok(secs) => Duration::new(secs, (nanos % 1_000_000_000) as u32),
        Err(_) => Duration::MAX,
    }
}

impl<'w, S: Storage> Model<'w, S> {
    fn new(wheel: &'w Wheel<ManualClock, S>, capacity: Option<usize>) -> Self {
        Self {
            wheel,
            capacity,
            tick: wheel.tick().as_nanos(),
            now: wheel.clock().now().as_nanos(),
            live: BTreeMap::new(),
            next_id: 0,
            armed: 0,
            unreclaimed: 0,
            arm_inbox: Vec::new(),
            degraded_polls: 0,
            retired: Vec::new(),
            step: 0,
        }
    }

    fn has_free_entry(&self) -> bool {
        self.capacity
            .is_none_or(|cap| self.armed + self.unreclaimed < cap)
    }

    /// Whether the wheel keeps `target` (else the deadline never fires): an entry holds its
    /// deadline as a reading in `u64` nanoseconds, and `u64::MAX` stands for "never".
    fn countable(&self, target: u128) -> bool {
        target < u128::from(u64::MAX) && target.div_ceil(self.tick) < u128::from(u64::MAX)
    }

    fn pick(&self, pick: usize) -> Option<u64> {
        if self.live.is_empty() {
            return None;
        }
        self.live.keys().nth(pick % self.live.len()).copied()
    }

    fn apply(&mut self, op: Op) -> Result<(), TestCaseError> {
        self.step += 1;
        match op {
            Op::Arm { kind, limit } => self.arm(op, kind, limit)?,
            Op::Cancel { pick } => {
                if let Some(id) = self.pick(pick) {
                    self.cancel(id)?;
                }
            }
            Op::Advance(span) => {
                let by = span.duration(self.tick).as_nanos();
                self.advance(by)?;
            }
            Op::AdvanceNear { pick, near } => {
                let target = self.pick(pick).and_then(|id| self.live[&id].target);
                let to = target.map(|t| match near {
                    Near::OneNsBefore => t.saturating_sub(1),
                    Near::At => t,
                    Near::OneNsAfter => t + 1,
                    Near::OneTickAfter => t + self.tick,
                    Near::TwoTicksAfterLessOneNs => t + 2 * self.tick - 1,
                    Near::TwoTicksAfter => t + 2 * self.tick,
                });
                let by = to.map_or(0, |to| to.saturating_sub(self.now));
                self.advance(by)?;
            }
            Op::Repoll { pick } => {
                if let Some(id) = self.pick(pick) {
                    let live = self.live.get_mut(&id).unwrap();
                    let old = core::mem::replace(&mut live.waker, CountingWaker::new());
                    let wakes = old.wakes();
                    self.retired
                        .push((old, wakes, format!("replaced waker of {:?}", live.op)));
                    self.poll(id)?;
                }
            }
        }
        self.check_wheel()
    }

    fn arm(&mut self, op: Op, kind: Kind, limit: Limit) -> Result<(), TestCaseError> {
        let now = self.now;
        let now_d = nanos_to_duration(now);
        let (target, requested) = match limit {
            Limit::After(span) => {
                let d = span.duration(self.tick);
                (now + d.as_nanos(), d)
            }
            Limit::At { span, past } => {
                let span = span.duration(self.tick).as_nanos();
                let at = if past {
                    now.saturating_sub(span)
                } else {
                    now + span
                };
                let at = nanos_to_duration(at);
                (at.as_nanos(), at.saturating_sub(now_d))
            }
        };
        let name = match kind {
            Kind::Deadline { named: true } => Some("model"),
            _ => None,
        };
        let fut = match (kind, limit) {
            (Kind::Sleep, Limit::After(_)) => Fut::Sleep(Box::pin(self.wheel.sleep(requested))),
            (Kind::Sleep, Limit::At { .. }) => {
                Fut::Sleep(Box::pin(self.wheel.sleep_until(nanos_to_duration(target))))
            }
            (Kind::Deadline { .. }, limit) => {
                let d = match limit {
                    Limit::After(_) => self.wheel.deadline(pending(), requested),
                    Limit::At { .. } => {
                        self.wheel.deadline_at(pending(), nanos_to_duration(target))
                    }
                };
                Fut::Deadline(Box::pin(match name {
                    Some(name) => d.named(name),
                    None => d,
                }))
            }
        };
        // A deadline keeps its limit in `u64` nanoseconds: from `u64::MAX` on, it never
        // ends.
        let kept = match limit {
            Limit::After(_) => requested.as_nanos(),
            Limit::At { .. } => target,
        };
        let countable = kept < u128::from(u64::MAX) && self.countable(target);
        let id = self.next_id;
        self.next_id += 1;
        // A countable deadline starts out like a degraded one: its first poll completes it
        // if its time has come, else arms it if an entry is free, else degrades it.
        self.live.insert(
            id,
            Live {
                fut,
                waker: CountingWaker::new(),
                wakes_at_poll: 0,
                target: countable.then_some(target),
                requested,
                name,
                mode: if countable {
                    Mode::Degraded
                } else {
                    Mode::Never
                },
                op,
            },
        );
        self.poll(id)
    }

    /// Polls `id` once with its current waker and checks the outcome against the rules.
    fn poll(&mut self, id: u64) -> Result<(), TestCaseError> {
        let now = self.now;
        let tick = self.tick;
        let has_free_entry = self.has_free_entry();
        let step = self.step;
        let live = self.live.get_mut(&id).unwrap();
        let before = live.waker.wakes();
        live.wakes_at_poll = before;
        let result = live
            .fut
            .poll(&live.waker.waker)
            .map_err(TestCaseError::fail)?;
        let what = format!(
            "step {step}: {:?} (mode {:?}, now {now} ns)",
            live.op, live.mode
        );
        match result {
            Poll::Ready(elapsed) => {
                let target = live.target;
                ensure!(
                    target.is_some_and(|t| now >= t),
                    "{what}: completed early, requested time {target:?}"
                );
                if let Some(elapsed) = elapsed {
                    ensure!(
                        elapsed == Elapsed::new(live.requested, live.name),
                        "{what}: wrong error {elapsed:?}, requested {:?} named {:?}",
                        live.requested,
                        live.name
                    );
                }
                let live = self.live.remove(&id).unwrap();
                if live.mode == Mode::Armed {
                    self.armed -= 1;
                }
                let wakes = live.waker.wakes();
                self.retired
                    .push((live.waker, wakes, format!("finished {:?}", live.op)));
            }
            Poll::Pending => match live.mode {
                Mode::Never => {}
                Mode::Armed => {
                    let target = live.target.unwrap();
                    ensure!(
                        now < target + 2 * tick,
                        "{what}: pending two ticks after its requested time {target}"
                    );
                }
                Mode::Degraded => {
                    let target = live.target.unwrap();
                    ensure!(
                        now < target,
                        "{what}: degraded and pending after its time {target}"
                    );
                    if has_free_entry {
                        live.mode = Mode::Armed;
                        self.armed += 1;
                        self.arm_inbox.push(id);
                    } else {
                        self.degraded_polls += 1;
                        ensure!(
                            live.waker.wakes() == before + 1,
                            "{what}: a degraded poll did not re-wake its task"
                        );
                    }
                }
            },
        }
        Ok(())
    }

    fn cancel(&mut self, id: u64) -> Result<(), TestCaseError> {
        let live = self.live.remove(&id).unwrap();
        if live.mode == Mode::Armed {
            self.armed -= 1;
            ensure!(
                !live.woken(),
                "step {}: {:?} was woken but not polled after the last advance",
                self.step,
                live.op
            );
            if self.arm_inbox.last() == Some(&id) {
                // No turn took it in, and it is on top of the arm inbox: taken back.
                self.arm_inbox.pop();
            } else {
                // Not fired: the entry waits for the next turn to be reclaimed.
                self.unreclaimed += 1;
            }
        }
        let Live { fut, waker, op, .. } = live;
        drop(fut);
        let wakes = waker.wakes();
        self.retired
            .push((waker, wakes, format!("cancelled {op:?}")));
        Ok(())
    }

    fn advance(&mut self, by: u128) -> Result<(), TestCaseError> {
        let reading = self.wheel.advance(nanos_to_duration(by));
        self.now = (self.now + by).min(MAX_NANOS);
        ensure!(
            reading.as_nanos() == self.now,
            "clock reads {reading:?}, expected {}",
            self.now
        );
        // Every turn reclaims every cancel that came before it, and takes in every arm.
        self.unreclaimed = 0;
        self.arm_inbox.clear();
        // An executor: poll every woken deadline once, in a fixed order.
        let woken: Vec<u64> = self
            .live
            .iter()
            .filter(|(_, live)| live.woken())
            .map(|(&id, _)| id)
            .collect();
        for id in woken {
            self.poll(id)?;
        }
        // Whatever is still live must not be due yet.
        for live in self.live.values() {
            let Some(target) = live.target else { continue };
            let what = format!("step {}: {:?} (now {} ns)", self.step, live.op, self.now);
            match live.mode {
                Mode::Armed => ensure!(
                    self.now < target + 2 * self.tick,
                    "{what}: not fired by requested time {target} + 2 ticks (woken: {})",
                    live.woken()
                ),
                Mode::Degraded => {
                    ensure!(
                        self.now < target,
                        "{what}: degraded, past its time {target}"
                    )
                }
                Mode::Never => {}
            }
        }
        Ok(())
    }

    fn check_wheel(&self) -> Result<(), TestCaseError> {
        let step = self.step;
        ensure!(
            self.wheel.occupied() == self.armed + self.unreclaimed,
            "step {step}: occupied() = {}, expected {} armed + {} unreclaimed",
            self.wheel.occupied(),
            self.armed,
            self.unreclaimed
        );
        ensure!(
            self.wheel.degraded_polls() == self.degraded_polls,
            "step {step}: degraded_polls() = {}, expected {}",
            self.wheel.degraded_polls(),
            self.degraded_polls
        );
        for (waker, wakes, what) in &self.retired {
            ensure!(
                waker.wakes() == *wakes,
                "step {step}: woken after it was retired: {what}"
            );
        }
        for live in self.live.values() {
            if live.mode == Mode::Never {
                ensure!(
                    !live.woken(),
                    "step {step}: a never-firing deadline was woken"
                );
            }
        }
        Ok(())
    }
}

fn start_reading(case: &Case) -> Duration {
    match case.start {
        Start::Zero => Duration::ZERO,
        Start::Ticks { ticks, frac } => Span::Ticks { ticks, frac }.duration(case.tick.as_nanos()),
    }
}

std::thread_local! {
    /// Set while a case runs: proptest reports a panic in the case (a debug assertion in
    /// the wheel, say) as the case's failure, so printing it on every shrinking step too
    /// would only bury the report.
    static IN_CASE: core::cell::Cell<bool> = const { core::cell::Cell::new(false) };
}

fn quiet_panics_in_cases() {
    static ONCE: std::sync::Once = std::sync::Once::new();
    ONCE.call_once(|| {
        let default = std::panic::take_hook();
        std::panic::set_hook(Box::new(move |info| {
            if !IN_CASE.with(core::cell::Cell::get) {
                default(info);
            }
        }));
    });
}

fn run<S: Storage>(
    wheel: &Wheel<ManualClock, S>,
    capacity: Option<usize>,
    case: &Case,
) -> Result<(), TestCaseError> {
    struct InCase;
    impl Drop for InCase {
        fn drop(&mut self) {
            IN_CASE.with(|c| c.set(false));
        }
    }
    quiet_panics_in_cases();
    IN_CASE.with(|c| c.set(true));
    let _in_case = InCase;
    run_ops(wheel, capacity, case)
}

fn run_ops<S: Storage>(
    wheel: &Wheel<ManualClock, S>,
    capacity: Option<usize>,
    case: &Case,
) -> Result<(), TestCaseError> {
    let mut model = Model::new(wheel, capacity);
    for &op in &case.ops {
        model.apply(op)?;
    }
    // Drop everything: the next turn reclaims every entry.
    let ids: Vec<u64> = model.live.keys().copied().collect();
    for id in ids {
        model.cancel(id)?;
    }
    model.check_wheel()?;
    model.advance(0)?;
    model.check_wheel()?;
    ensure!(
        wheel.occupied() == 0,
        "entries left after dropping every deadline"
    );
    Ok(())
}

fn config() -> Config {
    let cases = std::env::var("PROPTEST_CASES")
        .ok()
        .and_then(|cases| cases.parse().ok())
        .unwrap_or(DEFAULT_CASES);
    // No regression files: this test owns no directory to write them to.
    Config {
        cases,
        failure_persistence: None,
        ..Config::default()
    }
}

proptest! {
    #![proptest_config(config())]

    #[test]
    fn fixed_wheel_agrees_with_the_reference(case in case()) {
        let wheel: Wheel<ManualClock, Fixed<FIXED_CAPACITY>> =
            Wheel::fixed(ManualClock::starting_at(start_reading(&case)), case.tick);
        run(&wheel, Some(FIXED_CAPACITY), &case)?;
    }

    #[test]
    fn growable_wheel_agrees_with_the_reference(case in case()) {
        let wheel: Wheel<ManualClock, Growable> =
            Wheel::growable(ManualClock::starting_at(start_reading(&case)), case.tick);
        run(&wheel, None, &case)?;
    }
}
