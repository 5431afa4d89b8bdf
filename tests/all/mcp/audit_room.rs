//! `warden mcp` whose audit log runs out of room in the middle of a
//! session: the call that finds no room is refused before it runs, with a
//! tool error saying why, and the server goes on serving. The room is
//! real: the audit directory is a small tmpfs (in a user and mount
//! namespace) that another process fills while the server runs.

use std::io::Write;
use std::time::{Duration, Instant};

use serde_json::{Value, json};

use super::raw::Raw;
use super::*;

/// The server on a data directory whose `audit/` is a 256 KiB tmpfs; once
/// it exits, the script prints its exit code and then the audit log.
const SERVE_ON_SMALL_AUDIT: &str = r#"
mkdir -p "$H/audit" && mount -t tmpfs -o size=256k,mode=700 tmpfs "$H/audit" || exit 90
"$WARDEN" mcp --policy workspace-write -w "$WS"
echo "{\"exit\": $?}"
cat "$H/audit/audit.jsonl"
"#;

fn write_call(id: u64, path: &str, content: &str) -> Value {
    json!({
        "jsonrpc": "2.0", "id": id, "method": "tools/call",
        "params": {"name": "write_file", "arguments": {"path": path, "content": content}},
    })
}

/// Wait until the anchor names `records` records: they are on disk.
fn wait_for_anchor(audit: &Path, records: u64) {
    let deadline = Instant::now() + Duration::from_secs(20);
    loop {
        let anchor = std::fs::read(audit.join("anchor.json")).unwrap_or_default();
        let anchor: Value = serde_json::from_slice(&anchor).unwrap_or_default();
        if anchor["records"] == records {
            return;
        }
        assert!(Instant::now() < deadline, "no anchor for {records} records");
        std::thread::sleep(Duration::from_millis(20));
    }
}

#[test]
fn a_call_the_audit_log_has_no_room_for_does_not_run_and_the_server_keeps_serving() {
    catalog();
    let home = fresh_home();
    let ws = tempfile::tempdir().unwrap();
    let mut cmd = Command::new("unshare");
    cmd.args(["-rm", "sh", "-c", SERVE_ON_SMALL_AUDIT])
        .env("WARDEN", env!("CARGO_BIN_EXE_warden"))
        .env("WARDEN_HOME", home.path())
        .env("H", home.path())
        .env("WS", ws.path())
        .env_remove("RUST_LOG");
    let mut raw = Raw::spawn(cmd);
    raw.initialize();
    // The tmpfs as the server sees it, through the shell's mount namespace.
    let audit = Path::new(&format!("/proc/{}/root", raw.child.id()))
        .join(home.path().join("audit").strip_prefix("/").unwrap());

    let first = raw.ask(write_call(1, "first.txt", "x"));
    assert_eq!(first["result"]["isError"], false, "{first}");
    wait_for_anchor(&audit, 1);

    // Another process takes every block left.
    let mut fill = std::fs::File::create(audit.join("fill")).unwrap();
    let block = vec![0u8; 4096];
    let full = loop {
        if let Err(e) = fill.write_all(&block) {
            break e;
        }
    };
    assert_eq!(full.raw_os_error(), Some(28), "{full}"); // ENOSPC
    drop(fill);

    // Its record would need more room than is left reserved.
    let refused = raw.ask(write_call(2, "refused.txt", &"y".repeat(80_000)));
    assert_eq!(refused["id"], 2, "{refused}");
    assert_eq!(refused["result"]["isError"], true, "{refused}");
    let message = refused["result"]["content"][0]["text"].as_str().unwrap();
    assert!(
        message.contains("no room for audit records")
            && message.contains("No space left on device")
            && message.contains("the call was not run"),
        "{message}"
    );
    assert!(
        !ws.path().join("refused.txt").exists(),
        "the refused call ran"
    );

    let listed = raw.ask(json!({"jsonrpc": "2.0", "id": 3, "method": "tools/list"}));
    let tools = listed["result"]["tools"].as_array().unwrap();
    assert!(tools.iter().any(|t| t["name"] == "write_file"), "{listed}");

    // With room again, calls run (and are recorded) again.
    std::fs::remove_file(audit.join("fill")).unwrap();
    let last = raw.ask(write_call(4, "last.txt", "z"));
    assert_eq!(last["result"]["isError"], false, "{last}");
    assert_eq!(
        std::fs::read_to_string(ws.path().join("last.txt")).unwrap(),
        "z"
    );

    drop(raw.stdin.take());
    assert_eq!(raw.recv(), json!({"exit": 0}));
    let paths: Vec<Value> = std::iter::from_fn(|| raw.next_line())
        .filter(|record| record["event"]["type"] == "tool_call")
        .map(|record| record["event"]["arguments"]["path"].clone())
        .collect();
    assert_eq!(paths, [json!("first.txt"), json!("last.txt")]);
}
