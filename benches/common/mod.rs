//! What the benches share: the peers, each scenario written once and generic over the
//! peer, and small helpers. How each peer bounds a future is in `docs/benchmarks.md`
//! ("How each peer is measured").

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
    ($($peer:ident $name:literal,)*) => {
        /// The peers, in the order tables show them; each is a type of the same name.
        #[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
        pub(crate) enum Peer {
            $($peer,)*
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
    Bare "bare future",
    Punctual "punctual",
    PunctualInTokio "punctual in tokio",
    Punctual100us "punctual-100us",
    PunctualSmol "punctual-smol",
    PunctualSmol100us "punctual-smol-100us",
    PunctualTokio "punctual-tokio",
    Tokio "tokio",
    TokioAlt "tokio alt timer",
    AsyncIo "async-io",
    FuturesTimer "futures-timer",
    FuturesTime "futures-time",
    Embassy "embassy-time",
    NoTimer "no timer",
    ArmFloor "floor: clock + 2 CAS",
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

/// The peers of a million timers (`benches/million.rs`): punctual's default (from 2
/// threads), the default inside a 2-worker tokio runtime, tokio's two timers on the same
/// runtime shape, and the floor.
pub(crate) const MILLION_PEERS: [Peer; 5] = [
    Peer::Punctual,
    Peer::PunctualInTokio,
    Peer::Tokio,
    Peer::TokioAlt,
    Peer::OwnFloor,
];

/// The HTTP benchmark's peers (`benches/http/`) and their names there: tower's timeout
/// with tokio's timer, the same with its alternative timer, and punctual-tower's layer
/// with default deadlines inside.
pub(crate) const HTTP_PEERS: [(Peer, &str); 3] = [
    (Peer::Tokio, "tower timeout + tokio"),
    (Peer::TokioAlt, "tower timeout + tokio alt timer"),
    (Peer::PunctualInTokio, "punctual-tower + deadline"),
];

/// The prefix of the gRPC rows' peers' names (a tonic server and tonic clients).
pub(crate) const GRPC: &str = "gRPC: ";

/// The HTTP benchmark's rows: the peers' name prefix, K (inner deadlines per request),
/// and the row's words.
pub(crate) const HTTP_ROWS: [(&str, usize, &str); 5] = [
    ("", 0, "HTTP, K = 0"),
    ("", 1, "HTTP, K = 1"),
    ("", 4, "HTTP, K = 4"),
    ("", 16, "HTTP, K = 16"),
    (GRPC, 4, "gRPC (tonic), K = 4"),
];

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
