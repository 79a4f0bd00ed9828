//! `HyperTimer` against hyper-util's `TokioTimer`, the peer it replaces: the same sleeps,
//! resets and hyper timeouts, never early. On real time for hyper's header-read timeout,
//! on tokio's paused clock (which both follow) for the sleeps themselves.

use std::pin::Pin;
use std::time::Duration;

use hyper::rt::{Sleep, Timer};
use hyper_util::rt::{TokioIo, TokioTimer};
use punctual::wheel::DefaultWheel;
use punctual_tower::HyperTimer;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::time::Instant;

const MS: Duration = Duration::from_millis(1);

fn timers() -> [(&'static str, Box<dyn Timer + Send + Sync>); 2] {
    [
        ("punctual", Box::new(HyperTimer::<DefaultWheel>::new())),
        ("tokio", Box::new(TokioTimer::new())),
    ]
}

async fn wait(sleep: Pin<Box<dyn Sleep>>) -> Duration {
    let start = Instant::now();
    sleep.await;
    start.elapsed()
}

#[tokio::test(start_paused = true)]
async fn sleeps_end_when_tokio_timers_do() {
    for (name, timer) in timers() {
        assert_eq!(wait(timer.sleep(30 * MS)).await, 30 * MS, "{name}");
        let until = timer.now() + 45 * MS;
        assert_eq!(wait(timer.sleep_until(until)).await, 45 * MS, "{name}");
        // An instant already past ends at once.
        let past = timer.now();
        tokio::time::advance(5 * MS).await;
        assert_eq!(
            wait(timer.sleep_until(past)).await,
            Duration::ZERO,
            "{name}"
        );
    }
}

#[tokio::test(start_paused = true)]
async fn a_reset_moves_the_sleep_later_or_earlier() {
    for (name, timer) in timers() {
        let mut sleep = timer.sleep(1000 * MS);
        timer.reset(&mut sleep, timer.now() + 20 * MS);
        assert_eq!(wait(sleep).await, 20 * MS, "{name}: reset earlier");
        let mut sleep = timer.sleep(10 * MS);
        // Polled once (armed), then reset later.
        let mut cx = std::task::Context::from_waker(std::task::Waker::noop());
        assert!(sleep.as_mut().poll(&mut cx).is_pending());
        timer.reset(&mut sleep, timer.now() + 70 * MS);
        assert_eq!(wait(sleep).await, 70 * MS, "{name}: reset later");
    }
}

#[tokio::test(start_paused = true)]
async fn reset_keeps_own_sleep_and_replaces_a_foreign_one() {
    let punctual = HyperTimer::<DefaultWheel>::new();
    let mut own = punctual.sleep(10 * MS);
    let address = &*own as *const dyn Sleep as *const ();
    punctual.reset(&mut own, punctual.now() + 30 * MS);
    assert_eq!(
        &*own as *const dyn Sleep as *const (), address,
        "reset allocated"
    );
    let mut foreign = TokioTimer::new().sleep(Duration::from_secs(10));
    punctual.reset(&mut foreign, punctual.now() + 15 * MS);
    assert_eq!(wait(foreign).await, 15 * MS);
}

/// hyper's header-read timeout, with each timer: a client that connects and never sends
/// its headers is disconnected after the timeout, not before.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn header_read_timeout_closes_silent_conn_like_tokio() {
    let timeout = 200 * MS;
    for (name, timer) in timers() {
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let addr = listener.local_addr().unwrap();
        let server = tokio::spawn(async move {
            let (stream, _) = listener.accept().await.unwrap();
            let mut builder = hyper::server::conn::http1::Builder::new();
            match name {
                "punctual" => builder.timer(HyperTimer::<DefaultWheel>::new()),
                _ => builder.timer(TokioTimer::new()),
            };
            builder.header_read_timeout(timeout);
            let svc = hyper::service::service_fn(|_| async {
                Ok::<_, std::convert::Infallible>(hyper::Response::new(String::new()))
            });
            builder.serve_connection(TokioIo::new(stream), svc).await
        });
        drop(timer);
        // Before the connection exists: the server's timer cannot start earlier.
        let start = std::time::Instant::now();
        let mut client = tokio::net::TcpStream::connect(addr).await.unwrap();
        client
            .write_all(b"GET / HTTP/1.1\r\nHost: x\r\n")
            .await
            .unwrap(); // never ends
        let mut rest = Vec::new();
        let _ = client.read_to_end(&mut rest).await; // until the server closes
        let took = start.elapsed();
        assert!(took >= timeout, "{name}: closed early, after {took:?}");
        assert!(
            took < timeout + Duration::from_secs(2),
            "{name}: closed after {took:?}"
        );
        assert!(
            server.await.unwrap().is_err(),
            "{name}: the connection did not time out"
        );
    }
}
