//! The built-in `shell` tool end to end: the policy decides each part of
//! the command line, the command runs in the process sandbox under the
//! call's grant, the result says how it ended, and the audit record keeps
//! the command and the confinement it ran under.

use serde_json::{Value, json};

use crate::support::*;

/// A policy that lets a few programs run and grants processes.
const RUN_POLICY: &str = r#"
name = "shell-test"
mode = "ask"

[grants.default]
workspace = "read-write"

[grants.default.process]
enabled = true

[[rule]]
name = "these-programs-run"
decision = "allow"
commands = ["python3", "cat", "sleep", "true", "ls", "setsid sleep", "nohup sleep"]
"#;

/// The same, with processes not granted.
const NO_PROCESS_POLICY: &str = r#"
name = "shell-no-processes"
mode = "ask"

[grants.default]
workspace = "read-write"

[[rule]]
name = "these-programs-run"
decision = "allow"
commands = ["true"]
"#;

struct Setup {
    home: tempfile::TempDir,
    ws: tempfile::TempDir,
    policy: std::path::PathBuf,
}

fn setup(policy: &str) -> Setup {
    let home = fresh_home();
    let ws = tempfile::tempdir().unwrap();
    std::fs::write(ws.path().join("a.txt"), "hello from the workspace\n").unwrap();
    std::fs::create_dir(ws.path().join(".git")).unwrap();
    std::fs::write(ws.path().join(".git/config"), "[core]\n").unwrap();
    let policy_path = home.path().join("test-policy.toml");
    std::fs::write(&policy_path, policy).unwrap();
    Setup {
        home,
        ws,
        policy: policy_path,
    }
}

/// `warden tool call shell --json` with `input`: exit code and the output.
fn shell(s: &Setup, input: Value) -> (Option<i32>, Value, String) {
    let input = input.to_string();
    let (code, out, err) = cli(
        s.home.path(),
        &[
            "tool",
            "call",
            "shell",
            "--json",
            "--non-interactive",
            "--policy",
            s.policy.to_str().unwrap(),
            "-w",
            s.ws.path().to_str().unwrap(),
            "--input",
            &input,
        ],
    );
    let v: Value = serde_json::from_str(out.lines().last().unwrap_or("null"))
        .unwrap_or_else(|e| panic!("{e}: {out} {err}"));
    (code, v, err)
}

fn text(v: &Value) -> String {
    v["outcome"]["text"]
        .as_str()
        .or_else(|| v["outcome"]["message"].as_str())
        .or_else(|| v["outcome"]["reason"].as_str())
        .unwrap_or_default()
        .to_string()
}

#[test]
fn a_command_runs_in_the_workspace_and_its_result_says_how_it_ended() {
    let s = setup(RUN_POLICY);
    let (code, v, err) = shell(
        &s,
        json!({"command": "cat a.txt; python3 -c 'import sys; sys.stderr.write(\"warn\\n\"); sys.exit(3)'"}),
    );
    assert_eq!(code, Some(0), "{v} {err}");
    let out = text(&v);
    assert!(out.starts_with("exit code 3 ("), "{out}");
    assert!(
        out.contains("--- stdout ---\nhello from the workspace\n"),
        "{out}"
    );
    assert!(out.contains("--- stderr ---\nwarn\n"), "{out}");
    let structured = &v["outcome"]["structured"];
    assert_eq!(structured["exit_code"], 3);
    assert_eq!(structured["stdout_bytes"], 25);
    assert!(structured["stopped"].is_null());
}

#[test]
fn the_policy_decides_every_part_before_anything_runs() {
    let s = setup(RUN_POLICY);
    let (code, v, _) = shell(
        &s,
        json!({"command": "python3 -c 'open(\"made.txt\", \"w\")' && git push"}),
    );
    assert_eq!(code, Some(3), "denied: {v}");
    assert_eq!(v["outcome"]["type"], "denied", "{v}");
    assert!(
        !s.ws.path().join("made.txt").exists(),
        "no part of a denied command runs"
    );
}

#[test]
fn a_command_cannot_write_protected_paths_or_outside_the_workspace() {
    let s = setup(RUN_POLICY);
    let outside = s.home.path().join("outside.txt");
    let script = format!(
        "import os\n\
         for p in ['.git/config', '.git/hooks/pre-commit', '{}', 'inside.txt']:\n\
         \x20   try:\n\
         \x20       open(p, 'w').write('x')\n\
         \x20       print(p, 'written')\n\
         \x20   except OSError as e:\n\
         \x20       print(p, 'refused', e.errno)\n",
        outside.display()
    );
    std::fs::write(s.ws.path().join("try.py"), script).unwrap();
    let (code, v, err) = shell(&s, json!({"command": "python3 try.py"}));
    assert_eq!(code, Some(0), "{v} {err}");
    let out = text(&v);
    assert!(out.contains(".git/config refused"), "{out}");
    assert!(out.contains(".git/hooks/pre-commit refused"), "{out}");
    assert!(out.contains("outside.txt refused"), "{out}");
    assert!(out.contains("inside.txt written"), "{out}");
    assert_eq!(
        std::fs::read_to_string(s.ws.path().join(".git/config")).unwrap(),
        "[core]\n"
    );
    assert!(!s.ws.path().join(".git/hooks/pre-commit").exists());
    assert!(!outside.exists());
}

#[test]
fn a_command_past_its_timeout_is_killed_with_everything_it_started() {
    let s = setup(RUN_POLICY);
    let started = std::time::Instant::now();
    let (code, v, _) = shell(
        &s,
        json!({"command": "sleep 30 & sleep 30", "timeout_ms": 500}),
    );
    assert!(
        started.elapsed() < std::time::Duration::from_secs(10),
        "stopped at the timeout"
    );
    assert_eq!(code, Some(1), "{v}");
    assert_eq!(v["outcome"]["kind"], "timeout", "{v}");
    assert!(text(&v).contains("was stopped"), "{v}");
    let (calls, shown) = audited_calls(s.home.path(), "shell");
    let p = &calls[0]["exercised"]["processes"][0];
    assert_eq!(p["stopped"], "deadline", "{shown}");
    assert!(p["duration_ms"].as_u64().unwrap() >= 400, "{shown}");
}

#[test]
fn without_a_process_grant_the_process_interface_is_not_linked() {
    let s = setup(NO_PROCESS_POLICY);
    let (code, v, _) = shell(&s, json!({"command": "true"}));
    assert_eq!(code, Some(1), "{v}");
    assert_eq!(v["outcome"]["kind"], "permission_denied", "{v}");
    assert!(
        text(&v).contains("warden:tool/process"),
        "the refusal names the interface: {v}"
    );
}

#[test]
fn the_audit_record_keeps_each_command_and_its_confinement() {
    let s = setup(RUN_POLICY);
    std::fs::create_dir(s.ws.path().join("sub")).unwrap();
    std::fs::write(s.ws.path().join("sub/f1"), "").unwrap();
    let (code, v, _) = shell(&s, json!({"command": "ls", "cwd": "sub"}));
    assert_eq!(code, Some(0), "{v}");
    let (calls, shown) = audited_calls(s.home.path(), "shell");
    let p = &calls[0]["exercised"]["processes"][0];
    assert_eq!(p["command"], "ls", "{shown}");
    assert_eq!(p["cwd"], "sub");
    assert_eq!(p["exit"]["code"], 0);
    assert_eq!(p["stdout_bytes"], 3, "{shown}");
    assert_eq!(p["stderr_bytes"], 0, "{shown}");
    assert!(p["duration_ms"].is_u64(), "{shown}");
    assert!(p.get("stopped").is_none(), "{shown}");
    let c = &p["confinement"];
    assert_eq!(c["mode"], "full");
    assert!(c["landlock_abi"].as_u64().unwrap() >= 6, "{c}");
    assert_eq!(c["seccomp"], true);
    assert!(
        c["namespaces"]
            .as_array()
            .unwrap()
            .iter()
            .any(|n| n == "network"),
        "{c}"
    );
    // The command is in the record whole; `audit caps` lists it.
    let (_, caps, _) = cli(s.home.path(), &["audit", "caps"]);
    assert!(caps.contains("commands:       `ls` ×1"), "{caps}");
}

#[test]
fn a_host_in_a_user_and_mount_namespace_of_its_own_still_runs_confined_commands() {
    // As `warden run --review` will be: the whole host inside `unshare -Urm`.
    let s = setup(RUN_POLICY);
    let input = json!({"command": "cat a.txt && ls /proc/net/unix"}).to_string();
    let out = std::process::Command::new("unshare")
        .args(["-Urm", env!("CARGO_BIN_EXE_warden")])
        .args([
            "tool",
            "call",
            "shell",
            "--json",
            "--non-interactive",
            "--policy",
            s.policy.to_str().unwrap(),
            "-w",
            s.ws.path().to_str().unwrap(),
            "--input",
            &input,
        ])
        .env("WARDEN_HOME", s.home.path())
        .env_remove("RUST_LOG")
        .output()
        .unwrap();
    let (stdout, stderr) = (
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr),
    );
    assert_eq!(out.status.code(), Some(0), "{stdout}{stderr}");
    let v: Value = serde_json::from_str(stdout.lines().last().unwrap_or("null")).unwrap();
    let text = text(&v);
    assert!(text.contains("hello from the workspace"), "{v}");
    assert!(text.contains("/proc/net/unix"), "{v}");
}

#[test]
fn the_warden_process_confines_itself_before_a_call_runs() {
    let s = setup(RUN_POLICY);
    let input = json!({"command": "sleep 2"}).to_string();
    let child = warden(s.home.path())
        .args([
            "tool",
            "call",
            "shell",
            "--non-interactive",
            "--policy",
            s.policy.to_str().unwrap(),
            "-w",
            s.ws.path().to_str().unwrap(),
            "--input",
            &input,
        ])
        .stderr(std::process::Stdio::piped())
        .stdout(std::process::Stdio::null())
        .spawn()
        .unwrap();
    // Landlock's restrict_self sets no_new_privs on the process it confines:
    // a warden process that confined itself shows it while its call runs.
    let status = format!("/proc/{}/status", child.id());
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(10);
    let mut confined = false;
    while std::time::Instant::now() < deadline && !confined {
        let text = std::fs::read_to_string(&status).unwrap_or_default();
        confined = text.lines().any(|l| l == "NoNewPrivs:\t1");
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
    let out = child.wait_with_output().unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{err}");
    assert!(confined, "the process never showed no_new_privs");
    assert!(!err.contains("could not confine itself"), "{err}");
}

/// The processes whose command line holds `marker`, but warden itself.
fn alive_with(marker: &str) -> Vec<String> {
    let mut alive = Vec::new();
    for entry in std::fs::read_dir("/proc").unwrap().flatten() {
        let cmdline = std::fs::read(entry.path().join("cmdline")).unwrap_or_default();
        let cmdline = String::from_utf8_lossy(&cmdline).replace('\0', " ");
        if cmdline.contains(marker) && !cmdline.contains("tool call shell") {
            alive.push(format!(
                "{}: {cmdline}",
                entry.file_name().to_string_lossy()
            ));
        }
    }
    alive
}

#[test]
fn ctrl_c_in_the_middle_of_a_long_build_ends_the_whole_tree_within_a_second() {
    use rexpect::process::WaitStatus;
    use std::time::{Duration, Instant};
    let s = setup(RUN_POLICY);
    // A duration no other process uses marks the call's processes.
    let marker = format!("3{}.{}", std::process::id() % 1000, 7);
    let input = json!({
        "command": format!(
            "sleep {marker} & (setsid sleep {marker} &) ; nohup sleep {marker} & \
             python3 -c 'import time; time.sleep({marker})'"
        ),
        "timeout_ms": 60_000,
    })
    .to_string();
    let mut cmd = warden(s.home.path());
    cmd.args(["tool", "call", "shell", "--non-interactive", "--policy"])
        .arg(&s.policy)
        .arg("-w")
        .arg(s.ws.path())
        .args(["--input", &input]);
    let mut p = rexpect::session::spawn_command(cmd, Some(20_000)).unwrap();
    let started = Instant::now();
    while alive_with(&marker).len() < 4 && started.elapsed() < Duration::from_secs(15) {
        std::thread::sleep(Duration::from_millis(50));
    }
    assert!(alive_with(&marker).len() >= 4, "the build never started");
    p.send_control('c').unwrap();
    let pressed = Instant::now();
    let mut left = alive_with(&marker);
    while !left.is_empty() && pressed.elapsed() < Duration::from_secs(1) {
        std::thread::sleep(Duration::from_millis(10));
        left = alive_with(&marker);
    }
    assert!(left.is_empty(), "alive 1 s after Ctrl-C: {left:?}");
    let rest = p.exp_eof().unwrap();
    match p.process().wait().unwrap() {
        WaitStatus::Exited(_, code) => assert_eq!(code, 4, "{rest}"),
        other => panic!("warden did not exit normally: {other:?}\n{rest}"),
    }
    let (calls, shown) = audited_calls(s.home.path(), "shell");
    assert_eq!(calls[0]["outcome"], "cancelled", "{shown}");
}
