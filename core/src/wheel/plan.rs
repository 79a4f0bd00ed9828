//! The driver's plan as arming and cancelling threads read it, and the wheel's time
//! arithmetic: readings in nanoseconds, ticks, and the tick of the plan rebuilt from its
//! low 32 bits (see the wheel's module docs, "Waking the driver").

use super::grain::Grain;
use super::storage::Storage;
use super::{Wheel, shards};
use crate::clock::Clock;
use crate::sync::{AtomicU32, Ordering};
use crate::time::{Reading, Tick, TickDivisor, span_of};

/// The last reading a plan names: the one before [`Reading::END`], which stands for idle.
pub(super) const LAST: Reading = Reading::from_nanos(u64::MAX - 1);

/// The driver's plan, as arming and cancelling threads read it.
pub(super) struct Plan {
    /// Low 32 bits of the tick of the driver's next planned turn.
    pub(super) next_wake: AtomicU32,
    /// How far into the tick before `next_wake` the driver plans to turn, in nanoseconds
    /// (saturating): an arm into the planned tick that is due earlier than that wakes it
    /// ("Sub-tick firing"). A whole tick when the plan is a slot of a higher level coming
    /// down (nothing in it is due before, so every arm due within the tick before wakes
    /// it). 0 when the driver turns at that tick's end whatever is armed in it: a dense
    /// slot (without early looks, see `levels`, "Early looks"), or a planned
    /// tick with no slot of its own (the end of lingering or of the
    /// horizon after a reclaiming turn, where waking for each arm would cost a turn per
    /// arm under a stream of short deadlines released at once).
    pub(super) offset: AtomicU32,
    /// [`ACTIVE`] clear while the driver has nothing armed and plans no turn at all (as
    /// in a new wheel, all zero bytes: see `link`); above it,
    /// the shards in use, whose inboxes the driver's handshake checks (see `shards`,
    /// "Shards in use"). Published by the driver with a read-modify-write, which is
    /// its side of the handshake for the shards' first pushes.
    pub(super) word: AtomicU32,
}

/// `Plan::word`: the driver plans a turn (clear: it is idle). Set rather than an "idle"
/// bit so that a new wheel, idle, is all zero bytes (see `link`).
pub(super) const ACTIVE: u32 = 1;

/// `Plan::word`: a degraded deadline left its waker in a place since the driver last
/// looked (see `degraded_wakers`, "Not losing the wake"). Above the shards' bits.
pub(super) const DEGRADED: u32 = 1 << 31;

impl<C: Clock, S: Storage> Wheel<C, S> {
    /// Divides readings by the tick.
    #[inline]
    pub(crate) fn ticks(&self) -> TickDivisor {
        self.tick.get()
    }

    /// The clock's granularity, as a span (see [`Clock::resolution`]).
    #[inline]
    pub(crate) fn resolution(&self) -> u64 {
        span_of(self.clock.resolution())
    }

    /// The reading at which a planned tick (`Tick::IDLE`: idle) begins: `END` only when
    /// idle, else below it, so that a boundary past the clock's last reading is never
    /// taken for "idle".
    pub(super) fn plan_reading(&self, planned: Tick) -> Reading {
        if planned == Tick::IDLE {
            Reading::END
        } else {
            self.ticks().start(planned).min(LAST)
        }
    }

    /// The reading at which tick `tick` begins (saturating at [`Reading::END`]).
    #[inline]
    pub(super) fn tick_start(&self, tick: Tick) -> Reading {
        self.ticks().start(tick)
    }

    /// The tick of a deadline due at `due`, and its offset into the tick before (see
    /// `levels`' "Sparse slots").
    #[inline]
    pub(super) fn tick_of(&self, due: Reading) -> (Tick, u32) {
        self.ticks().tick_of(due)
    }

    /// The unit of the levels' offset bounds for this wheel's tick (see `levels`' "Sparse
    /// slots").
    #[inline]
    pub(super) fn grain(&self) -> Grain {
        Grain::of_tick(self.ticks().tick())
    }

    /// The full tick of the driver's plan, rebuilt from its low 32 bits near `reference`;
    /// `Tick::IDLE` while the driver is idle (then every arm wakes it), and below it
    /// otherwise (a plan rebuilt past the last tick is that tick's predecessor, which
    /// only wakes the driver for arms it would have woken it for anyway, within 1 ns of
    /// the clock's end).
    pub(super) fn planned_turn(&self, reference: Tick) -> Tick {
        self.plan_of(self.plan.word.load(Ordering::Relaxed), reference)
    }

    /// [`planned_turn`](Self::planned_turn), for a thread that just pushed onto an inbox
    /// of `shard`: marks the shard in use first if it is not yet (see `shards`, "Shards in
    /// use"), so that the plan read is one the driver's handshake covers.
    #[cfg_attr(target_pointer_width = "64", inline(always))]
    pub(super) fn planned_turn_after_push(&self, reference: Tick, shard: usize) -> Tick {
        let mut word = self.plan.word.load(Ordering::Acquire);
        let bit = shards::in_use_bit(shard);
        if word & bit != bit {
            word = self.mark_in_use(bit);
        }
        self.plan_of(word, reference)
    }

    /// Sets a shard's bit in the plan word; returns the word with it.
    #[cold]
    pub(super) fn mark_in_use(&self, bit: u32) -> u32 {
        self.plan.word.fetch_or(bit, Ordering::AcqRel) | bit
    }

    /// The plan, given the plan word read just before (see `planned_turn`).
    #[inline]
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
