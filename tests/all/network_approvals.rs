//! Approving a network call: the prompt (a real pty, the real binary)
//! shows the destination; approving grants exactly it, for the call or the
//! session, and the loopback server sees what was approved and nothing
//! else; a destination no approval could grant is refused unasked, naming
//! the key to add; after approval the address checks still refuse a
//! redirect elsewhere and a name resolving to loopback.

use std::path::Path;
use std::process::Command;
use std::sync::Arc;

use rexpect::process::WaitStatus;
use rexpect::session::{PtySession, spawn_command};
use serde_json::{Value, json};
use warden::approval::{Approval, ApprovalRequest, ApprovalResponse, Approvals, Approver};
use warden::protocol::ToolOutcome;

use crate::egress::server::{Loopback, ok_with, respond};
use crate::support::*;
use crate::web_fetch::{fetch_approved, fetched, web_policy};

/// A policy asking about every call, whose `http_fetch` may be approved
/// for destinations under `ask` (TOML array items).
fn ask_policy(dir: &Path, ask: &str) -> String {
    let path = dir.join("ask-net.toml");
    std::fs::write(
        &path,
        format!(
            "name = \"ask-net\"\nmode = \"ask\"\n[grants.plugin.web]\nnetwork = []\n\
             network_ask = [{ask}]\n"
        ),
    )
    .unwrap();
    path.display().to_string()
}

fn url(port: u16, path: &str) -> String {
    json!({ "url": format!("http://127.0.0.1:{port}{path}") }).to_string()
}

/// `warden tool call http_fetch --policy POLICY ARGS` on a pty.
fn on_pty(home: &Path, ws: &Path, policy: &str, args: &[&str]) -> PtySession {
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_warden"));
    cmd.env("WARDEN_HOME", home)
        .env_remove("RUST_LOG")
        .current_dir(ws)
        .args(["tool", "call", "http_fetch", "--policy", policy, "-w"])
        .arg(ws)
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

/// A data directory sharing the compiled-component cache.
fn home() -> tempfile::TempDir {
    catalog();
    let home = tempfile::tempdir().unwrap();
    std::os::unix::fs::symlink(shared_home().join("cache"), home.path().join("cache")).unwrap();
    home
}

const PROMPT: &str = "Allow? [y/s/p/n]: ";

#[test]
fn approving_in_a_pty_fetches_the_shown_destination_once() {
    let server = Loopback::http(ok_with("approved page"));
    let port = server.port();
    let (home, sb) = (home(), Sandbox::new());
    let policy = ask_policy(&sb.parent(), "\"http://127.0.0.1:*\"");
    let mut p = on_pty(
        home.path(),
        &sb.ws(),
        &policy,
        &["--input", &url(port, "/page")],
    );
    let prompt = p.exp_string(PROMPT).unwrap();
    assert!(
        prompt.contains(&format!(
            "reaches:     http://127.0.0.1:{port} (approving grants http://127.0.0.1:{port})"
        )),
        "{prompt}"
    );
    assert!(
        prompt.contains("[s] allow this tool to reach these destinations for the session"),
        "{prompt}"
    );
    p.send("y").unwrap();
    p.flush().unwrap();
    let (rest, code) = finish(p);
    assert_eq!(code, 0, "{prompt}{rest}");
    assert!(rest.contains("approved page"), "{rest}");
    assert_eq!(server.requests().len(), 1);
}

#[test]
fn denying_in_a_pty_sends_nothing() {
    let server = Loopback::http(ok_with("never"));
    let port = server.port();
    let (home, sb) = (home(), Sandbox::new());
    let policy = ask_policy(&sb.parent(), "\"http://127.0.0.1:*\"");
    let mut p = on_pty(
        home.path(),
        &sb.ws(),
        &policy,
        &["--json", "--input", &url(port, "/")],
    );
    let prompt = p.exp_string(PROMPT).unwrap();
    assert!(
        prompt.contains(&format!("reaches:     http://127.0.0.1:{port}")),
        "{prompt}"
    );
    p.send("n").unwrap();
    p.flush().unwrap();
    p.exp_string("Enter for none): ").unwrap();
    p.send_line("").unwrap();
    let (rest, code) = finish(p);
    assert_eq!(code, 3, "{rest}");
    assert!(server.requests().is_empty());
}

#[test]
fn a_session_approval_covers_the_destination_and_nothing_else() {
    let (a, b) = (
        Loopback::http(ok_with("from a")),
        Loopback::http(ok_with("from b")),
    );
    let (home, sb) = (home(), Sandbox::new());
    let policy = ask_policy(&sb.parent(), "\"http://127.0.0.1:*\"");
    let lines = sb.parent().join("calls.jsonl");
    let calls = [
        url(a.port(), "/one"),
        url(a.port(), "/two"),
        url(b.port(), "/three"),
    ];
    std::fs::write(&lines, calls.join("\n")).unwrap();
    let mut p = on_pty(
        home.path(),
        &sb.ws(),
        &policy,
        &["--json", "--input-lines", lines.to_str().unwrap()],
    );
    p.exp_string(PROMPT).unwrap();
    p.send("s").unwrap();
    p.flush().unwrap();
    let between = p.exp_string(PROMPT).unwrap();
    assert!(
        between.contains(&format!(
            "Allowed for this session: http_fetch reaching http://127.0.0.1:{}.",
            a.port()
        )),
        "{between}"
    );
    assert_eq!(between.matches("Approval needed").count(), 1, "{between}");
    assert!(
        between.contains(&format!("reaches:     http://127.0.0.1:{}", b.port())),
        "{between}"
    );
    p.send("n").unwrap();
    p.flush().unwrap();
    p.exp_string("Enter for none): ").unwrap();
    p.send_line("").unwrap();
    let (rest, code) = finish(p);
    assert_eq!(code, 3, "{rest}");
    let records: Vec<Value> = between
        .lines()
        .chain(rest.lines())
        .filter(|l| l.starts_with('{'))
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    for r in &records {
        crate::json_schemas::assert_valid("tool-call.schema.json", &r.to_string());
    }
    let kinds: Vec<&str> = records
        .iter()
        .map(|r| r["approval"]["type"].as_str().unwrap())
        .collect();
    assert_eq!(kinds, ["user_session", "session_grant", "user_denied"]);
    assert_eq!(
        records[0]["approval"]["grant"],
        json!({"type": "network", "tool": "http_fetch",
               "destinations": [format!("http://127.0.0.1:{}", a.port())]})
    );
    assert_eq!(a.requests().len(), 2);
    assert!(b.requests().is_empty());
}

#[test]
fn a_destination_no_approval_could_grant_is_refused_unasked_naming_the_key() {
    let server = Loopback::http(ok_with("never"));
    let port = server.port();
    let (home, sb) = (home(), Sandbox::new());
    // No `network_ask` at all: refused on a terminal without a prompt.
    let policy = ask_policy(&sb.parent(), "");
    let p = on_pty(
        home.path(),
        &sb.ws(),
        &policy,
        &["--input", &url(port, "/")],
    );
    let (shown, code) = finish(p);
    assert_eq!(code, 3, "{shown}");
    assert!(!shown.contains("Approval needed"), "{shown}");
    let shown = shown.replace("\r\n", " ");
    assert!(
        shown.contains(&format!(
            "add `network_ask = [\"http://127.0.0.1:{port}\"]`"
        )) && shown.contains("[grants.tool.http_fetch]"),
        "{shown}"
    );

    // Public destinations only: a loopback or metadata address, another
    // scheme, an address that is never reachable.
    let policy = ask_policy(&sb.parent(), "\"http://*\", \"https://*\"");
    for (target, says) in [
        (format!("http://127.0.0.1:{port}/"), "allow_private"),
        ("http://169.254.169.254/latest".into(), "link-local"),
        ("http://[::ffff:7f00:1]:9/".into(), "loopback"),
        ("ftp://example.com/".into(), "scheme `ftp`"),
        ("http://0.0.0.0:9/".into(), "never reachable"),
    ] {
        let input = json!({ "url": target }).to_string();
        let (code, out, err) = cli(
            home.path(),
            &[
                "tool",
                "call",
                "http_fetch",
                "--policy",
                &policy,
                "-w",
                sb.ws().to_str().unwrap(),
                "--json",
                "--input",
                &input,
            ],
        );
        assert_eq!(code, Some(3), "{target}: {out}{err}");
        let doc: Value = serde_json::from_str(&out).unwrap();
        let reason = doc["outcome"]["reason"].as_str().unwrap();
        assert!(
            reason.starts_with("denied without asking: http_fetch needs approval")
                && reason.contains(says),
            "{target}: {reason}"
        );
    }
    assert!(server.requests().is_empty());
}

#[test]
fn non_interactive_denies_naming_the_destination_and_how_to_allow_it() {
    let server = Loopback::http(ok_with("never"));
    let port = server.port();
    let (home, sb) = (home(), Sandbox::new());
    let policy = ask_policy(&sb.parent(), "\"http://127.0.0.1:*\"");
    let input = url(port, "/");
    let (code, out, err) = cli(
        home.path(),
        &[
            "tool",
            "call",
            "http_fetch",
            "--policy",
            &policy,
            "-w",
            sb.ws().to_str().unwrap(),
            "--non-interactive",
            "--json",
            "--input",
            &input,
        ],
    );
    assert_eq!(code, Some(3), "{out}{err}");
    let doc: Value = serde_json::from_str(&out).unwrap();
    let reason = doc["outcome"]["reason"].as_str().unwrap();
    assert!(
        reason.contains(&format!("to reach http://127.0.0.1:{port}, but prompts are off"))
            && reason.contains(&format!(
                "add `network = [\"http://127.0.0.1:{port}\"]` under `[grants.tool.http_fetch]` and a rule"
            )),
        "{reason}"
    );
    assert_eq!(doc["approval"]["type"], "unanswered");
    assert!(server.requests().is_empty());
}

/// Answers every ask with one response and counts the asks.
struct Always(ApprovalResponse, std::sync::atomic::AtomicUsize);

impl Approver for Always {
    fn approve(&self, _: &ApprovalRequest) -> ApprovalResponse {
        self.1.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
        self.0.clone()
    }
}

fn allowing() -> (Arc<Always>, Approvals) {
    let always = Arc::new(Always(
        ApprovalResponse::AllowOnce,
        std::sync::atomic::AtomicUsize::new(0),
    ));
    (always.clone(), Approvals::new(always))
}

/// `http_fetch` asked about under `ask` (TOML array items).
fn asking(ask: &str) -> warden::policy::Policy {
    let mut policy = web_policy("", &format!("network_ask = [{ask}]"));
    policy.mode = warden::policy::Mode::Ask;
    policy
}

#[test]
fn after_approval_a_redirect_elsewhere_is_still_refused() {
    let other = Loopback::http(ok_with("other"));
    let to = format!("http://127.0.0.1:{}/x", other.port());
    let first = Loopback::http(move |_, out| respond(out, 302, &[("location", &to)], b""));
    let policy = asking("\"http://127.0.0.1:*\"");
    let (asked, approvals) = allowing();
    let r = fetch_approved(
        &policy,
        json!({ "url": format!("http://127.0.0.1:{}/", first.port()) }),
        Some(&approvals),
    );
    assert_eq!(r.approval, Some(Approval::UserOnce));
    assert_eq!(asked.1.load(std::sync::atomic::Ordering::SeqCst), 1);
    let text = r.outcome.model_text();
    assert!(
        text.contains(&format!("127.0.0.1:{}", other.port())) && text.contains("denied"),
        "{text}"
    );
    assert_eq!(first.requests().len(), 1);
    assert!(other.requests().is_empty());

    // The same redirect to the approved destination is followed.
    let policy = asking("\"http://127.0.0.1:*\"");
    let server = Loopback::http(|req, out| {
        if req.head.starts_with("GET /start ") {
            respond(out, 302, &[("location", "/end")], b"");
        } else {
            respond(out, 200, &[], b"the end");
        }
    });
    let r = fetch_approved(
        &policy,
        json!({ "url": format!("http://127.0.0.1:{}/start", server.port()) }),
        Some(&allowing().1),
    );
    assert!(fetched(&r).0.contains("the end"), "{:?}", r.outcome);
}

#[test]
fn after_approval_a_name_resolving_to_loopback_is_still_refused() {
    let server = Loopback::http(ok_with("never"));
    let policy = asking("\"http://*\"");
    let (asked, approvals) = allowing();
    let r = fetch_approved(
        &policy,
        json!({ "url": format!("http://localhost:{}/", server.port()) }),
        Some(&approvals),
    );
    assert_eq!(asked.1.load(std::sync::atomic::Ordering::SeqCst), 1);
    assert_eq!(r.approval, Some(Approval::UserOnce));
    assert!(
        !matches!(r.outcome, ToolOutcome::Success(_)),
        "{:?}",
        r.outcome
    );
    let text = r.outcome.model_text();
    assert!(
        text.contains("localhost resolves to a loopback address"),
        "{text}"
    );
    assert!(server.requests().is_empty());
}

#[test]
fn an_mcp_client_approving_the_destination_gets_the_page() {
    use crate::mcp::{Setup, client, with};
    let server = Loopback::http(ok_with("via mcp"));
    let port = server.port();
    let setup = Setup::new("ask");
    std::fs::write(
        &setup.policy,
        "name = \"mcp-net\"\nmode = \"ask\"\n[grants.plugin.web]\nnetwork = []\n\
         network_ask = [\"http://127.0.0.1:*\"]\n",
    )
    .unwrap();
    let home = home();
    let calls = [
        json!({"url": format!("http://127.0.0.1:{port}/a")}),
        json!({"url": format!("http://127.0.0.1:{port}/b")}),
    ];
    let seen = client(
        "approvals",
        with(
            setup.stdio(home.path(), &[]),
            json!({"tool": "http_fetch", "answers": ["allow_session"], "calls": calls}),
        ),
    );
    let asked = seen["asked"].as_array().unwrap();
    assert_eq!(asked.len(), 1, "the session grant did not cover /b: {seen}");
    let message = asked[0].as_str().unwrap();
    assert!(
        message.contains(&format!(
            "It will reach: http://127.0.0.1:{port} (approving grants http://127.0.0.1:{port})"
        )),
        "{message}"
    );
    let results = seen["results"].as_array().unwrap();
    for r in results {
        assert_eq!(r["is_error"], false, "{seen}");
        assert!(r["text"].as_str().unwrap().contains("via mcp"), "{seen}");
    }
    assert_eq!(server.requests().len(), 2);
}

#[test]
fn warden_run_refuses_a_destination_no_approval_could_grant_and_tells_the_model_why() {
    use crate::agent::{load_session, recording, run_agent, turn};
    use warden::provider::Message;
    let server = Loopback::http(ok_with("never"));
    let (sb, tmp) = (Sandbox::new(), tempfile::tempdir().unwrap());
    let input = json!({ "url": format!("http://127.0.0.1:{}/", server.port()) }).to_string();
    let rec = recording(
        tmp.path(),
        "fetch.jsonl",
        &[
            turn("", &[("q1", "http_fetch", &input)]),
            turn("Could not fetch.", &[]),
        ],
    );
    // The default policy: public destinations may be approved, loopback never.
    let run = run_agent(
        shared_home(),
        &[
            "--replay",
            rec.to_str().unwrap(),
            "-w",
            sb.ws().to_str().unwrap(),
            "fetch it",
        ],
    );
    assert_eq!(run.code, Some(0), "{}", run.stderr);
    assert_eq!(
        run.outcomes(),
        vec![("q1".to_string(), "denied".to_string())]
    );
    let decision = run.of_type("tool_decision").next().unwrap();
    assert_eq!(decision["verdict"], "ask");
    assert!(decision.get("approval").is_none(), "{decision}");
    let session = load_session(shared_home(), &run.session_id());
    let told = session
        .messages
        .iter()
        .find_map(|m| match m {
            Message::Tool { content, .. } => Some(content.clone()),
            _ => None,
        })
        .unwrap();
    assert!(
        told.contains("denied without asking: http_fetch needs approval under auto-edit mode")
            && told.contains("a loopback address")
            && told.contains("allow_private"),
        "{told}"
    );
    assert!(server.requests().is_empty());
}
