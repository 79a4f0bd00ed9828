//! [`OwnClock`]: the handle the queue's one sleep reaches its wheel through.
//! * It reaches the wheel its inner handle chose, and takes instants on that wheel's own
//!   clock: the queue keeps every deadline as a reading of the chosen wheel.

use crate::future::timer::WheelRef;

/// A handle whose instants are readings of the wheel it reaches (`reading_at` is the
/// identity), whatever clock the inner handle's instants are on.
#[derive(Debug, Clone, Copy)]
pub(crate) struct OwnClock<W>(pub(crate) W);

// SAFETY: `get`, `choose` and `forget_choice` are the inner handle's, so `get` returns the
// one wheel the inner handle guarantees between a `choose` and the next `forget_choice`.
// `reading_at` keeps the default (the identity): the queue passes readings of that wheel.
unsafe impl<W: WheelRef> WheelRef for OwnClock<W> {
    type Target = W::Target;
    type Instant = W::Instant;

    #[inline]
    fn get(&self) -> &Self::Target {
        self.0.get()
    }

    #[inline]
    fn instant_of(&self, at: crate::time::Reading) -> W::Instant {
        self.0.instant_of(at)
    }

    #[inline]
    fn choose(&mut self) {
        self.0.choose();
    }

    #[inline]
    fn forget_choice(&mut self) {
        self.0.forget_choice();
    }

    #[inline]
    fn id(&self) -> usize {
        self.0.id()
    }
}
