//! [`Host`]: what the default wheels need from the crate that hosts them.
//!
//! * The host's instants are readings of its reference clock; every wheel reads on it.
//! * A driver on real time sleeps with the host's alarm only on a runtime without a
//!   time or I/O driver (or when they cannot be probed).
//! * The host keeps a value with each wheel, made once when the wheel is made.

use core::future::Future;

use punctual_core::{Growable, Reading, StdClock, Wheel};

use crate::RuntimeClock;

/// What the default wheels need from their host: `punctual`'s global wheel supplies it.
pub trait Host: Sync + 'static {
    /// What the host keeps with each wheel: for `punctual`, how its default deadlines
    /// reach the wheel.
    type Choice: Send + Sync + 'static;

    /// A sleep on real time that needs no tokio timer (see [`alarm`](Host::alarm)).
    type Alarm: Future<Output = ()> + Send + 'static;

    /// The clock every wheel's [`RuntimeClock`] reads on: the host's instants are its
    /// readings.
    fn reference_clock(&self) -> &'static StdClock;

    /// What the host keeps with `wheel`, made once, just after the wheel. `pausable`: the
    /// wheel serves `current_thread` runtimes only, whose clock tokio may pause.
    fn choice(&self, wheel: &'static Wheel<RuntimeClock, Growable>, pausable: bool)
    -> Self::Choice;

    /// A future that completes once the reference clock reads `at` or later, driven by
    /// something other than tokio: a wheel's driver sleeps with it on real time when its
    /// runtime has neither a time nor an I/O driver.
    fn alarm(&self, at: Reading) -> Self::Alarm;
}
