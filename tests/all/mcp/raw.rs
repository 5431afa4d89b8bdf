//! Raw JSON-RPC lines on `warden mcp`'s stdin: what no SDK would send, and
//! a client that goes away in the middle of a call.

use std::io::{BufRead, BufReader, Write};
use std::process::{ChildStdin, Stdio};
use std::sync::mpsc;
use std::time::{Duration, Instant};

use serde_json::{Value, json};

use super::*;

/// `warden mcp` on pipes, read line by line.
pub(super) struct Raw {
    pub(super) child: Child,
    pub(super) stdin: Option<ChildStdin>,
    lines: mpsc::Receiver<String>,
}

impl Raw {
    fn start(home: &Path, args: Vec<String>) -> Raw {
        let mut cmd = warden(home);
        cmd.args(args);
        Raw::spawn(cmd)
    }

    /// Run `cmd` (which ends up serving MCP on its stdio) on pipes.
    pub(super) fn spawn(mut cmd: Command) -> Raw {
        let mut child = cmd
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .unwrap();
        let stdin = child.stdin.take();
        let stdout = BufReader::new(child.stdout.take().unwrap());
        let (tx, lines) = mpsc::channel();
        std::thread::spawn(move || {
            for line in stdout.lines() {
                let Ok(line) = line else { return };
                if tx.send(line).is_err() {
                    return;
                }
            }
        });
        Raw {
            child,
            stdin,
            lines,
        }
    }

    pub(super) fn send(&mut self, line: &str) {
        let stdin = self.stdin.as_mut().unwrap();
        stdin.write_all(line.as_bytes()).unwrap();
        stdin.write_all(b"\n").unwrap();
        stdin.flush().unwrap();
    }

    pub(super) fn recv(&self) -> Value {
        let line = self
            .lines
            .recv_timeout(Duration::from_secs(20))
            .expect("no answer from warden mcp");
        serde_json::from_str(&line).unwrap_or_else(|e| panic!("{e}: {line}"))
    }

    /// The next line, or `None` once the output ended.
    pub(super) fn next_line(&self) -> Option<Value> {
        let line = match self.lines.recv_timeout(Duration::from_secs(20)) {
            Ok(line) => line,
            Err(mpsc::RecvTimeoutError::Disconnected) => return None,
            Err(mpsc::RecvTimeoutError::Timeout) => panic!("the output neither goes on nor ends"),
        };
        Some(serde_json::from_str(&line).unwrap_or_else(|e| panic!("{e}: {line}")))
    }

    /// Send `message` and return the answer to it.
    pub(super) fn ask(&mut self, message: Value) -> Value {
        self.send(&message.to_string());
        self.recv()
    }

    pub(super) fn initialize(&mut self) {
        let answer = self.ask(json!({
            "jsonrpc": "2.0", "id": 0, "method": "initialize",
            "params": {
                "protocolVersion": "2025-06-18",
                "capabilities": {},
                "clientInfo": {"name": "raw", "version": "0"},
            },
        }));
        assert_eq!(answer["result"]["serverInfo"]["name"], "warden", "{answer}");
        self.send(r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#);
    }

    /// Close stdin, as a client that is done does, and wait for the server
    /// to exit (it flushes its audit records first); its exit code.
    fn finish(mut self) -> Option<i32> {
        drop(self.stdin.take());
        let deadline = Instant::now() + Duration::from_secs(20);
        loop {
            if let Some(status) = self.child.try_wait().unwrap() {
                return status.code();
            }
            assert!(Instant::now() < deadline, "warden mcp did not exit");
            std::thread::sleep(Duration::from_millis(20));
        }
    }
}

impl Drop for Raw {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

fn error(answer: &Value) -> (Value, i64, String) {
    let e = &answer["error"];
    (
        answer["id"].clone(),
        e["code"]
            .as_i64()
            .unwrap_or_else(|| panic!("not an error: {answer}")),
        e["message"].as_str().unwrap().to_string(),
    )
}

#[test]
fn bad_messages_get_json_rpc_errors_and_the_server_keeps_serving() {
    let home = fresh_home();
    let setup = Setup::new("auto");
    let mut raw = Raw::start(home.path(), setup.args(&["--max-message-bytes", "2048"]));

    let early = raw.ask(json!({"jsonrpc": "2.0", "id": 1, "method": "tools/list"}));
    let (id, code, message) = error(&early);
    assert_eq!((id, code), (json!(1), -32002), "{early}");
    assert!(message.contains("send `initialize` first"), "{message}");
    raw.send(r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#);

    raw.send("{this is not json");
    assert_eq!(error(&raw.recv()).1, -32700);
    raw.send(&format!(
        r#"{{"jsonrpc":"2.0","id":2,"method":"ping","params":{{"pad":"{}"}}}}"#,
        "x".repeat(5000)
    ));
    let (id, code, message) = error(&raw.recv());
    assert_eq!((id, code), (Value::Null, -32600));
    assert!(
        message.contains("message too large: the limit is 2048 bytes"),
        "{message}"
    );

    raw.initialize();
    let unknown = raw.ask(json!({"jsonrpc": "2.0", "id": 3, "method": "no/such/method"}));
    assert_eq!(error(&unknown).0, json!(3));
    assert_eq!(error(&unknown).1, -32601, "{unknown}");
    let batch = raw.ask(json!([{"jsonrpc": "2.0", "id": 4, "method": "ping"}]));
    assert!(
        error(&batch).2.contains("batches are not supported"),
        "{batch}"
    );
    let bad =
        raw.ask(json!({"jsonrpc": "2.0", "id": 5, "method": "tools/call", "params": {"name": 7}}));
    assert_eq!((error(&bad).0, error(&bad).1), (json!(5), -32602), "{bad}");
    let again = raw.ask(json!({
        "jsonrpc": "2.0", "id": 6, "method": "initialize",
        "params": {"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "x", "version": "1"}},
    }));
    assert!(error(&again).2.contains("already initialized"), "{again}");

    let read = raw.ask(json!({
        "jsonrpc": "2.0", "id": 7, "method": "tools/call",
        "params": {"name": "read_file", "arguments": {"path": "hello.txt"}},
    }));
    assert_eq!(read["id"], 7);
    assert_eq!(read["result"]["isError"], false, "{read}");
    assert_eq!(raw.finish(), Some(0));
    // Only the one real call left a record.
    let (calls, shown) = audited_calls(home.path(), "read_file");
    assert_eq!(calls.len(), 1, "{shown}");
}

#[test]
fn a_client_that_leaves_mid_call_stops_its_guest_and_leaves_a_record() {
    let home = home();
    let setup = Setup::new("auto");
    let mut raw = Raw::start(home, setup.args(&[]));
    raw.initialize();
    let ms = 60_000 + u64::from(std::process::id() % 1000);
    raw.send(
        &json!({
            "jsonrpc": "2.0", "id": 1, "method": "tools/call",
            "params": {"name": "sleep_ms", "arguments": {"ms": ms}},
        })
        .to_string(),
    );
    std::thread::sleep(Duration::from_millis(500));
    let left = Instant::now();
    drop(raw.stdin.take());
    let status = wait_for(&mut raw.child, Duration::from_secs(20));
    let took = left.elapsed();
    assert!(
        status.is_some(),
        "warden mcp still runs 20 s after its client left"
    );
    assert!(
        took < Duration::from_secs(3),
        "the server took {took:?} to stop its guest and exit"
    );
    let calls = records(home, "sleep_ms");
    let record = calls
        .iter()
        .find(|c| c["arguments"]["ms"] == ms)
        .unwrap_or_else(|| panic!("no record of the abandoned call: {calls:?}"));
    assert_eq!(record["outcome"], "cancelled", "{record}");
    assert_eq!(record["caller"], "mcp:raw/0", "{record}");
}

/// Each thread of `pid`: its name, and whether it has `NoNewPrivs`
/// (Landlock's `restrict_self` sets it on the thread it confines, and
/// threads started later inherit it).
fn no_new_privs_by_thread(pid: u32) -> Vec<(String, bool)> {
    std::fs::read_dir(format!("/proc/{pid}/task"))
        .unwrap()
        .flatten()
        .map(|task| {
            let status = std::fs::read_to_string(task.path().join("status")).unwrap_or_default();
            let set = status.lines().any(|l| l == "NoNewPrivs:\t1");
            let name = std::fs::read_to_string(task.path().join("comm")).unwrap_or_default();
            (name.trim().to_string(), set)
        })
        .collect()
}

#[test]
fn the_server_confines_itself_before_any_thread_starts() {
    let home = fresh_home();
    let setup = Setup::new("auto");
    let mut raw = Raw::start(home.path(), setup.args(&[]));
    raw.initialize();
    let read = raw.ask(json!({
        "jsonrpc": "2.0", "id": 1, "method": "tools/call",
        "params": {"name": "read_file", "arguments": {"path": "hello.txt"}},
    }));
    assert_eq!(read["result"]["isError"], false, "{read}");
    // tokio's workers, wasmtime's and the audit writer run by now: every
    // one of them is inside the domain.
    // The spawner is started just before the domain, on purpose: confined
    // children are cloned from it (docs/sandbox.md, host self-confinement).
    let threads = no_new_privs_by_thread(raw.child.id());
    assert!(threads.len() > 2, "{threads:?}");
    assert!(
        threads
            .iter()
            .all(|(name, set)| *set || name == "warden-spawner"),
        "{threads:?}"
    );
    assert!(
        threads.iter().any(|(name, _)| name == "warden-spawner"),
        "{threads:?}"
    );
    let write = raw.ask(json!({
        "jsonrpc": "2.0", "id": 2, "method": "tools/call",
        "params": {"name": "write_file", "arguments": {"path": "new.txt", "content": "hi"}},
    }));
    assert_eq!(write["result"]["isError"], false, "{write}");
    assert_eq!(
        std::fs::read_to_string(setup.sandbox.ws().join("new.txt")).unwrap(),
        "hi"
    );
}

#[test]
fn a_client_that_cannot_list_its_roots_is_not_asked_again_on_every_call() {
    // A home of its own: the shared one's `read_file` records are another
    // test's to count.
    let home = fresh_home();
    let setup = Setup::new("auto");
    let mut raw = Raw::start(home.path(), setup.args(&[]));
    let answer = raw.ask(json!({
        "jsonrpc": "2.0", "id": 0, "method": "initialize",
        "params": {
            "protocolVersion": "2025-06-18",
            "capabilities": {"roots": {"listChanged": true}},
            "clientInfo": {"name": "raw", "version": "0"},
        },
    }));
    assert_eq!(answer["result"]["serverInfo"]["name"], "warden", "{answer}");
    raw.send(r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#);
    let read = |id: u64| {
        json!({
            "jsonrpc": "2.0", "id": id, "method": "tools/call",
            "params": {"name": "read_file", "arguments": {"path": "hello.txt"}},
        })
        .to_string()
    };

    // The first call asks for the roots; this client answers with an error.
    raw.send(&read(1));
    let ask = raw.recv();
    assert_eq!(ask["method"], "roots/list", "{ask}");
    raw.send(
        &json!({
            "jsonrpc": "2.0", "id": ask["id"],
            "error": {"code": -32603, "message": "no roots here"},
        })
        .to_string(),
    );
    let first = raw.recv();
    assert_eq!(first["id"], 1, "{first}");
    assert_eq!(first["result"]["isError"], false, "{first}");
    assert!(
        first.to_string().contains("hello from the workspace"),
        "-w is the workspace: {first}"
    );

    // The next call is answered without asking again (each ask of a client
    // that never answers would hold the call for 5 s).
    raw.send(&read(2));
    let second = raw.recv();
    assert_eq!(
        second["id"], 2,
        "the server asked for the roots again: {second}"
    );
    assert_eq!(second["result"]["isError"], false, "{second}");
}
