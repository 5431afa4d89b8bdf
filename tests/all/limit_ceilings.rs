//! Limits a policy sets are ceilings: `warden tool call` may lower them
//! with its flags, never raise them. Asking for more is a usage error
//! (exit 2) naming the ceiling, and the call does not run; asking for less
//! takes effect; limits the policy leaves unset take the flag as given.

use std::path::Path;

use serde_json::Value;

use crate::support::*;

/// Every call runs unasked, under tight limits.
const TIGHT: &str = "name = 'tight'\nmode = 'auto'\n[grants.default]\nworkspace = 'read-write'\n\
                     deadline_ms = 10000\nmemory_mib = 128\noutput_bytes = 262144\n\
                     write_bytes = 1048576\n";

/// A data directory sharing the compile cache, with the policy `tight` and
/// the hostile plugin installed (its `spin` shows the deadline a call got).
fn home() -> tempfile::TempDir {
    catalog();
    let home = tempfile::tempdir().unwrap();
    std::os::unix::fs::symlink(shared_home().join("cache"), home.path().join("cache")).unwrap();
    std::fs::create_dir(home.path().join("policies")).unwrap();
    std::fs::write(home.path().join("policies/tight.toml"), TIGHT).unwrap();
    let (code, _, err) = run(
        home.path(),
        &["plugin", "install", warden::test_plugins::HOSTILE],
    );
    assert_eq!(code, Some(0), "{err}");
    home
}

fn run(home: &Path, args: &[&str]) -> (Option<i32>, String, String) {
    let o = warden(home).args(args).output().unwrap();
    (
        o.status.code(),
        String::from_utf8(o.stdout).unwrap(),
        String::from_utf8(o.stderr).unwrap(),
    )
}

/// `tool call TOOL --policy tight --json` with `flags`, in a fresh workspace.
fn tight_call(home: &Path, tool: &str, flags: &[&str]) -> (Option<i32>, Value) {
    let sb = Sandbox::new();
    sb.write("a.txt", "A\n");
    let ws = sb.ws().display().to_string();
    let mut args = vec![
        "tool", "call", tool, "--policy", "tight", "--json", "-w", &ws,
    ];
    args.extend_from_slice(flags);
    let input = if tool == "read_file" {
        r#"{"path":"a.txt"}"#
    } else {
        "{}"
    };
    args.extend_from_slice(&["--input", input]);
    let (code, out, err) = run(home, &args);
    let doc = serde_json::from_str(&out).unwrap_or_else(|e| panic!("{e}: {out}{err}"));
    (code, doc)
}

#[test]
fn asking_for_more_than_the_policy_allows_is_a_usage_error() {
    let home = home();
    for (flags, key, requested, ceiling) in [
        (
            &["--limit", "deadline-ms=20000"][..],
            "deadline-ms",
            20000,
            10000,
        ),
        (&["--timeout-ms", "10001"][..], "deadline-ms", 10001, 10000),
        (&["--memory-mib", "256"][..], "memory-mib", 256, 128),
        (
            &["--limit", "output-bytes=262145"][..],
            "output-bytes",
            262145,
            262144,
        ),
        (
            &["--max-output-bytes", "1048576"][..],
            "output-bytes",
            1048576,
            262144,
        ),
        (
            &["--limit", "write-bytes=1048577"][..],
            "write-bytes",
            1048577,
            1048576,
        ),
    ] {
        let (code, doc) = tight_call(home.path(), "read_file", flags);
        assert_eq!(code, Some(2), "{flags:?}: {doc}");
        assert_eq!(doc["stage"], "rejected", "{doc}");
        assert_eq!(doc["outcome"]["type"], "error", "{doc}");
        assert_eq!(
            doc["outcome"]["message"],
            format!(
                "limit {key}={requested} is above the ceiling of {ceiling} that the policy \
                 sets; ask for at most {ceiling}, or use a policy that allows more \
                 (policy tight, tool read_file)"
            ),
            "{flags:?}"
        );
        assert!(
            doc["report"].is_null() && doc["duration_ms"].is_null(),
            "it ran: {doc}"
        );
    }
}

#[test]
fn a_lower_limit_takes_effect_and_the_ceiling_itself_is_allowed() {
    let home = home();
    let (code, doc) = tight_call(home.path(), "spin", &["--limit", "deadline-ms=200"]);
    assert_eq!(code, Some(1), "{doc}");
    assert_eq!(doc["outcome"]["kind"], "timeout", "{doc}");
    assert!(
        doc["outcome"]["message"]
            .as_str()
            .unwrap()
            .contains("200ms deadline"),
        "{doc}"
    );
    assert!(doc["duration_ms"].as_f64().unwrap() < 2_000.0, "{doc}");
    let (code, doc) = tight_call(
        home.path(),
        "read_file",
        &["--timeout-ms", "10000", "--memory-mib", "128"],
    );
    assert_eq!(code, Some(0), "{doc}");
}

#[test]
fn limits_the_policy_does_not_set_take_the_flag() {
    let home = home();
    let sb = Sandbox::new();
    sb.write("a.txt", "A\n");
    let ws = sb.ws().display().to_string();
    // workspace-write sets no deadline: a longer one than the default is fine.
    let (code, _, err) = run(
        home.path(),
        &[
            "tool",
            "call",
            "read_file",
            "-w",
            &ws,
            "--policy",
            "workspace-write",
            "--limit",
            "deadline-ms=60000",
            "--input",
            r#"{"path":"a.txt"}"#,
        ],
    );
    assert_eq!(code, Some(0), "{err}");
}
