//! Oversized input: a call's arguments over the 1 MiB cap are refused as
//! invalid before anything stores them — the session, the audit log, the
//! event stream and the context sent back keep a short prefix and the
//! size — and no error message quotes more than a short prefix of a value.

use std::path::Path;

use serde_json::{Value, json};
use warden::agent::Record;
use warden::base::QUOTE_BYTES;
use warden::capability::WriteMode;
use warden::pipeline::{MAX_ERROR_BYTES, MAX_INPUT_BYTES};
use warden::protocol::ErrorKind;
use warden::provider::{Message, WireFormat};

use crate::agent::{assert_paired, load_session};
use crate::agent_http::KEY;
use crate::mock_model::{MockModel, Script};
use crate::support::{Sandbox, call, call_raw, err, fresh_home, warden};

/// Anything kept of the 10 MB call stays under this.
const SMALL: u64 = 64 * 1024;

fn size(path: &Path) -> u64 {
    std::fs::metadata(path).unwrap().len()
}

/// Bytes under `dir`, recursively.
fn tree_size(dir: &Path) -> u64 {
    std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .map(|p| if p.is_dir() { tree_size(&p) } else { size(&p) })
        .sum()
}

#[test]
fn a_10_mb_call_is_refused_for_its_size_and_kept_nowhere_whole() {
    let home = fresh_home();
    let sb = Sandbox::new();
    sb.write("a.txt", "alpha\n");
    let big = format!(r#"{{"path":"{}"}}"#, "a".repeat(10 << 20));
    let server = MockModel::start(WireFormat::OpenAiChat);
    server.push(
        Script::tool_calls(&[
            ("big", "read_file", &big),
            ("small", "read_file", r#"{"path":"a.txt"}"#),
        ])
        .chunk(256 * 1024),
    );
    server.push(Script::text("That one was too big."));
    let recording = home.path().join("turns.jsonl");
    let out = warden(home.path())
        .env("OPENAI_API_KEY", KEY)
        .args([
            "run",
            "--json",
            "--provider",
            "openai",
            "--policy",
            "read-only",
        ])
        .args(["--base-url", &server.base_url(), "--record"])
        .arg(&recording)
        .arg("-w")
        .arg(sb.ws())
        .arg("read")
        .output()
        .unwrap();
    let stdout = String::from_utf8(out.stdout).unwrap();
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );

    let events: Vec<Value> = stdout
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    let results: Vec<(&str, &str, &str)> = events
        .iter()
        .filter(|e| e["type"] == "tool_result")
        .map(|e| {
            let s = |k: &str| e[k].as_str().unwrap();
            (s("call_id"), s("outcome"), s("summary"))
        })
        .collect();
    assert_eq!(results.len(), 2, "one result per call: {results:?}");
    assert_eq!((results[0].0, results[0].1), ("big", "error"));
    assert!(
        results[0].2.contains("invalid-input")
            && results[0]
                .2
                .contains(&format!("over the limit of {MAX_INPUT_BYTES} bytes")),
        "{}",
        results[0].2
    );
    assert_eq!((results[1].0, results[1].1), ("small", "success"));

    let id = events[0]["session_id"].as_str().unwrap();
    let session_file = home.path().join(format!("sessions/{id}.jsonl"));
    let audit_file = home.path().join("audit/audit.jsonl");
    let sent_back = server.requests()[1].body.to_string();
    let figures = [
        ("event stream", stdout.len() as u64),
        ("session file", size(&session_file)),
        (
            "sessions directory",
            tree_size(&home.path().join("sessions")),
        ),
        ("audit log", size(&audit_file)),
        ("recording", size(&recording)),
        ("request sent back", sent_back.len() as u64),
    ];
    eprintln!("what a {} byte call left behind: {figures:?}", big.len());
    for (what, bytes) in figures {
        assert!(bytes < SMALL, "{what}: {bytes} bytes");
    }
    let marker = format!(
        "[cut: {} bytes, over the {MAX_INPUT_BYTES}-byte limit",
        big.len()
    );
    for (what, text) in [
        ("event stream", stdout.clone()),
        ("session", std::fs::read_to_string(&session_file).unwrap()),
        ("audit log", std::fs::read_to_string(&audit_file).unwrap()),
        ("recording", std::fs::read_to_string(&recording).unwrap()),
        ("request sent back", sent_back.clone()),
    ] {
        assert!(text.contains(&marker), "{what} does not say what was cut");
    }
    assert!(
        sent_back.contains("alpha"),
        "the other call's result went back"
    );

    let session = load_session(home.path(), id);
    assert_paired(&session.messages);
    let stored = session
        .records
        .iter()
        .find_map(|r| match r {
            Record::Call(c) if c.call_id == "big" => Some(c.arguments.clone()),
            _ => None,
        })
        .unwrap();
    assert!(
        stored.starts_with(r#"{"path":"aaa"#) && stored.len() < 1024,
        "{stored}"
    );
    let told = session.messages.iter().find_map(|m| match m {
        Message::Tool {
            call_id,
            content,
            is_error: true,
            ..
        } if call_id == "big" => Some(content),
        _ => None,
    });
    assert!(told.unwrap().contains("1 MiB"), "{told:?}");
}

#[test]
fn error_messages_quote_at_most_a_short_prefix_of_a_bad_value() {
    let sb = Sandbox::new();
    // The schema refuses it: the message quotes a prefix of the value.
    let long = "x".repeat(300_000);
    let r = call(
        "read_file",
        json!({ "path": [long] }),
        &sb.ws(),
        WriteMode::ReadOnly,
    );
    let message = err(&r, ErrorKind::InvalidInput);
    assert!(message.len() < 3 * QUOTE_BYTES, "{} bytes", message.len());
    assert!(message.contains("bytes in all]"), "{message}");

    // The guest refuses it and quotes it: the host passes on a prefix.
    let r = call(
        "read_file",
        json!({ "path": long }),
        &sb.ws(),
        WriteMode::ReadOnly,
    );
    let message = err(&r, ErrorKind::InvalidInput);
    assert!(
        message.len() < MAX_ERROR_BYTES + 64,
        "{} bytes",
        message.len()
    );
    assert!(
        message.starts_with("xxx") && message.contains("bytes in all]"),
        "{message}"
    );

    // An unknown tool's name.
    let name = "t".repeat(300_000);
    let r = call(&name, json!({}), &sb.ws(), WriteMode::ReadOnly);
    let message = err(&r, ErrorKind::UnknownTool);
    assert!(message.len() < 2 * QUOTE_BYTES, "{} bytes", message.len());

    // Input over the cap is refused before it is parsed: this is not JSON.
    let huge = "{".repeat(MAX_INPUT_BYTES + 1);
    let r = call_raw(
        "read_file",
        &huge,
        &sb.ws(),
        WriteMode::ReadOnly,
        Default::default(),
    );
    let message = err(&r, ErrorKind::InvalidInput);
    assert!(
        message.contains("over the limit of 1048576 bytes (1 MiB)"),
        "{message}"
    );
}
