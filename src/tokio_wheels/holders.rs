//! Who still holds a runtime wheel: its state word.
//!
//! * Two parties hold it, set at a claim: its **owner**, the thread whose default
//!   deadlines it serves, and its **driver**, the task (or orphan thread) that turns it.
//! * Each party clears its own bit once, in one atomic operation, and learns whether it was
//!   the last to leave; the last one shelves the wheel: exactly once, however they race.
//! * The driver stops only once the owner has left and nothing is armed. New deadlines
//!   arm there only through the owner; a timer that chose the wheel earlier and re-arms
//!   (an interval between ticks) may still, and nothing drives it then (a known gap).
//! * The driver reads the word after registering its waker, and an owner that leaves wakes
//!   it after clearing its bit: an idle driver always sees the owner leave.
//!
//! `tests/tests/loom_facade.rs` checks this very file under every interleaving.

use crate::sync::{AtomicU8, Ordering};

const OWNED: u8 = 1;
const DRIVEN: u8 = 2;

/// The state word of a runtime wheel (see the module docs); by default no one holds it.
#[derive(Default)]
pub(crate) struct Holders(AtomicU8);

impl Holders {
    /// A thread claims the wheel (new, or shelved: both bits clear), and a driver is
    /// started for it.
    pub(crate) fn claim(&self) {
        debug_assert_eq!(
            self.0.load(Ordering::Relaxed),
            0,
            "a runtime wheel claimed twice"
        );
        self.0.store(OWNED | DRIVEN, Ordering::Release);
    }

    /// The owner leaves. Returns whether it was the last holder (the driver had already
    /// stopped): the caller shelves the wheel. Otherwise the caller wakes the
    /// driver, which may be idle.
    #[must_use = "the last holder shelves the wheel; otherwise the driver must be woken"]
    pub(crate) fn release_owner(&self) -> bool {
        self.0.fetch_and(!OWNED, Ordering::AcqRel) & DRIVEN == 0
    }

    /// The driver stops driving. Returns whether it was the last holder (the owner had
    /// already left): the caller shelves the wheel.
    #[must_use = "the last holder shelves the wheel"]
    pub(crate) fn release_driver(&self) -> bool {
        self.0.fetch_and(!DRIVEN, Ordering::AcqRel) & OWNED == 0
    }

    /// Whether the owner has left: from then on nothing new is armed on the wheel.
    pub(crate) fn owner_left(&self) -> bool {
        self.0.load(Ordering::Acquire) & OWNED == 0
    }
}
