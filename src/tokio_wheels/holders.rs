//! Who still holds a runtime wheel: its state word.
//!
//! Two parties hold a runtime wheel: its **owner**, the thread whose default deadlines it serves,
//! and its **driver**, the runtime task that turns it (or, after the runtime shut down,
//! the orphan driver thread). Both bits are set together when a thread claims the wheel.
//! Each party clears its own bit once, with one atomic operation, and learns from the
//! bits it cleared whether it was the last to leave; the last one shelves the wheel for
//! the next claim. So a wheel is shelved exactly once, whichever party leaves first and
//! however the two race, and a claim finds the word clear again.
//!
//! The driver stops driving only once the owner has left ([`Holders::owner_left`])
//! and nothing is armed: only the owner arms on the wheel (a deadline chooses its wheel at
//! its start, on the thread that polls it), so a wheel found empty after the owner left
//! stays empty. The driver reads the word after registering its waker, and an
//! owner that leaves while the driver still holds the wheel wakes the driver after
//! clearing its bit: a driver idle on an empty wheel always sees the owner leave.
//!
//! `tests/tests/loom_facade.rs` includes this file with loom's atomics in place of
//! `crate::sync`'s, and checks both claims under every interleaving.

use crate::sync::{AtomicU8, Ordering};

const OWNED: u8 = 1;
const DRIVEN: u8 = 2;

/// The state word of a runtime wheel (see the module docs).
pub(crate) struct Holders(AtomicU8);

impl Holders {
    /// A wheel no one holds yet.
    pub(crate) fn new() -> Self {
        Self(AtomicU8::new(0))
    }

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
