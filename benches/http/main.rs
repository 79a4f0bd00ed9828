//! An HTTP server end to end: hyper on tokio's multi-thread runtime with 2 workers, on
//! loopback, under a load generator of 64 keep-alive connections sending a bounded number
//! of requests. Each request runs under a per-request deadline and its handler starts K
//! inner deadlines around futures that complete quickly (K = 0, 4, 16). The peers
//! ([`server::Peer`]): tower's timeout with `tokio::time::timeout` inside, the same on
//! tokio's alternative timer, and punctual (punctual-tower's `DeadlineLayer`, which runs
//! the request under a budget, with `.deadline()` inside). Reported: requests per second, p50 / p99 / p99.9 latency as the
//! client saw it, and the server's CPU (its worker threads only) per request.
//!
//! Each measurement is a process of its own (this binary with `--one PEER K`): a fresh
//! runtime, and the alternative timer's runtime apart from the others. The runs are
//! interleaved: run 1 of every peer and K, then run 2, and so on. The load generator runs
//! on a current-thread runtime in the same process, so it shares the machine's 2 cores
//! with the server as a client on the same host does.
//!
//! `cargo bench -p punctual-benches --bench http` prints the table (build with
//! `RUSTFLAGS="--cfg tokio_unstable"` for the alternative timer's rows); `-- --tsv PATH`
//! writes the runs for the report. Without `--bench` it does nothing.

mod cpu;
mod load;
mod server;

use server::Peer;

/// Connections of the load generator, all kept alive.
const CONNECTIONS: usize = 64;
/// Requests measured per run, after a warm-up of a tenth as many.
const REQUESTS: usize = 20_000;
/// Inner deadlines per request.
const KS: [usize; 3] = [0, 4, 16];
/// Runs per peer and K.
const RUNS: usize = 7;

/// One measurement: requests/s, p50, p99 and p99.9 (µs), server CPU per request (µs).
fn one(peer: Peer, k: usize) -> [f64; 5] {
    let server = server::runtime(peer);
    let listener = server.block_on(async {
        tokio::net::TcpListener::bind("127.0.0.1:0")
            .await
            .expect("bind on loopback")
    });
    let addr = listener.local_addr().expect("the server's address");
    server.spawn(server::serve(peer, k, listener));
    let client = tokio::runtime::Builder::new_current_thread()
        .enable_io()
        .build()
        .expect("the load generator's runtime");
    client.block_on(load::run(addr, CONNECTIONS, REQUESTS / 10));
    let cpu = cpu::server_cpu();
    let (mut latencies, wall) = client.block_on(load::run(addr, CONNECTIONS, REQUESTS));
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

fn main() {
    let args: Vec<String> = std::env::args().collect();
    if !args.iter().any(|a| a == "--bench") {
        println!(
            "http: not run without --bench (use `cargo bench -p punctual-benches --bench http`)"
        );
        return;
    }
    if let Some(i) = args.iter().position(|a| a == "--one") {
        let peer = Peer::named(&args[i + 1]).expect("a peer's name");
        let k: usize = args[i + 2].parse().expect("a number of inner deadlines");
        let r = one(peer, k);
        println!(
            "{}\t{k}\t{:.0}\t{:.1}\t{:.1}\t{:.1}\t{:.2}",
            peer.name(),
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
    for _ in 0..RUNS {
        for k in KS {
            for peer in Peer::ALL.into_iter().filter(|p| p.available()) {
                let out = std::process::Command::new(&exe)
                    .args(["--bench", "--one", peer.name(), &k.to_string()])
                    .output()
                    .expect("run a measurement");
                assert!(
                    out.status.success(),
                    "measuring {} at K = {k} failed: {}",
                    peer.name(),
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
