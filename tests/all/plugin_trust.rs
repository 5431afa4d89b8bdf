//! Trusting plugins: the capability bill of materials, `--strict`,
//! upgrades that grow capabilities, the lockfile, and the audit records of
//! every change — against the real binary and real components.

use std::path::Path;

use serde_json::Value;

use crate::support::*;

const ECHO: &str = warden::test_plugins::ECHO;
const ECHO_NEXT: &str = warden::test_plugins::ECHO_NEXT;
const HOSTILE: &str = warden::test_plugins::HOSTILE;

/// `warden tool call echo` with input `x`, in a fresh workspace.
fn call_echo(home: &Path) -> (Option<i32>, String, String) {
    let sb = Sandbox::new();
    let ws = sb.ws().display().to_string();
    let input = r#"{"text":"x"}"#;
    cli(home, &["tool", "call", "echo", "-w", &ws, "--input", input])
}

fn events(home: &Path) -> Vec<Value> {
    let (code, out, err) = cli(home, &["audit", "show", "--json"]);
    assert_eq!(code, Some(0), "{err}");
    out.lines()
        .map(|l| serde_json::from_str::<Value>(l).unwrap()["event"].clone())
        .collect()
}

/// `text` with the lines that change whenever a fixture is rebuilt masked.
fn stable(text: &str) -> String {
    text.lines()
        .map(|l| {
            if l.starts_with("sha256:") {
                "sha256:       [sha256]".to_string()
            } else if l.starts_with("size:") {
                "size:         [size]".to_string()
            } else {
                l.to_string()
            }
        })
        .collect::<Vec<_>>()
        .join("\n")
}

#[test]
fn inspect_shows_declared_import_derived_and_granted_side_by_side() {
    let home = fresh_home();
    let (code, out, err) = cli(
        home.path(),
        &["plugin", "inspect", HOSTILE, "--policy", "workspace-write"],
    );
    assert_eq!(code, Some(0), "{err}");
    insta::assert_snapshot!("inspect_hostile", stable(&out));

    let (code, out, _) = cli(home.path(), &["plugin", "inspect", HOSTILE, "--json"]);
    assert_eq!(code, Some(0));
    let v: Value = serde_json::from_str(&out).unwrap();
    let caps = &v["capabilities"];
    assert_eq!(caps["declared"]["filesystem"], "read-write");
    assert_eq!(caps["imports"]["sockets"], true);
    assert_eq!(caps["imports"]["http"], false);
    assert_eq!(caps["findings"][0]["code"], "raw-sockets");
    assert_eq!(caps["findings"][0]["severity"], "warning");
    let read_path = caps["granted"]
        .as_array()
        .unwrap()
        .iter()
        .find(|g| g["tool"] == "read_path")
        .unwrap();
    assert_eq!(read_path["workspace"], "read-only", "{read_path}");

    let (code, _, err) = cli(home.path(), &["plugin", "inspect", HOSTILE, "--strict"]);
    assert_eq!(code, Some(3), "{err}");
    assert!(err.contains("imports more than it declares"), "{err}");
    let (code, _, _) = cli(home.path(), &["plugin", "inspect", ECHO, "--strict"]);
    assert_eq!(code, Some(0));
}

#[test]
fn strict_install_refuses_a_component_importing_more_than_it_declares() {
    let home = fresh_home();
    let (code, out, err) = cli(home.path(), &["plugin", "install", HOSTILE, "--strict"]);
    assert_eq!(code, Some(3), "{out}{err}");
    assert!(
        err.contains("hostile 0.1.0 refused (--strict)") && err.contains("wasi:sockets"),
        "{err}"
    );
    assert!(out.contains("warning: imports wasi:sockets"), "{out}");
    let (_, out, _) = cli(home.path(), &["plugin", "list"]);
    assert!(!out.contains("hostile"), "{out}");
    assert!(events(home.path()).is_empty());
    // Without --strict it is a warning.
    let (code, out, err) = cli(home.path(), &["plugin", "install", HOSTILE]);
    assert_eq!(code, Some(0), "{err}");
    assert!(out.contains("warning: imports wasi:sockets"), "{out}");
}

#[test]
fn an_upgrade_that_grows_needs_yes_and_install_upgrade_remove_are_audited() {
    let home = fresh_home();
    let (code, out, err) = cli(home.path(), &["plugin", "install", ECHO]);
    assert_eq!(code, Some(0), "{err}");
    assert!(out.starts_with("installed echo 0.1.0\n"), "{out}");

    let (code, out, err) = cli(home.path(), &["plugin", "install", ECHO_NEXT]);
    assert_eq!(code, Some(3), "{out}{err}");
    assert!(
        err.contains("echo 0.2.0 may do more than the installed version") && err.contains("--yes"),
        "{err}"
    );
    assert!(
        out.contains("+ declared filesystem: none → read")
            && out.contains("+ declared network: - → https://api.example.com:443"),
        "{out}"
    );
    let (_, out, _) = cli(home.path(), &["plugin", "list", "--json"]);
    assert!(out.contains("\"version\":\"0.1.0\""), "still 0.1.0: {out}");

    let (code, out, err) = cli(home.path(), &["plugin", "install", ECHO_NEXT, "--yes"]);
    assert_eq!(code, Some(0), "{err}");
    assert!(out.starts_with("upgraded echo 0.1.0 → 0.2.0\n"), "{out}");
    // Going back shrinks: no question asked.
    let (code, out, err) = cli(home.path(), &["plugin", "install", ECHO]);
    assert_eq!(code, Some(0), "{err}");
    assert!(out.contains("- declared filesystem: read → none"), "{out}");
    let (code, _, err) = cli(home.path(), &["plugin", "remove", "echo"]);
    assert_eq!(code, Some(0), "{err}");

    let ev = events(home.path());
    let kinds: Vec<&str> = ev.iter().map(|e| e["type"].as_str().unwrap()).collect();
    assert_eq!(
        kinds,
        [
            "plugin_installed",
            "plugin_installed",
            "plugin_installed",
            "plugin_removed"
        ]
    );
    assert!(ev[0].get("replaced_sha256").is_none());
    assert_eq!(ev[1]["version"], "0.2.0");
    assert_eq!(ev[1]["replaced_version"], "0.1.0");
    assert_eq!(ev[1]["confirmed_by"], "--yes");
    assert_eq!(
        ev[1]["changes"][0],
        serde_json::json!({"capability": "declared filesystem", "from": "none", "to": "read", "grows": true})
    );
    assert!(ev[2].get("confirmed_by").is_none(), "{}", ev[2]);
    assert_eq!(ev[3]["name"], "echo");
    let (code, out, _) = cli(home.path(), &["audit", "show"]);
    assert_eq!(code, Some(0));
    assert!(
        out.contains("upgrade echo 0.1.0 → 0.2.0 sha256")
            && out.contains("+declared filesystem none → read")
            && out.contains("confirmed by --yes"),
        "{out}"
    );
    assert!(
        !home.path().join("plugins.lock").exists() || {
            let lock = std::fs::read_to_string(home.path().join("plugins.lock")).unwrap();
            !lock.contains("[plugins.echo]")
        }
    );
}

#[test]
fn the_lockfile_refuses_changed_bytes_until_approved_and_leaves_builtins_alone() {
    let home = fresh_home();
    let (code, _, err) = cli(home.path(), &["plugin", "install", ECHO]);
    assert_eq!(code, Some(0), "{err}");
    let lock = std::fs::read_to_string(home.path().join("plugins.lock")).unwrap();
    let sha = warden::base::sha256_hex(&std::fs::read(ECHO).unwrap());
    assert!(
        lock.contains("[plugins.echo]") && lock.contains(&sha),
        "{lock}"
    );

    // Swap the stored component for another one of the same name.
    let stored = home.path().join("plugins/echo/component.wasm");
    std::fs::copy(ECHO_NEXT, &stored).unwrap();
    let sb = Sandbox::new();
    let ws = sb.ws().display().to_string();
    let (code, _, err) = call_echo(home.path());
    assert_eq!(code, Some(5), "{err}");
    assert!(
        err.contains("changed on disk since it was approved")
            && err.contains("`warden plugin approve echo`"),
        "{err}"
    );
    let (_, out, _) = cli(home.path(), &["plugin", "list"]);
    assert!(out.contains("REFUSED"), "{out}");
    let (_, out, _) = cli(home.path(), &["tool", "list"]);
    assert!(out.contains("REFUSED"), "{out}");
    let (code, out, _) = cli(home.path(), &["plugin", "inspect", "echo"]);
    assert_eq!(code, Some(0));
    assert!(
        out.starts_with("echo 0.2.0\n") && out.contains("REFUSED:"),
        "{out}"
    );
    // Built-ins are embedded: the lockfile never concerns them.
    std::fs::write(sb.ws().join("a.txt"), "alpha").unwrap();
    let (code, out, err) = cli(
        home.path(),
        &[
            "tool",
            "call",
            "read_file",
            "-w",
            &ws,
            "--input",
            r#"{"path":"a.txt"}"#,
        ],
    );
    assert_eq!(code, Some(0), "{err}");
    assert!(out.contains("alpha"), "{out}");

    // The new bytes ask for more: approving them needs --yes here.
    let (code, _, err) = cli(home.path(), &["plugin", "approve", "echo"]);
    assert_eq!(code, Some(3), "{err}");
    let (code, out, err) = cli(home.path(), &["plugin", "approve", "echo", "--yes"]);
    assert_eq!(code, Some(0), "{err}");
    assert!(out.starts_with("approved echo 0.2.0\n"), "{out}");
    let (code, out, err) = call_echo(home.path());
    assert_eq!((code, out.as_str()), (Some(0), "x\n"), "{err}");
    let ev = events(home.path());
    let last = ev
        .iter()
        .rfind(|e| e["type"] == "plugin_installed")
        .unwrap();
    assert_eq!(last["approved_again"], true, "{last}");
    assert_eq!(last["replaced_sha256"], sha.as_str());

    // An unreadable lockfile refuses every installed plugin, not built-ins.
    std::fs::write(home.path().join("plugins.lock"), "plugins = 7\n").unwrap();
    let (code, _, err) = call_echo(home.path());
    assert_eq!(code, Some(5), "{err}");
    assert!(err.contains("cannot read the plugin lockfile"), "{err}");
    assert_eq!(err.matches("plugins.lock").count(), 1, "said once: {err}");
    let (code, out, err) = cli(home.path(), &["tool", "list"]);
    assert_eq!(code, Some(0), "{err}");
    assert_eq!(err.matches("plugins.lock").count(), 1, "said once: {err}");
    let echo = out.lines().find(|l| l.starts_with("echo ")).unwrap();
    assert!(
        echo.contains("REFUSED: the plugin lockfile cannot be read"),
        "not blamed on the component: {echo}"
    );
    let (code, _, err) = cli(
        home.path(),
        &[
            "tool",
            "call",
            "read_file",
            "-w",
            &ws,
            "--input",
            r#"{"path":"a.txt"}"#,
        ],
    );
    assert_eq!(code, Some(0), "{err}");
}

#[test]
fn an_upgrade_that_grows_is_confirmed_on_the_terminal() {
    use rexpect::process::WaitStatus;
    let home = fresh_home();
    let (code, _, err) = cli(home.path(), &["plugin", "install", ECHO]);
    assert_eq!(code, Some(0), "{err}");
    for (answer, want_code, want) in [
        ("n", 3, "you declined the new capabilities"),
        ("y", 0, "upgraded echo 0.1.0 "),
    ] {
        let mut cmd = std::process::Command::new(env!("CARGO_BIN_EXE_warden"));
        cmd.env("WARDEN_HOME", home.path())
            .env_remove("RUST_LOG")
            .args(["plugin", "install", ECHO_NEXT]);
        let mut p = rexpect::session::spawn_command(cmd, Some(30_000)).unwrap();
        let shown = p
            .exp_string("echo 0.2.0 may do more than before. Install it? [y/N] ")
            .unwrap();
        // rexpect reads bytes as Latin-1: compare the ASCII parts.
        assert!(
            shown.contains("+ declared network: - ")
                && shown.contains(" https://api.example.com:443"),
            "{shown}"
        );
        p.send_line(answer).unwrap();
        let rest = p.exp_eof().unwrap();
        let code = match p.process().wait().unwrap() {
            WaitStatus::Exited(_, code) => code,
            other => panic!("warden did not exit normally: {other:?}"),
        };
        assert_eq!(code, want_code, "{rest}");
        assert!(rest.contains(want), "{rest}");
    }
    let ev = events(home.path());
    assert_eq!(ev.len(), 2, "a declined upgrade is not installed: {ev:?}");
    assert_eq!(ev[1]["confirmed_by"], "user");
}

#[test]
fn typeahead_does_not_answer_the_install_prompt() {
    use rexpect::process::WaitStatus;
    let home = fresh_home();
    let (code, _, err) = cli(home.path(), &["plugin", "install", ECHO]);
    assert_eq!(code, Some(0), "{err}");
    let mut cmd = std::process::Command::new(env!("CARGO_BIN_EXE_warden"));
    cmd.env("WARDEN_HOME", home.path())
        .env_remove("RUST_LOG")
        .args(["plugin", "install", ECHO_NEXT]);
    let mut p = rexpect::session::spawn_command(cmd, Some(30_000)).unwrap();
    // Typed while the component loads, before the question shows.
    p.send_line("y").unwrap();
    p.exp_string("echo 0.2.0 may do more than before. Install it? [y/N] ")
        .unwrap();
    // The typeahead is gone: the prompt waits for a key, and one key
    // answers it, no Enter needed.
    p.send("n").unwrap();
    p.flush().unwrap();
    let rest = p.exp_eof().unwrap();
    let code = match p.process().wait().unwrap() {
        WaitStatus::Exited(_, code) => code,
        other => panic!("warden did not exit normally: {other:?}"),
    };
    assert_eq!(code, 3, "{rest}");
    assert!(rest.contains("you declined the new capabilities"), "{rest}");
    assert_eq!(events(home.path()).len(), 1, "nothing was installed");
}

#[test]
fn a_plugin_missing_from_the_lockfile_is_refused() {
    let home = fresh_home();
    let (code, _, err) = cli(home.path(), &["plugin", "install", ECHO]);
    assert_eq!(code, Some(0), "{err}");
    // An entry someone removed: the component itself is unchanged.
    std::fs::write(home.path().join("plugins.lock"), "").unwrap();
    let (code, out, err) = call_echo(home.path());
    assert_eq!(code, Some(5), "{out}{err}");
    assert!(
        err.contains("plugin echo is not approved: the lockfile has no entry for it"),
        "{err}"
    );
    let (code, _, err) = cli(home.path(), &["plugin", "approve", "echo", "--yes"]);
    assert_eq!(code, Some(0), "{err}");
    let (code, out, err) = call_echo(home.path());
    assert_eq!(code, Some(0), "approved again, it runs: {err}");
    assert!(out.contains('x'), "{out}");
}

#[test]
fn an_installation_record_the_lockfile_does_not_approve_is_refused() {
    let home = fresh_home();
    let (code, _, err) = cli(home.path(), &["plugin", "install", ECHO]);
    assert_eq!(code, Some(0), "{err}");
    // The record claims other bytes than the lockfile approved; the
    // component and the lockfile are untouched.
    let record_path = home.path().join("plugins/echo/plugin.json");
    let mut record: Value = serde_json::from_slice(&std::fs::read(&record_path).unwrap()).unwrap();
    record["sha256"] = Value::String("0".repeat(64));
    std::fs::write(&record_path, serde_json::to_vec(&record).unwrap()).unwrap();
    let (code, out, err) = call_echo(home.path());
    assert_eq!(code, Some(5), "{out}{err}");
    assert!(
        err.contains("plugin echo: its installation record does not match the lockfile"),
        "{err}"
    );
    let (code, out, _) = cli(home.path(), &["plugin", "list", "--json"]);
    assert_eq!(code, Some(0));
    let listed: Value = serde_json::from_str(&out).unwrap();
    let echo = listed["plugins"]
        .as_array()
        .unwrap()
        .iter()
        .find(|p| p["name"] == "echo")
        .unwrap();
    assert!(
        echo["refused"]
            .as_str()
            .is_some_and(|r| r.contains("installation record")),
        "{echo}"
    );
}

#[test]
fn an_installed_component_that_cannot_be_read_is_refused_without_its_path() {
    let home = fresh_home();
    let (code, _, err) = cli(home.path(), &["plugin", "install", ECHO]);
    assert_eq!(code, Some(0), "{err}");
    std::fs::remove_file(home.path().join("plugins/echo/component.wasm")).unwrap();
    let (code, out, err) = call_echo(home.path());
    assert_eq!(code, Some(5), "{out}{err}");
    assert!(
        err.contains("plugin echo: its component cannot be read (entity not found)"),
        "{err}"
    );
    let home_text = home.path().display().to_string();
    assert!(!err.contains(&home_text), "{err}");
    let (code, out, _) = cli(home.path(), &["plugin", "list", "--json"]);
    assert_eq!(code, Some(0));
    let listed: Value = serde_json::from_str(&out).unwrap();
    let refused = listed["plugins"]
        .as_array()
        .unwrap()
        .iter()
        .find(|p| p["name"] == "echo")
        .map(|p| p["refused"].clone());
    assert!(
        refused
            .as_ref()
            .and_then(Value::as_str)
            .is_some_and(|r| r.contains("cannot be read")),
        "{refused:?}"
    );
}
