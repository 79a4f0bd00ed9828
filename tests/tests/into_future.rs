//! `punctual::timeout`, `timeout_at` and `budget` take anything that implements
//! `IntoFuture`, as tokio's `timeout` does: a request builder is bounded as it is.

use std::future::{IntoFuture, Ready, ready};
use std::time::{Duration, Instant};

/// A builder that is not a future but turns into one, as many clients' requests do.
struct Request {
    answer: Option<u32>,
}

impl IntoFuture for Request {
    type Output = u32;
    type IntoFuture = std::pin::Pin<Box<dyn Future<Output = u32> + Send>>;

    fn into_future(self) -> Self::IntoFuture {
        match self.answer {
            Some(n) => Box::pin(ready(n)),
            None => Box::pin(std::future::pending()),
        }
    }
}

#[test]
fn timeout_takes_a_builder() {
    futures_executor::block_on(async {
        let met = punctual::timeout(Duration::from_secs(5), Request { answer: Some(7) }).await;
        assert_eq!(met, Ok(7));
        let missed = punctual::timeout(Duration::from_millis(5), Request { answer: None }).await;
        assert_eq!(missed.unwrap_err().duration(), Duration::from_millis(5));
    });
}

#[test]
fn timeout_at_takes_a_builder() {
    futures_executor::block_on(async {
        let at = Instant::now() + Duration::from_millis(5);
        let missed = punctual::timeout_at(at, Request { answer: None }).await;
        assert!(missed.is_err());
        assert!(Instant::now() >= at, "never early");
    });
}

#[test]
fn budget_takes_a_builder() {
    futures_executor::block_on(async {
        let met = punctual::budget(Duration::from_secs(5), Request { answer: Some(3) }).await;
        assert_eq!(met, Ok(3));
        let missed = punctual::budget(Duration::from_millis(5), Request { answer: None }).await;
        assert!(missed.unwrap_err().is_budget());
    });
}

/// A plain future still works, and keeps its type: `Deadline<F>` of the future itself.
#[test]
fn a_future_is_its_own_into_future() {
    let d: punctual::Deadline<Ready<u8>> = punctual::timeout(Duration::from_secs(1), ready(1));
    assert_eq!(futures_executor::block_on(d), Ok(1));
}
