//! The default wheels inside tokio runtimes (feature `tokio`): `punctual_tokio`'s
//! [`default_wheels`](punctual_tokio::default_wheels), hosted by the global wheel.
//!
//! * Their instants are readings of the global wheel's std clock, as every default wheel's.
//! * On real time, their drivers sleep on the global wheel.
//! * A multi-thread runtime's wheel is on the global timeline while the global wheel
//!   reads the std clock.

use punctual_core::{Growable, Limit, Reading, Sleep, StdClock, Wheel};
use punctual_tokio::RuntimeClock;
use punctual_tokio::default_wheels::{Claim, DefaultWheels, Host};

use crate::global::Global;
use crate::wheel_choice::WheelChoice;

/// What the global wheel supplies to the default wheels inside tokio.
struct GlobalHost;

impl Host for GlobalHost {
    type Choice = WheelChoice;
    type Alarm = Sleep<'static, Global>;

    fn reference_clock(&self) -> &'static StdClock {
        crate::global::std_clock()
    }

    fn choice(&self, wheel: &'static Wheel<RuntimeClock, Growable>, pausable: bool) -> WheelChoice {
        WheelChoice {
            wheel,
            reads_behind: Some(wheel.clock()),
            // Settles the global wheel's clock: a budget started here may then end a
            // deadline on the global wheel.
            on_global_timeline: !pausable && crate::global::reads_std_clock(),
        }
    }

    fn alarm(&self, at: Reading) -> Self::Alarm {
        Sleep::new(Global, Limit::At(crate::global::reading_at(at)))
    }
}

static WHEELS: DefaultWheels<GlobalHost> = DefaultWheels::new(GlobalHost);

std::thread_local! {
    static CLAIM: Claim<GlobalHost> = const { Claim::new() };
}

/// How default deadlines reach the wheel of the tokio runtime this thread is in; `None`
/// outside every runtime (or while the thread exits).
pub(crate) fn current() -> Option<&'static WheelChoice> {
    WHEELS.current(&CLAIM).map(|rw| rw.choice())
}

/// The wheel default deadlines started on this thread now would use, inside a tokio
/// runtime: for the conformance suite, which checks that wheel and its driver task.
pub(crate) fn runtime_wheel() -> Option<&'static Wheel<RuntimeClock, Growable>> {
    WHEELS.current(&CLAIM).map(|rw| rw.wheel())
}

/// How many runtime wheels this process has made: the most in use at once. For the tests
/// of their reuse.
pub(crate) fn runtime_wheels_made() -> usize {
    WHEELS.made()
}
