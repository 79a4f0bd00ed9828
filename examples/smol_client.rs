//! A smol client with a punctual deadline on every request, against a small local server
//! the example starts itself.
//!
//! The server listens on 127.0.0.1 (an ephemeral port) and answers one request line per
//! connection: `GET /fast` at once, `GET /slow` only after three seconds. The client
//! fetches both, each bounded by [`REQUEST_DEADLINE`]:
//!
//! 1. `/fast` answers in time: `Ok` with the body;
//! 2. `/slow` does not: `Err(Elapsed)` after the deadline, and the request future (with
//!    its connection) has been dropped by then, so the client does not keep waiting.
//!
//! The wheel is a leaked `punctual_smol::SmolWheel`, driven by `punctual_smol::with_driver`
//! around the client's main future: no spawned driver, no extra thread; the driver sleeps
//! on async-io timers inside `smol::block_on`.
//!
//! Run it with `cargo run -p punctual-tests --example smol_client`. It exits 0 within about a second, or
//! non-zero if anything did not happen as described.

use std::net::SocketAddr;
use std::process::ExitCode;
use std::time::{Duration, Instant};

use smol::io::{AsyncBufReadExt, AsyncReadExt, AsyncWriteExt, BufReader};
use smol::net::{TcpListener, TcpStream};

/// How long the client gives each request, connecting included.
const REQUEST_DEADLINE: Duration = Duration::from_millis(250);

/// The server: one request line per connection.
async fn serve(listener: TcpListener) -> std::io::Result<()> {
    loop {
        let (stream, _) = listener.accept().await?;
        smol::spawn(async move {
            let mut reader = BufReader::new(stream);
            let mut line = String::new();
            if reader.read_line(&mut line).await.is_err() {
                return;
            }
            let body = match line.trim() {
                "GET /fast" => "fast answer",
                "GET /slow" => {
                    smol::Timer::after(Duration::from_secs(3)).await;
                    "slow answer"
                }
                _ => "not found",
            };
            let _ = reader.get_mut().write_all(body.as_bytes()).await;
        })
        .detach();
    }
}

/// One request: connect, send the request line, read the whole answer.
async fn fetch(addr: SocketAddr, path: &str) -> std::io::Result<String> {
    let mut stream = TcpStream::connect(addr).await?;
    stream.write_all(format!("GET {path}\n").as_bytes()).await?;
    let mut body = String::new();
    stream.read_to_string(&mut body).await?;
    Ok(body)
}

async fn client(wheel: &'static punctual_smol::SmolWheel, addr: SocketAddr) -> bool {
    let mut ok = true;
    for (path, name, expect_met) in [("/fast", "fast", true), ("/slow", "slow", false)] {
        let start = Instant::now();
        let result = wheel
            .deadline(REQUEST_DEADLINE, fetch(addr, path))
            .named(name)
            .await;
        let took = start.elapsed();
        let met = matches!(result, Ok(Ok(_)));
        match result {
            Ok(Ok(body)) => println!("client: GET {path}: {body:?} in {took:.0?}"),
            Ok(Err(err)) => println!("client: GET {path}: failed: {err}"),
            Err(elapsed) => println!("client: GET {path}: {elapsed}, gave up after {took:.0?}"),
        }
        ok &= met == expect_met && (met || took >= REQUEST_DEADLINE);
    }
    ok
}

fn main() -> ExitCode {
    let started = Instant::now();
    let wheel = punctual_smol::leak_wheel(punctual_smol::DEFAULT_TICK);

    let ok = smol::block_on(punctual_smol::with_driver(wheel, async {
        let listener = TcpListener::bind("127.0.0.1:0")
            .await
            .expect("bind 127.0.0.1:0");
        let addr = listener.local_addr().expect("local address");
        println!("server: listening on {addr}");
        smol::spawn(serve(listener)).detach();
        client(wheel, addr).await
    }));

    println!("done in {:.0?}", started.elapsed());
    if ok {
        ExitCode::SUCCESS
    } else {
        ExitCode::FAILURE
    }
}
