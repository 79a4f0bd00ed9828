//! One turn of the wheel, by the holder of the driver role (see `role`).
//!
//! A turn makes passes until its handshake finds every inbox empty. Each pass:
//!
//! 1. processes the slots that have come up (`cascade`);
//! 2. takes the inboxes: reclaims cancelled entries, links new ones (`intake`);
//! 3. fires what is due in the tick in progress (`cascade`, "Sub-tick firing");
//! 4. wakes the fired entries' tasks (`fire`), then the degraded deadlines';
//! 5. plans the next turn and publishes it (the wheel's "Waking the driver").
//!
//! * A turn never uses a reading older than the start of the tick already reached.
//! * The plan word is published last, with a read-modify-write.
//! * Idle means nothing armed, reclaimed, handed off or degraded, and lingering is over.
//! * After reclaiming, with a degraded deadline waiting, or with a batch handed off, the
//!   next turn is at most one tick ahead.
//! * The plan is never more than [`MAX_SLEEP`] ticks ahead.
//! * A pass that finds a new `DEGRADED` mark in the word it published passes again.

use super::entry::{self, Index, NIL};
use super::grain::Grain;
use super::levels::Levels;
use super::link::PlainLink;
use super::plan::{ACTIVE, DEGRADED, LAST};
use super::shards;
use super::storage::Storage;
use super::{LINGER, MAX_SLEEP, Wheel};
use crate::clock::Clock;
use crate::sync::Ordering;
use crate::time::{Reading, Tick};

/// What the driver role's holder owns: the levels and the driver's bookkeeping.
pub(super) struct DriverState {
    pub(super) levels: Levels,
    /// Fired entries whose tasks are still to be woken, linked through `slot_next`. Kept
    /// here rather than on the stack so that a waker that panics loses nothing: the next
    /// turn wakes the rest.
    pub(super) to_wake: PlainLink,
    /// The last of `to_wake` (meaningless while `to_wake` is `NIL`): fired entries are
    /// queued at the tail, so tasks wake in firing order.
    pub(super) to_wake_tail: PlainLink,
    /// The driver does not go idle before this tick (see "Taking back").
    pub(super) linger_until: Tick,
    /// A turn has published a plan: until then the wheel's idle mark is the one it was
    /// made with, not one a turn left, so the first turn does not linger (see "Taking
    /// back"). `false` in a new wheel, whose image is all zero bytes (see `link`).
    pub(super) started: bool,
    /// The last look at the places of degraded deadlines found one still waiting: the next
    /// turn looks again, whatever the plan word says.
    pub(super) degraded_waiting: bool,
    /// The tick of the last hand-off (see `handoff`): a turn at a later tick takes back
    /// what is still on the list.
    pub(super) handed_at: Tick,
    /// The unit of the levels' offset bounds, from the wheel's tick, set at the start of
    /// each turn (see `levels`, "Sparse slots"); here rather than in the levels, where it
    /// would take a padded word of its own.
    pub(super) grain: Grain,
    /// Whether this turn looks at dense level-0 slots early too (see `levels`, "Early
    /// looks"), read from the wheel at the start of each turn.
    pub(super) early_looks: bool,
}

/// The next turn a pass plans, before it is published.
struct NextTurn {
    /// Nothing to turn for: the driver publishes idle, and needs no timer.
    idle: bool,
    /// The tick of the planned turn.
    tick: u64,
    /// The reading at which to turn: the tick's start, or earlier within the tick before.
    wake: Reading,
    /// How far into the tick before `tick` the driver turns (see `Plan::offset`).
    offset: u32,
}

impl<C: Clock, S: Storage> Wheel<C, S> {
    /// One turn at reading `now`, with the driver role held. Returns the reading of the
    /// next planned turn ([`Reading::END`] if idle), and whether the turn took the wheel out
    /// of idle. (The levels count ticks as plain numbers: `Tick::get` and `Tick::new` at
    /// their edge.)
    pub(super) fn turn_locked(&self, state: &mut DriverState, reading: Reading) -> (Reading, bool) {
        let (reading, now) = self.begin_turn(state, reading);
        let mut reclaimed = false;
        // Whether a pass below published a plan over an idle word. Kept across passes: a
        // pass that takes the wheel out of idle and then finds an inbox not empty (an arm
        // that read the new plan, and woke no one since its tick was not before it) passes
        // again, and that pass reads its own plan, not idle; the driver waiting idle must
        // still be woken (see "Waking the driver").
        let mut left_idle = false;
        loop {
            // Advance first, so new entries are placed relative to `now` (a wheel whose
            // clock starts far from zero would otherwise place them at the top level).
            self.expire(state, now, reading);
            reclaimed |= self.take_inboxes(state, now, reading);
            self.fire_early(state, reading);
            self.wake_fired(state, now);
            let degraded = self.wake_degraded(state, now);
            let next = self.plan_next(state, now, reclaimed, degraded);
            let word = self.publish(&next);
            left_idle |= !next.idle && word & ACTIVE == 0;
            if word & DEGRADED != 0 && !degraded {
                // A degraded deadline left its waker during this pass: look at the places
                // again before settling on a plan (see `degraded_wakers`, "Not losing the
                // wake").
                state.degraded_waiting = true;
                continue;
            }
            if self.inboxes_empty(word) {
                // `END` means idle: a turn planned at or past the clock's last reading (its
                // tick boundary saturated) is the reading just before.
                return if next.idle {
                    (Reading::END, false)
                } else {
                    (next.wake.min(LAST), left_idle)
                };
            }
        }
    }

    /// Sets up a turn: the reading it uses, its tick, the driver's per-turn settings, and
    /// lingering if the wheel was woken from idle.
    #[inline(always)]
    fn begin_turn(&self, state: &mut DriverState, reading: Reading) -> (Reading, Tick) {
        // A reading older than one an earlier turn used (another thread turning, or
        // a turn at an older reading) counts as the start of the tick already reached:
        // some turn read at least that, so it fires nothing early, and an entry armed
        // from an older reading still, due before that, fires rather than going into a
        // slot behind `elapsed`.
        let reading = reading.max(self.tick_start(Tick::new(state.levels.elapsed())));
        let now = self.ticks().floor(reading);
        state.grain = self.grain();
        state.early_looks = self.early_looks();
        // A new wheel is marked idle before any turn: its first turn has not been woken
        // from an idle a turn left, and lingering then would only keep a timer (which a
        // paused runtime's clock would jump to) with nothing armed.
        let started = core::mem::replace(&mut state.started, true);
        if started && self.plan.word.load(Ordering::Relaxed) & ACTIVE == 0 {
            // Woken from idle, most likely by an arm: linger (see "Taking back").
            state.linger_until = now.after(LINGER);
        }
        (reading, now)
    }

    /// Plans the next turn after a pass at tick `now`: whether the wheel goes idle, the
    /// tick, and the reading at which to turn.
    #[inline(always)]
    fn plan_next(
        &self,
        state: &DriverState,
        now: Tick,
        reclaimed: bool,
        degraded: bool,
    ) -> NextTurn {
        let elapsed = state.levels.elapsed();
        let next = state.levels.next_expiration(&self.storage);
        // Idle: nothing armed, nothing just reclaimed and no degraded deadline waiting.
        // The driver then needs no timer at all, and every arm wakes it.
        // A batch handed off (see `handoff`) keeps a turn planned by the next tick,
        // which takes it back if its lead has not taken it.
        let handed_off = self.handed_off();
        let idle =
            next.is_none() && !reclaimed && !degraded && !handed_off && now >= state.linger_until;
        // After reclaiming, more cancels are likely: look again within a tick, as for
        // a degraded deadline waiting. While lingering, turn when the lingering ends.
        let horizon = if reclaimed || degraded || handed_off {
            1
        } else if next.is_none() && now < state.linger_until {
            let linger_until = state.linger_until.get();
            linger_until - elapsed.min(linger_until - 1)
        } else {
            MAX_SLEEP
        };
        let mut planned = elapsed.saturating_add(horizon);
        // The reading at which to turn: the planned tick, or earlier within the tick
        // before it, when the entries of a sparse slot (or of a dense one to look at
        // early) are due then ("Sub-tick firing"); and how far into that tick before,
        // for arming threads (see `Plan::offset`; 0 unless the plan comes from such a
        // slot or a higher one).
        let mut wake = self.tick_start(Tick::new(planned));
        let mut offset = 0;
        if let Some(expiration) = next {
            if expiration.deadline <= planned {
                planned = expiration.deadline;
                wake = self.tick_start(Tick::new(planned));
                if expiration.level == 0 {
                    if let Some(first) =
                        state
                            .levels
                            .first_look(expiration.slot, state.grain, state.early_looks)
                    {
                        let early = self.tick_start(Tick::new(planned - 1)).after(first.into());
                        wake = wake.min(early);
                        offset = first;
                    }
                } else {
                    // A higher slot comes down at the start of its first key's tick,
                    // with nothing in it due before (`levels`, "Slot arithmetic"):
                    // the turn is a whole tick into the tick before, and an arm due
                    // earlier in that tick wakes the driver, to fire at its own time.
                    offset = u32::try_from(self.ticks().tick()).unwrap_or(u32::MAX);
                }
            }
        }
        NextTurn {
            idle,
            tick: planned,
            wake,
            offset,
        }
    }

    /// Publishes the plan for arming threads; returns the plan word as it was before. The
    /// driver's side of the handshake (see "Waking the driver"): the plan word last, with
    /// a read-modify-write that also tells which shards are in use.
    #[inline(always)]
    fn publish(&self, next: &NextTurn) -> u32 {
        self.plan
            .next_wake
            .store(next.tick as u32, Ordering::Relaxed);
        self.plan.offset.store(next.offset, Ordering::Relaxed);
        if next.idle {
            self.plan.word.fetch_and(!ACTIVE, Ordering::AcqRel)
        } else {
            self.plan.word.fetch_or(ACTIVE, Ordering::AcqRel)
        }
    }

    /// The end of the handshake: whether every inbox of the shards in use that `word`
    /// names is empty. Each check is a read-modify-write; a shard's two are both made.
    #[inline(always)]
    fn inboxes_empty(&self, word: u32) -> bool {
        shards::in_use(word).all(|shard| {
            let shard = &self.shards[shard];
            shard.arm_inbox.check() & shard.cancel_inbox.check()
        })
    }

    /// Wakes the degraded deadlines that left their wakers before tick `now`; returns
    /// whether any still waits. Looks only when the plan word says one left a waker, or one
    /// still waited at the last look: the mark is cleared before the places are read, so a
    /// deadline that leaves its waker after the read marks the word again, which the
    /// publication of the plan sees.
    #[inline]
    fn wake_degraded(&self, state: &mut DriverState, now: Tick) -> bool {
        if !state.degraded_waiting && self.plan.word.load(Ordering::Relaxed) & DEGRADED == 0 {
            return false;
        }
        self.plan.word.fetch_and(!DEGRADED, Ordering::AcqRel);
        // Recorded before the wakes: a waker that panics leaves the rest for the next turn,
        // which must then look.
        state.degraded_waiting = true;
        state.degraded_waiting = self.degraded_wakers.wake_before(now);
        state.degraded_waiting
    }

    /// The entry a list link points to, asked into the cache ahead of its use: the lists
    /// are threaded through the entries, so a walk would otherwise stall on each entry's
    /// miss in turn (see [`entry::prefetch`]).
    #[inline]
    pub(super) fn next_ahead(&self, link: &entry::NextLink) -> Index {
        let next = link.load(Ordering::Relaxed);
        self.fetch_ahead(next);
        next
    }

    /// Asks entry `index` into the cache, unless it is `NIL`.
    #[inline]
    pub(super) fn fetch_ahead(&self, index: Index) {
        if index != NIL {
            entry::prefetch(self.storage.entry(index));
        }
    }
}
