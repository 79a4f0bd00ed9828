//! What the benches share: the peers (the implementations measured side by side), each
//! scenario written once and generic over the peer, and small helpers.
//!
//! Each peer bounds the same inner future the way its users would write it; the section
//! "How each peer is measured" of `docs/benchmarks.md` says how, peer by peer. Micro
//! benches poll by hand with a no-op waker. Tokio's scenarios run inside
//! `tokio::task::unconstrained`, except the fire row with its budget on.

// Each bench binary uses a part of this module.
#![allow(dead_code, unused_imports, unused_macros)]
// `-> impl Future + Send` in the trait keeps the `Send` bound that `async fn` would drop.
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

/// Implements [`Timeouts`] for a new type `$name` whose deadline of `$d` around `$f` is
/// `$bound` (a future of a `Result`, `Err` when it fired); `$extra` overrides other methods.
macro_rules! timer {
    ($(#[$doc:meta])* $name:ident, |$f:ident, $d:ident| $bound:expr $(; $($extra:tt)*)?) => {
        $(#[$doc])*
        pub(crate) struct $name;

        impl Timeouts for $name {
            fn bound<F: Future + Unpin + Send + 'static>(
                $f: F,
                $d: Duration,
            ) -> impl Future + Send + 'static {
                $bound
            }

            fn timed_out<F: Future + Unpin + Send + 'static>(
                $f: F,
                $d: Duration,
            ) -> impl Future<Output = bool> + Send + 'static {
                async move { $bound.await.is_err() }
            }

            $($($extra)*)?
        }
    };
}

mod floors;
mod other_peers;
mod punctual_peers;
mod scenarios;
mod sys;
mod tokio_peers;

pub(crate) use floors::*;
pub(crate) use other_peers::*;
pub(crate) use punctual_peers::*;
pub(crate) use scenarios::*;
pub(crate) use sys::*;
pub(crate) use tokio_peers::*;

/// The deadline of the micro benches: far enough never to fire while measured.
pub(crate) const LONG: Duration = Duration::from_secs(2);

/// Declares [`Peer`] and [`with_peer!`] from one list: each variant names the type that
/// implements [`Timeouts`] for it, and the peer's name in the tables.
macro_rules! peers {
    ($($(#[$doc:meta])* $peer:ident $name:literal,)*) => {
        /// The peers, in the order tables show them.
        #[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
        pub(crate) enum Peer {
            $($(#[$doc])* $peer,)*
        }

        impl Peer {
            pub(crate) const ALL: &[Peer] = &[$(Peer::$peer),*];

            pub(crate) fn name(self) -> &'static str {
                match self {
                    $(Peer::$peer => $name,)*
                }
            }
        }

        /// Runs `$body` with `$t` bound to the [`Timeouts`] type of the peer `$peer`.
        macro_rules! with_peer {
            ($p:expr, $t:ident => $body:expr) => {
                match $p {
                    $($crate::common::Peer::$peer => {
                        type $t = $crate::common::$peer;
                        $body
                    })*
                }
            };
        }
    };
}

peers! {
    /// The inner future alone (the `ready` baseline).
    Bare "bare future",
    Punctual "punctual",
    /// The default deadline inside a tokio runtime.
    PunctualInTokio "punctual in tokio",
    Punctual100us "punctual-100us",
    PunctualSmol "punctual-smol",
    PunctualSmol100us "punctual-smol-100us",
    /// The tokio adapter's wheel.
    PunctualTokio "punctual-tokio",
    Tokio "tokio",
    /// tokio's alternative timer.
    TokioAlt "tokio alt timer",
    AsyncIo "async-io",
    FuturesTimer "futures-timer",
    FuturesTime "futures-time",
    Embassy "embassy-time",
    /// No timer: the fire harness alone.
    NoTimer "no timer",
    /// The floor under an arm + cancel.
    ArmFloor "floor: clock + 2 CAS",
    /// A deadline that touches nothing shared.
    OwnFloor "floor: clock + waker + CAS",
}

impl Peer {
    /// Every peer that bounds a future and that this build can run, punctual first.
    pub(crate) fn timers() -> impl Iterator<Item = Peer> + Clone {
        use Peer::*;
        [Punctual, PunctualInTokio, Tokio, TokioAlt, AsyncIo]
            .into_iter()
            .chain([FuturesTimer, FuturesTime, Embassy])
            .filter(|p| p.available())
    }

    /// Whether this build can run the peer: tokio's alternative timer needs
    /// `--cfg tokio_unstable`.
    pub(crate) fn available(self) -> bool {
        self != Peer::TokioAlt || cfg!(tokio_unstable)
    }

    /// The peer of a name (for the benches' command lines).
    pub(crate) fn named(name: &str) -> Option<Peer> {
        Self::ALL.iter().copied().find(|p| p.name() == name)
    }
}

/// One way of bounding a future by a deadline.
pub(crate) trait Timeouts: 'static {
    /// The peer's own deadline future around `f`, as its users write it.
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

    /// Runs `f` where the peer's deadlines can be made and polled (tokio: in a task).
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
