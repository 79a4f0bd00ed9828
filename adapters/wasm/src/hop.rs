//! `Hop`: a task of its own, out of a chain of nested timers.
//!
//! * Browsers clamp a `setTimeout` below 4 ms to 4 ms in a chain of more than five nested
//!   timers (a driver sleeping a tick at a time); a timer set from a message's task, or
//!   its microtasks, starts a chain anew.
//! * A hop posts one message on a `MessageChannel` of its own and completes once its
//!   handler ran. Dropping it closes the channel: nothing keeps Node's event loop alive.

use core::cell::Cell;
use core::future::Future;
use core::pin::Pin;
use core::task::{Context, Poll, Waker};
use std::rc::Rc;

use wasm_bindgen::JsCast;
use wasm_bindgen::JsValue;
use wasm_bindgen::closure::Closure;
use web_sys::MessageChannel;

/// Timers shorter than this many milliseconds are clamped in a chain of nested timers.
pub(crate) const CLAMPED_BELOW: u32 = 4;

/// A message to a channel of its own: completes in a task that is not a timer's.
pub(crate) struct Hop {
    channel: MessageChannel,
    arrival: Rc<Arrival>,
    _on_message: Closure<dyn FnMut()>,
}

/// Whether the message has arrived, and the waker to wake when it does.
#[derive(Default)]
struct Arrival {
    arrived: Cell<bool>,
    waker: Cell<Option<Waker>>,
}

impl Hop {
    /// Posts the message. `None` if the host has no `MessageChannel`, or refuses the post.
    pub(crate) fn new() -> Option<Self> {
        let channel = MessageChannel::new().ok()?;
        let arrival = Rc::new(Arrival::default());
        let on_arrival = Rc::clone(&arrival);
        let on_message = Closure::<dyn FnMut()>::new(move || {
            on_arrival.arrived.set(true);
            if let Some(waker) = on_arrival.waker.take() {
                waker.wake();
            }
        });
        // Setting `onmessage` also starts the port.
        channel
            .port1()
            .set_onmessage(Some(on_message.as_ref().unchecked_ref()));
        let hop = Self {
            channel,
            arrival,
            _on_message: on_message,
        };
        hop.channel.port2().post_message(&JsValue::UNDEFINED).ok()?;
        Some(hop)
    }
}

impl core::fmt::Debug for Hop {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.debug_struct("Hop")
            .field("arrived", &self.arrival.arrived.get())
            .finish_non_exhaustive()
    }
}

impl Future for Hop {
    type Output = ();

    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<()> {
        if self.arrival.arrived.get() {
            return Poll::Ready(());
        }
        self.arrival.waker.set(Some(cx.waker().clone()));
        Poll::Pending
    }
}

impl Drop for Hop {
    fn drop(&mut self) {
        let port = self.channel.port1();
        port.set_onmessage(None);
        port.close();
        self.channel.port2().close();
    }
}

#[cfg(target_family = "wasm")]
#[cfg(test)]
mod tests {
    use wasm_bindgen_test::wasm_bindgen_test;

    use super::Hop;

    #[wasm_bindgen_test]
    async fn hop_completes() {
        for _ in 0..3 {
            Hop::new()
                .expect("Node and browsers have MessageChannel")
                .await;
        }
    }

    #[wasm_bindgen_test]
    fn dropped_hop_is_harmless() {
        // Its message may still be queued: the handler is gone, the ports are closed.
        drop(Hop::new());
    }
}
