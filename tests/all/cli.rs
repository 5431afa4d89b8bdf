//! The `warden` binary: help text, tool listing, exit codes and JSON output,
//! snapshotted where users read or parse them.

use std::process::Output;

use serde_json::{Value, json};

use crate::support::*;

fn run(args: &[&str], cwd: &std::path::Path) -> Output {
    catalog(); // warm the shared compile cache first
    warden(shared_home())
        .args(args)
        .current_dir(cwd)
        .output()
        .unwrap()
}

fn stdout(o: &Output) -> String {
    String::from_utf8(o.stdout.clone()).unwrap()
}

fn stderr(o: &Output) -> String {
    String::from_utf8(o.stderr.clone()).unwrap()
}

#[test]
fn help_texts() {
    let dir = tempfile::tempdir().unwrap();
    insta::assert_snapshot!("help", stdout(&run(&["--help"], dir.path())));
    insta::assert_snapshot!(
        "tool_call_help",
        stdout(&run(&["tool", "call", "--help"], dir.path()))
    );
    insta::assert_snapshot!(
        "plugin_help",
        stdout(&run(&["plugin", "--help"], dir.path()))
    );
    insta::assert_snapshot!("mcp_help", stdout(&run(&["mcp", "--help"], dir.path())));
}

#[test]
fn tool_list_json_is_the_tool_schemas() {
    let dir = tempfile::tempdir().unwrap();
    let o = run(&["tool", "list", "--json"], dir.path());
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let v: Value = serde_json::from_str(&stdout(&o)).unwrap();
    let names: Vec<_> = v["tools"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["name"].as_str().unwrap())
        .collect();
    assert_eq!(
        names,
        [
            "read_file",
            "write_file",
            "edit_file",
            "list_dir",
            "glob",
            "grep",
            "shell",
            "http_fetch",
            "update_plan",
            "ask_user",
            "memory_read",
            "memory_write"
        ]
    );
    insta::assert_json_snapshot!("tool_schemas", v);
}

#[test]
fn tool_list_table_shows_plugin_access_and_capabilities() {
    let dir = tempfile::tempdir().unwrap();
    let out = stdout(&run(&["tool", "list"], dir.path()));
    let grep = out.lines().find(|l| l.starts_with("grep ")).unwrap();
    assert!(
        grep.contains("search") && grep.contains("read-only") && grep.contains("fs:read"),
        "{grep}"
    );
    let write = out.lines().find(|l| l.starts_with("write_file ")).unwrap();
    assert!(
        write.contains("fs") && write.contains("writes") && write.contains("fs:read-write"),
        "{write}"
    );
}

#[test]
fn exit_codes_are_distinct() {
    let sb = Sandbox::new();
    sb.write("a.txt", "alpha\n");
    let ws = sb.ws();
    let ok = run(
        &[
            "tool",
            "call",
            "read_file",
            "--input",
            r#"{"path":"a.txt"}"#,
        ],
        &ws,
    );
    assert_eq!(
        (ok.status.code(), stdout(&ok)),
        (Some(0), "     1\talpha\n".to_string())
    );

    let tool_error = run(
        &[
            "tool",
            "call",
            "read_file",
            "--input",
            r#"{"path":"missing.txt"}"#,
        ],
        &ws,
    );
    assert_eq!(tool_error.status.code(), Some(1));
    assert!(
        stderr(&tool_error).contains("not-found"),
        "{}",
        stderr(&tool_error)
    );

    let bad_json = run(
        &["tool", "call", "read_file", "--input", r#"{"path":"#],
        &ws,
    );
    assert_eq!(bad_json.status.code(), Some(2));
    let schema = run(
        &["tool", "call", "read_file", "--input", r#"{"path":7}"#],
        &ws,
    );
    assert_eq!(schema.status.code(), Some(2));
    insta::assert_snapshot!("schema_violation_error", stderr(&schema));
    let unknown = run(&["tool", "call", "reed_file"], &ws);
    assert_eq!(unknown.status.code(), Some(2));
    insta::assert_snapshot!("unknown_tool_error", stderr(&unknown));
    let usage = run(&["tool", "call"], &ws);
    assert_eq!(usage.status.code(), Some(2));

    // Every call runs under a policy; the default, workspace-write, lets
    // writes inside the workspace through, and read-only denies them.
    let denied = run(
        &[
            "tool",
            "call",
            "write_file",
            "--policy",
            "read-only",
            "--input",
            r#"{"path":"b.txt","content":"x"}"#,
        ],
        &ws,
    );
    assert_eq!(denied.status.code(), Some(3));
    assert!(!sb.exists("b.txt"));
    let written = run(
        &[
            "tool",
            "call",
            "write_file",
            "--input",
            r#"{"path":"b.txt","content":"x"}"#,
        ],
        &ws,
    );
    assert_eq!(written.status.code(), Some(0), "{}", stderr(&written));
    assert_eq!(sb.read("b.txt"), "x");
    let retired = run(
        &[
            "tool",
            "call",
            "write_file",
            "--allow-write",
            "--input",
            r#"{"path":"c.txt","content":"x"}"#,
        ],
        &ws,
    );
    assert_eq!(retired.status.code(), Some(2));
    assert!(
        stderr(&retired).contains("--allow-write is gone: every call runs under a policy"),
        "{}",
        stderr(&retired)
    );
    assert!(!sb.exists("c.txt"));
    sb.assert_canaries_intact();
}

#[test]
fn call_json_output_has_a_stable_shape() {
    let sb = Sandbox::new();
    sb.write("a.txt", "alpha\n");
    let ws = sb.ws().display().to_string();
    let o = run(
        &[
            "tool",
            "call",
            "read_file",
            "--json",
            "-w",
            &ws,
            "--input",
            r#"{"path":"a.txt"}"#,
        ],
        &sb.parent(),
    );
    assert_eq!(o.status.code(), Some(0));
    let v: Value = serde_json::from_str(&stdout(&o)).unwrap();
    assert_eq!(v["tool"], "read_file");
    assert_eq!(v["plugin"], "fs");
    assert_eq!(v["stage"], "executed");
    assert_eq!(v["outcome"]["type"], "success");
    assert_eq!(v["outcome"]["text"], "     1\talpha\n");
    // A tool annotated read-only gets no writes, whatever its plugin declares.
    assert_eq!(v["grant"]["filesystem"]["access"], "read-only");
    assert_eq!(v["grant_cuts"][0]["declared"], "filesystem: read-write");
    assert_eq!(v["decision"]["verdict"], "allow");
    assert_eq!(v["approval"], json!({"type": "policy"}));
    assert!(v["duration_ms"].as_f64().unwrap() > 0.0);

    let o = run(
        &[
            "tool",
            "call",
            "read_file",
            "--json",
            "-w",
            &ws,
            "--input",
            r#"{"path":"nope"}"#,
        ],
        &sb.parent(),
    );
    assert_eq!(o.status.code(), Some(1));
    let v: Value = serde_json::from_str(&stdout(&o)).unwrap();
    assert_eq!(
        v["outcome"],
        json!({"type": "error", "kind": "not_found", "message": "nope: no such file or directory"})
    );
}

#[test]
fn input_from_a_file_and_from_stdin() {
    use std::io::Write;
    let sb = Sandbox::new();
    sb.write("a.txt", "alpha\n");
    let input = sb.parent().join("input.json");
    std::fs::write(&input, r#"{"path":"a.txt"}"#).unwrap();
    let arg = format!("@{}", input.display());
    let o = run(&["tool", "call", "read_file", "--input", &arg], &sb.ws());
    assert_eq!(stdout(&o), "     1\talpha\n");
    std::fs::remove_file(&input).unwrap();

    let mut child = warden(shared_home())
        .args(["tool", "call", "read_file", "--input", "-"])
        .current_dir(sb.ws())
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    child
        .stdin
        .take()
        .unwrap()
        .write_all(br#"{"path":"a.txt"}"#)
        .unwrap();
    let o = child.wait_with_output().unwrap();
    assert_eq!(stdout(&o), "     1\talpha\n");
}

#[test]
fn limit_flags_apply_to_the_call() {
    let home = tempfile::tempdir().unwrap();
    let o = warden(home.path())
        .args(["plugin", "install", warden::test_plugins::HOSTILE])
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let sb = Sandbox::new();
    let started = std::time::Instant::now();
    let o = warden(home.path())
        .args(["tool", "call", "spin", "--timeout-ms", "200", "--json"])
        .current_dir(sb.ws())
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(1), "{}", stdout(&o));
    let v: Value = serde_json::from_str(&stdout(&o)).unwrap();
    assert_eq!(v["outcome"]["kind"], "timeout");
    assert!(started.elapsed() < std::time::Duration::from_secs(5));

    let o = warden(home.path())
        .args(["tool", "call", "alloc_bomb", "--memory-mib", "32"])
        .current_dir(sb.ws())
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(1));
    assert!(
        stderr(&o)
            .contains("(memory-limit): the plugin tried to use more than its 32 MiB memory limit"),
        "{}",
        stderr(&o)
    );

    let o = warden(home.path())
        .args([
            "tool",
            "call",
            "flood_output",
            "--max-output-bytes",
            "10",
            "--input",
            r#"{"mib":1}"#,
        ])
        .current_dir(sb.ws())
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(0));
    assert!(
        stdout(&o).ends_with("exceeded the 10-byte cap]\n"),
        "{}",
        stdout(&o)
    );

    let o = warden(home.path())
        .args([
            "tool",
            "call",
            "flood_log",
            "--limit",
            "log-lines=7",
            "--json",
            "--input",
            r#"{"count":20}"#,
        ])
        .current_dir(sb.ws())
        .output()
        .unwrap();
    let v: Value = serde_json::from_str(&stdout(&o)).unwrap();
    assert_eq!(
        (
            v["logs"].as_array().unwrap().len(),
            v["logs_dropped"].as_u64()
        ),
        (7, Some(13)),
        "{v}"
    );

    let o = warden(home.path())
        .args([
            "tool",
            "call",
            "random_bytes",
            "--limit",
            "random-bytes=16",
            "--input",
            r#"{"len":17}"#,
        ])
        .current_dir(sb.ws())
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(1));
    assert!(
        stderr(&o).contains("(limit-exceeded): the plugin asked for more than 16 random bytes"),
        "{}",
        stderr(&o)
    );

    for bad in ["cpu=1", "log-lines", "log-lines=x", "memory-mib=999999"] {
        let o = warden(home.path())
            .args(["tool", "call", "ok", "--limit", bad])
            .output()
            .unwrap();
        assert_eq!(
            o.status.code(),
            Some(2),
            "--limit {bad} must be a usage error"
        );
    }

    let o = warden(home.path())
        .args(["tool", "call", "ok", "--timeout-ms", "0"])
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(2), "a zero deadline is a usage error");
}
