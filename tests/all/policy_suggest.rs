//! `warden policy suggest` end to end: a scripted run under a permissive
//! policy reads files in two directories, writes one, runs commands and
//! fetches from a loopback server; the policy suggested from its session
//! passes `warden policy check`, lets the same run again with the same
//! decisions, and denies calls the run did not make.

use std::path::Path;

use serde_json::{Value, json};

use crate::agent::{recording, run_agent, turn};
use crate::egress::server::{Loopback, ok_with};
use crate::support::{cli, fresh_home};

/// Mode `auto`, the workspace read-write, processes, and the loopback
/// server reachable.
fn permissive(dir: &Path, port: u16) -> String {
    let path = dir.join("permissive.toml");
    std::fs::write(
        &path,
        format!(
            "name = \"permissive\"\nmode = \"auto\"\n\
             [grants.default]\nworkspace = \"read-write\"\nnetwork = []\n\
             [grants.default.process]\nenabled = true\n\
             [grants.plugin.web]\nnetwork = [{{ url = \"http://127.0.0.1:{port}\", allow_private = [\"127.0.0.0/8\"] }}]\n"
        ),
    )
    .unwrap();
    path.display().to_string()
}

/// The calls of session `id` in the order the model made them: tool,
/// verdict and outcome. (Call ids differ between runs; their last part is
/// the call's position.)
fn decisions(home: &Path, id: &str) -> Vec<(String, String, String)> {
    let (code, out, err) = cli(home, &["audit", "show", "--session", id, "--json"]);
    assert_eq!(code, Some(0), "{err}");
    let mut calls: Vec<(u64, (String, String, String))> = out
        .lines()
        .map(|l| serde_json::from_str::<Value>(l).unwrap()["event"].clone())
        .filter(|e| e["type"] == "tool_call")
        .map(|e| {
            let call_id = e["call_id"].as_str().unwrap();
            let position = call_id.rsplit('_').next().unwrap().parse().unwrap();
            (
                position,
                (
                    e["tool"].as_str().unwrap().to_string(),
                    e["decision"]["verdict"]
                        .as_str()
                        .unwrap_or("none")
                        .to_string(),
                    e["outcome"].as_str().unwrap().to_string(),
                ),
            )
        })
        .collect();
    calls.sort();
    calls.into_iter().map(|(_, c)| c).collect()
}

/// `warden tool call TOOL` under `policy`: the outcome's type.
fn call_outcome(home: &Path, ws: &Path, policy: &Path, tool: &str, input: Value) -> String {
    let input = input.to_string();
    let (_, out, err) = cli(
        home,
        &[
            "tool",
            "call",
            tool,
            "--json",
            "--non-interactive",
            "--policy",
            policy.to_str().unwrap(),
            "-w",
            ws.to_str().unwrap(),
            "--input",
            &input,
        ],
    );
    let v: Value = serde_json::from_str(out.lines().last().unwrap_or("null"))
        .unwrap_or_else(|e| panic!("{e}: {out} {err}"));
    v["outcome"]["type"]
        .as_str()
        .unwrap_or_default()
        .to_string()
}

#[test]
fn a_suggested_policy_allows_the_recorded_run_again_passes_its_tests_and_denies_what_the_run_did_not_do()
 {
    let server = Loopback::http(ok_with("fetched body"));
    let port = server.port();
    let home = fresh_home();
    let ws = tempfile::tempdir().unwrap();
    for (path, text) in [
        ("src/a.rs", "fn a() {}\n"),
        ("src/b.rs", "fn b() {}\n"),
        ("docs/guide.md", "# Guide\n"),
        ("docs/notes.md", "# Notes\n"),
        ("README.md", "# Readme\n"),
    ] {
        let p = ws.path().join(path);
        std::fs::create_dir_all(p.parent().unwrap()).unwrap();
        std::fs::write(p, text).unwrap();
    }
    let url = format!("http://127.0.0.1:{port}/data");
    let calls = [
        ("c1", "read_file", json!({"path": "src/a.rs"})),
        ("c2", "read_file", json!({"path": "src/b.rs"})),
        ("c3", "read_file", json!({"path": "docs/guide.md"})),
        ("c4", "read_file", json!({"path": "docs/notes.md"})),
        (
            "c5",
            "write_file",
            json!({"path": "out/report.md", "content": "all read\n"}),
        ),
        (
            "c6",
            "shell",
            json!({"command": "ls src && cat docs/guide.md"}),
        ),
        ("c7", "http_fetch", json!({"url": url})),
        (
            "c8",
            "write_file",
            json!({"path": ".env", "content": "TOKEN=x\n"}),
        ),
    ];
    let args: Vec<(String, String, String)> = calls
        .iter()
        .map(|(id, tool, input)| (id.to_string(), tool.to_string(), input.to_string()))
        .collect();
    let borrowed: Vec<(&str, &str, &str)> = args
        .iter()
        .map(|(a, b, c)| (a.as_str(), b.as_str(), c.as_str()))
        .collect();
    let replay = recording(
        home.path(),
        "run.jsonl",
        &[turn("working", &borrowed), turn("done", &[])],
    );
    let replay = replay.to_str().unwrap();
    let workspace = ws.path().to_str().unwrap();

    let policy = permissive(home.path(), port);
    let first = run_agent(
        home.path(),
        &[
            "--replay", replay, "-w", workspace, "--policy", &policy, "go",
        ],
    );
    assert_eq!(first.code, Some(0), "{}", first.stderr);
    let recorded = decisions(home.path(), &first.session_id());
    let outcomes: Vec<&str> = recorded.iter().map(|(_, _, o)| o.as_str()).collect();
    assert_eq!(
        outcomes,
        [
            "success", "success", "success", "success", "success", "success", "success", "denied"
        ],
        "{recorded:?}"
    );
    std::fs::remove_file(ws.path().join("out/report.md")).unwrap();

    let learned = home.path().join("policies/learned.toml");
    let (code, out, err) = cli(
        home.path(),
        &[
            "policy",
            "suggest",
            "--from",
            &first.session_id(),
            "--name",
            "learned",
            "--output",
            learned.to_str().unwrap(),
        ],
    );
    assert_eq!(code, Some(0), "{out}{err}");
    let text = std::fs::read_to_string(&learned).unwrap();
    assert!(text.contains("mode = \"allow-list\""), "{text}");
    assert!(text.contains("\"src/*.rs\""), "{text}");
    assert!(text.contains("\"docs/*.md\""), "{text}");
    assert!(text.contains("commands = [\"cat\", \"ls\"]"), "{text}");
    assert!(text.contains(&format!("http://127.0.0.1:{port}")), "{text}");
    assert!(
        text.contains("\".env\""),
        "the denied call is listed: {text}"
    );

    let (code, out, _) = cli(
        home.path(),
        &["policy", "suggest", "--from", &first.session_id(), "--json"],
    );
    assert_eq!(code, Some(0), "{out}");
    let docs = crate::json_schemas::assert_valid("policy-suggest.schema.json", &out);
    assert_eq!(docs[0]["summary"]["not_allowed"][0]["tool"], "write_file");
    assert_eq!(docs[0]["summary"]["allow_tests"], 7, "{out}");

    let (code, out, err) = cli(home.path(), &["policy", "check", learned.to_str().unwrap()]);
    assert_eq!(code, Some(0), "{out}{err}\n{text}");
    assert!(!out.contains("FAIL"), "{out}");

    let (code, _, err) = cli(
        home.path(),
        &[
            "policy",
            "suggest",
            "--last",
            "--output",
            learned.to_str().unwrap(),
        ],
    );
    assert_eq!(code, Some(2), "an existing file needs --force: {err}");
    assert!(err.contains("--force"), "{err}");
    assert_eq!(std::fs::read_to_string(&learned).unwrap(), text);

    let again = run_agent(
        home.path(),
        &[
            "--replay", replay, "-w", workspace, "--policy", "learned", "go",
        ],
    );
    assert_eq!(again.code, Some(0), "{}", again.stderr);
    assert_eq!(
        decisions(home.path(), &again.session_id()),
        recorded,
        "the same calls, decided the same way\n{text}"
    );

    let (code, out, err) = cli(
        home.path(),
        &["policy", "suggest", "--audit", "--since", "1h", "--json"],
    );
    assert_eq!(code, Some(0), "{out}{err}");
    let docs = crate::json_schemas::assert_valid("policy-suggest.schema.json", &out);
    assert_eq!(docs[0]["summary"]["calls"], 16, "both runs' calls: {out}");
    assert!(
        docs[0]["summary"]["source"]
            .as_str()
            .unwrap()
            .starts_with("the audit log since"),
        "{out}"
    );

    for (tool, input) in [
        ("read_file", json!({"path": "README.md"})),
        ("read_file", json!({"path": "src/../../outside.txt"})),
        ("write_file", json!({"path": "src/c.rs", "content": "x"})),
        ("grep", json!({"pattern": "fn"})),
        ("shell", json!({"command": "rm -rf src"})),
        (
            "http_fetch",
            json!({"url": format!("http://127.0.0.1:{}/data", port + 1)}),
        ),
    ] {
        assert_eq!(
            call_outcome(home.path(), ws.path(), &learned, tool, input.clone()),
            "denied",
            "{tool} {input}\n{text}"
        );
    }
    assert!(ws.path().join("src/a.rs").exists());
    assert!(!ws.path().join("src/c.rs").exists());
}

#[test]
fn suggest_without_a_source_or_with_a_bad_since_is_a_usage_error() {
    let home = fresh_home();
    let (code, _, err) = cli(home.path(), &["policy", "suggest"]);
    assert_eq!(code, Some(2), "{err}");
    let (code, out, _) = cli(home.path(), &["policy", "suggest", "--json"]);
    assert_eq!(code, Some(2), "{out}");
    crate::json_schemas::assert_valid("policy-suggest.schema.json", &out);
    let (code, _, err) = cli(
        home.path(),
        &["policy", "suggest", "--audit", "--since", "yesterday-ish"],
    );
    assert_eq!(code, Some(2), "{err}");
    assert!(err.contains("duration"), "{err}");
}
