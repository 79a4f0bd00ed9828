//! What the benches share: the implementations measured side by side ("peers"), and each
//! scenario written once, generic over the peer.
//!
//! Every peer bounds the same inner future the way its users would write it:
//!
//! | peer            | a deadline of `d` around `f`                                           |
//! |-----------------|------------------------------------------------------------------------|
//! | `punctual`      | `f.deadline(d)`: the global wheel (1 ms tick) and its thread           |
//! | `punctual in tokio` | `f.deadline(d)` polled inside a tokio runtime: the runtime's wheel (1 ms tick), turned by a task of the runtime, as tokio's scenarios run |
//! | `punctual-100us`| `WHEEL.deadline(d, f)`: a 100 µs wheel driven by `spawn_driver`   |
//! | `punctual-smol` | `wheel.deadline(d, f)` on a 1 ms wheel driven inside the executor by `punctual_smol::with_driver` (fire only) |
//! | `punctual-smol-100us` | the same on a 100 µs wheel driven inside the executor by `punctual_smol::with_driver` (lateness only) |
//! | `punctual-tokio` | `wheel.deadline(d, f)` on the wheel of `punctual::adapters::tokio::start()`: a 1 ms wheel driven by a task of the current-thread runtime (fire and lateness only) |
//! | `tokio`         | `tokio::time::timeout(d, f)`, always inside `tokio::task::unconstrained`; the micro benches (ready, arm + cancel) in a task on a worker of a 2-worker runtime, the fire and lateness scenarios in a current-thread runtime's `block_on` |
//! | `tokio alt timer` | the same on a 2-worker multi-thread runtime built with `enable_alt_timer()` (per-worker wheels), every scenario in a task on a worker; only when built with `--cfg tokio_unstable` (see [`tokio_alt`]) |
//! | `async-io`      | `f` raced against `async_io::Timer::after(d)` (made when `f` is pending, as `f.or(async { Timer::after(d).await; .. })` does) |
//! | `futures-timer` | `f` raced against `futures_timer::Delay::new(d)` (made when `f` is pending) |
//! | `futures-time`  | `f.timeout(d)` (`futures_time::future::FutureExt`, async-io underneath) |
//! | `embassy-time`  | `embassy_time::with_timeout(d, f)`: the `std` driver, generic queue of 128 |
//! | `no timer`      | no deadline at all: `f` and a future woken once, in order of `d`, by a bare loop (fire only: the harness's own cost, below any timer's) |
//! | `floor: clock + 2 CAS` | the least any deadline that starts at its first poll and hands itself to a driver on another thread must do: one clock reading, a kept waker, one compare-and-swap to publish and one to take back (arm + cancel only: a floor under every such timer's cost; see [`ArmFloor`]) |
//! | `floor: clock + waker + CAS` | a deadline with no timer behind it, that touches nothing shared: one clock reading and a kept waker at its first poll, one compare-and-swap on its own state word when dropped (a million timers only: the scenario's own cost, below any timer's; see [`OwnFloor`]) |
//!
//! Micro benches poll by hand with a no-op waker, so that only the deadline is measured.
//! Tokio's part of every scenario runs inside `tokio::task::unconstrained` (its cooperative
//! budget would otherwise make its timers stop registering after 128 polls in one task);
//! the fire scenario also has a row with the budget on.

#![allow(dead_code)]
// each bench binary uses a part of this module
// `-> impl Future + Send` in the trait, so that the futures can move to other threads; the
// `async fn` that clippy suggests would drop the `Send` bound.
#![allow(clippy::manual_async_fn)]

use std::future::{Future, pending};
use std::hint::black_box;
use std::pin::{Pin, pin};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, LazyLock, Once};
use std::task::{Context, Poll, Wake, Waker};
use std::time::{Duration, Instant};

use futures_util::StreamExt;
use futures_util::stream::FuturesUnordered;
use punctual::DeadlineExt;
use punctual::wheel::{Growable, StdClock, Wheel};

mod baselines;
mod helpers;
mod other_peers;
mod punctual_peers;
mod scenarios;
mod tokio_peers;

pub(crate) use baselines::*;
pub(crate) use helpers::*;
pub(crate) use other_peers::*;
pub(crate) use punctual_peers::*;
pub(crate) use scenarios::*;
pub(crate) use tokio_peers::*;

/// The deadline of the micro benches: far enough never to fire while measured.
pub(crate) const LONG: Duration = Duration::from_secs(2);

/// The peers, in the order tables show them.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub(crate) enum Peer {
    /// The inner future alone (the `ready` baseline).
    Bare,
    Punctual,
    /// The default deadline inside a tokio runtime (see [`PunctualInTokio`]).
    PunctualInTokio,
    Punctual100us,
    PunctualSmol,
    PunctualSmol100us,
    /// The tokio adapter's wheel (see [`PunctualTokio`]).
    PunctualTokio,
    Tokio,
    /// tokio's alternative timer (see [`TokioAlt`]).
    TokioAlt,
    AsyncIo,
    FuturesTimer,
    FuturesTime,
    Embassy,
    /// No timer: the fire harness alone (see [`NoTimer`]).
    NoTimer,
    /// The floor under an arm + cancel (see [`ArmFloor`]).
    ArmFloor,
    /// A deadline that touches nothing shared (see [`OwnFloor`]).
    OwnFloor,
}

impl Peer {
    /// Every peer that bounds a future, punctual first, tokio's alternative timer included
    /// (see [`Peer::timers`] for the ones this build can run).
    const ALL_TIMERS: [Peer; 8] = [
        Peer::Punctual,
        Peer::PunctualInTokio,
        Peer::Tokio,
        Peer::TokioAlt,
        Peer::AsyncIo,
        Peer::FuturesTimer,
        Peer::FuturesTime,
        Peer::Embassy,
    ];

    /// Every peer that bounds a future and that this build can run: tokio's alternative
    /// timer only when built with `--cfg tokio_unstable`.
    pub(crate) fn timers() -> impl Iterator<Item = Peer> + Clone {
        Self::ALL_TIMERS.into_iter().filter(|p| p.available())
    }

    /// Whether this build can run the peer.
    pub(crate) fn available(self) -> bool {
        self != Peer::TokioAlt || cfg!(tokio_unstable)
    }

    /// Every peer, by its name (for the benches' command lines).
    pub(crate) fn named(name: &str) -> Option<Peer> {
        [
            Peer::Bare,
            Peer::Punctual,
            Peer::PunctualInTokio,
            Peer::Punctual100us,
            Peer::PunctualSmol,
            Peer::PunctualSmol100us,
            Peer::PunctualTokio,
            Peer::Tokio,
            Peer::TokioAlt,
            Peer::AsyncIo,
            Peer::FuturesTimer,
            Peer::FuturesTime,
            Peer::Embassy,
            Peer::NoTimer,
            Peer::ArmFloor,
            Peer::OwnFloor,
        ]
        .into_iter()
        .find(|p| p.name() == name)
    }

    pub(crate) fn name(self) -> &'static str {
        match self {
            Peer::Bare => "bare future",
            Peer::Punctual => "punctual",
            Peer::PunctualInTokio => "punctual in tokio",
            Peer::Punctual100us => "punctual-100us",
            Peer::PunctualSmol => "punctual-smol",
            Peer::PunctualSmol100us => "punctual-smol-100us",
            Peer::PunctualTokio => "punctual-tokio",
            Peer::Tokio => "tokio",
            Peer::TokioAlt => "tokio alt timer",
            Peer::AsyncIo => "async-io",
            Peer::FuturesTimer => "futures-timer",
            Peer::FuturesTime => "futures-time",
            Peer::Embassy => "embassy-time",
            Peer::NoTimer => "no timer",
            Peer::ArmFloor => "floor: clock + 2 CAS",
            Peer::OwnFloor => "floor: clock + waker + CAS",
        }
    }
}

/// Runs `$body` with `$t` bound to the [`Timeouts`] type of `$peer`.
macro_rules! with_peer {
    ($peer:expr, $t:ident => $body:expr) => {{
        use $crate::common::*;
        match $peer {
            Peer::Bare => {
                type $t = BareFuture;
                $body
            }
            Peer::Punctual => {
                type $t = PunctualGlobal;
                $body
            }
            Peer::PunctualInTokio => {
                type $t = PunctualInTokio;
                $body
            }
            Peer::Punctual100us => {
                type $t = Punctual100us;
                $body
            }
            Peer::PunctualSmol => {
                type $t = PunctualSmol;
                $body
            }
            Peer::PunctualSmol100us => {
                type $t = PunctualSmol100us;
                $body
            }
            Peer::PunctualTokio => {
                type $t = PunctualTokio;
                $body
            }
            Peer::Tokio => {
                type $t = TokioTimeout;
                $body
            }
            Peer::TokioAlt => {
                type $t = TokioAlt;
                $body
            }
            Peer::AsyncIo => {
                type $t = AsyncIoRace;
                $body
            }
            Peer::FuturesTimer => {
                type $t = FuturesTimerRace;
                $body
            }
            Peer::FuturesTime => {
                type $t = FuturesTimeTimeout;
                $body
            }
            Peer::Embassy => {
                type $t = EmbassyTimeout;
                $body
            }
            Peer::NoTimer => {
                type $t = NoTimer;
                $body
            }
            Peer::ArmFloor => {
                type $t = ArmFloor;
                $body
            }
            Peer::OwnFloor => {
                type $t = OwnFloor;
                $body
            }
        }
    }};
}

/// One way of bounding a future by a deadline.
pub(crate) trait Timeouts: 'static {
    /// The peer's own deadline future around `f`, as its users write it (by default, the
    /// one of [`Timeouts::timed_out`]).
    fn bound<F: Future + Unpin + Send + 'static>(
        f: F,
        d: Duration,
    ) -> impl Future + Send + 'static {
        Self::timed_out(f, d)
    }

    /// The same, resolving to whether the deadline fired.
    fn timed_out<F: Future + Unpin + Send + 'static>(
        f: F,
        d: Duration,
    ) -> impl Future<Output = bool> + Send + 'static;

    /// Runs `f` where the peer's deadlines can be made and polled (tokio: inside its runtime
    /// and `unconstrained`).
    /// (`Send + 'static`: tokio's alternative timer runs it in a task on a worker.)
    fn context<R: Send + 'static>(f: impl FnOnce() -> R + Send + 'static) -> R {
        f()
    }

    /// Runs `fut` to completion on the executor the peer's users would use.
    fn block_on<R: Send + 'static>(fut: impl Future<Output = R> + Send + 'static) -> R {
        futures_executor::block_on(fut)
    }

    /// `threads` threads each do `iters` arm + cancel; the wall time until all are done.
    fn contention(threads: usize, iters: u64) -> Duration
    where
        Self: Sized,
    {
        let start = Instant::now();
        std::thread::scope(|s| {
            for _ in 0..threads {
                s.spawn(move || Self::context(move || arm_cancel_loop::<Self>(iters)));
            }
        });
        start.elapsed()
    }
}
