//! What the wasm tests share: a future that records its drop, and waits on the host's own
//! timers (not the wheel's), measured on the host's clock.

#![allow(dead_code, unreachable_pub)]

use core::cell::Cell;
use core::future::Future;
use core::pin::Pin;
use core::task::{Context, Poll};
use core::time::Duration;
use std::rc::Rc;

/// A future that never completes and sets its flag when dropped.
pub struct NeverWithDropFlag(pub Rc<Cell<bool>>);

impl Future for NeverWithDropFlag {
    type Output = ();
    fn poll(self: Pin<&mut Self>, _: &mut Context<'_>) -> Poll<()> {
        Poll::Pending
    }
}

impl Drop for NeverWithDropFlag {
    fn drop(&mut self) {
        self.0.set(true);
    }
}

/// A drop flag, unset.
pub fn flag() -> Rc<Cell<bool>> {
    Rc::new(Cell::new(false))
}

/// Waits `ms` milliseconds on a plain `setTimeout`, outside any wheel.
pub async fn host_wait(ms: u32) {
    gloo_timers::future::TimeoutFuture::new(ms).await;
}

/// `ms` milliseconds.
pub const fn ms(ms: u64) -> Duration {
    Duration::from_millis(ms)
}

/// Far beyond any lateness of a host that is not starved, and far below the long deadline
/// an early arm must not wait for.
pub const IN_TIME: Duration = Duration::from_millis(2_500);

/// The deadline an earlier arm must not wait for.
pub const LONG: Duration = Duration::from_secs(10);
