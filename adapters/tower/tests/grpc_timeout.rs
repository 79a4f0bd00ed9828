//! The `grpc-timeout` parser on any input: it never panics, accepts exactly the wire
//! format (one to eight digits and a unit of H M S m u n), and the encoder's values parse
//! back to no more than they were given. A malformed header is reported by a `tracing`
//! event.

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

use proptest::prelude::*;
use punctual_tower::TimeoutHeader;
use punctual_tower::grpc_timeout::{encode, parse};
use support::grpc_model::model;

mod support {
    pub(crate) mod grpc_model;
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(4096))]

    #[test]
    fn any_bytes_parse_as_the_model_says(value in proptest::collection::vec(any::<u8>(), 0..16)) {
        prop_assert_eq!(parse(&value).ok(), model(&value));
    }

    #[test]
    fn near_valid_values_parse_as_the_model_says(
        value in "[0-9+\\- ]{0,10}[HMSmunhsx ]?[HMSmun]?"
    ) {
        prop_assert_eq!(parse(value.as_bytes()).ok(), model(value.as_bytes()));
    }

    #[test]
    fn valid_values_parse_exactly(n in 0u64..100_000_000, unit in "[HMSmun]") {
        let value = format!("{n}{unit}");
        prop_assert_eq!(parse(value.as_bytes()).ok(), model(value.as_bytes()));
        prop_assert!(parse(value.as_bytes()).is_ok());
    }

    #[test]
    fn encoded_values_parse_back_to_no_more_losing_little(
        secs in 0u64..1_000_000_000_000,
        nanos in 0u32..1_000_000_000,
    ) {
        let left = Duration::new(secs, nanos);
        let value = encode(left);
        prop_assert!(value.len() <= 9);
        let sent = parse(value.as_bytes()).unwrap();
        prop_assert!(sent <= left);
        // Eight digits in the finest unit that fits: exact below 0.1 s; above, the value
        // has at least six digits, so less than a hundred-thousandth is lost. Past
        // 99999999 hours, the largest value.
        let lost = (left - sent).as_nanos();
        let cap = Duration::from_secs(99_999_999 * 3600);
        if left < Duration::from_nanos(100_000_000) {
            prop_assert_eq!(lost, 0);
        } else if left < cap {
            prop_assert!(lost * 100_000 <= left.as_nanos(), "{:?} lost {} ns", value, lost);
        } else {
            prop_assert_eq!(sent, cap);
        }
    }
}

/// Counts the events it is given.
struct CountEvents(Arc<AtomicUsize>);

impl tracing::Subscriber for CountEvents {
    fn enabled(&self, _: &tracing::Metadata<'_>) -> bool {
        true
    }
    fn new_span(&self, _: &tracing::span::Attributes<'_>) -> tracing::span::Id {
        tracing::span::Id::from_u64(1)
    }
    fn record(&self, _: &tracing::span::Id, _: &tracing::span::Record<'_>) {}
    fn record_follows_from(&self, _: &tracing::span::Id, _: &tracing::span::Id) {}
    fn event(&self, _: &tracing::Event<'_>) {
        self.0.fetch_add(1, Ordering::SeqCst);
    }
    fn enter(&self, _: &tracing::span::Id) {}
    fn exit(&self, _: &tracing::span::Id) {}
}

#[test]
fn a_malformed_header_is_ignored_with_a_tracing_event() {
    let events = Arc::new(AtomicUsize::new(0));
    let subscriber = CountEvents(events.clone());
    tracing::subscriber::with_default(subscriber, || {
        let mut headers = http::HeaderMap::new();
        headers.insert("grpc-timeout", http::HeaderValue::from_static("10S"));
        assert_eq!(
            TimeoutHeader::Grpc.read(&headers),
            Some(Duration::from_secs(10))
        );
        assert_eq!(events.load(Ordering::SeqCst), 0);
        headers.insert("grpc-timeout", http::HeaderValue::from_static("999999999S"));
        assert_eq!(TimeoutHeader::Grpc.read(&headers), None);
        assert_eq!(events.load(Ordering::SeqCst), 1);
        headers.insert(
            "grpc-timeout",
            http::HeaderValue::from_bytes(b"\xff\xfeS").unwrap(),
        );
        assert_eq!(TimeoutHeader::Grpc.read(&headers), None);
        assert_eq!(events.load(Ordering::SeqCst), 2);
    });
}
