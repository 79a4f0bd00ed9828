//! A tokio TCP server where every request is bounded by a punctual deadline, so a slow
//! client is cut off instead of holding a connection (and a task) forever.
//!
//! The server listens on 127.0.0.1 (an ephemeral port) and speaks a line protocol: the
//! client sends `HELLO <name>\n`, the server answers `hi <name>\n`. Reading the request and
//! writing the answer together must finish within [`REQUEST_DEADLINE`]; when it does not,
//! the deadline drops the handler future, which owns the socket, so the connection closes
//! at once. The wheel comes from `punctual_tokio::start`: its driver is a task on this
//! runtime, no extra thread.
//!
//! The example starts two clients against its own server, prints what happened and exits:
//!
//! 1. a fast client sends its whole request at once and gets its answer;
//! 2. a slow client sends half a line and stalls: after the deadline the server closes the
//!    connection, and the client sees end-of-file.
//!
//! Run it with `cargo run --example tokio_server`. It exits 0 within about a second, or
//! non-zero if anything did not happen as described.

use std::net::SocketAddr;
use std::process::ExitCode;
use std::time::{Duration, Instant};

use punctual::{DeadlineExt, Elapsed};
use tokio::io::{AsyncBufReadExt, AsyncReadExt, AsyncWriteExt, BufReader};
use tokio::net::{TcpListener, TcpStream};
use tokio::sync::mpsc;

/// How long the server gives each request, from its first byte of waiting to the answer.
const REQUEST_DEADLINE: Duration = Duration::from_millis(300);

/// What happened to one connection, as the server saw it.
#[derive(Debug)]
enum Outcome {
    Served(String),
    CutOff(Elapsed),
    Failed(std::io::Error),
}

/// Serves one connection: read one request line, answer it. No timeout in here: the
/// deadline around it is the whole story.
async fn handle(socket: TcpStream) -> std::io::Result<String> {
    let mut socket = BufReader::new(socket);
    let mut line = String::new();
    socket.read_line(&mut line).await?;
    let name = line
        .trim()
        .strip_prefix("HELLO ")
        .unwrap_or("stranger")
        .to_owned();
    socket
        .get_mut()
        .write_all(format!("hi {name}\n").as_bytes())
        .await?;
    Ok(name)
}

/// Accepts `connections` connections, each handled on its own task under a deadline, and
/// reports each outcome.
async fn serve(
    listener: TcpListener,
    wheel: &'static punctual_tokio::TokioWheel,
    connections: usize,
    outcomes: mpsc::Sender<(SocketAddr, Outcome)>,
) -> std::io::Result<()> {
    for _ in 0..connections {
        let (socket, peer) = listener.accept().await?;
        let outcomes = outcomes.clone();
        tokio::spawn(async move {
            let outcome = match handle(socket)
                .deadline_on(wheel, REQUEST_DEADLINE)
                .named("request")
                .await
            {
                Ok(Ok(name)) => Outcome::Served(name),
                Ok(Err(err)) => Outcome::Failed(err),
                // `handle` (and with it the socket) was dropped before we got here.
                Err(elapsed) => Outcome::CutOff(elapsed),
            };
            let _ = outcomes.send((peer, outcome)).await;
        });
    }
    Ok(())
}

/// Sends a whole request and reads the answer.
async fn fast_client(addr: SocketAddr) -> std::io::Result<String> {
    let mut stream = TcpStream::connect(addr).await?;
    stream.write_all(b"HELLO fast\n").await?;
    let mut answer = String::new();
    BufReader::new(stream).read_line(&mut answer).await?;
    Ok(answer.trim().to_owned())
}

/// Sends half a request and stalls; returns how long until the server hung up.
async fn slow_client(addr: SocketAddr) -> std::io::Result<Duration> {
    // From before connecting: the server's deadline cannot have started earlier.
    let start = Instant::now();
    let mut stream = TcpStream::connect(addr).await?;
    stream.write_all(b"HELLO sl").await?; // ...and the rest never comes
    let mut rest = Vec::new();
    // End-of-file (or a reset) when the server drops the connection.
    match stream.read_to_end(&mut rest).await {
        Ok(_) => {}
        Err(err) if err.kind() == std::io::ErrorKind::ConnectionReset => {}
        Err(err) => return Err(err),
    }
    Ok(start.elapsed())
}

#[tokio::main]
async fn main() -> ExitCode {
    let started = Instant::now();
    let wheel = punctual_tokio::start();

    let listener = TcpListener::bind("127.0.0.1:0")
        .await
        .expect("bind 127.0.0.1:0");
    let addr = listener.local_addr().expect("local address");
    println!("server: listening on {addr}, {REQUEST_DEADLINE:?} per request");
    let (tx, mut rx) = mpsc::channel(2);
    let server = tokio::spawn(serve(listener, wheel, 2, tx));

    // The clients are bounded too (by the same wheel), so the example cannot hang.
    let client_limit = Duration::from_secs(5);
    let (fast, slow) = tokio::join!(
        fast_client(addr).deadline_on(wheel, client_limit),
        slow_client(addr).deadline_on(wheel, client_limit),
    );
    let mut ok = true;
    match fast {
        Ok(Ok(answer)) => println!("fast client: got {answer:?}"),
        other => {
            println!("fast client: unexpected {other:?}");
            ok = false;
        }
    }
    match slow {
        Ok(Ok(after)) if after >= REQUEST_DEADLINE => {
            println!("slow client: server hung up after {after:.0?}");
        }
        other => {
            println!("slow client: unexpected {other:?}");
            ok = false;
        }
    }

    server.await.expect("server task").expect("accept");
    for _ in 0..2 {
        let (peer, outcome) = rx.recv().await.expect("an outcome per connection");
        match &outcome {
            Outcome::Served(name) => println!("server: {peer}: served {name:?}"),
            Outcome::CutOff(elapsed) => println!("server: {peer}: cut off ({elapsed})"),
            Outcome::Failed(err) => {
                println!("server: {peer}: failed: {err}");
                ok = false;
            }
        }
    }

    println!("done in {:.0?}", started.elapsed());
    if ok {
        ExitCode::SUCCESS
    } else {
        ExitCode::FAILURE
    }
}
