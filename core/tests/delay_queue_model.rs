//! Model-based property test of the keyed timer set, [`DelayQueue`], through its public
//! API: random inserts, inserts at instants (past ones too), resets, resets to instants,
//! removals, bursts that grow the slots and mass removals that shrink them (so values
//! move), clock advances and drains, with keys picked among every key handed out (so
//! stale ones too). Played on growable slots (with and without a capacity floor) and on
//! fixed ones, against a plain `BTreeMap` of live values and their deadlines.
//!
//! Checked after every operation:
//! * every value is handed out once, with its deadline, never before it;
//! * a drain leaves no value due a tick ago, and a task left waiting is woken by the
//!   advance past a value's tick (no lost wake);
//! * a stale key is refused by `reset`, `reset_at`, `remove` and `get`; a live one
//!   finds its value, wherever it moved;
//! * the queue's length is the model's; a fixed queue is full only at its capacity;
//! * at the end every value has come out, and the wheel holds no entry.
//!
//! The number of cases defaults to [`DEFAULT_CASES`]; set `PROPTEST_CASES` to change it.
#![cfg(feature = "alloc")]

mod support;

use std::collections::BTreeMap;
use std::task::{Context, Poll};
use std::time::Duration;

use proptest::prelude::*;
use proptest::test_runner::Config;
use punctual_core::{
    DelayQueue, FixedSlots, Full, Growable, GrowableSlots, Key, ManualClock, Reading, SlotStorage,
    StaleKey, Wheel,
};
use support::{CountingWaker, TICK};

/// Cases per storage kind when `PROPTEST_CASES` is not set.
const DEFAULT_CASES: u32 = 256;
/// Slots of the fixed queue: few, so that it fills up.
const FIXED_SLOTS: usize = 8;
/// Operations per case, fewer under Miri.
const OPS: usize = if cfg!(miri) { 12 } else { 64 };
/// Values per burst (exclusive bound), fewer under Miri.
const BURST: u8 = if cfg!(miri) { 6 } else { 48 };

#[derive(Debug, Clone)]
enum Op {
    /// Insert, due this many µs from now.
    Insert(u64),
    /// Insert at now plus (or minus) this many µs.
    InsertAt(i64),
    /// Insert this many values, due this many µs from now (and a µs apart).
    Burst(u8, u64),
    /// Reset the key picked to this many µs from now.
    Reset(usize, u64),
    /// Reset the key picked to now plus (or minus) this many µs.
    ResetAt(usize, i64),
    /// Remove the key picked.
    Remove(usize),
    /// Remove every live value but one in this many (at least two).
    RemoveMost(u8),
    /// Move the clock by this many µs, turning the wheel; no poll.
    Advance(u64),
    /// Poll until `Pending` or `Ready(None)`.
    Drain,
}

/// A delay in µs: mostly short, or at a boundary of the levels (a tick, 64 ms, 4 096 ms,
/// 262 144 ms of the 1 ms tick).
fn delay() -> impl Strategy<Value = u64> {
    prop_oneof![
        3 => 0u64..5_000,
        2 => 0u64..300_000,
        1 => prop::sample::select(vec![
            999u64,
            1_000,
            1_001,
            63_000,
            64_000,
            64_001,
            4_096_000,
            262_144_000,
        ]),
    ]
}

fn at() -> impl Strategy<Value = i64> {
    prop_oneof![3 => -5_000i64..70_000, 1 => -1_000_000i64..0]
}

fn op() -> impl Strategy<Value = Op> {
    prop_oneof![
        4 => delay().prop_map(Op::Insert),
        2 => at().prop_map(Op::InsertAt),
        1 => (1..BURST, delay()).prop_map(|(n, us)| Op::Burst(n, us)),
        2 => (any::<usize>(), delay()).prop_map(|(k, us)| Op::Reset(k, us)),
        2 => (any::<usize>(), at()).prop_map(|(k, us)| Op::ResetAt(k, us)),
        2 => any::<usize>().prop_map(Op::Remove),
        1 => (2u8..10).prop_map(Op::RemoveMost),
        3 => prop_oneof![0u64..2_000, 0u64..80_000].prop_map(Op::Advance),
        2 => Just(Op::Drain),
    ]
}

/// The queue and its reference, played op by op.
struct Play<'w, S> {
    wheel: &'w Wheel<ManualClock, Growable>,
    queue: DelayQueue<'w, u64, S, &'w Wheel<ManualClock, Growable>>,
    /// Live values by id, with their deadlines in ns.
    live: BTreeMap<u64, u64>,
    /// Every key handed out, with its value's id.
    keys: Vec<(Key, u64)>,
    next_id: u64,
    task: CountingWaker,
    /// The task's wakes when the last poll left it waiting; `None` if not waiting.
    waiting: Option<usize>,
    capacity: Option<usize>,
}

impl<S: SlotStorage<u64>> Play<'_, S> {
    fn now(&self) -> u64 {
        self.wheel.now().as_nanos()
    }

    fn reading(&self, us: i64) -> u64 {
        self.now().saturating_add_signed(us * 1_000)
    }

    fn inserted(&mut self, deadline: u64, result: Result<Key, Full<u64>>) {
        let id = self.next_id;
        self.next_id += 1;
        match result {
            Ok(key) => {
                assert!(self.keys.iter().all(|&(k, _)| k != key), "a key twice");
                self.live.insert(id, deadline);
                self.keys.push((key, id));
                assert_eq!(self.queue.get(key), Some(&id));
                assert_eq!(
                    self.queue.deadline(key),
                    Some(Reading::from_nanos(deadline))
                );
            }
            Err(Full(value)) => {
                assert_eq!(value, id);
                assert_eq!(Some(self.live.len()), self.capacity, "full too soon");
            }
        }
    }

    /// A key handed out, live or stale, and its value's id.
    fn pick(&self, k: usize) -> Option<(Key, u64)> {
        (!self.keys.is_empty()).then(|| self.keys[k % self.keys.len()])
    }

    fn reset_to(&mut self, key: Key, id: u64, deadline: u64, result: Result<(), StaleKey>) {
        match self.live.get_mut(&id) {
            Some(kept) => {
                assert_eq!(result, Ok(()));
                *kept = deadline;
                assert_eq!(
                    self.queue.deadline(key),
                    Some(Reading::from_nanos(deadline))
                );
            }
            None => assert_eq!(result, Err(StaleKey(key)), "a stale key reset"),
        }
    }

    fn remove(&mut self, key: Key, id: u64) {
        let expected = self.live.remove(&id).map(|_| id);
        assert_eq!(self.queue.remove(key), expected);
        assert!(!self.queue.contains_key(key));
        assert_eq!(self.queue.get(key), None);
    }

    fn apply(&mut self, op: &Op) {
        match *op {
            Op::Insert(us) => {
                let deadline = self.reading(us as i64);
                let result = self
                    .queue
                    .try_insert(self.next_id, Duration::from_micros(us));
                self.inserted(deadline, result);
            }
            Op::InsertAt(us) => {
                let deadline = self.reading(us);
                let at = Reading::from_nanos(deadline);
                let result = self.queue.try_insert_at(self.next_id, at);
                self.inserted(deadline, result);
            }
            Op::Burst(n, us) => {
                for i in 0..u64::from(n) {
                    self.apply(&Op::Insert(us + i));
                }
            }
            Op::Reset(k, us) => {
                if let Some((key, id)) = self.pick(k) {
                    let deadline = self.reading(us as i64);
                    let result = self.queue.reset(key, Duration::from_micros(us));
                    self.reset_to(key, id, deadline, result);
                }
            }
            Op::ResetAt(k, us) => {
                if let Some((key, id)) = self.pick(k) {
                    let deadline = self.reading(us);
                    let result = self.queue.reset_at(key, Reading::from_nanos(deadline));
                    self.reset_to(key, id, deadline, result);
                }
            }
            Op::Remove(k) => {
                if let Some((key, id)) = self.pick(k) {
                    self.remove(key, id);
                }
            }
            Op::RemoveMost(every) => {
                let live: Vec<_> = (self.keys.iter())
                    .filter(|(_, id)| self.live.contains_key(id))
                    .copied()
                    .collect();
                for (n, (key, id)) in live.into_iter().enumerate() {
                    if n % usize::from(every) != 0 {
                        self.remove(key, id);
                    }
                }
            }
            Op::Advance(us) => {
                self.wheel.advance(Duration::from_micros(us));
                self.check_woken();
            }
            Op::Drain => self.drain(),
        }
        assert_eq!(self.queue.len(), self.live.len());
        assert_eq!(self.queue.is_empty(), self.live.is_empty());
        for &(key, id) in &self.keys {
            assert_eq!(self.queue.get(key).copied(), self.live.get(&id).map(|_| id));
        }
    }

    /// A task left waiting is woken once a value is a tick past its deadline.
    fn check_woken(&self) {
        let now = self.now();
        let tick = TICK.as_nanos() as u64;
        if let Some(wakes) = self.waiting {
            if let Some((id, due)) = self.live.iter().find(|&(_, &due)| due + tick <= now) {
                assert!(
                    self.task.wakes() > wakes,
                    "value {id} due at {due} ns woke no one by {now} ns"
                );
            }
        }
    }

    fn drain(&mut self) {
        let tick = TICK.as_nanos() as u64;
        loop {
            let now = self.now();
            let poll = self
                .queue
                .poll_expired(&mut Context::from_waker(&self.task.waker));
            match poll {
                Poll::Ready(Some(expired)) => {
                    let id = *expired.get_ref();
                    let due = self.live.remove(&id).expect("a value handed out twice");
                    assert_eq!(expired.deadline().as_nanos(), due);
                    assert!(
                        due <= now,
                        "early: value {id} due at {due} ns, now {now} ns"
                    );
                    assert!(!self.queue.contains_key(expired.key()));
                    self.waiting = None;
                }
                Poll::Ready(None) => {
                    assert!(self.live.is_empty(), "None with values left");
                    self.waiting = None;
                    return;
                }
                Poll::Pending => {
                    assert!(!self.live.is_empty(), "Pending when empty");
                    for (id, &due) in &self.live {
                        assert!(due + tick > now, "value {id} due at {due} ns left at {now}");
                    }
                    self.waiting = Some(self.task.wakes());
                    return;
                }
            }
        }
    }
}

/// Plays `ops`, then lets time pass until every value has come out; returns the largest
/// capacity the queue had.
fn play<S: SlotStorage<u64>>(ops: &[Op], slots: S, capacity: Option<usize>) -> (usize, usize) {
    let wheel: Wheel<ManualClock, Growable> = Wheel::growable(ManualClock::new(), TICK);
    let mut play = Play {
        wheel: &wheel,
        queue: DelayQueue::new(&wheel, slots),
        live: BTreeMap::new(),
        keys: Vec::new(),
        next_id: 0,
        task: CountingWaker::new(),
        waiting: None,
        capacity,
    };
    let mut largest = 0;
    for op in ops {
        play.apply(op);
        largest = largest.max(play.queue.capacity());
    }
    let (steps, step) = if cfg!(miri) {
        (8, 40_000)
    } else {
        (100, 3_000)
    };
    for _ in 0..steps {
        play.apply(&Op::Drain);
        play.apply(&Op::Advance(step));
    }
    // Past the longest delay, 262 s.
    play.apply(&Op::Advance(300_000_000));
    play.apply(&Op::Drain);
    assert!(play.live.is_empty(), "never handed out: {:?}", play.live);
    let last = play.queue.capacity();
    drop(play);
    let _ = wheel.turn();
    assert_eq!(wheel.occupied(), 0, "the queue left an entry on the wheel");
    (largest, last)
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
    fn growable_queue_agrees_with_the_reference(ops in prop::collection::vec(op(), 1..OPS)) {
        play(&ops, GrowableSlots::new(), None);
    }

    /// With no capacity floor, every mass removal shrinks the slots and moves values.
    #[test]
    fn shrinking_queue_agrees_with_the_reference(ops in prop::collection::vec(op(), 1..OPS)) {
        play(&ops, GrowableSlots::with_capacity(0), None);
    }

    #[test]
    fn fixed_queue_agrees_with_the_reference(ops in prop::collection::vec(op(), 1..OPS)) {
        play(&ops, FixedSlots::<u64, FIXED_SLOTS>::new(), Some(FIXED_SLOTS));
    }
}

/// The shrinking case runs what it is for: slots grown by bursts are given back, and the
/// values that moved are still found by their keys (checked at every step of `play`).
#[test]
fn bursts_and_mass_removals_shrink_the_slots() {
    let ops = [
        Op::Burst(47, 70_000),
        Op::Burst(47, 2_000),
        Op::RemoveMost(9),
        Op::Reset(3, 500),
        Op::Advance(1_000),
        Op::Drain,
        Op::RemoveMost(2),
        Op::Burst(20, 10),
        Op::Advance(3_000),
        Op::Drain,
    ];
    let (largest, last) = play(&ops, GrowableSlots::with_capacity(0), None);
    assert!(
        largest >= 94,
        "the bursts did not grow the slots: {largest}"
    );
    assert!(
        last < largest / 4,
        "the slots were not given back: {last} of {largest}"
    );
}
