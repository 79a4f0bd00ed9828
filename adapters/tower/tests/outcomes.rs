//! Each request through a layer reports one outcome under the layer's name, or the name
//! its route gives (`named_by`).

use std::convert::Infallible;
use std::time::Duration;

use punctual::report;
use punctual_tower::HttpDeadlineLayer;
use tower::{Layer, ServiceExt, service_fn};

fn route(_: &http::Method, uri: &http::Uri) -> Option<&'static str> {
    match uri.path() {
        "/slow" => Some("o-slow"),
        "/fast" => Some("o-fast"),
        _ => None,
    }
}

#[tokio::test(start_paused = true)]
async fn requests_report_under_their_route_name() {
    report::enable();
    let svc = HttpDeadlineLayer::<punctual::wheel::DefaultWheel>::new(Duration::from_millis(50))
        .named("o-other")
        .named_by(route)
        .layer(service_fn(|req: http::Request<()>| async move {
            if req.uri().path() == "/slow" {
                tokio::time::sleep(Duration::from_secs(1)).await;
            }
            Ok::<_, Infallible>(http::Response::new(String::new()))
        }));
    for path in ["/slow", "/fast", "/fast", "/elsewhere"] {
        let req = http::Request::get(path).body(()).unwrap();
        let _ = svc.clone().oneshot(req).await.unwrap();
    }
    let s = report::snapshot();
    assert_eq!(s.counts("o-slow").unwrap().elapsed, 1);
    assert_eq!(s.counts("o-fast").unwrap().completed, 2);
    assert_eq!(s.counts("o-other").unwrap().completed, 1);
    assert_eq!(
        s.counts("o-slow").unwrap().total(),
        1,
        "one outcome per request"
    );
}
