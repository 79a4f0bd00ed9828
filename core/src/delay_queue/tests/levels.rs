//! The levels alone: every value out at its tick, never early.

use super::super::levels::Levels;
use super::super::levels::Slot;
use crate::hierarchy::{MAX_LEVELS as LEVELS, range};
use crate::time::TickDivisor;

/// Values near, mid-range and beyond the range (a 1 ns tick: the range is 2^36), by
/// steps of a tick to most of a rotation: each out at the first advance past its tick.
#[test]
fn every_value_comes_out_at_its_tick() {
    let (mut levels, far) = (Levels::new(TickDivisor::new(1)), range(LEVELS));
    let mut seed = 0x2545_f491_4f6c_dd1d_u64;
    let mut next = move |below: u64| {
        seed = seed.wrapping_mul(0x5851_f42d_4c95_7f2d).wrapping_add(1);
        (seed >> 20) % below
    };
    let mut slots: std::vec::Vec<Slot<()>> = (0..300).map(|_| Slot::VACANT).collect();
    // From inside a top-level slot: a far value may share its slot.
    let mut now = (5 << 30) + 100;
    levels.advance(&mut slots, now);
    for (index, slot) in slots.iter_mut().enumerate() {
        let (base, spread) = [
            (1, 200),
            (1, 100_000),
            (1 << 30, far),
            (far - 50, 100),
            (far, 3 * far),
        ][index % 5];
        slot.deadline = now + base + next(spread);
    }
    for index in 0..slots.len() as u32 {
        levels.insert(&mut slots, index, false);
    }
    let mut left = slots.len();
    while left > 0 {
        let step = [64, 70_000, far][next(3) as usize];
        now += 1 + next(step);
        levels.advance(&mut slots, now);
        while let Some(index) = levels.first_due() {
            assert!(slots[index as usize].deadline <= now, "early");
            levels.unlink(&mut slots, index);
            (slots[index as usize].deadline, left) = (u64::MAX, left - 1);
        }
        assert!(slots.iter().all(|s| s.deadline > now), "late at {now}");
    }
}
