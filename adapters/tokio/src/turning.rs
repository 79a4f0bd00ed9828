//! `TurningSleeper`: tokio sleeps whose wake turns the wheel, then wakes the driver's task.
//!
//! * A sleep that was dropped turns nothing, even if tokio still holds its waker.
//! * A task waker that panics during that turn does not unwind into tokio's timer.

use core::future::Future;
use core::pin::Pin;
use core::task::{Context, Poll};
use std::sync::{Arc, Mutex};
use std::task::{Wake, Waker};

use pin_project_lite::pin_project;
use punctual_core::{Clock, Reading, Sleeper, Storage, Wheel};

/// A [`Sleeper`] for a `'static` wheel whose sleeps, when tokio fires them, turn the wheel
/// and then wake the driver's task: a deadline fires in the same step as a tokio timer of
/// the same instant, not a scheduling round later as with [`TokioSleeper`](crate::TokioSleeper).
#[derive(Debug)]
pub struct TurningSleeper<T, C: 'static, S: 'static> {
    inner: T,
    wheel: &'static Wheel<C, S>,
}

impl<T, C, S> TurningSleeper<T, C, S> {
    /// Sleeps of `inner` whose wakes turn `wheel`.
    pub const fn new(inner: T, wheel: &'static Wheel<C, S>) -> Self {
        Self { inner, wheel }
    }
}

impl<T, C, S> Sleeper for TurningSleeper<T, C, S>
where
    T: Sleeper<Sleep = tokio::time::Sleep>,
    C: Clock + 'static,
    S: Storage + 'static,
{
    type Sleep = TurningSleep<C, S>;

    fn sleep_until(&mut self, at: Reading) -> TurningSleep<C, S> {
        TurningSleep {
            sleep: self.inner.sleep_until(at),
            wake: Arc::new(TurnThenWake {
                wheel: self.wheel,
                task: Mutex::new(Some(None)),
            }),
        }
    }
}

pin_project! {
    /// A sleep of [`TurningSleeper`].
    #[derive(Debug)]
    pub struct TurningSleep<C: 'static, S: 'static> {
        #[pin]
        sleep: tokio::time::Sleep,
        wake: Arc<TurnThenWake<C, S>>,
    }

    impl<C: 'static, S: 'static> PinnedDrop for TurningSleep<C, S> {
        fn drop(this: Pin<&mut Self>) {
            this.project().wake.let_go();
        }
    }
}

impl<C: Clock + 'static, S: Storage + 'static> Future for TurningSleep<C, S> {
    type Output = ();

    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<()> {
        let this = self.project();
        this.wake.set_task(cx.waker());
        let waker = Waker::from(Arc::clone(this.wake));
        this.sleep.poll(&mut Context::from_waker(&waker))
    }
}

/// The waker of a [`TurningSleep`]: turns the wheel, then wakes the task.
#[derive(Debug)]
struct TurnThenWake<C: 'static, S: 'static> {
    wheel: &'static Wheel<C, S>,
    /// The task's waker; the outer `None` once the sleep is dropped. A wake holds the lock
    /// through its turn, so none is still turning once the sleep is gone.
    task: Mutex<Option<Option<Waker>>>,
}

impl<C, S> TurnThenWake<C, S> {
    fn set_task(&self, waker: &Waker) {
        let mut task = self.task.lock().unwrap_or_else(|p| p.into_inner());
        if let Some(task) = task.as_mut() {
            if !task.as_ref().is_some_and(|t| t.will_wake(waker)) {
                *task = Some(waker.clone());
            }
        }
    }

    fn let_go(&self) {
        *self.task.lock().unwrap_or_else(|p| p.into_inner()) = None;
    }
}

impl<C: Clock + 'static, S: Storage + 'static> Wake for TurnThenWake<C, S> {
    fn wake(self: Arc<Self>) {
        self.wake_by_ref();
    }

    fn wake_by_ref(self: &Arc<Self>) {
        // tokio fires timers in the runtime's context: the clock reads its time here.
        let held = self.task.lock().unwrap_or_else(|p| p.into_inner());
        let Some(task) = held.as_ref() else {
            return;
        };
        let task = task.clone();
        let _ = std::panic::catch_unwind(core::panic::AssertUnwindSafe(|| self.wheel.turn()));
        drop(held);
        if let Some(task) = task {
            task.wake();
        }
    }
}
