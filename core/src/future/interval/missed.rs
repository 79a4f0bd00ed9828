//! `MissedTickBehavior`: where an interval's next tick goes when a tick came late.
//! * A tick at most `slack` (two wheel ticks) late keeps the grid under every behaviour.
//! * The next tick is never before the one just given, nor before `now` but for `Burst`.
//! * All arithmetic saturates at [`Reading::END`], which never comes.

use crate::time::Reading;

/// What an [`Interval`](crate::Interval) does when a tick comes late (a busy task, a
/// starved driver, a suspend), as tokio's. With a period of 10 ms and the tick of 10 ms
/// taken at 35 ms:
///
/// | behaviour | ticks given after the late one |
/// |---|---|
/// | [`Skip`](Self::Skip) (default) | 40, 50, ... |
/// | [`Burst`](Self::Burst) | 20 and 30 at once, then 40, 50, ... |
/// | [`Delay`](Self::Delay) | 45, 55, ... (the grid moves) |
///
/// A tick at most two wheel ticks late is on time. The default is `Skip`, not tokio's
/// `Burst`: after a stall, a burst of work comes at the worst moment.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub enum MissedTickBehavior {
    /// Gives the missed ticks at once, as fast as they are polled, then keeps the grid.
    Burst,
    /// Moves the grid: the next tick is one period after the late one was taken.
    Delay,
    /// Gives one tick for all that were missed, then the next tick of the grid after now.
    #[default]
    Skip,
}

impl MissedTickBehavior {
    /// The tick after `tick`, taken at `now`, `period` and `slack` in nanoseconds.
    pub(super) fn next(self, tick: Reading, now: Reading, period: u64, slack: u64) -> Reading {
        let late = now.as_nanos().saturating_sub(tick.as_nanos());
        if late <= slack {
            return tick.after(period);
        }
        match self {
            Self::Burst => tick.after(period),
            Self::Delay => now.after(period),
            // The first grid point after `now`: `tick + k·period > now`.
            Self::Skip => now.after(period - late % period),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::MissedTickBehavior::{self, Burst, Delay, Skip};
    use crate::time::Reading;

    fn next(behaviour: MissedTickBehavior, tick: u64, now: u64) -> u64 {
        behaviour
            .next(Reading::from_nanos(tick), Reading::from_nanos(now), 10, 2)
            .as_nanos()
    }

    #[test]
    fn each_behaviour_after_a_late_tick() {
        // Taken at 35 (the ticks of 20 and 30 missed).
        assert_eq!(next(Burst, 10, 35), 20);
        assert_eq!(next(Delay, 10, 35), 45);
        assert_eq!(next(Skip, 10, 35), 40);
        // Exactly on a grid point: that point is taken by this tick.
        assert_eq!(next(Skip, 10, 40), 50);
    }

    #[test]
    fn within_slack_keeps_the_grid() {
        for behaviour in [Burst, Delay, Skip] {
            assert_eq!(next(behaviour, 10, 12), 20, "{behaviour:?}");
        }
        assert_eq!(next(Delay, 10, 13), 23);
    }

    #[test]
    fn saturates_at_the_end() {
        let end = u64::MAX;
        for behaviour in [Burst, Delay, Skip] {
            assert_eq!(next(behaviour, end - 5, end - 1), end, "{behaviour:?}");
        }
    }
}
