//! The driver's plan as arming and cancelling threads read it, and tick arithmetic.
//!
//! * The plan word: bit 0 [`ACTIVE`] (clear: idle, as a new wheel is), bits 1.. the
//!   shards in use, bit 31 [`DEGRADED`]. The driver writes it by RMW, last.
//! * `next_wake` holds the planned tick's low 32 bits, rebuilt near a reference tick.

use super::storage::Storage;
use super::{Wheel, shards};
use crate::clock::Clock;
use crate::sync::{AtomicU32, Ordering};
use crate::time::{Reading, StoredTick, Tick, span_of};

/// The last reading a plan names: [`Reading::END`] stands for idle.
pub(super) const LAST: Reading = Reading::from_nanos(u64::MAX - 1);

pub(super) struct Plan {
    /// Low 32 bits of the tick of the driver's next planned turn.
    pub(super) next_wake: AtomicU32,
    /// How far into the tick before `next_wake` the driver turns (ns, saturating): a
    /// whole tick for a higher slot coming down; 0 for a dense slot, or a plan from no
    /// slot (lingering, reclaim horizon), so that arms into it do not wake the driver.
    pub(super) offset: AtomicU32,
    pub(super) word: AtomicU32,
}

/// `Plan::word`: the driver plans a turn.
pub(super) const ACTIVE: u32 = 1;

/// `Plan::word`: a degraded deadline left its waker since the driver last looked.
pub(super) const DEGRADED: u32 = 1 << 31;

impl<C: Clock, S: Storage> Wheel<C, S> {
    /// Divides readings by the tick.
    #[inline]
    pub(crate) fn ticks(&self) -> &StoredTick {
        &self.tick
    }

    /// [`Clock::resolution`], as a span.
    #[inline]
    pub(crate) fn resolution(&self) -> u64 {
        span_of(self.clock.resolution())
    }

    /// The reading a planned tick begins at: `END` only for `Tick::IDLE`.
    pub(super) fn plan_reading(&self, planned: Tick) -> Reading {
        if planned == Tick::IDLE {
            Reading::END
        } else {
            self.ticks().start(planned).min(LAST)
        }
    }

    /// The plan's full tick, rebuilt near `reference`; `Tick::IDLE` only while idle.
    pub(super) fn planned_turn(&self, reference: Tick) -> Tick {
        self.plan_of(self.plan.word.load(Ordering::Relaxed), reference)
    }

    /// [`planned_turn`](Self::planned_turn) after a push onto `shard`, marking the shard
    /// in use first if need be ("Shards in use").
    #[cfg_attr(target_pointer_width = "64", inline(always))]
    pub(super) fn planned_turn_after_push(&self, reference: Tick, shard: usize) -> Tick {
        let mut word = self.plan.word.load(Ordering::Acquire);
        let bit = shards::in_use_bit(shard);
        if word & bit != bit {
            word = self.mark_in_use(bit);
        }
        self.plan_of(word, reference)
    }

    /// Sets a shard's bit; returns the word with it.
    #[cold]
    pub(super) fn mark_in_use(&self, bit: u32) -> u32 {
        self.plan.word.fetch_or(bit, Ordering::AcqRel) | bit
    }

    /// The plan, given the plan word just read.
    /// A plan rebuilt past the last tick is that tick's predecessor: it wakes the driver
    /// only for arms it would wake it for anyway.
    #[cfg_attr(target_pointer_width = "64", inline)]
    #[cfg_attr(not(target_pointer_width = "64"), inline(never))]
    pub(super) fn plan_of(&self, word: u32, reference: Tick) -> Tick {
        if word & ACTIVE == 0 {
            return Tick::IDLE;
        }
        let low = self.plan.next_wake.load(Ordering::Relaxed);
        let reference = reference.get();
        let delta = low.wrapping_sub(reference as u32) as i32 as i64;
        Tick::new(reference.saturating_add_signed(delta).min(u64::MAX - 1))
    }
}
