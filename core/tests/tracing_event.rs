//! With the `tracing` feature, a fired deadline emits one event with its name, duration
//! and lateness, and a named one then its outcome (target `punctual::outcome`). Run with `cargo test -p punctual-core --features tracing`.
#![cfg(feature = "tracing")]

use core::future::{Future, pending};
use core::pin::pin;
use core::task::{Context, Waker};
use core::time::Duration;
use std::fmt::Debug;
use std::sync::{Arc, Mutex};

use punctual_core::{Fixed, ManualClock, Wheel};
use tracing::field::{Field, Visit};
use tracing::span::{Attributes, Id, Record};
use tracing::{Event, Metadata, Subscriber};

/// Collects every event's fields as `name=value` strings.
#[derive(Clone, Default)]
struct Collect(Arc<Mutex<Vec<Vec<String>>>>);

struct Fields<'a>(&'a mut Vec<String>);

impl Visit for Fields<'_> {
    fn record_debug(&mut self, field: &Field, value: &dyn Debug) {
        self.0.push(format!("{}={:?}", field.name(), value));
    }
    fn record_str(&mut self, field: &Field, value: &str) {
        self.0.push(format!("{}={}", field.name(), value));
    }
    fn record_bool(&mut self, field: &Field, value: bool) {
        self.0.push(format!("{}={}", field.name(), value));
    }
}

impl Subscriber for Collect {
    fn enabled(&self, _: &Metadata<'_>) -> bool {
        true
    }
    fn new_span(&self, _: &Attributes<'_>) -> Id {
        Id::from_u64(1)
    }
    fn record(&self, _: &Id, _: &Record<'_>) {}
    fn record_follows_from(&self, _: &Id, _: &Id) {}
    fn event(&self, event: &Event<'_>) {
        let mut fields = vec![format!("target={}", event.metadata().target())];
        event.record(&mut Fields(&mut fields));
        self.0.lock().unwrap().push(fields);
    }
    fn enter(&self, _: &Id) {}
    fn exit(&self, _: &Id) {}
}

#[test]
fn fired_deadline_emits_one_event_with_lateness() {
    let collect = Collect::default();
    tracing::subscriber::with_default(collect.clone(), || {
        let wheel: Wheel<ManualClock, Fixed<4>> =
            Wheel::fixed(ManualClock::new(), Duration::from_millis(1));
        let mut cx = Context::from_waker(Waker::noop());
        let mut d = pin!(
            wheel
                .deadline(Duration::from_millis(10), pending::<()>())
                .named("pricing")
        );
        assert!(d.as_mut().poll(&mut cx).is_pending());
        wheel.advance(Duration::from_millis(13)); // three milliseconds late
        assert!(d.as_mut().poll(&mut cx).is_ready());
        // A deadline that completes emits nothing.
        let mut ok = pin!(wheel.deadline(Duration::from_millis(10), async { 1 }));
        assert!(ok.as_mut().poll(&mut cx).is_ready());
    });
    let events = collect.0.lock().unwrap();
    assert_eq!(events.len(), 2, "{events:?}");
    let outcome = events[1].join(" ");
    for expected in [
        "target=punctual::outcome",
        "name=pricing",
        "outcome=elapsed",
        "limit=Some(10ms)",
        "used=13ms",
    ] {
        assert!(
            outcome.contains(expected),
            "{expected} missing from: {outcome}"
        );
    }
    let event = events[0].join(" ");
    for expected in [
        "target=punctual ",
        "name=pricing",
        "duration=10ms",
        "late=3ms",
        "budget=false",
    ] {
        assert!(event.contains(expected), "{expected} missing from: {event}");
    }
}

#[test]
fn overrun_is_reported_once_with_its_name() {
    // 10 ms or more: the other test here, 3 ms late, stays below it whatever the order.
    punctual_core::report_overruns(Some(Duration::from_millis(10)));
    let collect = Collect::default();
    tracing::subscriber::with_default(collect.clone(), || {
        let wheel: Wheel<ManualClock, Fixed<4>> =
            Wheel::fixed(ManualClock::new(), Duration::from_millis(1));
        let mut cx = Context::from_waker(Waker::noop());
        let mut d = pin!(
            wheel
                .deadline(Duration::from_millis(10), pending::<()>())
                .named("report")
        );
        assert!(d.as_mut().poll(&mut cx).is_pending());
        // Its task comes back 40 ms after the deadline, as one that did not yield would.
        wheel.advance(Duration::from_millis(50));
        assert!(d.as_mut().poll(&mut cx).is_ready());
        assert_eq!(wheel.stats().overruns, 1);
    });
    let events = collect.0.lock().unwrap();
    let overran: Vec<_> = events
        .iter()
        .map(|e| e.join(" "))
        .filter(|e| e.contains("overran"))
        .collect();
    assert_eq!(overran.len(), 1, "{events:?}");
    for expected in [
        "target=punctual",
        "name=report",
        "duration=10ms",
        "overran=40ms",
    ] {
        assert!(
            overran[0].contains(expected),
            "{expected} missing in {}",
            overran[0]
        );
    }
}
