//! How `warden mcp` writes its answers: whole lines on a pipe the client
//! is slow to read, and on a file (no pipe to wait on) as well.

use std::io::Write;
use std::process::Stdio;
use std::time::{Duration, Instant};

use serde_json::{Value, json};

use super::raw::Raw;
use super::*;

/// `id`'s call of `read_file` on `path`.
fn read_call(id: u64, path: &str) -> String {
    json!({
        "jsonrpc": "2.0", "id": id, "method": "tools/call",
        "params": {"name": "read_file", "arguments": {"path": path}},
    })
    .to_string()
}

/// A file of `lines` numbered lines of 60 bytes, named by its length.
fn big_file(setup: &Setup, lines: usize) -> String {
    let text: String = (0..lines)
        .map(|i| format!("{i:>8} {}\n", "x".repeat(50)))
        .collect();
    setup.sandbox.write("big.txt", &text);
    "big.txt".to_string()
}

#[test]
fn answers_larger_than_the_pipe_reach_a_slow_client_whole_and_in_full() {
    let home = fresh_home();
    let setup = Setup::new("auto");
    let path = big_file(&setup, 1500);
    let mut cmd = warden(home.path());
    cmd.args(setup.args(&[]));
    let mut raw = Raw::spawn(cmd);
    raw.initialize();
    // Eight answers of about 100 KB each, written at once while the
    // client reads nothing yet: far more than a pipe holds.
    let batch: String = (1..=8).map(|id| read_call(id, &path) + "\n").collect();
    raw.send(batch.trim_end());
    std::thread::sleep(Duration::from_millis(1500));
    let mut ids = Vec::new();
    for _ in 0..8 {
        let answer = raw.recv();
        let text = answer["result"]["content"][0]["text"]
            .as_str()
            .unwrap_or("");
        assert!(
            text.contains(&format!("{:>8} {}", 1499, "x".repeat(50))),
            "an answer lacks the file's end: {}",
            &answer.to_string()[..200.min(answer.to_string().len())]
        );
        ids.push(answer["id"].as_u64().unwrap());
    }
    ids.sort_unstable();
    assert_eq!(ids, (1..=8).collect::<Vec<_>>());
    // And the server still answers.
    let answer = raw.ask(json!({"jsonrpc": "2.0", "id": 9, "method": "ping"}));
    assert_eq!(answer["id"], 9, "{answer}");
}

#[test]
fn answers_to_a_file_on_stdout_are_written_too() {
    let home = fresh_home();
    let setup = Setup::new("auto");
    let out_dir = tempfile::tempdir().unwrap();
    let out_path = out_dir.path().join("out.jsonl");
    let out = std::fs::File::create(&out_path).unwrap();
    let mut child = warden(home.path())
        .args(setup.args(&[]))
        .stdin(Stdio::piped())
        .stdout(out)
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let mut stdin = child.stdin.take().unwrap();
    let lines = [
        json!({
            "jsonrpc": "2.0", "id": 0, "method": "initialize",
            "params": {"protocolVersion": "2025-06-18", "capabilities": {},
                       "clientInfo": {"name": "file", "version": "0"}},
        })
        .to_string(),
        r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#.to_string(),
        read_call(1, "hello.txt"),
        "{not json".to_string(),
    ];
    for line in &lines {
        writeln!(stdin, "{line}").unwrap();
    }
    stdin.flush().unwrap();
    let deadline = Instant::now() + Duration::from_secs(20);
    let answers: Vec<Value> = loop {
        let text = std::fs::read_to_string(&out_path).unwrap();
        let answers: Vec<Value> = text
            .lines()
            .map(|l| serde_json::from_str(l).unwrap_or_else(|e| panic!("{e}: {l}")))
            .collect();
        if answers.len() >= 3 {
            break answers;
        }
        assert!(Instant::now() < deadline, "answers so far: {text}");
        std::thread::sleep(Duration::from_millis(50));
    };
    drop(stdin);
    assert!(wait_for(&mut child, Duration::from_secs(20)).is_some());
    let by_id = |id: Value| answers.iter().find(|a| a["id"] == id).cloned();
    let read = by_id(json!(1)).unwrap_or_else(|| panic!("{answers:?}"));
    assert!(
        read["result"]["content"][0]["text"]
            .as_str()
            .is_some_and(|t| t.contains("hello from the workspace")),
        "{read}"
    );
    let parse = by_id(Value::Null).unwrap_or_else(|| panic!("{answers:?}"));
    assert_eq!(parse["error"]["code"], -32700, "{parse}");
}
