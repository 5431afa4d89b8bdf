//! The audit log, written by real `warden run` processes.

use std::path::Path;
use std::process::Stdio;
use std::time::Duration;

use serde_json::{Value, json};
use sha2::{Digest, Sha256};

use crate::support::warden;

fn recording(dir: &Path, turns: &[(String, String)]) -> std::path::PathBuf {
    let path = dir.join("audit-run.jsonl");
    let mut text = json!({"warden_replay": 1, "source": "test script"}).to_string() + "\n";
    for (i, (tool, args)) in turns.iter().enumerate() {
        let t = json!({
            "text": "",
            "tool_calls": [{"id": format!("a{i}"), "name": tool, "arguments": args}],
            "usage": null, "finish": {"type": "tool_calls"},
        });
        text += &(t.to_string() + "\n");
    }
    text += &(json!({"text": "done", "tool_calls": [], "usage": null, "finish": {"type": "stop"}})
        .to_string()
        + "\n");
    std::fs::write(&path, text).unwrap();
    path
}

fn audit(home: &Path, args: &[&str]) -> (Option<i32>, String) {
    let out = warden(home).arg("audit").args(args).output().unwrap();
    (out.status.code(), String::from_utf8(out.stdout).unwrap())
}

#[test]
fn every_call_of_a_run_is_recorded_with_its_decision_and_grant_and_no_secret() {
    let home = tempfile::tempdir().unwrap();
    let ws = tempfile::tempdir().unwrap();
    std::fs::write(ws.path().join("a.txt"), "alpha\n").unwrap();
    let read = r#"{"path":"a.txt"}"#;
    let secret = r#"{"path":"a.txt","api_key":"sk-live-0123456789abcdef"}"#;
    let rec = recording(
        ws.path(),
        &[
            ("read_file".into(), read.into()),
            (
                "write_file".into(),
                r#"{"path":"b.txt","content":"x"}"#.into(),
            ),
            ("read_file".into(), secret.into()),
        ],
    );
    let out = warden(home.path())
        .args(["run", "--json", "--policy", "read-only", "--replay"])
        .arg(&rec)
        .arg("-w")
        .arg(ws.path())
        .arg("audit me")
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let first: Value =
        serde_json::from_slice(out.stdout.split(|&b| b == b'\n').next().unwrap()).unwrap();
    let session = first["session_id"].as_str().unwrap();

    let (code, text) = audit(home.path(), &["show", "--session", session, "--json"]);
    assert_eq!(code, Some(0));
    let records: Vec<Value> = text
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert_eq!(records.len(), 3, "{text}");
    let calls: Vec<&Value> = records.iter().map(|r| &r["event"]).collect();
    assert_eq!(calls[0]["tool"], "read_file");
    assert_eq!(calls[0]["outcome"], "success");
    assert_eq!(calls[0]["args_sha256"], hex::encode(Sha256::digest(read)));
    assert_eq!(calls[0]["decision"]["verdict"], "allow");
    assert_eq!(
        calls[0]["grant"]["filesystem"]["access"], "read-only",
        "{}",
        calls[0]
    );
    assert!(calls[0]["output_bytes"].as_u64().unwrap() > 0);
    assert_eq!(calls[1]["outcome"], "denied");
    assert_eq!(calls[1]["decision"]["verdict"], "deny");
    assert_eq!(calls[2]["arguments"]["api_key"], "[redacted]");
    assert!(!text.contains("sk-live"), "{text}");
    let log = std::fs::read_to_string(home.path().join("audit/audit.jsonl")).unwrap();
    assert!(!log.contains("sk-live"));

    let (code, text) = audit(home.path(), &["verify"]);
    assert_eq!(code, Some(0), "{text}");
    assert!(text.contains("3 records, chain intact"), "{text}");
    assert!(!text.contains("anchor"), "the anchor agrees: {text}");
}

/// A data directory whose log holds the records of a run of four calls.
fn home_with_four_records() -> (tempfile::TempDir, tempfile::TempDir) {
    let home = tempfile::tempdir().unwrap();
    let ws = tempfile::tempdir().unwrap();
    let rec = recording(
        ws.path(),
        &(0..4)
            .map(|i| ("glob".to_string(), format!(r#"{{"pattern":"{i}*"}}"#)))
            .collect::<Vec<_>>(),
    );
    let ok = warden(home.path())
        .args(["run", "-p", "--policy", "read-only", "--replay"])
        .arg(&rec)
        .arg("-w")
        .arg(ws.path())
        .arg("t")
        .output()
        .unwrap();
    assert!(ok.status.success());
    (home, ws)
}

#[test]
fn verify_names_the_edited_record() {
    let (home, _ws) = home_with_four_records();
    let path = home.path().join("audit/audit.jsonl");
    let text = std::fs::read_to_string(&path).unwrap();
    // The second record's arguments.
    std::fs::write(&path, text.replacen("\"1*\"", "\"9*\"", 1)).unwrap();
    let (code, out) = audit(home.path(), &["verify"]);
    assert_eq!(code, Some(1), "{out}");
    assert!(out.contains("broken at line 2 (record 2)"), "{out}");
}

#[test]
fn verify_finds_a_truncated_tail_an_edited_last_record_and_a_deleted_log() {
    let (home, ws) = home_with_four_records();
    let path = home.path().join("audit/audit.jsonl");
    let text = std::fs::read_to_string(&path).unwrap();
    let lines: Vec<&str> = text.lines().collect();

    std::fs::write(&path, lines[..3].join("\n") + "\n").unwrap();
    let (code, out) = audit(home.path(), &["verify"]);
    assert_eq!(code, Some(1), "{out}");
    assert!(
        out.contains("truncated: the log ends after 3 records, but its anchor"),
        "{out}"
    );
    // Nothing is appended to a log cut short: that would hide the cut.
    let o = warden(home.path())
        .args(["tool", "call", "glob", "-w"])
        .arg(ws.path())
        .args(["--input", r#"{"pattern":"*"}"#])
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(5), "{stderr}");
    assert!(
        stderr.contains("holds 3 records but its anchor says 4"),
        "{stderr}"
    );

    let edited = lines[3].replacen("\"3*\"", "\"8*\"", 1);
    assert_ne!(edited, lines[3]);
    std::fs::write(
        &path,
        [lines[0], lines[1], lines[2], &edited].join("\n") + "\n",
    )
    .unwrap();
    let (code, out) = audit(home.path(), &["verify", "--json"]);
    assert_eq!(code, Some(1), "{out}");
    let v: Value = serde_json::from_str(&out).unwrap();
    assert_eq!(
        v["verification"]["broken"],
        Value::Null,
        "the chain alone holds"
    );
    assert_eq!(
        v["verification"]["anchor"],
        json!({"state": "rewritten", "line": 4})
    );

    std::fs::remove_file(&path).unwrap();
    let (code, out) = audit(home.path(), &["verify"]);
    assert_eq!(code, Some(1), "{out}");
    assert!(out.contains("the log is missing"), "{out}");
    assert!(out.contains("it held 4 records: it was deleted"), "{out}");
}

#[test]
fn a_run_killed_while_writing_leaves_a_log_that_verifies_and_goes_on() {
    let home = tempfile::tempdir().unwrap();
    let ws = tempfile::tempdir().unwrap();
    let turns: Vec<(String, String)> = (0..3000)
        .map(|i| ("glob".to_string(), format!(r#"{{"pattern":"{i}*"}}"#)))
        .collect();
    let rec = recording(ws.path(), &turns);
    let policy = ws.path().join("loose.toml");
    std::fs::write(
        &policy,
        "name = \"loose\"\ndescription = \"x\"\nmode = \"auto\"\n[grants.default]\nworkspace = \"read-only\"\nnetwork = []\n",
    )
    .unwrap();
    // Thousands of cheap calls: the run is still writing when it is killed.
    let mut child = warden(home.path())
        .args(["run", "-p", "--max-turns", "5000", "--policy"])
        .arg(&policy)
        .arg("--replay")
        .arg(&rec)
        .arg("-w")
        .arg(ws.path())
        .arg("t")
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let path = home.path().join("audit/audit.jsonl");
    let deadline = std::time::Instant::now() + Duration::from_secs(60);
    while std::fs::metadata(&path).map(|m| m.len()).unwrap_or(0) < 50_000 {
        assert!(
            std::time::Instant::now() < deadline,
            "no audit records appeared"
        );
        std::thread::sleep(Duration::from_millis(2));
    }
    child.kill().unwrap();
    let status = child.wait().unwrap();
    assert_eq!(status.code(), None, "killed before the run ended");

    let (code, out) = audit(home.path(), &["verify", "--json"]);
    assert_eq!(code, Some(0), "{out}");
    let before: Value = serde_json::from_str(&out).unwrap();
    let valid = before["verification"]["valid"].as_u64().unwrap();
    assert!(valid > 0);

    let again = recording(ws.path(), &[("glob".into(), r#"{"pattern":"*"}"#.into())]);
    let ok = warden(home.path())
        .args(["run", "-p", "--policy", "read-only", "--replay"])
        .arg(&again)
        .arg("-w")
        .arg(ws.path())
        .arg("t")
        .output()
        .unwrap();
    assert!(ok.status.success());
    let (code, out) = audit(home.path(), &["verify", "--json"]);
    assert_eq!(code, Some(0), "{out}");
    let after: Value = serde_json::from_str(&out).unwrap();
    assert_eq!(
        after["verification"]["valid"].as_u64().unwrap(),
        valid + 1,
        "{out}"
    );
    assert_eq!(after["verification"]["torn_tail"], false);
}
