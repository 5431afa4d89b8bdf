//! A plugin in a second language: `plugins/examples/python-wordcount`, built
//! from Python with componentize-py by its own `build.sh`, installed with
//! `warden plugin install` on a fresh data directory and called under
//! policies like any Rust plugin. It shows the WIT contract is
//! language-neutral, and that the sandbox, not the plugin's code, keeps its
//! reads inside the workspace.
//!
//! The component is built once per test run (the script reuses a build
//! whose inputs are unchanged) and compiled once (the shared compile
//! cache). A machine where the toolchain cannot be installed fails these
//! tests, saying why; `WARDEN_SKIP_PYTHON_PLUGIN=1` skips them with a
//! warning instead.

use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::OnceLock;

use serde_json::{Value, json};

use crate::json_schemas::assert_valid;
use crate::support::*;

/// The built component, or `None` when skipping was asked for.
fn component() -> Option<&'static Path> {
    if std::env::var_os("WARDEN_SKIP_PYTHON_PLUGIN").is_some_and(|v| v == "1") {
        eprintln!(
            "\n*** WARNING: WARDEN_SKIP_PYTHON_PLUGIN=1: the Python plugin was NOT built or \
             tested ***\n"
        );
        return None;
    }
    static BUILT: OnceLock<PathBuf> = OnceLock::new();
    Some(BUILT.get_or_init(build))
}

/// Run the example's build script into `target/py-plugin`.
fn build() -> PathBuf {
    let repo = Path::new(env!("CARGO_MANIFEST_DIR")).parent().unwrap();
    let script = repo.join("plugins/examples/python-wordcount/build.sh");
    let out = Path::new(env!("CARGO_TARGET_TMPDIR"))
        .parent()
        .unwrap()
        .join("py-plugin");
    // Installing the toolchain and building load the CPU.
    let _cpu = exclusive();
    let o = Command::new(&script)
        .arg(&out)
        .output()
        .unwrap_or_else(|e| panic!("could not run {}: {e}", script.display()));
    let stderr = String::from_utf8_lossy(&o.stderr);
    assert!(
        o.status.success(),
        "\n\n*** the Python plugin could not be built: {} failed ({}). It needs python3 \
         with venv and PyPI (componentize-py); set WARDEN_SKIP_PYTHON_PLUGIN=1 to skip \
         these tests on a machine without them. ***\n{stderr}",
        script.display(),
        o.status
    );
    let stdout = String::from_utf8_lossy(&o.stdout);
    PathBuf::from(stdout.lines().last().unwrap_or_default())
}

/// A data directory with the Python plugin installed, and what
/// `warden plugin install --json` printed.
fn installed() -> Option<&'static (PathBuf, Value)> {
    let wasm = component()?;
    static HOME: OnceLock<(PathBuf, Value)> = OnceLock::new();
    Some(HOME.get_or_init(|| {
        catalog();
        let home = fresh_home().keep();
        let (code, out, err) = cli(
            &home,
            &["plugin", "install", wasm.to_str().unwrap(), "--json"],
        );
        assert_eq!(code, Some(0), "{out}{err}");
        let report = assert_valid("plugin-install.schema.json", &out).remove(0);
        (home, report)
    }))
}

/// `warden tool call word_count` on `path` in `ws` under `policy`, as JSON.
fn word_count(home: &Path, ws: &Path, policy: &str, path: &str) -> (Option<i32>, Value) {
    let input = json!({ "path": path }).to_string();
    let (code, out, err) = cli(
        home,
        &[
            "tool",
            "call",
            "word_count",
            "--policy",
            policy,
            "-w",
            ws.to_str().unwrap(),
            "--non-interactive",
            "--json",
            "--input",
            &input,
        ],
    );
    let doc = assert_valid("tool-call.schema.json", &out)
        .pop()
        .unwrap_or_else(|| panic!("no output: {err}"));
    (code, doc)
}

#[test]
fn the_python_plugin_installs_and_counts_a_workspace_file_under_a_policy() {
    let Some((home, report)) = installed() else {
        return;
    };
    let meta = &report["installed"]["meta"];
    assert_eq!(meta["manifest"]["name"], "python-wordcount", "{report}");
    assert_eq!(meta["wit_version"], "0.2.0", "{report}");
    // Least privilege: it reads the workspace and declares nothing else.
    assert_eq!(
        report["capabilities"]["declared"],
        json!({
            "filesystem": "read",
            "interaction": false,
            "memory": false,
            "network": [],
            "processes": false
        }),
        "{report}"
    );
    assert_eq!(meta["tools"][0]["name"], "word_count", "{report}");
    assert_eq!(meta["tools"][0]["annotations"]["read_only"], true);
    let sb = Sandbox::new();
    let text = "one two  three\nfour\tfive\n\nsix é\n";
    sb.write("notes/a.txt", text);

    let (code, doc) = word_count(home, &sb.ws(), "read-only", "notes/a.txt");
    assert_eq!(code, Some(0), "{doc}");
    assert_eq!(doc["plugin"], "python-wordcount", "{doc}");
    assert_eq!(doc["grant"]["filesystem"]["access"], "read-only", "{doc}");
    let outcome = &doc["outcome"];
    assert_eq!(
        outcome["text"], "4 lines, 7 words, 33 bytes: notes/a.txt",
        "{doc}"
    );
    assert_eq!(
        outcome["structured"],
        json!({"path": "notes/a.txt", "lines": 4, "words": 7, "bytes": 33}),
        "{doc}"
    );
    assert_eq!(
        doc["exercised"]["files"],
        json!([{"op": "read", "path": "notes/a.txt"}]),
        "{doc}"
    );

    // A file that is not there is the plugin's typed error, not a trap.
    let (code, doc) = word_count(home, &sb.ws(), "read-only", "missing.txt");
    assert_eq!(code, Some(1), "{doc}");
    assert_eq!(doc["outcome"]["kind"], "not_found", "{doc}");
}

#[test]
fn a_path_outside_the_workspace_is_refused_by_the_sandbox_and_nothing_is_read() {
    let Some((home, _)) = installed() else {
        return;
    };
    let sb = Sandbox::new();
    sb.write("notes/inside.txt", "in\n");
    let canary = sb.canary();
    // `..` leaves the preopen: the sandbox refuses it. An absolute path
    // outside it names nothing the sandbox shows: not found.
    for (path, expected) in [
        ("../outside/canary.txt", "permission_denied"),
        ("notes/../../outside/canary.txt", "permission_denied"),
        (canary.to_str().unwrap(), "not_found"),
        ("/etc/passwd", "not_found"),
    ] {
        let (code, doc) = word_count(home, &sb.ws(), "read-only", path);
        assert_eq!(code, Some(1), "{path}: {doc}");
        let outcome = &doc["outcome"];
        assert_eq!(outcome["type"], "error", "{path}: {doc}");
        assert_eq!(outcome["kind"], expected, "{path}: {doc}");
        assert!(outcome["structured"].is_null(), "{path}: {doc}");
        assert_eq!(
            doc["exercised"]["files"],
            json!([]),
            "{path}: nothing read: {doc}"
        );
    }
    sb.assert_canaries_intact();
}

#[test]
fn a_policy_that_denies_the_python_tool_stops_it_before_it_runs() {
    let Some((home, _)) = installed() else {
        return;
    };
    let sb = Sandbox::new();
    sb.write("a.txt", "a b\n");
    let dir = tempfile::tempdir().unwrap();
    let policy = dir.path().join("no-counting.toml");
    std::fs::write(
        &policy,
        r#"name = "no-counting"
mode = "auto"

[[rule]]
name = "no-word-count"
decision = "deny"
tools = ["word_count"]
reason = "counting is not allowed here"
"#,
    )
    .unwrap();

    let (code, doc) = word_count(home, &sb.ws(), policy.to_str().unwrap(), "a.txt");
    assert_eq!(code, Some(3), "{doc}");
    assert_eq!(doc["stage"], "rejected", "{doc}");
    assert_eq!(doc["outcome"]["type"], "denied", "{doc}");
    assert!(
        doc["outcome"]["reason"]
            .as_str()
            .unwrap()
            .contains("counting is not allowed here"),
        "{doc}"
    );
    // The same call under a policy that allows it runs.
    let (code, doc) = word_count(home, &sb.ws(), "read-only", "a.txt");
    assert_eq!(code, Some(0), "{doc}");
}
