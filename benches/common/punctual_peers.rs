//! punctual's own peers outside tokio: the global wheel, a 100 µs wheel on its own
//! thread, and wheels driven inside a smol executor.

#[allow(unused_imports)]
use super::*;

/// `punctual`'s global wheel: a 1 ms tick, driven by its own thread.
pub(crate) struct PunctualGlobal;

impl Timeouts for PunctualGlobal {
    fn bound<F: Future + Unpin + Send + 'static>(
        f: F,
        d: Duration,
    ) -> impl Future + Send + 'static {
        f.deadline(d)
    }

    fn timed_out<F: Future + Unpin + Send + 'static>(
        f: F,
        d: Duration,
    ) -> impl Future<Output = bool> + Send + 'static {
        async move { f.deadline(d).await.is_err() }
    }
}

/// A wheel with a 100 µs tick, driven by `punctual::wheel::spawn_driver`.
pub(crate) fn wheel_100us() -> &'static Wheel<StdClock, Growable> {
    static WHEEL: LazyLock<Wheel<StdClock, Growable>> = LazyLock::new(|| {
        Wheel::growable(StdClock::new(), Duration::from_micros(100)).with_batched_wakes()
    });
    static DRIVER: Once = Once::new();
    DRIVER.call_once(|| {
        punctual::wheel::spawn_driver(&WHEEL);
    });
    &WHEEL
}

/// `punctual` on a wheel of 100 µs ticks.
pub(crate) struct Punctual100us;

impl Timeouts for Punctual100us {
    fn bound<F: Future + Unpin + Send + 'static>(
        f: F,
        d: Duration,
    ) -> impl Future + Send + 'static {
        wheel_100us().deadline(d, f)
    }

    fn timed_out<F: Future + Unpin + Send + 'static>(
        f: F,
        d: Duration,
    ) -> impl Future<Output = bool> + Send + 'static {
        async move { wheel_100us().deadline(d, f).await.is_err() }
    }
}

/// A `punctual` peer on a wheel of its own whose driver runs in the executor's own task
/// (`punctual_smol::with_driver` in `async_io::block_on`), as async-io's timers do: no
/// timer thread, so no deadline crosses between cores.
macro_rules! smol_peer {
    ($(#[$doc:meta])* $name:ident, $tick:expr) => {
        $(#[$doc])*
        pub(crate) struct $name;

        impl $name {
            /// The peer's wheel (leaked: deadlines need it `'static`).
            fn wheel() -> &'static punctual_smol::SmolWheel {
                static WHEEL: LazyLock<&'static punctual_smol::SmolWheel> =
                    LazyLock::new(|| punctual_smol::leak_wheel($tick));
                &WHEEL
            }
        }

        impl Timeouts for $name {
            fn bound<F: Future + Unpin + Send + 'static>(
                f: F,
                d: Duration,
            ) -> impl Future + Send + 'static {
                Self::wheel().deadline(d, f)
            }

            fn timed_out<F: Future + Unpin + Send + 'static>(
                f: F,
                d: Duration,
            ) -> impl Future<Output = bool> + Send + 'static {
                async move { Self::wheel().deadline(d, f).await.is_err() }
            }

            fn block_on<R: Send + 'static>(fut: impl Future<Output = R> + Send + 'static) -> R {
                async_io::block_on(punctual_smol::with_driver(Self::wheel(), fut))
            }
        }
    };
}

smol_peer!(
    /// `punctual` on a wheel of 1 ms ticks driven in the executor (see `smol_peer!`).
    PunctualSmol,
    punctual_smol::DEFAULT_TICK
);
smol_peer!(
    /// `punctual` on a wheel of 100 µs ticks driven in the executor (see `smol_peer!`).
    PunctualSmol100us,
    Duration::from_micros(100)
);
