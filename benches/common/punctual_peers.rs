//! punctual's peers outside tokio: the global wheel, a 100 µs wheel on its own thread,
//! and wheels driven inside a smol executor.

#[allow(unused_imports)]
use super::*;

timer!(
    /// `f.deadline(d)`: the global wheel (1 ms tick) and its thread.
    Punctual,
    |f, d| f.deadline(d)
);

/// A wheel of 100 µs ticks, driven by `punctual::wheel::spawn_driver`.
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

timer!(
    /// punctual on a wheel of 100 µs ticks on its own thread.
    Punctual100us,
    |f, d| wheel_100us().deadline(d, f)
);

/// A punctual peer on a wheel whose driver runs in the executor's own task
/// (`punctual_smol::with_driver` in `async_io::block_on`), as async-io's timers do.
macro_rules! smol_peer {
    ($(#[$doc:meta])* $name:ident, $tick:expr) => {
        timer!(
            $(#[$doc])*
            $name,
            |f, d| $name::wheel().deadline(d, f);
            fn block_on<R: Send + 'static>(fut: impl Future<Output = R> + Send + 'static) -> R {
                async_io::block_on(punctual_smol::with_driver(Self::wheel(), fut))
            }
        );

        impl $name {
            /// The peer's wheel (leaked: deadlines need it `'static`).
            fn wheel() -> &'static punctual_smol::SmolWheel {
                static WHEEL: LazyLock<&'static punctual_smol::SmolWheel> =
                    LazyLock::new(|| punctual_smol::leak_wheel($tick));
                &WHEEL
            }
        }
    };
}

smol_peer!(
    /// A wheel of 1 ms ticks driven in the executor.
    PunctualSmol,
    punctual_smol::DEFAULT_TICK
);
smol_peer!(
    /// A wheel of 100 µs ticks driven in the executor.
    PunctualSmol100us,
    Duration::from_micros(100)
);
