//! The global wheel: one per process, for default deadlines outside a runtime or virtual
//! time. A timer thread drives it (`thread.rs`), or on `wasm32-unknown-unknown` the host's
//! timers (`web.rs`); both offer the same items.

#[cfg(not(all(target_family = "wasm", target_os = "unknown")))]
mod state;
#[cfg(not(all(target_family = "wasm", target_os = "unknown")))]
mod thread;
#[cfg(all(target_family = "wasm", target_os = "unknown"))]
mod web;

#[cfg(not(all(target_family = "wasm", target_os = "unknown")))]
pub use thread::*;
#[cfg(all(target_family = "wasm", target_os = "unknown"))]
pub use web::*;
