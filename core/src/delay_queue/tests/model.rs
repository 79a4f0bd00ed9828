//! Random insert, insert-at, reset, remove, advance and poll sequences against a
//! `BTreeMap` model: the same values expire, never before their deadline, and none is
//! left due a tick after its deadline once the queue is polled; a task waiting on the
//! queue is woken by then; stale keys are refused. On growable slots and on 8 fixed ones.

use std::collections::BTreeMap;
use std::vec;

use proptest::prelude::*;

use super::*;
use crate::delay_queue::{Key, SlotStorage};

/// Operations per case, fewer under Miri.
const OPS: usize = if cfg!(miri) { 24 } else { 64 };

#[derive(Debug, Clone)]
enum Op {
    /// Insert, due this many µs from now.
    Insert(u64),
    /// Insert at now plus (or minus) this many µs.
    InsertAt(i64),
    /// Reset the key drawn to this many µs from now.
    Reset(usize, u64),
    /// Remove the key drawn.
    Remove(usize),
    /// Move the clock by this many µs, turning the wheel; no poll.
    Advance(u64),
    /// Poll until `Pending` or `Ready(None)`.
    Drain,
}

fn delay() -> impl Strategy<Value = u64> {
    prop_oneof![
        3 => 0u64..5_000,
        2 => 0u64..300_000,
        1 => prop::sample::select(vec![63_000u64, 64_000, 64_001, 4_096_000, 262_144_000]),
    ]
}

fn op() -> impl Strategy<Value = Op> {
    prop_oneof![
        4 => delay().prop_map(Op::Insert),
        1 => (-5_000i64..70_000).prop_map(Op::InsertAt),
        2 => (any::<usize>(), delay()).prop_map(|(k, d)| Op::Reset(k, d)),
        2 => any::<usize>().prop_map(Op::Remove),
        3 => prop_oneof![0u64..2_000, 0u64..80_000].prop_map(Op::Advance),
        2 => Just(Op::Drain),
    ]
}

fn cases() -> u32 {
    std::env::var("PROPTEST_CASES")
        .ok()
        .and_then(|cases| cases.parse().ok())
        .unwrap_or(256)
}

/// The queue and its model, played op by op.
struct Play<'w, S> {
    wheel: &'w TestWheel,
    queue: DelayQueue<'w, u64, S, &'w TestWheel>,
    /// Live values by id, with their deadlines in ns.
    model: BTreeMap<u64, u64>,
    /// Every key handed out, with its id.
    keys: Vec<(Key, u64)>,
    next_id: u64,
    poller: Poller,
    /// Whether the last poll left the task waiting (`Pending`).
    waiting: bool,
    capacity: Option<usize>,
}

impl<'w, S: SlotStorage<u64>> Play<'w, S> {
    fn now(&self) -> u64 {
        self.wheel.now().as_nanos()
    }

    fn insert(&mut self, deadline: u64, result: Result<Key, Full<u64>>) {
        let id = self.next_id;
        self.next_id += 1;
        match result {
            Ok(key) => {
                self.model.insert(id, deadline);
                self.keys.push((key, id));
            }
            Err(Full(value)) => {
                assert_eq!(value, id);
                assert_eq!(Some(self.model.len()), self.capacity, "full too soon");
            }
        }
    }

    fn apply(&mut self, op: &Op) {
        let tick = TICK.as_nanos() as u64;
        match *op {
            Op::Insert(us) => {
                let deadline = self.now() + us * 1_000;
                let result = self
                    .queue
                    .try_insert(self.next_id, Duration::from_micros(us));
                self.insert(deadline, result);
            }
            Op::InsertAt(us) => {
                let deadline = self.now().saturating_add_signed(us * 1_000);
                let at = Reading::from_nanos(deadline);
                let result = self.queue.try_insert_at(self.next_id, at);
                self.insert(deadline, result);
            }
            Op::Reset(k, us) if !self.keys.is_empty() => {
                let (key, id) = self.keys[k % self.keys.len()];
                let deadline = self.now() + us * 1_000;
                let result = self.queue.reset(key, Duration::from_micros(us));
                match self.model.get_mut(&id) {
                    Some(kept) => {
                        assert_eq!(result, Ok(()));
                        *kept = deadline;
                    }
                    None => assert_eq!(result, Err(StaleKey(key))),
                }
            }
            Op::Remove(k) if !self.keys.is_empty() => {
                let (key, id) = self.keys[k % self.keys.len()];
                assert_eq!(self.queue.remove(key), self.model.remove(&id).map(|_| id));
            }
            Op::Reset(..) | Op::Remove(_) => {}
            Op::Advance(us) => {
                self.wheel.advance(Duration::from_micros(us));
                let now = self.now();
                if self.waiting && self.model.values().any(|&d| d + tick <= now) {
                    assert!(self.poller.is_woken(), "a due value woke no one");
                }
            }
            Op::Drain => self.drain(tick),
        }
        assert_eq!(self.queue.len(), self.model.len());
    }

    fn drain(&mut self, tick: u64) {
        loop {
            let now = self.now();
            match self.poller.poll(&mut self.queue) {
                Poll::Ready(Some(expired)) => {
                    let id = *expired.get_ref();
                    let deadline = self.model.remove(&id).expect("expired a value twice");
                    assert_eq!(expired.deadline().as_nanos(), deadline);
                    assert!(deadline <= now, "early: due {deadline}, now {now}");
                    assert!(!self.queue.contains_key(expired.key()));
                }
                Poll::Ready(None) => {
                    assert!(self.model.is_empty(), "None with values left");
                    self.waiting = false;
                    return;
                }
                Poll::Pending => {
                    assert!(!self.model.is_empty(), "Pending when empty");
                    for &deadline in self.model.values() {
                        assert!(deadline + tick > now, "left due: {deadline} at {now}");
                    }
                    self.waiting = true;
                    return;
                }
            }
        }
    }
}

fn play<S: SlotStorage<u64>>(ops: &[Op], slots: S, capacity: Option<usize>) {
    let wheel = wheel();
    let mut play = Play {
        wheel: &wheel,
        queue: DelayQueue::new(&wheel, slots),
        model: BTreeMap::new(),
        keys: Vec::new(),
        next_id: 0,
        poller: Poller::new(),
        waiting: false,
        capacity,
    };
    for op in ops {
        play.apply(op);
    }
    // Everything left comes out, on time, as time passes (in longer steps under Miri).
    let (steps, step) = if cfg!(miri) {
        (12, 25_000)
    } else {
        (300, 1_000)
    };
    for _ in 0..steps {
        play.apply(&Op::Advance(step));
        play.apply(&Op::Drain);
    }
    play.apply(&Op::Advance(300_000_000));
    play.apply(&Op::Drain);
    assert!(play.model.is_empty(), "never expired: {:?}", play.model);
}

proptest! {
    #![proptest_config(ProptestConfig {
        cases: cases(),
        failure_persistence: None,
        ..ProptestConfig::default()
    })]

    #[test]
    fn growable_agrees_with_model(ops in prop::collection::vec(op(), 1..OPS)) {
        play(&ops, GrowableSlots::new(), None);
    }

    #[test]
    fn compacting_agrees_with_model(ops in prop::collection::vec(op(), 1..OPS)) {
        play(&ops, GrowableSlots::with_capacity(0), None);
    }

    #[test]
    fn fixed_agrees_with_model(ops in prop::collection::vec(op(), 1..OPS)) {
        play(&ops, FixedSlots::<u64, 8>::new(), Some(8));
    }
}
