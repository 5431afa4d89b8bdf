//! `warden tool call --plugin FILE.wasm NAME`: a component run without
//! installing it goes through the same checks, policy and audit as an
//! installed one, is looked up alone, and leaves nothing installed.

use std::path::{Path, PathBuf};

use serde_json::Value;
use warden::base::sha256_hex;

use crate::json_schemas::assert_valid;
use crate::plugin_refusals::{hollow_component, with_manifest};
use crate::support::*;

/// What installing writes: the plugin list, the plugins directory, the lockfile.
fn installed_state(home: &Path) -> (String, Vec<String>, Option<Vec<u8>>) {
    let (code, out, err) = cli(home, &["plugin", "list", "--json"]);
    assert_eq!(code, Some(0), "{err}");
    let mut dirs: Vec<String> = std::fs::read_dir(home.join("plugins"))
        .map(|d| {
            d.map(|e| e.unwrap().file_name().into_string().unwrap())
                .collect()
        })
        .unwrap_or_default();
    dirs.sort();
    (out, dirs, std::fs::read(home.join("plugins.lock")).ok())
}

/// `bytes` written as `name` in `dir`.
fn file(dir: &Path, name: &str, bytes: &[u8]) -> PathBuf {
    let p = dir.join(name);
    std::fs::write(&p, bytes).unwrap();
    p
}

/// `warden tool call --plugin FILE TOOL --json` in a fresh workspace.
fn call_file(
    home: &Path,
    file: &Path,
    tool: &str,
    extra: &[&str],
) -> (Option<i32>, String, String) {
    let ws = tempfile::tempdir().unwrap();
    let mut args = vec![
        "tool",
        "call",
        "--plugin",
        file.to_str().unwrap(),
        tool,
        "-w",
        ws.path().to_str().unwrap(),
        "--non-interactive",
    ];
    args.extend_from_slice(extra);
    cli(home, &args)
}

#[test]
fn an_uninstalled_component_is_called_audited_as_uninstalled_and_not_installed() {
    catalog();
    let home = fresh_home();
    // Outside the temporary directory, which the confined process may read
    // anyway: the file must be let through by name.
    let dir = tempfile::tempdir_in(env!("CARGO_TARGET_TMPDIR")).unwrap();
    let echo = file(
        dir.path(),
        "echo.wasm",
        &std::fs::read(warden::test_plugins::ECHO).unwrap(),
    );
    let sha = sha256_hex(&std::fs::read(&echo).unwrap());
    let before = installed_state(home.path());

    let (code, out, err) = call_file(
        home.path(),
        &echo,
        "echo",
        &["--input", r#"{"text":"hi","times":2}"#, "--json"],
    );
    assert_eq!(code, Some(0), "{out}{err}");
    let doc = &assert_valid("tool-call.schema.json", &out)[0];
    assert_eq!(doc["outcome"]["text"], "hihi", "{doc}");
    assert_eq!(doc["plugin"], "echo");
    assert_eq!(doc["origin"]["type"], "uninstalled");
    assert_eq!(doc["origin"]["path"], echo.to_str().unwrap());
    assert_eq!(doc["origin"]["sha256"], sha.as_str());

    assert_eq!(installed_state(home.path()), before);
    assert!(!home.path().join("plugins").exists());
    assert!(!home.path().join("plugins.lock").exists());

    let (calls, shown) = audited_calls(home.path(), "echo");
    assert_eq!(calls.len(), 1, "{shown}");
    assert_eq!(calls[0]["plugin"], "echo");
    assert_eq!(calls[0]["origin"]["type"], "uninstalled", "{shown}");
    assert_eq!(calls[0]["origin"]["path"], echo.to_str().unwrap());
    assert_eq!(calls[0]["origin"]["sha256"], sha.as_str());
    assert_valid(
        "audit-show.schema.json",
        &cli(home.path(), &["audit", "show", "--json"]).1,
    );
    let (_, human, _) = cli(home.path(), &["audit", "show"]);
    let expected = format!(
        "call echo from uninstalled {} sha256 {} ",
        echo.display(),
        &sha[..12]
    );
    assert!(human.contains(&expected), "{human}");
}

#[test]
fn the_component_is_looked_up_alone_and_lists_its_tools_when_it_lacks_one() {
    catalog();
    let home = fresh_home();
    let dir = tempfile::tempdir().unwrap();
    let echo_wasm = std::fs::read(warden::test_plugins::ECHO).unwrap();
    let (code, _, err) = cli(
        home.path(),
        &["plugin", "install", warden::test_plugins::ECHO],
    );
    assert_eq!(code, Some(0), "{err}");
    // The same tool under another plugin name: the file's, not the catalog's, runs.
    let twin = with_manifest(&echo_wasm, "name = \"echo-dev\"\nversion = \"0.2.0\"");
    let twin = file(dir.path(), "twin.wasm", &twin);
    let before = installed_state(home.path());

    let input = ["--input", r#"{"text":"x"}"#, "--json"];
    let (code, out, err) = call_file(home.path(), &twin, "echo", &input);
    assert_eq!(code, Some(0), "{out}{err}");
    let doc: Value = serde_json::from_str(&out).unwrap();
    assert_eq!(doc["plugin"], "echo-dev", "{doc}");

    // A built-in tool is not found in the component.
    let (code, out, err) = call_file(home.path(), &twin, "read_file", &[]);
    assert_eq!(code, Some(2), "{out}");
    assert_eq!(
        err,
        format!(
            "warden: read_file failed (unknown-tool): plugin echo-dev ({}) has no tool \
             `read_file`; its tools: echo\n",
            twin.display()
        )
    );
    // Other commands still see the catalog's echo, and only it.
    let ws = tempfile::tempdir().unwrap();
    let mut args = vec!["tool", "call", "echo", "-w", ws.path().to_str().unwrap()];
    args.extend_from_slice(&input);
    let (code, out, err) = cli(home.path(), &args);
    assert_eq!(code, Some(0), "{err}");
    let doc: Value = serde_json::from_str(&out).unwrap();
    assert_eq!(doc["plugin"], "echo", "{doc}");
    assert!(doc["origin"].is_null(), "{doc}");
    assert_eq!(installed_state(home.path()), before);
}

#[test]
fn the_policy_decides_and_grants_by_the_uninstalled_plugins_names() {
    catalog();
    let home = fresh_home();
    let dir = tempfile::tempdir().unwrap();
    let echo_wasm = std::fs::read(warden::test_plugins::ECHO).unwrap();
    // It declares read access to the workspace; echo declares none.
    let manifest = "name = \"echo-dev\"\nversion = \"0.2.0\"\n[capabilities]\n\
                    filesystem = \"read\"";
    let twin = file(
        dir.path(),
        "twin.wasm",
        &with_manifest(&echo_wasm, manifest),
    );
    let head = "mode = \"auto-edit\"\n";
    let deny = file(
        dir.path(),
        "deny.toml",
        format!(
            "name = \"deny\"\n{head}[[rule]]\nname = \"no-echo\"\ntools = [\"echo\"]\n\
             decision = \"deny\"\nreason = \"not today\"\n"
        )
        .as_bytes(),
    );
    let input = ["--input", r#"{"text":"x"}"#];

    let (code, out, err) = call_file(
        home.path(),
        &twin,
        "echo",
        &[&input[..], &["--policy", deny.to_str().unwrap()]].concat(),
    );
    assert_eq!(code, Some(3), "{out}{err}");
    assert_eq!(
        err,
        "warden: echo denied: denied by rule no-echo of policy deny: not today\n"
    );
    let (calls, shown) = audited_calls(home.path(), "echo");
    assert_eq!(calls.len(), 1, "{shown}");
    assert_eq!(calls[0]["outcome"], "denied");
    assert_eq!(calls[0]["plugin"], "echo-dev");
    assert_eq!(calls[0]["origin"]["path"], twin.to_str().unwrap());

    // `[grants.plugin.echo-dev]` applies to it by its manifest name.
    let cut = file(
        dir.path(),
        "cut.toml",
        format!("name = \"cut\"\n{head}[grants.plugin.echo-dev]\nworkspace = \"none\"\n")
            .as_bytes(),
    );
    let cuts = |policy: &Path| {
        let extra = [
            &input[..],
            &["--json", "--policy", policy.to_str().unwrap()],
        ]
        .concat();
        let (code, out, err) = call_file(home.path(), &twin, "echo", &extra);
        assert_eq!(code, Some(0), "{out}{err}");
        let doc: Value = serde_json::from_str(&out).unwrap();
        assert_eq!(doc["outcome"]["text"], "x", "{doc}");
        doc["grant_cuts"].clone()
    };
    let declared = "workspace-write".as_ref();
    assert_eq!(cuts(declared), serde_json::json!([]));
    let cut = cuts(&cut);
    assert_eq!(cut.as_array().map(Vec::len), Some(1), "{cut}");
    assert!(
        cut[0]["declared"]
            .as_str()
            .unwrap()
            .starts_with("filesystem"),
        "{cut}"
    );
}

#[test]
fn a_file_install_refuses_is_refused_with_the_reason_and_exit_code_of_install() {
    catalog();
    let home = fresh_home();
    let dir = tempfile::tempdir().unwrap();
    let echo_wasm = std::fs::read(warden::test_plugins::ECHO).unwrap();
    let refused = [
        file(dir.path(), "notes.wasm", b"this is not WebAssembly\n"),
        file(dir.path(), "core.wasm", b"\0asm\x01\0\0\0"),
        file(
            dir.path(),
            "hollow.wasm",
            &hollow_component("name = \"hollow\"\nversion = \"0.1.0\"\n"),
        ),
        file(
            dir.path(),
            "fs.wasm",
            &with_manifest(&echo_wasm, "name = \"fs\"\nversion = \"0.2.0\""),
        ),
        dir.path().join("missing.wasm"),
    ];
    let before = installed_state(home.path());
    for path in &refused {
        let shown = path.display().to_string();
        let (install_code, _, install_err) = cli(home.path(), &["plugin", "install", &shown]);
        let reason = install_err
            .strip_prefix(&format!("warden: cannot install {shown}: "))
            .unwrap_or_else(|| panic!("{install_err}"));
        assert_eq!(reason.lines().count(), 1, "{install_err}");

        let (code, out, err) = call_file(home.path(), path, "echo", &[]);
        assert_eq!(code, install_code, "{err}");
        assert_eq!(code, Some(5), "{err}");
        assert_eq!(out, "");
        assert_eq!(err, format!("warden: cannot load {shown}: {reason}"));

        let (code, out, _) = call_file(home.path(), path, "echo", &["--json"]);
        assert_eq!(code, Some(5));
        let doc = &assert_valid("error.schema.json", &out)[0];
        assert_eq!(doc["kind"], "failure");
        assert_eq!(
            doc["message"].as_str().unwrap(),
            format!("cannot load {shown}: {}", reason.trim_end())
        );
    }
    assert_eq!(installed_state(home.path()), before);
    let (calls, shown) = audited_calls(home.path(), "echo");
    assert!(calls.is_empty(), "{shown}");
}
