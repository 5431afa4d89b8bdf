//! What a call exercised, as the host's WASI layer records it: the files
//! the hostile fixture's `fs_script` tool used must be exactly the ones its
//! script names, in process and in the audit record of `warden tool call`.

use serde_json::{Value, json};
use warden::base::Limits;
use warden::capability::{FileOp, FileUse, FsAccess, PathGuard};
use warden::protocol::ToolOutcome;

use crate::support::*;

fn used(op: FileOp, path: &str) -> FileUse {
    FileUse {
        op,
        path: path.into(),
        to: None,
    }
}

/// The script and what it must leave on the record.
fn script() -> (Value, Vec<FileUse>) {
    let steps = json!([
        {"op": "read", "path": "a.txt"},
        {"op": "write", "path": "b.txt", "content": "new b"},
        {"op": "create", "path": "c.txt", "content": "c"},
        {"op": "delete", "path": "d.txt"},
        {"op": "rename", "from": "e.txt", "to": "f.txt"},
        {"op": "mkdir", "path": "g"},
        {"op": "write", "path": "g/h.txt", "content": "h"},
        {"op": "list", "path": "g"},
        {"op": "delete", "path": "g/h.txt"},
        {"op": "rmdir", "path": "g"},
        {"op": "touch", "path": "a.txt"},
        {"op": "read", "path": "a.txt"},
    ]);
    let expected = vec![
        used(FileOp::Read, "a.txt"),
        used(FileOp::Write, "b.txt"),
        used(FileOp::Create, "c.txt"),
        used(FileOp::Delete, "d.txt"),
        FileUse {
            op: FileOp::Rename,
            path: "e.txt".into(),
            to: Some("f.txt".into()),
        },
        used(FileOp::Create, "g"),
        used(FileOp::Create, "g/h.txt"),
        used(FileOp::Read, "g"),
        used(FileOp::Delete, "g/h.txt"),
        used(FileOp::Delete, "g"),
        used(FileOp::Metadata, "a.txt"),
    ];
    (json!({ "steps": steps }), expected)
}

fn seeded() -> Sandbox {
    let sb = Sandbox::new();
    for f in ["a.txt", "b.txt", "d.txt", "e.txt"] {
        sb.write(f, f);
    }
    sb
}

#[test]
fn the_recorded_file_uses_are_exactly_the_scripted_ones() {
    let (input, expected) = script();
    for protected in [Some(PathGuard::defaults()), None] {
        let sb = seeded();
        let grant = guarded_grant(&sb.ws(), FsAccess::ReadWrite, protected.clone());
        let r = call_plugin(
            &hostile(),
            "fs_script",
            input.clone(),
            &grant,
            &Limits::default(),
        );
        assert!(
            matches!(r.outcome, ToolOutcome::Success(_)),
            "{:?}",
            r.outcome
        );
        assert_eq!(
            r.exercised.files,
            expected,
            "protected paths: {}",
            protected.is_some()
        );
        assert_eq!(r.exercised.files_dropped, 0);
        assert!(r.boundary_denials.is_empty());
        assert_eq!(sb.read("b.txt"), "new b");
        assert!(sb.exists("f.txt") && !sb.exists("e.txt") && !sb.exists("d.txt"));
    }
}

#[test]
fn a_read_only_grant_records_reads_and_refusals_are_not_uses() {
    let sb = seeded();
    let grant = ws_grant(&sb.ws(), FsAccess::ReadOnly);
    let input = json!({"steps": [
        {"op": "read", "path": "a.txt"},
        {"op": "write", "path": "b.txt", "content": "x"},
    ]});
    let r = call_plugin(&hostile(), "fs_script", input, &grant, &Limits::default());
    assert!(
        matches!(r.outcome, ToolOutcome::Error(_)),
        "{:?}",
        r.outcome
    );
    assert_eq!(r.exercised.files, [used(FileOp::Read, "a.txt")]);
    assert_eq!(sb.read("b.txt"), "b.txt");
}

#[test]
fn file_uses_past_the_cap_are_counted() {
    let sb = Sandbox::new();
    let n = warden::capability::MAX_FILE_USES + 10;
    for i in 0..n {
        sb.write(&format!("f{i}"), "x");
    }
    let steps: Vec<Value> = (0..n)
        .map(|i| json!({"op": "read", "path": format!("f{i}")}))
        .collect();
    let grant = ws_grant(&sb.ws(), FsAccess::ReadOnly);
    let r = call_plugin(
        &hostile(),
        "fs_script",
        json!({ "steps": steps }),
        &grant,
        &Limits::default(),
    );
    assert_eq!(r.exercised.files.len(), warden::capability::MAX_FILE_USES);
    assert_eq!(r.exercised.files_dropped, 10);
}

fn audit_records(home: &std::path::Path) -> Vec<Value> {
    let (code, out, err) = cli(home, &["audit", "show", "--json"]);
    assert_eq!(code, Some(0), "{err}");
    out.lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect()
}

#[test]
fn tool_call_is_audited_with_what_it_exercised_and_no_secret() {
    let home = fresh_home();
    let (code, _, err) = cli(
        home.path(),
        &["plugin", "install", warden::test_plugins::HOSTILE],
    );
    assert_eq!(code, Some(0), "{err}");
    let sb = seeded();
    sb.write(".git/config", "[core]\n");
    // The policy checks arguments for protected paths; a symlink hides
    // this one from it, and the filesystem layer refuses it.
    sb.symlink(".git", "vcs");
    let ws = sb.ws().display().to_string();
    let (input, expected) = script();
    let mut steps = input["steps"].as_array().unwrap().clone();
    steps.push(json!({"op": "write", "path": "vcs/config", "content": "x"}));
    let secret = "sk-test-0123456789abcdef";
    let input = json!({ "steps": steps, "note": format!("key {secret}") }).to_string();
    let o = warden(home.path())
        .env("OPENAI_API_KEY", secret)
        .args([
            "tool",
            "call",
            "fs_script",
            "--policy",
            "ci",
            "-w",
            &ws,
            "--input",
        ])
        .arg(&input)
        .output()
        .unwrap();
    assert_eq!(
        o.status.code(),
        Some(1),
        "{}",
        String::from_utf8_lossy(&o.stderr)
    );
    let (code, _, _) = cli(
        home.path(),
        &[
            "tool",
            "call",
            "fs_script",
            "--policy",
            "read-only",
            "-w",
            &ws,
            "--input",
            r#"{"steps":[]}"#,
        ],
    );
    assert_eq!(code, Some(3), "denied by the read-only policy");

    let records = audit_records(home.path());
    let calls: Vec<&Value> = records
        .iter()
        .map(|r| &r["event"])
        .filter(|e| e["type"] == "tool_call")
        .collect();
    assert_eq!(calls.len(), 2, "{records:?}");
    let ran = calls[0];
    assert_eq!(ran["tool"], "fs_script");
    assert_eq!(ran["outcome"], "error");
    assert_eq!(ran["decision"]["verdict"], "allow", "{ran}");
    assert_eq!(ran["approved_by"], "policy");
    assert_eq!(ran["grant"]["filesystem"]["access"], "read-write");
    let files: Vec<FileUse> = serde_json::from_value(ran["exercised"]["files"].clone()).unwrap();
    assert_eq!(files, expected);
    assert_eq!(
        ran["exercised"]["denials"],
        json!([{"op": "open", "path": ".git/config"}])
    );
    assert_eq!(sb.read(".git/config"), "[core]\n");
    assert_eq!(ran["arguments"]["note"], "key [redacted]");
    let denied = calls[1];
    assert_eq!(denied["outcome"], "denied");
    assert_eq!(denied["decision"]["verdict"], "deny");
    assert!(denied.get("exercised").is_none(), "{denied}");
    let log = std::fs::read_to_string(home.path().join("audit/audit.jsonl")).unwrap();
    assert!(!log.contains(secret));
    let (code, out, _) = cli(home.path(), &["audit", "verify"]);
    assert_eq!(code, Some(0), "{out}");
}

#[test]
fn audit_caps_compares_grants_with_use_and_suggests_least_privilege() {
    let home = fresh_home();
    let (code, _, err) = cli(
        home.path(),
        &["plugin", "install", warden::test_plugins::HOSTILE],
    );
    assert_eq!(code, Some(0), "{err}");
    let sb = seeded();
    let ws = sb.ws().display().to_string();
    let calls: [(&str, &str, &str, i32); 5] = [
        // Granted the workspace, touches nothing.
        ("ok", "{}", "ci", 0),
        // Granted writes, only reads.
        (
            "fs_script",
            r#"{"steps":[{"op":"read","path":"a.txt"}]}"#,
            "ci",
            0,
        ),
        ("write_file", r#"{"path":"new.txt","content":"x"}"#, "ci", 0),
        ("read_file", r#"{"path":"a.txt"}"#, "ci", 0),
        // Denied: says nothing about use.
        (
            "write_file",
            r#"{"path":"b.txt","content":"x"}"#,
            "read-only",
            3,
        ),
    ];
    for (tool, input, policy, want) in calls {
        let (code, _, err) = cli(
            home.path(),
            &[
                "tool", "call", tool, "--policy", policy, "-w", &ws, "--input", input,
            ],
        );
        assert_eq!(code, Some(want), "{tool}: {err}");
    }
    let (code, out, err) = cli(home.path(), &["audit", "caps"]);
    assert_eq!(code, Some(0), "{err}");
    insta::assert_snapshot!("audit_caps", out);

    let (code, out, _) = cli(home.path(), &["audit", "caps", "--json"]);
    assert_eq!(code, Some(0));
    let v: Value = serde_json::from_str(&out).unwrap();
    assert_eq!(
        v["tools"]["fs_script"]["unused"],
        json!(["write granted but only reads seen"])
    );
    assert_eq!(v["tools"]["ok"]["suggested_workspace"], "none");
    assert_eq!(
        v["tools"]["write_file"]["suggested_workspace"],
        "read-write"
    );
    assert_eq!(v["tools"]["write_file"]["calls"], 2);
    assert_eq!(v["tools"]["write_file"]["ran"], 1);
}
