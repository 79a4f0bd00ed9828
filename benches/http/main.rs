//! An HTTP server end to end, beside tower's timeout on tokio's two timers
//! (`common::HTTP_PEERS`): hyper on a 2-worker tokio runtime, on loopback, under 64
//! keep-alive connections; each request under a deadline, its handler starting K inner
//! deadlines (K = 0, 1, 4, 16). The gRPC rows ([`grpc`]) put the same layers on tonic.
//! Reported: requests/s, p50 / p99 / p99.9 latency and the workers' CPU per request.
//!
//! Each measurement is a process of its own (`--one PEER K`); runs interleave peers and K.
//! `--serve PEER K` only serves, for a load generator in another process
//! (`ci/http_wrk.sh`): it prints its port, and the process's CPU time in µs between a
//! `start` and a `stop` line on its input. `-- --tsv PATH` writes the runs for the report;
//! the alternative timer's rows need `RUSTFLAGS="--cfg tokio_unstable"`.

#[path = "../common/mod.rs"]
mod common;
mod cpu;
mod grpc;
mod load;
mod server;

use common::Args;
use common::{GRPC, HTTP_PEERS, HTTP_ROWS, Peer};

/// Connections of the load generator, all kept alive.
const CONNECTIONS: usize = 64;
/// Requests measured per run, after a warm-up of a tenth as many.
const REQUESTS: usize = 20_000;
/// Runs per peer and K.
const RUNS: usize = 7;

/// A server runtime for `peer`, serving on loopback (`grpc`: tonic's server); its port.
fn start(peer: Peer, k: usize, grpc: bool) -> (tokio::runtime::Runtime, u16) {
    let server = server::runtime(peer);
    let listener = server.block_on(tokio::net::TcpListener::bind("127.0.0.1:0"));
    let listener = listener.expect("bind on loopback");
    let port = listener.local_addr().expect("the server's address").port();
    if grpc {
        server.spawn(grpc::serve(peer, k, listener));
    } else {
        server.spawn(server::serve(peer, k, listener));
    }
    (server, port)
}

/// One measurement: requests/s, p50, p99 and p99.9 (µs), server CPU per request (µs).
fn one(peer: Peer, k: usize, grpc: bool) -> [f64; 5] {
    let (_server, port) = start(peer, k, grpc);
    let addr = std::net::SocketAddr::from(([127, 0, 0, 1], port));
    let client = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .expect("the load generator's runtime");
    let run = |requests| {
        if grpc {
            client.block_on(grpc::load(addr, requests))
        } else {
            client.block_on(load::run(addr, CONNECTIONS, requests))
        }
    };
    run(REQUESTS / 10);
    let cpu = cpu::server_cpu();
    let (mut latencies, wall) = run(REQUESTS);
    let cpu = cpu::server_cpu() - cpu;
    latencies.sort_unstable();
    let at = |q| common::quantile(&latencies, q).as_secs_f64() * 1e6;
    let n = latencies.len() as f64;
    let (rps, per_request) = (n / wall.as_secs_f64(), cpu.as_secs_f64() * 1e6 / n);
    [rps, at(0.5), at(0.99), at(0.999), per_request]
}

/// The peer of an HTTP name.
fn named(name: &str) -> Peer {
    let peer = HTTP_PEERS.into_iter().find(|(_, n)| *n == name);
    peer.expect("a peer's name").0
}

/// Serves for a load generator of another process (see the module docs); never returns.
fn serve_alone(peer: Peer, k: usize) -> ! {
    use std::io::{BufRead, Write};
    let (_server, port) = start(peer, k, false);
    println!("{port}");
    std::io::stdout().flush().expect("stdout");
    let mut lines = std::io::stdin().lock().lines();
    let mut wait_for = |word: &str| {
        let line = lines.next().expect("a line").expect("stdin");
        assert_eq!(line.trim(), word, "expected `{word}`");
    };
    wait_for("start");
    let cpu = common::process_cpu();
    wait_for("stop");
    println!("{}", (common::process_cpu() - cpu).as_micros());
    std::io::stdout().flush().expect("stdout");
    std::process::exit(0)
}

fn main() {
    let Some(args) = Args::bench("http") else {
        return;
    };
    if let Some([name, k, ..]) = args.after("--serve") {
        serve_alone(named(name), k.parse().expect("a number of inner deadlines"));
    }
    if let Some([name, k, ..]) = args.after("--one") {
        let (peer, grpc) = match name.strip_prefix(GRPC) {
            Some(peer) => (peer, true),
            None => (name.as_str(), false),
        };
        let peer = named(peer);
        let [rps, p50, p99, p999, cpu] = one(peer, k.parse().expect("a number"), grpc);
        println!("{name}\t{k}\t{rps:.0}\t{p50:.1}\t{p99:.1}\t{p999:.1}\t{cpu:.2}");
        // The server's runtime is left running: the process ends here.
        std::process::exit(0);
    }
    let peers = HTTP_PEERS.into_iter().filter(|(p, _)| p.available());
    let run = |(prefix, k, _): (&'static str, usize, &str)| {
        peers
            .clone()
            .map(move |(_, n)| vec![format!("{prefix}{n}"), k.to_string()])
    };
    let runs = (0..RUNS).flat_map(|_| HTTP_ROWS.into_iter().flat_map(run));
    let header =
        "# peer\tK\trequests/s\tp50 (µs)\tp99 (µs)\tp99.9 (µs)\tserver CPU per request (µs)";
    let started = std::time::Instant::now();
    args.runs_apart(header, runs);
    eprintln!("http: measured in {:.0?}", started.elapsed());
}
