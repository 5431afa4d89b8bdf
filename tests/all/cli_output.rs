//! What a person sees first: output that survives a closed pipe, a
//! `tool list` table that fits, `tool show`, quiet calls by default
//! (`-q`, `-v`), and `sessions list`.

use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};

use serde_json::Value;

use crate::support::*;

fn demo() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("examples/demo")
}

/// A demo run (replayed, read-only) with `extra` flags before the task.
fn demo_run(extra: &[&str]) -> Vec<String> {
    let demo = demo();
    let mut args: Vec<String> = ["run", "--replay"]
        .iter()
        .map(ToString::to_string)
        .collect();
    args.push(demo.join("replay.jsonl").display().to_string());
    args.extend([
        "-w".to_string(),
        demo.join("workspace").display().to_string(),
    ]);
    args.extend(["--policy", "read-only"].map(String::from));
    args.extend(extra.iter().map(ToString::to_string));
    args.push("Where are HTTP retries configured?".to_string());
    args
}

/// Run `cmd` with its stdout a pipe whose reader is gone before it writes.
fn with_stdout_closed(mut cmd: Command) -> Output {
    let mut child = cmd
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    drop(child.stdout.take());
    child.wait_with_output().unwrap()
}

fn text(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes).into_owned()
}

#[test]
fn a_closed_stdout_ends_a_printing_command_quietly() {
    catalog();
    let home = shared_home();
    let sb = Sandbox::new();
    sb.write("a.txt", "alpha\n");
    let ws = sb.ws().display().to_string();
    let read = [
        "tool",
        "call",
        "read_file",
        "-w",
        &ws,
        "--input",
        r#"{"path":"a.txt"}"#,
    ];
    let (code, _, err) = cli(home, &read);
    assert_eq!(code, Some(0), "{err}");
    let commands: [&[&str]; 7] = [
        &["tool", "list"],
        &["tool", "list", "--json"],
        &["audit", "show"],
        &["audit", "show", "--json"],
        &["policy", "list"],
        &["plugin", "inspect", "fs"],
        &read,
    ];
    for args in commands {
        let mut cmd = warden(home);
        cmd.args(args);
        let out = with_stdout_closed(cmd);
        let err = text(&out.stderr);
        assert!(
            !err.contains("panicked") && out.status.code() != Some(101),
            "{args:?}: {:?} {err}",
            out.status
        );
        assert!(out.status.code().is_some(), "{args:?}: {:?}", out.status);
    }
}

#[test]
fn a_run_whose_stdout_closes_ends_its_session_with_a_reason() {
    catalog();
    let home = fresh_home();
    for json in [&["--json"][..], &[]] {
        let mut cmd = warden(home.path());
        cmd.args(demo_run(json));
        let out = with_stdout_closed(cmd);
        let err = text(&out.stderr);
        assert_eq!(out.status.code(), Some(6), "{json:?}: {err}");
        assert!(!err.contains("panicked"), "{err}");
    }
    let (code, out, err) = cli(home.path(), &["sessions", "list", "--json"]);
    assert_eq!(code, Some(0), "{err}");
    let doc: Value = serde_json::from_str(&out).unwrap();
    let sessions = doc["sessions"].as_array().unwrap();
    assert_eq!(sessions.len(), 2, "{doc}");
    for s in sessions {
        assert_eq!(s["ended"]["kind"], "output_closed", "{doc}");
    }
    let (_, table, _) = cli(home.path(), &["sessions", "list"]);
    assert!(table.contains("stopped: the output was closed"), "{table}");
}

/// Where each header word starts, and the cells of a row at those places.
fn columns(table: &str) -> (Vec<usize>, Vec<&str>) {
    let header = table.lines().next().unwrap();
    let starts = ["TOOL", "PLUGIN", "ACCESS", "CAPABILITIES", "DESCRIPTION"]
        .map(|h| header.find(h).unwrap())
        .to_vec();
    (starts, table.lines().skip(1).collect())
}

#[test]
fn tool_list_is_an_aligned_table_that_fits_the_width() {
    catalog();
    let list = |columns: Option<&str>| {
        let mut cmd = warden(shared_home());
        cmd.args(["tool", "list"]).env_remove("COLUMNS");
        if let Some(c) = columns {
            cmd.env("COLUMNS", c);
        }
        let out = cmd.output().unwrap();
        assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
        text(&out.stdout)
    };
    let piped = list(None);
    let (starts, rows) = columns(&piped);
    assert!(rows.len() >= 7, "{piped}");
    for row in &rows {
        let chars: Vec<char> = row.chars().collect();
        for &at in &starts[1..] {
            assert!(
                chars[at - 1] == ' ' && chars[at] != ' ',
                "column at {at} not aligned in {row:?}\n{piped}"
            );
        }
    }
    let read = rows.iter().find(|r| r.starts_with("read_file ")).unwrap();
    assert!(
        read.ends_with("Read a text file from the workspace."),
        "one sentence: {read}"
    );
    let fetch = rows.iter().find(|r| r.starts_with("http_fetch ")).unwrap();
    assert!(fetch.contains("web") && fetch.contains("net:"), "{fetch}");

    let narrow = list(Some("100"));
    for line in narrow.lines() {
        assert!(line.chars().count() <= 100, "{line:?} is wider than 100");
    }
    assert!(narrow.lines().any(|l| l.ends_with('…')), "{narrow}");
}

#[test]
fn tool_show_gives_the_description_schema_and_grant() {
    catalog();
    let (code, out, err) = cli(shared_home(), &["tool", "show", "grep"]);
    assert_eq!(code, Some(0), "{err}");
    for part in [
        "grep (plugin search, read-only",
        "a match never spans lines",
        "input schema:",
        "\"pattern\"",
        "policy:   workspace-write",
        "decision: allow",
        "grant:    workspace read-only",
    ] {
        assert!(out.contains(part), "{part:?} missing from\n{out}");
    }
    let (code, out, _) = cli(
        shared_home(),
        &["tool", "show", "write_file", "--policy", "read-only"],
    );
    assert_eq!(code, Some(0));
    assert!(out.contains("decision: deny"), "{out}");
    let (code, out, _) = cli(shared_home(), &["tool", "show", "grep", "--json"]);
    assert_eq!(code, Some(0));
    let doc: Value = serde_json::from_str(&out).unwrap();
    assert_eq!(doc["name"], "grep");
    assert_eq!(doc["input_schema"]["type"], "object");
    let (code, _, err) = cli(shared_home(), &["tool", "show", "grpe"]);
    assert_eq!(code, Some(2));
    assert!(err.contains("unknown tool `grpe`"), "{err}");
}

#[test]
fn calls_are_quiet_unless_asked_to_say_more() {
    catalog();
    let sb = Sandbox::new();
    sb.write("a.txt", "alpha\n");
    let ws = sb.ws().display().to_string();
    let call = |extra: &[&str], tool: &str, input: &str| {
        let mut args = vec!["tool", "call", tool, "-w", &ws, "--input", input];
        args.extend(extra);
        cli(shared_home(), &args)
    };
    let grep = r#"{"pattern":"alpha"}"#;
    let (code, out, err) = call(&[], "grep", grep);
    assert_eq!(code, Some(0), "{err}");
    assert!(out.contains("a.txt"), "{out}");
    assert_eq!(err, "", "nothing but the result by default");
    let (_, out_v, err_v) = call(&["-v"], "grep", grep);
    assert_eq!(out_v, out);
    assert!(
        err_v.contains("[Debug] "),
        "-v shows plugin debug logs: {err_v}"
    );
    // read_file declares read-write and is granted read-only: a note, with -v.
    let read = r#"{"path":"a.txt"}"#;
    let (code, _, err) = call(&[], "read_file", read);
    assert_eq!((code, err.as_str()), (Some(0), ""));
    let (_, _, err_v) = call(&["-v"], "read_file", read);
    assert!(
        err_v.contains("warden: note: declared filesystem: read-write → granted"),
        "{err_v}"
    );

    let missing = r#"{"path":"missing.txt"}"#;
    let (code, _, err) = call(&["-q"], "read_file", missing);
    assert_eq!(code, Some(1));
    assert!(
        err.contains("read_file failed (not-found)"),
        "-q keeps errors: {err}"
    );

    let (code, _, err) = cli(shared_home(), &["-q", "-v", "tool", "list"]);
    assert_eq!(code, Some(2), "-q and -v conflict: {err}");
}

#[test]
fn a_quiet_run_prints_only_the_answer() {
    catalog();
    let home = fresh_home();
    let (code, out, err) = cli(
        home.path(),
        &demo_run(&[]).iter().map(String::as_str).collect::<Vec<_>>(),
    );
    assert_eq!(code, Some(0), "{err}");
    assert!(err.contains("warden: session "), "{err}");
    let (code, quiet_out, quiet_err) = cli(
        home.path(),
        &demo_run(&["-q"])
            .iter()
            .map(String::as_str)
            .collect::<Vec<_>>(),
    );
    assert_eq!(code, Some(0), "{quiet_err}");
    assert_eq!(quiet_err, "");
    assert_eq!(quiet_out, out);
}

#[test]
fn sessions_list_has_a_header_and_the_newest_first() {
    catalog();
    let home = fresh_home();
    let args = demo_run(&["-q"]);
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    for _ in 0..2 {
        let (code, _, err) = cli(home.path(), &args);
        assert_eq!(code, Some(0), "{err}");
        // Start times are to the second.
        std::thread::sleep(std::time::Duration::from_millis(1100));
    }
    let (code, json, _) = cli(home.path(), &["sessions", "list", "--json"]);
    assert_eq!(code, Some(0));
    let doc: Value = serde_json::from_str(&json).unwrap();
    let ids: Vec<&str> = doc["sessions"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| s["id"].as_str().unwrap())
        .collect();
    assert_eq!(ids.len(), 2);
    let (_, table, _) = cli(home.path(), &["sessions", "list"]);
    let lines: Vec<&str> = table.lines().collect();
    assert!(
        lines[0].starts_with("ID ") && lines[0].contains("STARTED"),
        "{table}"
    );
    assert!(
        lines[1].starts_with(ids[0]) && lines[2].starts_with(ids[1]),
        "{table}"
    );
    let created = |i: usize| doc["sessions"][i]["created"].as_str().unwrap().to_string();
    assert!(created(0) >= created(1), "newest first: {doc}");
    let (_, one, _) = cli(home.path(), &["sessions", "list", "--limit", "1"]);
    assert_eq!(one.lines().count(), 2, "{one}");
    assert!(one.lines().nth(1).unwrap().starts_with(ids[0]), "{one}");
}

#[test]
fn a_workspace_of_root_home_or_the_data_directory_needs_trust() {
    catalog();
    let home = fresh_home();
    let user_home = tempfile::tempdir().unwrap();
    let inside_data = home.path().join("plugins");
    std::fs::create_dir_all(&inside_data).unwrap();
    let read = |ws: &Path, extra: &[&str]| {
        let mut cmd = warden(home.path());
        cmd.env("HOME", user_home.path())
            .args(["tool", "call", "list_dir", "-w"])
            .arg(ws)
            .args(extra);
        let out = cmd.output().unwrap();
        (out.status.code(), text(&out.stderr))
    };
    for (ws, what) in [
        (Path::new("/"), "the root directory"),
        (user_home.path(), "your home directory"),
        (home.path(), "Warden's data directory"),
        (inside_data.as_path(), "Warden's data directory"),
    ] {
        let (code, err) = read(ws, &[]);
        assert_eq!(code, Some(2), "{ws:?}: {err}");
        assert!(
            err.contains(what) && err.contains("--trust-workspace"),
            "{err}"
        );
    }
    let (code, err) = read(user_home.path(), &["--trust-workspace"]);
    assert_eq!(code, Some(0), "{err}");
    let project = user_home.path().join("project");
    std::fs::create_dir(&project).unwrap();
    assert_eq!(read(&project, &[]).0, Some(0));

    // The first writing call in a workspace says where it may write, once.
    let write = |extra: &[&str]| {
        let out = warden(home.path())
            .env("HOME", user_home.path())
            .args(["tool", "call", "write_file", "-w"])
            .arg(&project)
            .args(["--input", r#"{"path":"n.txt","content":"x"}"#])
            .args(extra)
            .output()
            .unwrap();
        assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
        text(&out.stderr)
    };
    let first = write(&[]);
    let canonical = std::fs::canonicalize(&project).unwrap();
    assert_eq!(
        first,
        format!(
            "warden: first writing run in {}: tools may write inside it, and nowhere else\n",
            canonical.display()
        )
    );
    assert_eq!(write(&[]), "", "said once");
}
