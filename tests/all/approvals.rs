//! Approvals: the prompt on a real terminal (a pty) with the real binary,
//! session grants through the pipeline, asks without a terminal, and which
//! policy a call runs under when none is named.

use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};

use rexpect::process::WaitStatus;
use rexpect::session::{PtySession, spawn_command};
use serde_json::{Value, json};
use warden::approval::{
    Approval, ApprovalPattern, ApprovalRequest, ApprovalResponse, Approvals, Approver,
    SessionGrant, SessionGrantKind,
};
use warden::base::{CancelToken, Limits};
use warden::pipeline::{self, CallResult, Invocation};
use warden::policy::Policy;
use warden::protocol::ToolOutcome;

use crate::support::*;

/// Writes ask; everything else runs.
const ASK_WRITES: &str = r#"
name = "ask-writes"
description = "write_file asks"
mode = "auto-edit"

[grants.default]
workspace = "read-write"

[[rule]]
name = "no-writes-outside"
tools = ["write_file"]
decision = "deny"
reason = "stay inside"
[rule.args]
path = { glob = ["../**", "/**"] }

[[rule]]
name = "ask-before-writing"
tools = ["write_file"]
decision = "ask"
reason = "writes need a look"
"#;

/// A data directory of its own that shares the compiled-component cache,
/// with `policies/ask-writes.toml`.
fn home_with_policy() -> tempfile::TempDir {
    catalog();
    let home = tempfile::tempdir().unwrap();
    std::os::unix::fs::symlink(shared_home().join("cache"), home.path().join("cache")).unwrap();
    std::fs::create_dir(home.path().join("policies")).unwrap();
    std::fs::write(home.path().join("policies/ask-writes.toml"), ASK_WRITES).unwrap();
    home
}

fn write(path: &str, content: &str) -> String {
    json!({"path": path, "content": content}).to_string()
}

/// `warden tool call write_file` on a pty, in `ws`.
fn on_pty(home: &Path, ws: &Path, args: &[&str]) -> PtySession {
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_warden"));
    cmd.env("WARDEN_HOME", home)
        .env_remove("RUST_LOG")
        .current_dir(ws)
        .args(["tool", "call", "write_file", "--policy", "ask-writes"])
        .args(args);
    spawn_command(cmd, Some(30_000)).unwrap()
}

/// Everything left on the terminal, and the exit code.
fn finish(mut p: PtySession) -> (String, i32) {
    let rest = p.exp_eof().unwrap();
    match p.process().wait().unwrap() {
        WaitStatus::Exited(_, code) => (rest, code),
        other => panic!("warden did not exit normally: {other:?}"),
    }
}

#[test]
fn allow_once_on_a_terminal_runs_the_call() {
    let home = home_with_policy();
    let sb = Sandbox::new();
    let mut p = on_pty(home.path(), &sb.ws(), &["--input", &write("a.txt", "hi")]);
    let prompt = p.exp_string("Allow? [y/s/p/n]: ").unwrap();
    p.send("y").unwrap();
    p.flush().unwrap();
    let (rest, code) = finish(p);
    assert_eq!(code, 0, "{prompt}{rest}");
    assert_eq!(sb.read("a.txt"), "hi");
    // A first write in this workspace says where it may write, before asking.
    let prompt = prompt.replace("\r\n", "\n");
    assert!(
        prompt.starts_with("warden: first writing run in "),
        "{prompt}"
    );
    let asked = &prompt[prompt.find("Approval needed").unwrap()..];
    insta::assert_snapshot!("pty_prompt", asked);
}

#[test]
fn deny_on_a_terminal_passes_the_message_on() {
    let home = home_with_policy();
    let sb = Sandbox::new();
    let mut p = on_pty(
        home.path(),
        &sb.ws(),
        &["--json", "--input", &write("a.txt", "hi")],
    );
    p.exp_string("Allow? [y/s/p/n]: ").unwrap();
    // One key answers: no Enter after it.
    p.send("n").unwrap();
    p.flush().unwrap();
    p.exp_string("Message for the model (optional, Enter for none): ")
        .unwrap();
    p.send_line("not now").unwrap();
    let (rest, code) = finish(p);
    assert_eq!(code, 3, "{rest}");
    let line = rest.lines().find(|l| l.starts_with('{')).unwrap();
    let v: Value = serde_json::from_str(line).unwrap();
    assert_eq!(
        v["outcome"]["reason"],
        "denied by the user (asked under rule ask-before-writing of policy ask-writes), \
         saying: not now"
    );
    assert_eq!(
        v["approval"],
        json!({"type": "user_denied", "message": "not now"})
    );
    assert!(!sb.exists("a.txt"));
}

#[test]
fn a_single_key_answers_without_enter() {
    let home = home_with_policy();
    let sb = Sandbox::new();
    let lines = sb.parent().join("calls.jsonl");
    let calls = [
        write("a.txt", "1"),
        write("a.txt", "1"),
        write("b.txt", "2"),
        write("c.txt", "3"),
    ];
    std::fs::write(&lines, calls.join("\n")).unwrap();
    let mut p = on_pty(
        home.path(),
        &sb.ws(),
        &["--input-lines", lines.to_str().unwrap()],
    );
    p.exp_string("Allow? [y/s/p/n]: ").unwrap();
    // One key, no Enter: the call runs and the next one is asked about.
    p.send("s").unwrap();
    p.flush().unwrap();
    let between = p.exp_string("Allow? [y/s/p/n]: ").unwrap();
    assert!(
        between.starts_with("s\r\nAllowed for this session: write_file"),
        "the key is echoed once: {between:?}"
    );
    assert!(between.contains("\"path\": \"b.txt\""), "{between}");
    // A word typed at the prompt answers with its first letter only: the
    // rest is dropped, not left to answer the next prompt (its `s` would
    // allow c.txt for the session).
    p.send("yes").unwrap();
    p.flush().unwrap();
    let between = p.exp_string("Allow? [y/s/p/n]: ").unwrap();
    assert!(between.contains("\"path\": \"c.txt\""), "{between}");
    assert!(!between.contains("Please answer"), "{between}");
    p.send("n").unwrap();
    p.flush().unwrap();
    p.exp_string("Enter for none): ").unwrap();
    p.send_line("").unwrap();
    let (rest, code) = finish(p);
    assert_eq!(code, 3, "{rest}");
    assert_eq!(
        (sb.read("a.txt"), sb.read("b.txt")),
        ("1".into(), "2".into())
    );
    assert!(!sb.exists("c.txt"));
}

#[test]
fn allow_for_the_session_covers_the_same_call_only() {
    let home = home_with_policy();
    let sb = Sandbox::new();
    let lines = sb.parent().join("calls.jsonl");
    let calls = [
        write("a.txt", "1"),
        // The same call with its keys in another order.
        r#"{"content":"1","path":"a.txt"}"#.to_string(),
        write("b.txt", "2"),
    ];
    std::fs::write(&lines, calls.join("\n")).unwrap();
    let mut p = on_pty(
        home.path(),
        &sb.ws(),
        &["--json", "--input-lines", lines.to_str().unwrap()],
    );
    p.exp_string("Allow? [y/s/p/n]: ").unwrap();
    p.send("s").unwrap();
    p.flush().unwrap();
    let between = p.exp_string("Allow? [y/s/p/n]: ").unwrap();
    assert!(
        between.contains("Allowed for this session: write_file with exactly these arguments."),
        "{between}"
    );
    assert!(between.contains("\"path\": \"b.txt\""), "{between}");
    assert_eq!(between.matches("Approval needed").count(), 1, "{between}");
    p.send("n").unwrap();
    p.flush().unwrap();
    p.exp_string("Enter for none): ").unwrap();
    p.send_line("").unwrap();
    let (rest, code) = finish(p);
    assert_eq!(
        code, 3,
        "the first failing call decides the exit code: {rest}"
    );
    let records: Vec<Value> = between
        .lines()
        .chain(rest.lines())
        .filter(|l| l.starts_with('{'))
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    let kinds: Vec<&str> = records
        .iter()
        .map(|r| r["approval"]["type"].as_str().unwrap())
        .collect();
    assert_eq!(kinds, ["user_session", "session_grant", "user_denied"]);
    assert_eq!(records[0]["approval"]["grant"]["type"], "fingerprint");
    assert_eq!(sb.read("a.txt"), "1");
    assert!(!sb.exists("b.txt"));
}

#[test]
fn allow_a_pattern_on_a_terminal() {
    let home = home_with_policy();
    let sb = Sandbox::new();
    let lines = sb.parent().join("calls.jsonl");
    let calls = [
        write("src/a.rs", "a"),
        write("src/deep/b.rs", "b"),
        write("top.txt", "t"),
    ];
    std::fs::write(&lines, calls.join("\n")).unwrap();
    let mut p = on_pty(
        home.path(),
        &sb.ws(),
        &["--input-lines", lines.to_str().unwrap()],
    );
    p.exp_string("Allow? [y/s/p/n]: ").unwrap();
    p.send("p").unwrap();
    p.flush().unwrap();
    p.exp_string("(Enter for `write_file path=src/**`): ")
        .unwrap();
    p.send_line("").unwrap();
    p.exp_string("Allow, for the rest of this session, every write_file call whose path matches src/**? [y/N]: ")
        .unwrap();
    p.send("y").unwrap();
    p.flush().unwrap();
    let between = p.exp_string("Allow? [y/s/p/n]: ").unwrap();
    assert!(
        between.contains("allowed without asking by a grant you gave this session (pattern `write_file path=src/**`)"),
        "{between}"
    );
    assert!(between.contains("\"path\": \"top.txt\""), "{between}");
    p.send("y").unwrap();
    p.flush().unwrap();
    let (rest, code) = finish(p);
    assert_eq!(code, 0, "{rest}");
    assert_eq!(
        (
            sb.read("src/a.rs"),
            sb.read("src/deep/b.rs"),
            sb.read("top.txt")
        ),
        ("a".into(), "b".into(), "t".into())
    );
}

#[test]
fn a_terminal_is_not_asked_when_prompts_are_off_or_the_policy_is_non_interactive() {
    let home = home_with_policy();
    let sb = Sandbox::new();
    let mut p = on_pty(
        home.path(),
        &sb.ws(),
        &["--non-interactive", "--input", &write("a.txt", "x")],
    );
    let (rest, code) = finish(p);
    assert_eq!(code, 3, "{rest}");
    assert!(
        rest.contains(
            "needs approval under rule ask-before-writing of policy ask-writes (writes need a \
             look), but prompts are off (--non-interactive)"
        ),
        "{rest}"
    );
    assert!(!rest.contains("Approval needed"), "{rest}");

    // `ci` turns its asks into denials itself, terminal or not.
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_warden"));
    cmd.env("WARDEN_HOME", home.path())
        .current_dir(sb.ws())
        .args(["tool", "call", "write_file", "--policy", "ci", "--input"])
        .arg(write(".github/workflows/x.yml", "on: push"));
    p = spawn_command(cmd, Some(30_000)).unwrap();
    let (rest, code) = finish(p);
    assert_eq!(code, 3, "{rest}");
    assert!(
        rest.contains("denied by rule ask-before-ci-config of policy ci: would ask, but this policy is non-interactive"),
        "{rest}"
    );
    assert!(!rest.contains("Approval needed"), "{rest}");
    assert!(!sb.exists("a.txt") && !sb.exists(".github"));
}

#[test]
fn without_a_terminal_an_ask_is_denied_with_the_reason() {
    let home = home_with_policy();
    let sb = Sandbox::new();
    let o = warden(home.path())
        .args([
            "tool",
            "call",
            "write_file",
            "--policy",
            "ask-writes",
            "--json",
        ])
        .args(["--input", &write("a.txt", "x")])
        .current_dir(sb.ws())
        .stdin(std::process::Stdio::null())
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(3));
    let v: Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(
        v["outcome"]["reason"],
        "needs approval under rule ask-before-writing of policy ask-writes (writes need a look), \
         but there is no terminal to ask (non-interactive); run it from a terminal to approve \
         it, or use a policy that allows it"
    );
    assert_eq!(v["decision"]["verdict"], "ask");
    assert_eq!(v["approval"]["type"], "unanswered");
    assert!(!sb.exists("a.txt"));
}

/// Answers from a script, counting the questions.
struct Scripted {
    answers: Mutex<Vec<ApprovalResponse>>,
    asked: AtomicUsize,
    delay: std::time::Duration,
}

impl Scripted {
    fn new(answers: Vec<ApprovalResponse>) -> Arc<Scripted> {
        Arc::new(Scripted {
            answers: Mutex::new(answers),
            asked: AtomicUsize::new(0),
            delay: std::time::Duration::ZERO,
        })
    }
}

impl Approver for Scripted {
    fn approve(&self, req: &ApprovalRequest) -> ApprovalResponse {
        assert_eq!(req.decision.verdict, warden::policy::Verdict::Ask);
        self.asked.fetch_add(1, Ordering::SeqCst);
        std::thread::sleep(self.delay);
        self.answers.lock().unwrap().remove(0)
    }
}

fn run(ws: &Path, approvals: &Approvals, tool: &str, input: &str) -> CallResult {
    static POLICY: std::sync::OnceLock<Policy> = std::sync::OnceLock::new();
    let policy = POLICY.get_or_init(|| Policy::parse(ASK_WRITES, "ask-writes.toml").unwrap());
    pipeline::run(
        catalog(),
        Invocation {
            tool,
            input,
            workspace: ws,
            write: warden::capability::WriteMode::ReadOnly,
            limits: Limits::default(),
            limit_requests: Default::default(),
            cancel: CancelToken::new(),
            progress: None,
            policy: Some(policy),
            approval: Some(approvals),
            rationale: Some("to save the notes"),
            interaction: None,
        },
    )
}

#[test]
fn a_session_grant_asks_once_per_call_and_never_overrides_a_deny() {
    let sb = Sandbox::new();
    let ws = sb.ws();
    let script = Scripted::new(vec![
        ApprovalResponse::AllowSession(SessionGrantKind::Fingerprint),
        ApprovalResponse::Deny {
            message: Some("not that one".into()),
        },
        ApprovalResponse::AllowSession(SessionGrantKind::Pattern(
            ApprovalPattern::parse("write_file path=**").unwrap(),
        )),
    ]);
    let approvals = Approvals::new(script.clone());

    let first = run(&ws, &approvals, "write_file", &write("a.txt", "1"));
    assert!(matches!(first.approval, Some(Approval::UserSession { .. })));
    let again = run(
        &ws,
        &approvals,
        "write_file",
        r#"{"content":"1","path":"a.txt"}"#,
    );
    ok(&again);
    assert!(matches!(
        again.approval,
        Some(Approval::SessionGrant {
            grant: SessionGrant::Fingerprint { .. }
        })
    ));
    assert_eq!(script.asked.load(Ordering::SeqCst), 1);

    let other = run(&ws, &approvals, "write_file", &write("b.txt", "2"));
    assert_eq!(script.asked.load(Ordering::SeqCst), 2);
    assert_eq!(
        other.outcome,
        ToolOutcome::Denied {
            reason: "denied by the user (asked under rule ask-before-writing of policy \
                     ask-writes), saying: not that one"
                .into()
        }
    );
    assert!(!sb.exists("b.txt"));

    ok(&run(&ws, &approvals, "write_file", &write("c.txt", "3")));
    assert_eq!(script.asked.load(Ordering::SeqCst), 3);
    // The pattern covers every path, but denials stand: neither a rule's
    // nor a protected path's is turned into a question.
    for (path, by) in [
        ("../x.txt", "no-writes-outside"),
        (".env", "protected-paths"),
    ] {
        let r = run(&ws, &approvals, "write_file", &write(path, "x"));
        let ToolOutcome::Denied { reason } = &r.outcome else {
            panic!("{path}: {:?}", r.outcome);
        };
        assert!(
            reason.starts_with(&format!("denied by rule {by}")),
            "{reason}"
        );
        assert_eq!(r.approval, None);
    }
    ok(&run(&ws, &approvals, "write_file", &write("d.txt", "4")));
    assert_eq!(script.asked.load(Ordering::SeqCst), 3);
    assert_eq!(approvals.session().grants().len(), 2);
    sb.assert_canaries_intact();
}

#[test]
fn concurrent_identical_asks_prompt_once() {
    let sb = Sandbox::new();
    let ws = sb.ws();
    let script = Arc::new(Scripted {
        answers: Mutex::new(vec![ApprovalResponse::AllowSession(
            SessionGrantKind::Fingerprint,
        )]),
        asked: AtomicUsize::new(0),
        delay: std::time::Duration::from_millis(200),
    });
    let approvals = Approvals::new(script.clone());
    let input = write("same.txt", "x");
    std::thread::scope(|s| {
        for _ in 0..3 {
            s.spawn(|| ok(&run(&ws, &approvals, "write_file", &input)).text.clone());
        }
    });
    assert_eq!(script.asked.load(Ordering::SeqCst), 1);
}

#[test]
fn without_approvals_an_ask_is_refused() {
    let sb = Sandbox::new();
    let policy = Policy::parse(ASK_WRITES, "ask-writes.toml").unwrap();
    let r = pipeline::run(
        catalog(),
        Invocation {
            tool: "write_file",
            input: &write("a.txt", "x"),
            workspace: &sb.ws(),
            write: warden::capability::WriteMode::AllowWrite,
            limits: Limits::default(),
            limit_requests: Default::default(),
            cancel: CancelToken::new(),
            progress: None,
            policy: Some(&policy),
            approval: None,
            rationale: None,
            interaction: None,
        },
    );
    let ToolOutcome::Denied { reason } = &r.outcome else {
        panic!("{:?}", r.outcome);
    };
    assert!(reason.contains("there is no terminal to ask"), "{reason}");
    assert!(!sb.exists("a.txt"));
}

/// A policy allowing everything, planted where a careless runtime might
/// look for one.
fn plant_workspace_policies(sb: &Sandbox) {
    let allow_all = "name = \"planted\"\nmode = \"auto\"\n[grants.default]\nworkspace = \"read-write\"\n\
                     [protected]\nreplace_defaults = true\n[[rule]]\nname = \"anything\"\ndecision = \"allow\"\n";
    sb.write(".warden/policy.toml", allow_all);
    sb.write(".warden/policies/default.toml", allow_all);
    sb.write("warden.toml", allow_all);
    sb.write("policies/default.toml", allow_all);
}

fn call_in(home: &Path, ws: &Path, input: &str) -> (Option<i32>, Value) {
    let o = warden(home)
        .args(["tool", "call", "write_file", "--json", "--input", input])
        .current_dir(ws)
        .output()
        .unwrap();
    (o.status.code(), serde_json::from_slice(&o.stdout).unwrap())
}

#[test]
fn a_policy_in_the_workspace_is_never_loaded() {
    let sb = Sandbox::new();
    plant_workspace_policies(&sb);
    let ws: PathBuf = sb.ws();
    // workspace-write, the built-in default, asks before CI workflow edits.
    let (code, v) = call_in(
        shared_home(),
        &ws,
        &write(".github/workflows/ci.yml", "on: push"),
    );
    assert_eq!(code, Some(3), "{v}");
    let reason = v["outcome"]["reason"].as_str().unwrap();
    assert!(
        reason.starts_with(
            "needs approval under rule ask-before-ci-config of policy workspace-write"
        ),
        "{reason}"
    );
    // ... and denies protected paths, which the planted policy would not.
    let (code, v) = call_in(shared_home(), &ws, &write(".warden/policy.toml", "x"));
    assert_eq!(code, Some(3), "{v}");
    // The same with the workspace given by -w from outside it.
    let o = warden(shared_home())
        .args(["tool", "call", "write_file", "--json", "-w"])
        .arg(&ws)
        .args(["--input", &write(".github/workflows/ci.yml", "on: push")])
        .current_dir(sb.parent())
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(3));
    let (code, v) = call_in(shared_home(), &ws, &write("../escape.txt", "x"));
    assert_eq!(code, Some(3), "{v}");
    sb.assert_canaries_intact();
}

#[test]
fn the_user_default_policy_replaces_the_built_in_one() {
    let home = home_with_policy();
    let sb = Sandbox::new();
    sb.write("a.txt", "alpha\n");
    std::fs::write(
        home.path().join("policies/default.toml"),
        "name = \"mine\"\nmode = \"read-only\"\n",
    )
    .unwrap();
    let (code, v) = call_in(home.path(), &sb.ws(), &write("b.txt", "x"));
    assert_eq!(code, Some(3), "{v}");
    assert_eq!(
        v["outcome"]["reason"],
        "denied by read-only mode of policy mine: plan mode: only read-only tools may run"
    );
    let o = warden(home.path())
        .args(["policy", "list", "--json"])
        .output()
        .unwrap();
    let list: Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(list["default"], "default");

    // A named policy still wins over the user's default.
    let o = warden(home.path())
        .args(["tool", "call", "write_file", "--policy", "workspace-write"])
        .args(["--input", &write("b.txt", "x")])
        .current_dir(sb.ws())
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(0));
    assert_eq!(sb.read("b.txt"), "x");

    // A broken default is an error, never a silent fallback.
    std::fs::write(home.path().join("policies/default.toml"), "name = 5\n").unwrap();
    let o = warden(home.path())
        .args([
            "tool",
            "call",
            "read_file",
            "--input",
            r#"{"path":"a.txt"}"#,
        ])
        .current_dir(sb.ws())
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(2));
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(
        err.contains("default.toml:1:8") && err.contains("the user's default policy"),
        "{err}"
    );
}
