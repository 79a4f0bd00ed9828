//! `punctual::report` on the default wheels: outcomes counted once per name, the recent
//! events, the snapshot as JSON, limits from configuration swapped while deadlines run.
//! Each test uses names of its own: the record is the process's.

use std::future::Future;
use std::time::Duration;

use punctual::DeadlineExt;
use punctual::report::{self, Limits, OutcomeKind};

fn ms(n: u64) -> Duration {
    Duration::from_millis(n)
}

#[tokio::test(start_paused = true)]
async fn each_outcome_is_counted_once_per_name() {
    report::enable();
    for _ in 0..3 {
        let _ = std::future::pending::<()>()
            .deadline(ms(10))
            .named("t-slow")
            .await;
    }
    let _ = async { 1 }.deadline(ms(10)).named("t-fast").await;
    let _ = async { Ok::<(), ()>(()) }
        .deadline(ms(10))
        .named_result("t-result")
        .await;
    let _ = async { Err::<(), ()>(()) }
        .deadline(ms(10))
        .named_result("t-result")
        .await;
    drop(
        std::future::pending::<()>()
            .deadline(ms(10))
            .named("t-dropped"),
    );
    let s = report::snapshot();
    assert_eq!(s.counts("t-slow").unwrap().elapsed, 3);
    assert_eq!(s.counts("t-slow").unwrap().total(), 3);
    assert_eq!(s.counts("t-fast").unwrap().get(OutcomeKind::Completed), 1);
    let result = s.counts("t-result").unwrap();
    assert_eq!((result.succeeded, result.failed, result.total()), (1, 1, 2));
    assert_eq!(s.counts("t-dropped").unwrap().dropped, 1);
    assert_eq!(s.name("t-slow").unwrap().limit_seconds, Some(0.01));
    let slow: Vec<_> = s.recent.iter().filter(|e| e.name == "t-slow").collect();
    assert_eq!(slow.len(), 3);
    assert!(
        slow.iter()
            .all(|e| e.outcome == "elapsed" && e.used_seconds >= 0.01)
    );
}

#[tokio::test(start_paused = true)]
async fn a_dropped_caller_is_not_elapsed_even_after_the_fire() {
    report::enable();
    let d = std::future::pending::<()>()
        .deadline(ms(10))
        .named("t-raced");
    let mut d = Box::pin(d);
    let waker = std::task::Waker::noop();
    let mut cx = std::task::Context::from_waker(waker);
    assert!(d.as_mut().poll(&mut cx).is_pending());
    tokio::time::sleep(ms(20)).await;
    drop(d);
    let c = report::snapshot().counts("t-raced").unwrap();
    assert_eq!((c.dropped, c.elapsed), (1, 0));
}

#[test]
fn the_listener_sees_each_outcome() {
    use std::sync::Mutex;
    static SEEN: Mutex<Vec<(&str, OutcomeKind)>> = Mutex::new(Vec::new());
    report::set_listener(|o| {
        if o.name.starts_with("t-listen") {
            SEEN.lock().unwrap().push((o.name, o.kind));
        }
    });
    futures_executor::block_on(async {
        let _ = std::future::pending::<()>()
            .deadline(ms(1))
            .named("t-listen-a")
            .await;
        let _ = async {}.deadline(ms(1)).named("t-listen-b").await;
    });
    assert_eq!(
        *SEEN.lock().unwrap(),
        [
            ("t-listen-a", OutcomeKind::Elapsed),
            ("t-listen-b", OutcomeKind::Completed)
        ]
    );
}

#[test]
fn the_snapshot_serializes_as_json() {
    report::enable();
    futures_executor::block_on(async {
        let _ = async {}.deadline(ms(5)).named("t-json").await;
    });
    let json = serde_json::to_value(report::snapshot()).unwrap();
    let names = json["names"].as_array().unwrap();
    let ours = names.iter().find(|n| n["name"] == "t-json").unwrap();
    assert_eq!(ours["counts"]["completed"], 1);
    assert_eq!(ours["limit_seconds"], 0.005);
    assert!(
        json["recent"]
            .as_array()
            .unwrap()
            .iter()
            .any(|e| e["name"] == "t-json")
    );
}

#[tokio::test(start_paused = true)]
async fn limits_swap_for_the_next_deadline_and_in_flight_ones_keep_theirs() {
    report::install_limits(Limits::from_toml("[names]\nt-swap = \"100ms\"").unwrap());
    let start = tokio::time::Instant::now();
    let in_flight = tokio::spawn(std::future::pending::<()>().deadline_named("t-swap"));
    tokio::task::yield_now().await;
    report::install_limits(Limits::from_toml("[names]\nt-swap = \"300ms\"").unwrap());
    let err = in_flight.await.unwrap().unwrap_err();
    assert_eq!(
        err.duration(),
        ms(100),
        "in flight: the limit it was made with"
    );
    assert!(start.elapsed() >= ms(100));
    let err = std::future::pending::<()>()
        .deadline_named("t-swap")
        .await
        .unwrap_err();
    assert_eq!(err.duration(), ms(300), "the next one: the new limit");
    let s = report::snapshot();
    let ours = s.name("t-swap").unwrap();
    assert!(ours.configured);
    assert_eq!(ours.limit_seconds, Some(0.3));
    assert_eq!(ours.counts.elapsed, 2);
}

#[test]
fn limits_read_from_any_serde_format() {
    let limits: Limits =
        serde_json::from_str(r#"{"default": "2s", "names": {"pricing": "1m30s"}}"#).unwrap();
    assert_eq!(limits.default_limit(), Duration::from_secs(2));
    assert_eq!(limits.limit("pricing"), Duration::from_secs(90));
    let err = serde_json::from_str::<Limits>(r#"{"names": {"pricing": "fast"}}"#).unwrap_err();
    assert!(
        err.to_string().contains("`names.pricing` = `fast`"),
        "{err}"
    );
}

/// Each bad value, one by one: an error naming the key and the text, never a panic.
#[test]
fn bad_limits_name_the_key_and_the_text() {
    let cases: &[(&str, &str, &str, &str)] = &[
        ("default = \"soon\"", "default", "soon", "not a duration"),
        ("default = \"0ms\"", "default", "0ms", "zero"),
        ("default = \"2days\"", "default", "2days", "out of range"),
        (
            "[names]\npricing = \"800\"",
            "names.pricing",
            "800",
            "not a duration",
        ),
        (
            "[names]\npricing = 800",
            "names.pricing",
            "800",
            "not a duration",
        ),
        (
            "[names]\npricing = \"-1s\"",
            "names.pricing",
            "-1s",
            "not a duration",
        ),
        ("[names]\npricing = \"0s\"", "names.pricing", "0s", "zero"),
        (
            "[names]\npricing = \"100000h\"",
            "names.pricing",
            "100000h",
            "out of range",
        ),
        (
            "[names]\npricing = true",
            "names.pricing",
            "true",
            "not a duration",
        ),
        (
            "[names]\npricing = [1]",
            "names.pricing",
            "a list",
            "not a duration",
        ),
        ("[names]\n\"\" = \"1s\"", "names.", "", "an empty name"),
        ("timeout = \"1s\"", "timeout", "1s", "unknown key"),
        ("names = \"1s\"", "names", "1s", "not a table"),
        ("[names\n", "", "", "not TOML"),
    ];
    for &(toml, key, text, problem) in cases {
        let err = Limits::from_toml(toml).expect_err(toml);
        assert_eq!(err.key(), key, "{toml}");
        if !key.is_empty() {
            assert_eq!(err.text(), text, "{toml}");
        }
        assert!(err.to_string().contains(problem), "{toml}: {err}");
    }
    assert!(Limits::new(Duration::ZERO).is_err());
    assert!(
        Limits::default()
            .with("x", Duration::from_secs(86_401))
            .is_err()
    );
    assert!(Limits::default().with("", ms(1)).is_err());
}

/// A tower layer reports each request once under its name; a refused one as elapsed.
#[tokio::test(start_paused = true)]
async fn a_layer_reports_each_request_once() {
    use punctual::adapters::tower::DeadlineLayer;
    use tower::{Layer, ServiceExt, service_fn};
    report::enable();
    let handler = service_fn(|slow: bool| async move {
        if slow {
            tokio::time::sleep(ms(100)).await;
        }
        Ok::<_, std::convert::Infallible>(())
    });
    let svc = DeadlineLayer::new(ms(50)).named("t-layer").layer(handler);
    svc.clone().oneshot(false).await.unwrap();
    svc.clone().oneshot(true).await.unwrap_err();
    let refusing = DeadlineLayer::new(ms(5))
        .named("t-refused")
        .refuse_below(ms(10))
        .layer(handler);
    refusing.oneshot(false).await.unwrap_err();
    let s = report::snapshot();
    let layer = s.counts("t-layer").unwrap();
    assert_eq!((layer.completed, layer.elapsed, layer.total()), (1, 1, 2));
    assert_eq!(s.counts("t-refused").unwrap().elapsed, 1);
}
