//! What the current tokio runtime was built with, asked without a printed panic: a timer
//! or an I/O source made without its driver panics, so a probe (once per driver task) makes
//! one inside `catch_unwind`.
//! * The panic hook is silent on the probing thread meanwhile: a hook installed at the
//!   first probe hands every other panic to the one before it, unchanged.
//! * With `panic = "abort"` nothing can be caught: every probe answers `None`.

#[cfg(panic = "unwind")]
use std::cell::Cell;
#[cfg(panic = "unwind")]
use std::sync::Once;

#[cfg(panic = "unwind")]
std::thread_local! {
    /// A probe is running on this thread: its panic is expected.
    static PROBING: Cell<bool> = const { Cell::new(false) };
}

/// `f()`, or `None` if it panicked; the panic prints nothing.
#[cfg(panic = "unwind")]
pub(super) fn quietly<R>(f: impl FnOnce() -> R) -> Option<R> {
    static SILENCER: Once = Once::new();
    SILENCER.call_once(|| {
        let previous = std::panic::take_hook();
        std::panic::set_hook(Box::new(move |info| {
            if !PROBING.try_with(Cell::get).unwrap_or(false) {
                previous(info);
            }
        }));
    });
    PROBING.with(|probing| probing.set(true));
    let result = std::panic::catch_unwind(std::panic::AssertUnwindSafe(f));
    PROBING.with(|probing| probing.set(false));
    result.ok()
}

/// With `panic = "abort"` a panic cannot be caught: nothing is tried.
#[cfg(not(panic = "unwind"))]
pub(super) fn quietly<R>(_: impl FnOnce() -> R) -> Option<R> {
    None
}

/// Whether the current runtime has a time driver (`enable_time`).
pub(super) fn runtime_has_time() -> bool {
    quietly(|| drop(tokio::time::sleep(core::time::Duration::ZERO))).is_some()
}
