//! The other wire formats: Envoy's `x-envoy-expected-rq-timeout-ms` and Connect's
//! `connect-timeout-ms`. Their parser agrees with a model on any input and never panics;
//! a server layer takes the shortest of every timeout header, never more than its own
//! limit, and ignores malformed ones; the propagation layer writes the header the
//! downstream reads, rounded down, and sends nothing with no whole unit left.

use std::convert::Infallible;
use std::time::Duration;

use http::{Request, Response, StatusCode};
use proptest::prelude::*;
use punctual::wheel::DefaultWheel;
use punctual_tower::timeout_ms::{encode, parse};
use punctual_tower::{BoxError, HttpDeadlineLayer, PropagateDeadlineLayer, TimeoutHeader};
use support::timeout_ms_model::model;
use tokio::time::Instant;
use tower::{Layer, ServiceExt, service_fn};

mod support {
    pub(crate) mod timeout_ms_model;
}

const MS: Duration = Duration::from_millis(1);

proptest! {
    #![proptest_config(ProptestConfig::with_cases(4096))]

    #[test]
    fn any_bytes_parse_as_the_model_says(value in proptest::collection::vec(any::<u8>(), 0..16)) {
        prop_assert_eq!(parse(&value).ok(), model(&value));
    }

    #[test]
    fn near_valid_values_parse_as_the_model_says(value in "[0-9+\\-. ]{0,12}[ms]?") {
        prop_assert_eq!(parse(value.as_bytes()).ok(), model(value.as_bytes()));
    }

    #[test]
    fn encoded_values_parse_back_to_no_more(nanos in any::<u64>()) {
        let left = Duration::from_nanos(nanos);
        let back = parse(encode(left).as_bytes()).unwrap();
        prop_assert!(back <= left);
        // Ten digits of milliseconds (115 days) at most; below that, within a millisecond.
        let most = Duration::from_millis(9_999_999_999);
        if left < most {
            prop_assert!(left - back < MS, "rounded down by a millisecond or more");
        } else {
            prop_assert_eq!(back, most);
        }
    }
}

/// A server that sleeps a second, behind an HTTP layer of 5 s reading every timeout
/// header: when it answers, and with what, for the given headers.
async fn answer(headers: &[(&str, &str)]) -> (StatusCode, Duration) {
    let svc = HttpDeadlineLayer::<DefaultWheel>::new(Duration::from_secs(5))
        .timeout_headers()
        .layer(service_fn(|_: Request<()>| async {
            tokio::time::sleep(Duration::from_secs(1)).await;
            Ok::<_, Infallible>(Response::new(String::new()))
        }));
    let mut request = Request::builder();
    for &(name, value) in headers {
        request = request.header(name, value);
    }
    let start = Instant::now();
    let response = svc.oneshot(request.body(()).unwrap()).await.unwrap();
    (response.status(), start.elapsed())
}

#[tokio::test(start_paused = true)]
async fn the_shortest_timeout_header_wins() {
    let all = [
        ("grpc-timeout", "400m"),
        ("x-envoy-expected-rq-timeout-ms", "300"),
        ("connect-timeout-ms", "200"),
    ];
    for shortest in 0..all.len() {
        let mut headers = all;
        headers[shortest].1 = if shortest == 0 { "100m" } else { "100" };
        assert_eq!(
            answer(&headers).await,
            (StatusCode::GATEWAY_TIMEOUT, 100 * MS),
            "{headers:?}"
        );
    }
}

#[tokio::test(start_paused = true)]
async fn a_header_never_lengthens_the_layers_limit() {
    let headers = [
        ("connect-timeout-ms", "9000"),
        ("x-envoy-expected-rq-timeout-ms", "7000"),
    ];
    // The handler's second fits the layer's 5 s: the response is the handler's.
    assert_eq!(
        answer(&headers).await,
        (StatusCode::OK, Duration::from_secs(1))
    );
}

#[tokio::test(start_paused = true)]
async fn malformed_headers_are_ignored_others_apply() {
    for bad in ["", "-1", "1.5", "12345678901", "300ms", " 300"] {
        let headers = [
            ("x-envoy-expected-rq-timeout-ms", bad),
            ("connect-timeout-ms", "250"),
        ];
        assert_eq!(
            answer(&headers).await,
            (StatusCode::GATEWAY_TIMEOUT, 250 * MS),
            "{bad:?}"
        );
    }
    let headers = [("connect-timeout-ms", "soon")];
    assert_eq!(
        answer(&headers).await,
        (StatusCode::OK, Duration::from_secs(1))
    );
}

/// What a propagating client writes into `header` with `left` of a budget.
async fn sent(
    header: TimeoutHeader,
    name: &'static str,
    left: Duration,
) -> Result<String, BoxError> {
    let client = PropagateDeadlineLayer::<DefaultWheel>::new()
        .writes(header)
        .layer(service_fn(move |req: Request<()>| async move {
            let value = req.headers()[name].to_str().unwrap().to_owned();
            assert!(
                req.headers().get("grpc-timeout").is_none(),
                "one header only"
            );
            Ok::<_, Infallible>(value)
        }));
    punctual::budget(left, client.oneshot(Request::new(())))
        .await
        .expect("the budget itself has not ended")
}

#[tokio::test(start_paused = true)]
async fn millisecond_headers_are_written_rounded_down() {
    for (header, name) in [
        (TimeoutHeader::Envoy, "x-envoy-expected-rq-timeout-ms"),
        (TimeoutHeader::Connect, "connect-timeout-ms"),
    ] {
        let left = Duration::from_micros(1_999);
        assert_eq!(sent(header, name, left).await.unwrap(), "1");
        // Under a millisecond: nothing whole to send, so the call fails at once.
        let err = sent(header, name, Duration::from_micros(999))
            .await
            .unwrap_err();
        assert!(err.downcast_ref::<punctual::Elapsed>().unwrap().is_budget());
    }
}
