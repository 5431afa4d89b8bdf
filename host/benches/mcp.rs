//! `warden mcp` over stdio, timed from the client's side of the pipes.
//!
//! - `mcp_stdio/read_file`: one warm `tools/call` of `read_file` on a small
//!   file: the request line written, the result line read back.
//! - `mcp_stdio/read_file_x8`: eight such calls written at once, all eight
//!   results read (default parallelism, 4); then their ratio to one call
//!   from rounds made side by side, and the round trip's percentiles
//!   (printed, not criterion results).
//!
//! The client is this process writing and reading JSON-RPC lines: no SDK
//! time counts. Every call is audited, as in use.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::io::{BufRead, BufReader, Write};
use std::process::{Child, ChildStdin, ChildStdout, Command, Stdio};
use std::time::Instant;

use criterion::{Criterion, criterion_group, criterion_main};
use serde_json::{Value, json};

struct Server {
    child: Child,
    stdin: ChildStdin,
    stdout: BufReader<ChildStdout>,
    next: u64,
    line: String,
    _home: tempfile::TempDir,
    _ws: tempfile::TempDir,
}

impl Server {
    fn start() -> Server {
        let home = tempfile::tempdir().unwrap();
        let ws = tempfile::tempdir().unwrap();
        let text: String = (1..=40)
            .map(|i| format!("line {i} of a small file\n"))
            .collect();
        std::fs::write(ws.path().join("small.txt"), text).unwrap();
        let mut child = Command::new(env!("CARGO_BIN_EXE_warden"))
            .env("WARDEN_HOME", home.path())
            .args(["mcp", "--policy", "workspace-write", "-w"])
            .arg(ws.path())
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::inherit())
            .spawn()
            .unwrap();
        let mut server = Server {
            stdin: child.stdin.take().unwrap(),
            stdout: BufReader::new(child.stdout.take().unwrap()),
            child,
            next: 0,
            line: String::new(),
            _home: home,
            _ws: ws,
        };
        server.send(&json!({
            "jsonrpc": "2.0", "id": 0, "method": "initialize",
            "params": {"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "bench", "version": "0"}},
        }));
        server.read();
        server.send(&json!({"jsonrpc": "2.0", "method": "notifications/initialized"}));
        for _ in 0..50 {
            server.calls(1);
        }
        server
    }

    fn send(&mut self, message: &Value) {
        let mut line = message.to_string();
        line.push('\n');
        self.stdin.write_all(line.as_bytes()).unwrap();
        self.stdin.flush().unwrap();
    }

    fn read(&mut self) -> &str {
        self.line.clear();
        self.stdout.read_line(&mut self.line).unwrap();
        &self.line
    }

    /// `n` read_file calls written in one go, then their `n` results.
    fn calls(&mut self, n: usize) {
        let mut batch = String::new();
        for _ in 0..n {
            self.next += 1;
            batch += &json!({
                "jsonrpc": "2.0", "id": self.next, "method": "tools/call",
                "params": {"name": "read_file", "arguments": {"path": "small.txt"}},
            })
            .to_string();
            batch.push('\n');
        }
        self.stdin.write_all(batch.as_bytes()).unwrap();
        self.stdin.flush().unwrap();
        for _ in 0..n {
            let line = self.read();
            assert!(line.contains(r#""isError":false"#), "{line}");
        }
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

fn bench(c: &mut Criterion) {
    let mut server = Server::start();
    let mut group = c.benchmark_group("mcp_stdio");
    group.bench_function("read_file", |b| b.iter(|| server.calls(1)));
    group.bench_function("read_file_x8", |b| b.iter(|| server.calls(8)));
    group.finish();
    paired(&mut server);
}

/// Rounds of one call and of eight, side by side (drift between criterion's
/// groups cancels within a round).
const ROUNDS: usize = 1000;

fn paired(server: &mut Server) {
    let mut time = |n: usize| {
        let start = Instant::now();
        server.calls(n);
        start.elapsed().as_secs_f64()
    };
    let mut ones = Vec::with_capacity(ROUNDS);
    let mut eights = Vec::with_capacity(ROUNDS);
    let mut ratios: Vec<f64> = (0..ROUNDS)
        .map(|i| {
            let (t1, t8) = if i % 2 == 0 {
                let t8 = time(8);
                (time(1), t8)
            } else {
                let t1 = time(1);
                (t1, time(8))
            };
            ones.push(t1);
            eights.push(t8);
            t8 / t1
        })
        .collect();
    let quantile = |v: &mut Vec<f64>, q: f64| {
        v.sort_by(f64::total_cmp);
        v[((v.len() - 1) as f64 * q).round() as usize]
    };
    println!(
        "one read_file round trip, {ROUNDS} rounds: median {:.0} µs (p10 {:.0}, p90 {:.0}, p99 {:.0})",
        quantile(&mut ones, 0.5) * 1e6,
        quantile(&mut ones, 0.1) * 1e6,
        quantile(&mut ones, 0.9) * 1e6,
        quantile(&mut ones, 0.99) * 1e6,
    );
    println!(
        "x8 / x1, {ROUNDS} side-by-side rounds: median {:.2}x (interquartile {:.2}x to {:.2}x); \
         medians {:.0} µs and {:.0} µs",
        quantile(&mut ratios, 0.5),
        quantile(&mut ratios, 0.25),
        quantile(&mut ratios, 0.75),
        quantile(&mut ones, 0.5) * 1e6,
        quantile(&mut eights, 0.5) * 1e6,
    );
}

criterion_group! {
    name = benches;
    config = Criterion::default().sample_size(50);
    targets = bench
}
criterion_main!(benches);
