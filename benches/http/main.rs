//! An HTTP server end to end: hyper on tokio's multi-thread runtime with 2 workers, on
//! loopback, under a load generator of 64 keep-alive connections sending a bounded number
//! of requests. Each request runs under a per-request deadline and its handler starts K
//! inner deadlines around futures that complete quickly (K = 0, 1, 4, 16). The peers
//! ([`server::Peer`]): tower's timeout with `tokio::time::timeout` inside, the same on
//! tokio's alternative timer, and punctual (punctual-tower's `DeadlineLayer`, which runs
//! the request under a budget, with `.deadline()` inside). Reported: requests per second, p50 / p99 / p99.9 latency as the
//! client saw it, and the server's CPU (its worker threads only) per request. The gRPC
//! rows ([`grpc`]) are the same peers' layers on a tonic server at K = 4, under tonic
//! clients; their peers are named with a `gRPC: ` prefix.
//!
//! Each measurement is a process of its own (this binary with `--one PEER K`): a fresh
//! runtime, and the alternative timer's runtime apart from the others. The runs are
//! interleaved: run 1 of every peer and K, then run 2, and so on. The load generator runs
//! on a current-thread runtime in the same process, so it shares the machine's 2 cores
//! with the server as a client on the same host does.
//!
//! With `--serve PEER K` it only serves, for a load generator in another process
//! (`ci/http_wrk.sh` drives wrk): it prints its port, then reads `start` and `stop` lines
//! on its standard input and prints the CPU time of the whole process between them, in µs.
//!
//! `cargo bench -p punctual-benches --bench http` prints the table (build with
//! `RUSTFLAGS="--cfg tokio_unstable"` for the alternative timer's rows); `-- --tsv PATH`
//! writes the runs for the report. Without `--bench` it does nothing.

mod cpu;
mod grpc;
mod load;
mod server;

use server::Peer;

/// Connections of the load generator, all kept alive.
const CONNECTIONS: usize = 64;
/// Requests measured per run, after a warm-up of a tenth as many.
const REQUESTS: usize = 20_000;
/// Inner deadlines per request.
const KS: [usize; 4] = [0, 1, 4, 16];
/// Inner deadlines per gRPC call.
const GRPC_KS: [usize; 1] = [4];
/// How the gRPC rows' peers are named: this, then the peer's name.
const GRPC: &str = "gRPC: ";
/// Runs per peer and K.
const RUNS: usize = 7;

/// One measurement: requests/s, p50, p99 and p99.9 (µs), server CPU per request (µs).
fn one(peer: Peer, k: usize, over_grpc: bool) -> [f64; 5] {
    let server = server::runtime(peer);
    let listener = server.block_on(async {
        tokio::net::TcpListener::bind("127.0.0.1:0")
            .await
            .expect("bind on loopback")
    });
    let addr = listener.local_addr().expect("the server's address");
    if over_grpc {
        server.spawn(grpc::serve(peer, k, listener));
    } else {
        server.spawn(server::serve(peer, k, listener));
    }
    let client = tokio::runtime::Builder::new_current_thread()
        .enable_io()
        .enable_time()
        .build()
        .expect("the load generator's runtime");
    let run = |requests| {
        if over_grpc {
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
    let at =
        |q: f64| latencies[((latencies.len() - 1) as f64 * q).round() as usize].as_secs_f64() * 1e6;
    let n = latencies.len() as f64;
    [
        n / wall.as_secs_f64(),
        at(0.5),
        at(0.99),
        at(0.999),
        cpu.as_secs_f64() * 1e6 / n,
    ]
}

/// Serves for a load generator of another process (see the module docs); never returns.
fn serve_alone(name: &str, k: usize) -> ! {
    use std::io::{BufRead, Write};
    let peer = Peer::named(name).expect("a peer's name");
    let server = server::runtime(peer);
    let listener = server.block_on(async {
        tokio::net::TcpListener::bind("127.0.0.1:0")
            .await
            .expect("bind on loopback")
    });
    let port = listener.local_addr().expect("the server's address").port();
    server.spawn(server::serve(peer, k, listener));
    println!("{port}");
    std::io::stdout().flush().expect("stdout");
    let mut lines = std::io::stdin().lock().lines();
    let mut wait_for = |word: &str| {
        let line = lines.next().expect("a line").expect("stdin");
        assert_eq!(line.trim(), word, "expected `{word}`");
    };
    wait_for("start");
    let cpu = cpu::process_cpu();
    wait_for("stop");
    println!("{}", (cpu::process_cpu() - cpu).as_micros());
    std::io::stdout().flush().expect("stdout");
    std::process::exit(0)
}

fn main() {
    let args: Vec<String> = std::env::args().collect();
    if !args.iter().any(|a| a == "--bench") {
        println!(
            "http: not run without --bench (use `cargo bench -p punctual-benches --bench http`)"
        );
        return;
    }
    if let Some(i) = args.iter().position(|a| a == "--serve") {
        serve_alone(
            &args[i + 1],
            args[i + 2].parse().expect("a number of inner deadlines"),
        );
    }
    if let Some(i) = args.iter().position(|a| a == "--one") {
        let (name, over_grpc) = match args[i + 1].strip_prefix(GRPC) {
            Some(name) => (name, true),
            None => (args[i + 1].as_str(), false),
        };
        let peer = Peer::named(name).expect("a peer's name");
        let k: usize = args[i + 2].parse().expect("a number of inner deadlines");
        let r = one(peer, k, over_grpc);
        println!(
            "{}\t{k}\t{:.0}\t{:.1}\t{:.1}\t{:.1}\t{:.2}",
            args[i + 1],
            r[0],
            r[1],
            r[2],
            r[3],
            r[4]
        );
        // The server's runtime is left running: the process ends here.
        std::process::exit(0);
    }
    let exe = std::env::current_exe().expect("this benchmark's path");
    let mut tsv = String::from(
        "# peer\tK\trequests/s\tp50 (µs)\tp99 (µs)\tp99.9 (µs)\tserver CPU per request (µs)\n",
    );
    let started = std::time::Instant::now();
    let http = KS.map(|k| (String::new(), k));
    let grpc = GRPC_KS.map(|k| (GRPC.to_string(), k));
    for _ in 0..RUNS {
        for (prefix, k) in http.iter().chain(&grpc) {
            for peer in Peer::ALL.into_iter().filter(|p| p.available()) {
                let name = format!("{prefix}{}", peer.name());
                let out = std::process::Command::new(&exe)
                    .args(["--bench", "--one", &name, &k.to_string()])
                    .output()
                    .expect("run a measurement");
                assert!(
                    out.status.success(),
                    "measuring {name} at K = {k} failed: {}",
                    String::from_utf8_lossy(&out.stderr)
                );
                let line = String::from_utf8(out.stdout).expect("UTF-8");
                print!("{line}");
                tsv.push_str(&line);
            }
        }
    }
    eprintln!("http: measured in {:.0?}", started.elapsed());
    if let Some(i) = args.iter().position(|a| a == "--tsv") {
        std::fs::write(&args[i + 1], tsv).expect("write the HTTP table");
    }
}
