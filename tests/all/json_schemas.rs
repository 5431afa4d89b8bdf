//! Every `--json` output has a published JSON Schema in `docs/json-schemas/`;
//! real outputs of the binary are validated against them, errors included.

use std::path::{Path, PathBuf};

use serde_json::Value;

use crate::support::*;

fn schema_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../docs/json-schemas")
}

fn schema(name: &str) -> Value {
    let text = std::fs::read_to_string(schema_dir().join(name)).unwrap();
    serde_json::from_str(&text).unwrap()
}

/// Validate each JSON line of `out` against schema `name`.
#[track_caller]
pub(crate) fn assert_valid(name: &str, out: &str) -> Vec<Value> {
    let validator = jsonschema::validator_for(&schema(name)).unwrap();
    let docs: Vec<Value> = out
        .lines()
        .map(|l| serde_json::from_str(l).unwrap_or_else(|e| panic!("{e}: {l}")))
        .collect();
    assert!(!docs.is_empty(), "{name}: no output");
    for doc in &docs {
        let errors: Vec<String> = validator.iter_errors(doc).map(|e| e.to_string()).collect();
        assert!(errors.is_empty(), "{name}: {errors:?}\n{doc}");
    }
    docs
}

#[test]
fn the_schemas_are_valid_and_share_their_definitions() {
    let mut defs: Vec<(String, String, Value)> = Vec::new();
    for entry in std::fs::read_dir(schema_dir()).unwrap() {
        let path = entry.unwrap().path();
        let name = path.file_name().unwrap().to_string_lossy().into_owned();
        let doc = schema(&name);
        jsonschema::validator_for(&doc).unwrap_or_else(|e| panic!("{name}: {e}"));
        for (def, body) in doc["$defs"].as_object().unwrap() {
            defs.push((name.clone(), def.clone(), body.clone()));
        }
    }
    for (file, def, body) in &defs {
        for (other, def2, body2) in &defs {
            if def == def2 {
                assert_eq!(
                    body, body2,
                    "$defs.{def} differs between {file} and {other}"
                );
            }
        }
    }
}

#[test]
fn tool_outputs_match_their_schemas() {
    catalog();
    let home = shared_home();
    let sb = Sandbox::new();
    sb.write("a.txt", "alpha\n");
    let ws = sb.ws().display().to_string();
    let call = |input: &str| {
        cli(
            home,
            &[
                "tool",
                "call",
                "read_file",
                "--json",
                "-w",
                &ws,
                "--input",
                input,
            ],
        )
        .1
    };
    let docs = assert_valid("tool-call.schema.json", &call(r#"{"path":"a.txt"}"#));
    // The approval's shape is the same as in `run --json` (below).
    assert_eq!(docs[0]["approval"], serde_json::json!({"type": "policy"}));
    assert_valid("tool-call.schema.json", &call(r#"{"path":"missing"}"#));
    let (code, out, _) = cli(
        home,
        &[
            "tool",
            "call",
            "read_file",
            "--json",
            "-w",
            &ws,
            "--input",
            "@/no/such/file",
        ],
    );
    assert_eq!(code, Some(2));
    let docs = assert_valid("error.schema.json", &out);
    assert_eq!(docs[0]["kind"], "usage");
    assert_valid("tool-call.schema.json", &out);

    assert_valid(
        "tool-list.schema.json",
        &cli(home, &["tool", "list", "--json"]).1,
    );
    assert_valid(
        "tool-show.schema.json",
        &cli(home, &["tool", "show", "grep", "--json"]).1,
    );
    let (code, out, _) = cli(home, &["tool", "show", "nope", "--json"]);
    assert_eq!(code, Some(2));
    assert_valid("tool-show.schema.json", &out);
}

#[test]
fn policy_outputs_match_their_schemas_and_use_milliseconds() {
    catalog();
    let home = shared_home();
    let (_, out, _) = cli(home, &["policy", "explain", "read_file", "--json"]);
    let docs = assert_valid("policy-explain.schema.json", &out);
    assert_eq!(docs[0]["grant"]["limits"]["deadline_ms"], 30_000);
    let input = r#"{"path":".git/config","content":"x"}"#;
    let (_, out, _) = cli(
        home,
        &["policy", "explain", "write_file", "--json", "-i", input],
    );
    let docs = assert_valid("policy-explain.schema.json", &out);
    let rule = &docs[0]["decision"]["by"]["rule"];
    assert_eq!(rule["name"], "protected-paths");
    assert!(rule.get("index").is_none(), "no sentinel index: {rule}");

    let dir = tempfile::tempdir().unwrap();
    let good = dir.path().join("good.toml");
    std::fs::write(
        &good,
        "name = \"good\"\ndescription = \"d\"\nmode = \"auto\"\n\
         [[rule]]\nname = \"w\"\ntools = [\"write_file\"]\ndecision = \"ask\"\n",
    )
    .unwrap();
    let (code, out, _) = cli(home, &["policy", "check", good.to_str().unwrap(), "--json"]);
    assert_eq!(code, Some(0), "{out}");
    assert_valid("policy-check.schema.json", &out);
    let typo = dir.path().join("typo.toml");
    std::fs::write(
        &typo,
        "name = \"typo\"\ndescription = \"d\"\nmode = \"auto\"\n\
         [[rule]]\nname = \"w\"\ntools = [\"write_fil\"]\ndecision = \"deny\"\n",
    )
    .unwrap();
    let (code, out, _) = cli(home, &["policy", "check", typo.to_str().unwrap(), "--json"]);
    assert_eq!(code, Some(2), "{out}");
    let docs = assert_valid("policy-check.schema.json", &out);
    assert_eq!(docs[0]["lints"][0]["suggestion"], "write_file");
    let (code, out, _) = cli(home, &["policy", "check", "/no/such.toml", "--json"]);
    assert_eq!(code, Some(2));
    assert_valid("error.schema.json", &out);
}

#[test]
fn run_events_and_sessions_match_their_schemas() {
    catalog();
    let home = fresh_home();
    let demo = Path::new(env!("CARGO_MANIFEST_DIR")).join("examples/demo");
    let replay = demo.join("replay.jsonl").display().to_string();
    let ws = demo.join("workspace").display().to_string();
    let args = [
        "run",
        "--json",
        "--replay",
        &replay,
        "-w",
        &ws,
        "--policy",
        "read-only",
        "Where?",
    ];
    let (code, out, err) = cli(home.path(), &args);
    assert_eq!(code, Some(0), "{err}");
    let events = assert_valid("run-event.schema.json", &out);
    let decision = events
        .iter()
        .find(|e| e["type"] == "tool_decision")
        .unwrap();
    assert_eq!(
        decision["by"],
        serde_json::json!({"mode": "read-only"}),
        "{decision}"
    );
    assert_eq!(
        decision["approval"],
        serde_json::json!({"type": "policy"}),
        "{decision}"
    );
    assert_valid(
        "sessions-list.schema.json",
        &cli(home.path(), &["sessions", "list", "--json"]).1,
    );

    let (code, out, _) = cli(
        home.path(),
        &["run", "--json", "--replay", "/no/such.jsonl", "task"],
    );
    assert_eq!(code, Some(2));
    assert_valid("run-event.schema.json", &out);
    assert_valid("error.schema.json", &out);
}

#[test]
fn session_and_audit_outputs_match_their_schemas() {
    catalog();
    let home = fresh_home();
    let demo = Path::new(env!("CARGO_MANIFEST_DIR")).join("examples/demo");
    let replay = demo.join("replay.jsonl").display().to_string();
    let ws = demo.join("workspace").display().to_string();
    let args = [
        "run",
        "--json",
        "--replay",
        &replay,
        "-w",
        &ws,
        "--policy",
        "read-only",
        "Where?",
    ];
    let (code, out, err) = cli(home.path(), &args);
    assert_eq!(code, Some(0), "{err}");
    let id = out
        .lines()
        .find_map(|l| {
            let v: Value = serde_json::from_str(l).ok()?;
            (v["type"] == "session_started").then(|| v["session_id"].as_str().map(String::from))?
        })
        .unwrap();

    let docs = assert_valid(
        "sessions-show.schema.json",
        &cli(home.path(), &["sessions", "show", &id, "--json"]).1,
    );
    assert_eq!(docs[0]["meta"]["id"], id.as_str());
    let (code, out, _) = cli(home.path(), &["sessions", "show", "nope", "--json"]);
    assert_ne!(code, Some(0));
    assert_valid("sessions-show.schema.json", &out);
    assert_valid("error.schema.json", &out);

    let docs = assert_valid(
        "audit-show.schema.json",
        &cli(home.path(), &["audit", "show", "--json"]).1,
    );
    assert!(
        docs.iter().any(|d| d["event"]["type"] == "tool_call"),
        "{docs:?}"
    );
    let docs = assert_valid(
        "audit-verify.schema.json",
        &cli(home.path(), &["audit", "verify", "--json"]).1,
    );
    assert!(docs[0]["verification"]["broken"].is_null(), "{docs:?}");
    let docs = assert_valid(
        "audit-caps.schema.json",
        &cli(home.path(), &["audit", "caps", "--json"]).1,
    );
    assert!(docs[0]["tools"]["read_file"]["calls"].is_u64(), "{docs:?}");
}

#[test]
fn plugin_and_policy_outputs_match_their_schemas() {
    catalog();
    let home = fresh_home();
    let docs = assert_valid(
        "plugin-list.schema.json",
        &cli(home.path(), &["plugin", "list", "--json"]).1,
    );
    assert!(docs[0]["plugins"].as_array().unwrap().len() >= 4);
    let docs = assert_valid(
        "plugin-inspect.schema.json",
        &cli(home.path(), &["plugin", "inspect", "fs", "--json"]).1,
    );
    assert_eq!(docs[0]["manifest"]["name"], "fs");
    let (code, out, _) = cli(home.path(), &["plugin", "inspect", "nope", "--json"]);
    assert_eq!(code, Some(5));
    assert_valid("plugin-inspect.schema.json", &out);

    let hostile = warden::test_plugins::HOSTILE;
    let docs = assert_valid(
        "plugin-install.schema.json",
        &cli(home.path(), &["plugin", "install", hostile, "--json"]).1,
    );
    assert_eq!(docs[0]["installed"]["meta"]["manifest"]["name"], "hostile");
    // Refused under --strict (it imports more than it declares): the
    // error shape, with what was asked for.
    let (code, out, _) = cli(
        home.path(),
        &["plugin", "install", hostile, "--strict", "--json"],
    );
    let docs = assert_valid("plugin-install.schema.json", &out);
    if code == Some(3) {
        assert_eq!(docs[0]["type"], "error", "{out}");
        assert_valid("error.schema.json", &out);
    }
    let (code, out, _) = cli(
        home.path(),
        &["plugin", "install", "/no/such.wasm", "--json"],
    );
    assert_eq!(code, Some(5));
    assert_valid("plugin-install.schema.json", &out);
    assert_valid(
        "plugin-install.schema.json",
        &cli(home.path(), &["plugin", "approve", "hostile", "--json"]).1,
    );
    let docs = assert_valid(
        "plugin-remove.schema.json",
        &cli(home.path(), &["plugin", "remove", "hostile", "--json"]).1,
    );
    assert_eq!(docs[0]["removed"], "hostile");
    let (_, out, _) = cli(home.path(), &["plugin", "remove", "hostile", "--json"]);
    assert_valid("plugin-remove.schema.json", &out);
    assert_valid("error.schema.json", &out);

    let docs = assert_valid(
        "policy-list.schema.json",
        &cli(home.path(), &["policy", "list", "--json"]).1,
    );
    assert!(
        docs[0]["policies"]
            .as_array()
            .unwrap()
            .iter()
            .any(|p| p["name"] == "read-only"),
        "{docs:?}"
    );
}

#[test]
fn plugin_build_outputs_match_their_schema() {
    let doc = &crate::plugin_authoring::built().1;
    let docs = assert_valid("plugin-build.schema.json", &doc.to_string());
    assert_eq!(docs[0]["meta"]["manifest"]["name"], "wc");
    let home = fresh_home();
    let empty = tempfile::tempdir().unwrap();
    let (code, out, _) =
        crate::plugin_authoring::author(home.path(), empty.path(), &["plugin", "build", "--json"]);
    assert_eq!(code, Some(2));
    assert_valid("plugin-build.schema.json", &out);
    assert_valid("error.schema.json", &out);
}

#[test]
fn tool_call_progress_events_match_the_schema() {
    let sb = Sandbox::new();
    let tmp = tempfile::tempdir().unwrap();
    let policy = crate::agent::auto_policy(tmp.path());
    let ws = sb.ws().display().to_string();
    let (code, out, err) = cli(
        crate::agent::hostile_home(),
        &[
            "tool",
            "call",
            "progress",
            "--json",
            "--policy",
            policy.to_str().unwrap(),
            "-w",
            &ws,
            "--input",
            r#"{"count":3,"interval_ms":250}"#,
        ],
    );
    assert_eq!(code, Some(0), "{err}");
    let docs = assert_valid("tool-call.schema.json", &out);
    assert!(docs.len() >= 3, "progress events, then the result: {out}");
    assert_eq!(docs[0]["type"], "tool_progress", "{out}");
    let fraction = docs[0]["fraction"].as_f64().unwrap();
    assert!((0.33..0.34).contains(&fraction), "{out}");
}
