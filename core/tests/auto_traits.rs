//! Auto traits: `Deadline` is `Send`, `Sync` and `Unpin` exactly when its inner future
//! is; `Sleep`, `Elapsed` and wheels are `Send` and `Sync`; a deadline of a wheel in a
//! `static` is `'static`.
#![cfg(feature = "alloc")]

use core::future::{Future, ready};
use core::pin::Pin;
use core::task::{Context, Poll};
use core::time::Duration;

use punctual_core::{Deadline, Elapsed, Fixed, Growable, ManualClock, Sleep, Wheel};

const TICK: Duration = Duration::from_millis(1);

fn assert_send<T: Send>() {}

fn assert_sync<T: Sync>() {}

fn assert_unpin<T: Unpin>() {}

/// Resolves to the blanket impl only when `T` is not `Unpin`: with an `Unpin` type, both
/// impls apply and the call below is ambiguous, which fails to compile.
trait AmbiguousIfUnpin<A> {
    fn check() {}
}

impl<T: ?Sized> AmbiguousIfUnpin<()> for T {}

impl<T: ?Sized + Unpin> AmbiguousIfUnpin<u8> for T {}

trait AmbiguousIfSend<A> {
    fn check() {}
}

impl<T: ?Sized> AmbiguousIfSend<()> for T {}

impl<T: ?Sized + Send> AmbiguousIfSend<u8> for T {}

/// A future that is neither `Unpin` nor `Send`.
struct PinnedLocal {
    _pin: core::marker::PhantomPinned,
    _local: std::rc::Rc<()>,
}

impl Future for PinnedLocal {
    type Output = ();
    fn poll(self: Pin<&mut Self>, _: &mut Context<'_>) -> Poll<()> {
        Poll::Pending
    }
}

#[test]
fn auto_traits_follow_the_inner_future() {
    type Plain = core::future::Ready<u8>;
    assert_send::<Deadline<'static, Plain>>();
    assert_sync::<Deadline<'static, Plain>>();
    assert_unpin::<Deadline<'static, Plain>>();
    assert_send::<Deadline<'static, core::future::Pending<()>>>();
    assert_unpin::<Deadline<'static, core::future::Pending<()>>>();
    assert_send::<Sleep<'static>>();
    assert_sync::<Sleep<'static>>();
    assert_unpin::<Sleep<'static>>();
    assert_send::<Elapsed>();
    assert_sync::<Elapsed>();
    assert_send::<Wheel<ManualClock, Fixed<4>>>();
    assert_sync::<Wheel<ManualClock, Fixed<4>>>();
    assert_send::<Wheel<ManualClock, Growable>>();
    assert_sync::<Wheel<ManualClock, Growable>>();

    // And they are not claimed when the inner future lacks them.
    <Deadline<'static, PinnedLocal> as AmbiguousIfUnpin<_>>::check();
    <Deadline<'static, PinnedLocal> as AmbiguousIfSend<_>>::check();

    // A deadline borrowed from a wheel in a `static` is `'static`.
    static WHEEL: Wheel<ManualClock, Fixed<4>> = Wheel::fixed(ManualClock::new(), TICK);
    let d = WHEEL.deadline(Duration::from_millis(1), ready(1u8));
    fn is_static_send<T: Send + 'static>(_: &T) {}
    is_static_send(&d);
}
