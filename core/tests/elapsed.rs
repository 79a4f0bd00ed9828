//! Rule 7 of docs/design.md, the error: `Elapsed` names the deadline's duration and name,
//! is an `Error`, and converts into a timed-out `std::io::Error`.
#![cfg(feature = "alloc")]

mod support;

use core::future::pending;
use core::pin::pin;
use core::time::Duration;

use support::{CountingWaker, fixed, is_elapsed, ms};

#[test]
fn elapsed_display_names_the_duration_and_the_name() {
    let wheel = fixed::<4>();
    let w = CountingWaker::new();
    let mut named = pin!(wheel.deadline(ms(800), pending::<()>()).named("pricing"));
    let mut plain = pin!(wheel.deadline(Duration::from_secs(2), pending::<()>()));
    assert_eq!(named.name(), Some("pricing"));
    assert_eq!(plain.name(), None);
    assert!(w.poll(named.as_mut()).is_pending());
    assert!(w.poll(plain.as_mut()).is_pending());
    wheel.advance(Duration::from_secs(2));
    let named = is_elapsed(w.poll(named.as_mut()));
    let plain = is_elapsed(w.poll(plain.as_mut()));
    assert_eq!(named.to_string(), "deadline 'pricing' of 800ms elapsed");
    assert_eq!(named.name(), Some("pricing"));
    assert_eq!(named.duration(), ms(800));
    assert_eq!(plain.to_string(), "deadline of 2s elapsed");
    assert_eq!(plain.name(), None);

    // The conversion into `std::io::Error` comes with the `std` feature.
    #[cfg(feature = "std")]
    {
        let io: std::io::Error = named.into();
        assert_eq!(io.kind(), std::io::ErrorKind::TimedOut);
        assert_eq!(io.to_string(), "deadline 'pricing' of 800ms elapsed");
        let inner = io
            .get_ref()
            .and_then(|e| e.downcast_ref::<punctual_core::Elapsed>());
        assert_eq!(inner, Some(&named));
    }

    fn is_error<E: core::error::Error + Send + Sync + 'static>(_: &E) {}
    is_error(&plain);
}

#[test]
fn elapsed_at_an_instant_reports_the_instant_as_given() {
    let wheel = fixed::<4>();
    let at = wheel.now() + ms(50);
    let deadline = wheel.deadline_at(at, pending::<()>());
    wheel.clock().advance(ms(60)); // before its first poll
    let e = futures_executor::block_on(deadline).unwrap_err();
    assert_eq!(e.instant(), Some(at));
    assert_eq!(e.duration(), Duration::ZERO);
    assert_eq!(e.to_string(), "deadline at an instant elapsed");

    let at = punctual_core::Reading::from_nanos(7_000_000);
    let e = punctual_core::Elapsed::at_instant(at, Some("flush"));
    assert_eq!(e.instant(), Some(at));
    assert_eq!(e.to_string(), "deadline 'flush' at an instant elapsed");
}

#[test]
fn elapsed_of_a_budget_and_its_debug() {
    let e = punctual_core::Elapsed::budget(Duration::from_secs(2), Some("edge"));
    assert_eq!(e.to_string(), "budget 'edge' of 2s elapsed");
    assert!(e.is_budget());
    let e = punctual_core::Elapsed::new(ms(20), None);
    assert_eq!(
        format!("{e:?}"),
        "Elapsed { duration: 20ms, name: None, budget: false }"
    );
}

/// `?` in a tonic handler answers `DEADLINE_EXCEEDED` (never `CANCELLED`).
#[cfg(feature = "tonic")]
#[test]
fn elapsed_into_a_tonic_status() {
    let wheel = fixed::<4>();
    let w = CountingWaker::new();
    let mut call = pin!(wheel.deadline(ms(5), pending::<()>()));
    assert!(w.poll(call.as_mut()).is_pending());
    wheel.advance(ms(5));
    let status = tonic::Status::from(is_elapsed(w.poll(call.as_mut())));
    assert_eq!(status.code(), tonic::Code::DeadlineExceeded);
}
