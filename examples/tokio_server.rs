//! A tokio TCP server where every request is bounded by a punctual deadline, so a slow
//! client is cut off instead of holding a connection (and a task) forever.
//!
//! It speaks two tiny protocols on the same port, told apart by the first line:
//!
//! - a line protocol: the client sends `HELLO <name>`, the server answers `hi <name>`;
//! - enough HTTP/1.x for `curl`: `GET /<name>` is answered with `hi <name>`.
//!
//! Reading the request must finish within the request deadline. When it does not, the
//! deadline drops the handler future (it stops reading in the middle of a line, with no
//! flag to check), the server tells the client, and closes the connection. The wheel comes
//! from `punctual_tokio::start`: its driver is a task on this runtime, no extra thread.
//!
//! Serve clients on an address until Ctrl-C, with 5 s per request:
//!
//! ```text
//! cargo run -p punctual-tests --example tokio_server -- 127.0.0.1:8080
//! curl http://127.0.0.1:8080/you          # hi you
//! nc 127.0.0.1 8080                       # type `HELLO me`, or wait 5 s to be cut off
//! ```
//!
//! With no address (or `--self-test`) it checks itself and exits: it listens on
//! 127.0.0.1 (an ephemeral port) with 300 ms per request and starts three clients against
//! itself: a fast one gets its answer, an HTTP one gets its page, and a slow one that sends
//! half a line and stalls is cut off after the deadline. It exits 0 within about a second,
//! or non-zero if anything did not happen as described.

use std::net::SocketAddr;
use std::process::ExitCode;
use std::time::{Duration, Instant};

use punctual_tokio::TokioWheel;
use tokio::io::{AsyncBufReadExt, AsyncReadExt, AsyncWriteExt, BufReader};
use tokio::net::{TcpListener, TcpStream};
use tokio::sync::mpsc;

/// How long the server gives each request when serving real clients.
const SERVE_DEADLINE: Duration = Duration::from_secs(5);
/// How long the server gives each request in the self-test.
const SELF_TEST_DEADLINE: Duration = Duration::from_millis(300);
/// The longest request line or header line the server reads.
const MAX_LINE: u64 = 1024;

/// A request the server understood.
enum Request {
    Hello(String),
    Http(String),
}

/// What happened to one connection, as the server saw it.
#[derive(Debug)]
enum Outcome {
    Served(String),
    CutOff(punctual::Elapsed),
    Failed(std::io::Error),
}

/// Reads one line of at most [`MAX_LINE`] bytes, without its line ending.
async fn read_line(socket: &mut BufReader<TcpStream>) -> std::io::Result<String> {
    let mut line = String::new();
    (&mut *socket).take(MAX_LINE).read_line(&mut line).await?;
    Ok(line.trim_end_matches(['\r', '\n']).to_owned())
}

/// Reads one request. No timeout in here: the deadline around it is the whole story.
async fn read_request(socket: &mut BufReader<TcpStream>) -> std::io::Result<Request> {
    let first = read_line(socket).await?;
    let mut words = first.split_whitespace();
    match (words.next(), words.next(), words.next()) {
        (Some("GET"), Some(path), Some(version)) if version.starts_with("HTTP/1.") => {
            // The headers, up to the blank line that ends them.
            while !read_line(socket).await?.is_empty() {}
            Ok(Request::Http(path.trim_start_matches('/').to_owned()))
        }
        _ => Ok(Request::Hello(
            first
                .strip_prefix("HELLO ")
                .unwrap_or("stranger")
                .trim()
                .to_owned(),
        )),
    }
}

/// Serves one connection: one request under `deadline`, then the answer.
async fn serve_one(socket: TcpStream, wheel: &'static TokioWheel, deadline: Duration) -> Outcome {
    let mut socket = BufReader::new(socket);
    let request = match wheel
        .deadline(deadline, read_request(&mut socket))
        .named("request")
        .await
    {
        Ok(Ok(request)) => request,
        Ok(Err(err)) => return Outcome::Failed(err),
        Err(elapsed) => {
            // `read_request` has been dropped: nothing reads from the socket any more.
            let _ = socket
                .get_mut()
                .write_all(format!("error: {elapsed}\n").as_bytes())
                .await;
            return Outcome::CutOff(elapsed);
        }
    };
    let (name, answer) = match request {
        Request::Hello(name) => (name.clone(), format!("hi {name}\n")),
        Request::Http(name) => {
            let name = if name.is_empty() {
                "there".into()
            } else {
                name
            };
            let body = format!("hi {name}\n");
            let head = format!(
                "HTTP/1.0 200 OK\r\nContent-Type: text/plain\r\nContent-Length: {}\r\n\
                 Connection: close\r\n\r\n",
                body.len()
            );
            (name, head + &body)
        }
    };
    match socket.get_mut().write_all(answer.as_bytes()).await {
        Ok(()) => Outcome::Served(name),
        Err(err) => Outcome::Failed(err),
    }
}

/// Accepts connections (all of them, or `limit`), each served on its own task, and sends
/// each outcome to `outcomes`.
async fn serve(
    listener: TcpListener,
    wheel: &'static TokioWheel,
    deadline: Duration,
    limit: Option<usize>,
    outcomes: mpsc::Sender<(SocketAddr, Outcome)>,
) -> std::io::Result<()> {
    let mut accepted = 0;
    while limit.is_none_or(|limit| accepted < limit) {
        let (socket, peer) = listener.accept().await?;
        accepted += 1;
        let outcomes = outcomes.clone();
        tokio::spawn(async move {
            let outcome = serve_one(socket, wheel, deadline).await;
            let _ = outcomes.send((peer, outcome)).await;
        });
    }
    Ok(())
}

fn print_outcome(peer: SocketAddr, outcome: &Outcome) {
    match outcome {
        Outcome::Served(name) => println!("server: {peer}: served {name:?}"),
        Outcome::CutOff(elapsed) => println!("server: {peer}: cut off ({elapsed})"),
        Outcome::Failed(err) => println!("server: {peer}: failed: {err}"),
    }
}

/// Serves real clients on `addr` until Ctrl-C.
async fn serve_until_ctrl_c(addr: &str) -> ExitCode {
    let wheel = punctual_tokio::start();
    let listener = match TcpListener::bind(addr).await {
        Ok(listener) => listener,
        Err(err) => {
            eprintln!("server: cannot listen on {addr}: {err}");
            return ExitCode::FAILURE;
        }
    };
    let local = listener.local_addr().expect("local address");
    println!("server: listening on {local}, {SERVE_DEADLINE:?} per request; Ctrl-C stops it");
    println!(
        "server: try `curl http://{local}/you` or `nc {} {}`",
        local.ip(),
        local.port()
    );
    let (tx, mut rx) = mpsc::channel(16);
    let printer = tokio::spawn(async move {
        while let Some((peer, outcome)) = rx.recv().await {
            print_outcome(peer, &outcome);
        }
    });
    let result = tokio::select! {
        result = serve(listener, wheel, SERVE_DEADLINE, None, tx) => result,
        _ = tokio::signal::ctrl_c() => Ok(()),
    };
    printer.abort();
    match result {
        Ok(()) => {
            println!("server: stopped");
            ExitCode::SUCCESS
        }
        Err(err) => {
            eprintln!("server: accept failed: {err}");
            ExitCode::FAILURE
        }
    }
}

/// Sends a whole request and reads the answer.
async fn fast_client(addr: SocketAddr) -> std::io::Result<String> {
    let mut stream = TcpStream::connect(addr).await?;
    stream.write_all(b"HELLO fast\n").await?;
    let mut answer = String::new();
    BufReader::new(stream).read_line(&mut answer).await?;
    Ok(answer.trim().to_owned())
}

/// Sends an HTTP request, as `curl` does, and reads the whole response.
async fn http_client(addr: SocketAddr) -> std::io::Result<String> {
    let mut stream = TcpStream::connect(addr).await?;
    stream
        .write_all(b"GET /curl HTTP/1.1\r\nHost: localhost\r\nAccept: */*\r\n\r\n")
        .await?;
    let mut response = String::new();
    stream.read_to_string(&mut response).await?;
    Ok(response)
}

/// Sends half a request and stalls; returns what the server said and how long until it
/// hung up.
async fn slow_client(addr: SocketAddr) -> std::io::Result<(String, Duration)> {
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
    Ok((
        String::from_utf8_lossy(&rest).trim().to_owned(),
        start.elapsed(),
    ))
}

/// Talks to itself on 127.0.0.1 and checks what happened.
async fn self_test() -> ExitCode {
    let started = Instant::now();
    let wheel = punctual_tokio::start();

    let listener = TcpListener::bind("127.0.0.1:0")
        .await
        .expect("bind 127.0.0.1:0");
    let addr = listener.local_addr().expect("local address");
    println!("server: listening on {addr}, {SELF_TEST_DEADLINE:?} per request");
    let (tx, mut rx) = mpsc::channel(3);
    let server = tokio::spawn(serve(listener, wheel, SELF_TEST_DEADLINE, Some(3), tx));

    // The clients are bounded too (by the same wheel), so the example cannot hang.
    let client_limit = Duration::from_secs(5);
    let (fast, http, slow) = tokio::join!(
        wheel.deadline(client_limit, fast_client(addr)),
        wheel.deadline(client_limit, http_client(addr)),
        wheel.deadline(client_limit, slow_client(addr)),
    );
    let mut ok = true;
    match fast {
        Ok(Ok(answer)) if answer == "hi fast" => println!("fast client: got {answer:?}"),
        other => {
            println!("fast client: unexpected {other:?}");
            ok = false;
        }
    }
    match http {
        Ok(Ok(response))
            if response.starts_with("HTTP/1.0 200") && response.ends_with("hi curl\n") =>
        {
            println!(
                "http client: got {:?}",
                response.lines().last().unwrap_or_default()
            );
        }
        other => {
            println!("http client: unexpected {other:?}");
            ok = false;
        }
    }
    match slow {
        Ok(Ok((said, after))) if after >= SELF_TEST_DEADLINE && said.contains("elapsed") => {
            println!("slow client: server said {said:?} and hung up after {after:.0?}");
        }
        other => {
            println!("slow client: unexpected {other:?}");
            ok = false;
        }
    }

    server.await.expect("server task").expect("accept");
    for _ in 0..3 {
        let (peer, outcome) = rx.recv().await.expect("an outcome per connection");
        print_outcome(peer, &outcome);
        ok &= !matches!(outcome, Outcome::Failed(_));
    }

    println!("done in {:.0?}", started.elapsed());
    if ok {
        ExitCode::SUCCESS
    } else {
        ExitCode::FAILURE
    }
}

#[tokio::main]
async fn main() -> ExitCode {
    match std::env::args().nth(1).as_deref() {
        None | Some("--self-test") => self_test().await,
        Some("-h" | "--help") => {
            println!("usage: tokio_server [ADDRESS | --self-test]   (e.g. 127.0.0.1:8080)");
            ExitCode::SUCCESS
        }
        Some(addr) => serve_until_ctrl_c(addr).await,
    }
}
