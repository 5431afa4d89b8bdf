//! `warden mcp` over stdio, timed from the client's side of the pipes, and
//! beside it the floor: a bare `rmcp` server doing the same read natively.
//!
//! - `mcp_stdio/read_file`: one warm `tools/call` of `read_file` on a small
//!   file: the request line written, the result line read back.
//! - `mcp_stdio/read_file_x8`: eight such calls written at once, all eight
//!   results read (default parallelism, 4); then their ratio to one call
//!   from rounds made side by side, and the round trip's percentiles
//!   (printed, not criterion results).
//! - `mcp_floor/read_file` and `mcp_floor/read_file_x8`: the same against
//!   this bench run again as a plain `rmcp` stdio server (its stdin and
//!   stdout registered with tokio, as `warden mcp` does), whose `read_file`
//!   reads the file and numbers its lines on the worker that took the call:
//!   no wasm, no policy, no sandbox, no audit. What it measures is what the
//!   protocol, the SDK and the pipes cost on this machine, which no server
//!   built on them can go below.
//!
//! The client is this process writing and reading JSON-RPC lines: no SDK
//! time counts. Every call to `warden mcp` is audited, as in use.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::io::{BufRead, BufReader, Write};
use std::path::Path;
use std::process::{Child, ChildStdin, ChildStdout, Command, Stdio};
use std::time::Instant;

use criterion::{Criterion, criterion_group};
use serde_json::{Value, json};

/// Set in the child that serves as the floor; names its workspace.
const FLOOR: &str = "WARDEN_BENCH_MCP_FLOOR";

/// Which server a round trip goes to.
#[derive(Clone, Copy)]
enum Kind {
    Warden,
    Floor,
}

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
    fn start(kind: Kind) -> Server {
        let home = tempfile::tempdir().unwrap();
        let ws = tempfile::tempdir().unwrap();
        let text: String = (1..=40)
            .map(|i| format!("line {i} of a small file\n"))
            .collect();
        std::fs::write(ws.path().join("small.txt"), text).unwrap();
        let mut command = match kind {
            Kind::Warden => {
                let mut c = Command::new(env!("CARGO_BIN_EXE_warden"));
                c.env("WARDEN_HOME", home.path())
                    .args(["mcp", "--policy", "workspace-write", "-w"])
                    .arg(ws.path());
                c
            }
            Kind::Floor => {
                let mut c = Command::new(std::env::current_exe().unwrap());
                c.env(FLOOR, ws.path());
                c
            }
        };
        let mut child = command
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
    for (kind, group) in [(Kind::Warden, "mcp_stdio"), (Kind::Floor, "mcp_floor")] {
        let mut server = Server::start(kind);
        let mut group = c.benchmark_group(group);
        group.bench_function("read_file", |b| b.iter(|| server.calls(1)));
        group.bench_function("read_file_x8", |b| b.iter(|| server.calls(8)));
        group.finish();
        paired(&mut server, kind);
    }
}

/// Rounds of one call and of eight, side by side (drift between criterion's
/// groups cancels within a round).
const ROUNDS: usize = 1000;

fn paired(server: &mut Server, kind: Kind) {
    let label = match kind {
        Kind::Warden => "warden mcp",
        Kind::Floor => "the floor (bare rmcp)",
    };
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
        "{label}: one read_file round trip, {ROUNDS} rounds: median {:.0} µs (p10 {:.0}, p90 {:.0}, p99 {:.0})",
        quantile(&mut ones, 0.5) * 1e6,
        quantile(&mut ones, 0.1) * 1e6,
        quantile(&mut ones, 0.9) * 1e6,
        quantile(&mut ones, 0.99) * 1e6,
    );
    println!(
        "{label}: x8 / x1, {ROUNDS} side-by-side rounds: median {:.2}x (interquartile {:.2}x to {:.2}x); \
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

fn main() {
    if let Some(ws) = std::env::var_os(FLOOR) {
        floor::serve(Path::new(&ws));
        return;
    }
    benches();
    Criterion::default().configure_from_args().final_summary();
}

/// The floor: a bare `rmcp` server over stdio with one `read_file` tool.
mod floor {
    use std::os::fd::AsFd;
    use std::path::{Path, PathBuf};
    use std::sync::Arc;

    use rmcp::model::{
        CallToolRequestParams, CallToolResponse, CallToolResult, ContentBlock, InitializeResult,
        ListToolsResult, PaginatedRequestParams, ServerCapabilities, ServerConfig, Tool,
    };
    use rmcp::service::RequestContext;
    use rmcp::{ErrorData, RoleServer, ServerHandler, ServiceExt};
    use tokio::net::unix::pipe;

    struct Floor {
        workspace: PathBuf,
    }

    impl ServerHandler for Floor {
        fn get_info(&self) -> ServerConfig {
            InitializeResult::new(ServerCapabilities::builder().enable_tools().build())
        }

        async fn list_tools(
            &self,
            _request: Option<PaginatedRequestParams>,
            _ctx: RequestContext<RoleServer>,
        ) -> Result<ListToolsResult, ErrorData> {
            let schema = serde_json::json!({
                "type": "object",
                "properties": {"path": {"type": "string"}},
                "required": ["path"],
            });
            let serde_json::Value::Object(schema) = schema else {
                unreachable!()
            };
            let tool = Tool::new("read_file", "Read a file", Arc::new(schema));
            Ok(ListToolsResult::with_all_items(vec![tool]))
        }

        async fn call_tool(
            &self,
            request: CallToolRequestParams,
            _ctx: RequestContext<RoleServer>,
        ) -> Result<CallToolResponse, ErrorData> {
            let path = request
                .arguments
                .as_ref()
                .and_then(|a| a.get("path"))
                .and_then(|p| p.as_str())
                .ok_or_else(|| ErrorData::invalid_params("`path` is required", None))?;
            let text = std::fs::read_to_string(self.workspace.join(path))
                .map_err(|e| ErrorData::internal_error(e.to_string(), None))?;
            let numbered: String = text
                .lines()
                .enumerate()
                .map(|(i, line)| format!("{:>6}\t{line}\n", i + 1))
                .collect();
            Ok(CallToolResult::success(vec![ContentBlock::text(numbered)]).into())
        }
    }

    /// Serve until stdin closes, on a multi-thread runtime like `warden mcp`'s.
    pub fn serve(workspace: &Path) {
        let runtime = tokio::runtime::Builder::new_multi_thread()
            .enable_all()
            .build()
            .unwrap();
        runtime.block_on(async {
            let stdin = std::io::stdin().as_fd().try_clone_to_owned().unwrap();
            let stdout = std::io::stdout().as_fd().try_clone_to_owned().unwrap();
            let transport = (
                pipe::Receiver::from_owned_fd(stdin).unwrap(),
                pipe::Sender::from_owned_fd(stdout).unwrap(),
            );
            let floor = Floor {
                workspace: workspace.to_path_buf(),
            };
            let running = floor.serve(transport).await.unwrap();
            let _ = running.waiting().await;
        });
    }
}
