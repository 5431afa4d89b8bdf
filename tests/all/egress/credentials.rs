//! Credentials: injected by the host into requests to their audience only;
//! the guest never sees the value, and nothing the call returns holds it.

use std::path::Path;

use serde_json::json;
use warden::capability::egress::DenialReason;

use super::server::{Loopback, Seen, respond};
use super::*;

const SECRET: &str = "s3cr3t-token-0123456789";

/// Echoes the request head in the body and in a response header.
fn echo_everywhere(req: &Seen, out: &mut dyn std::io::Write) {
    let auth = req.header("authorization").join(",");
    respond(out, 200, &[("x-echo", &auth)], req.head.as_bytes());
}

fn policy_with(audience_port: u16, other_port: u16, token: &Path) -> Policy {
    policy(&format!(
        "name = \"t\"\nmode = \"auto\"\n\
         [[credential]]\nname = \"svc\"\naudience = \"http://127.0.0.1:{audience_port}\"\n\
         header = \"Authorization\"\nprefix = \"Bearer \"\nfile = {:?}\n\
         [grants.plugin.netprobe]\n\
         network = [\"http://127.0.0.1:{audience_port}\", \"http://127.0.0.1:{other_port}\"]\n\
         credentials = [\"svc\"]\n",
        token.display().to_string()
    ))
}

#[track_caller]
fn assert_no_secret(what: &str, text: &str) {
    assert!(
        !text.contains(SECRET),
        "the secret leaked into {what}: {text}"
    );
}

#[test]
fn a_credential_reaches_only_its_audience_and_never_the_guest() {
    let audience = Loopback::http(echo_everywhere);
    let other = Loopback::http(echo_everywhere);
    let secrets = tempfile::tempdir().unwrap();
    let token = secrets.path().join("token");
    std::fs::write(&token, format!("{SECRET}\n")).unwrap();
    let p = policy_with(audience.port(), other.port(), &token);
    let sb = Sandbox::new();
    let grant = grant_under(&p, &sb.ws(), "http_raw");
    assert_eq!(grant.network.as_ref().unwrap().credentials.len(), 1);
    assert_no_secret("the grant", &serde_json::to_string(&grant).unwrap());

    let mut input = get("http", &format!("127.0.0.1:{}", audience.port()), "/");
    input["headers"] = json!([["authorization", "Bearer guest-chosen"], ["x-other", "1"]]);
    let report = probe_with(
        "http_raw",
        input.clone(),
        &grant,
        &short_limits(),
        &EgressEnv::system(),
    );
    let seen = &audience.requests()[0];
    assert_eq!(
        seen.header("authorization"),
        [format!("Bearer {SECRET}")],
        "the guest's value is replaced"
    );
    let out = probe_json(&report);
    assert_eq!(out["status"], 200, "{out}");
    assert!(
        out["body"]
            .as_str()
            .unwrap()
            .contains("Bearer [REDACTED:svc]"),
        "{out}"
    );
    assert_no_secret("the guest's view", &out.to_string());
    assert_no_secret("the report", &serde_json::to_string(&report).unwrap());
    assert_eq!(report.network[0].credential.as_deref(), Some("svc"));
    let names: Vec<&str> = out["headers"]
        .as_array()
        .unwrap()
        .iter()
        .map(|h| h[0].as_str().unwrap())
        .collect();
    assert!(
        names.contains(&"x-echo") && !names.contains(&"content-length"),
        "a redacted body's original length would tell the secret's: {names:?}"
    );

    input["authority"] = json!(format!("127.0.0.1:{}", other.port()));
    let report = probe_with(
        "http_raw",
        input,
        &grant,
        &short_limits(),
        &EgressEnv::system(),
    );
    assert_eq!(probe_json(&report)["status"], 200);
    let seen = &other.requests()[0];
    assert_no_secret("another server's request", &seen.head);
    assert_eq!(seen.header("authorization"), ["Bearer guest-chosen"]);
    assert_eq!(report.network[0].credential, None);

    let view = probe_with(
        "see_all",
        json!({}),
        &grant_under(&p, &sb.ws(), "see_all"),
        &short_limits(),
        &EgressEnv::system(),
    );
    assert_no_secret(
        "everything the guest sees",
        &serde_json::to_string(&view).unwrap(),
    );
}

#[test]
fn whatever_the_call_returns_is_redacted() {
    let audience = Loopback::http(echo_everywhere);
    let sb = Sandbox::new();
    sb.write("token.txt", SECRET);
    let token = sb.ws().join("token.txt");
    let p = policy_with(audience.port(), audience.port(), &token);
    let grant = grant_under(&p, &sb.ws(), "leak_file");
    let report = probe_with(
        "leak_file",
        json!({"path": "token.txt"}),
        &grant,
        &short_limits(),
        &EgressEnv::system(),
    );
    let text = serde_json::to_string(&report).unwrap();
    assert_no_secret("the report", &text);
    for channel in [
        "text: ",
        "\"leak\":",
        "log: ",
        "progress: ",
        "stdout: ",
        "stderr: ",
    ] {
        assert!(text.contains(channel), "{channel} missing from {text}");
    }
    assert_eq!(text.matches("[REDACTED:svc]").count(), 6, "{text}");
    let failed = probe_with(
        "leak_file",
        json!({"path": "token.txt", "as_error": true}),
        &grant,
        &short_limits(),
        &EgressEnv::system(),
    );
    let message = outcome_err(&failed.outcome, warden::protocol::ErrorKind::Io);
    assert_eq!(message, "error: [REDACTED:svc]");
}

#[test]
fn an_unavailable_credential_refuses_its_audience_only() {
    let audience = Loopback::http(echo_everywhere);
    let other = Loopback::http(echo_everywhere);
    let missing = Path::new("/nonexistent/warden-test/token");
    let p = policy_with(audience.port(), other.port(), missing);
    let (report, out) = raw(
        &p,
        get("http", &format!("127.0.0.1:{}", audience.port()), "/"),
    );
    assert_eq!(out["error"], "HttpRequestDenied", "{out}");
    assert!(
        matches!(&report.network_denials[0].reason, DenialReason::CredentialUnavailable { name, .. } if name == "svc")
    );
    assert!(
        model_text(&report).contains(
            "credential `svc` is unavailable: cannot read /nonexistent/warden-test/token"
        )
    );
    assert!(audience.requests().is_empty());
    let (_, out) = raw(&p, get("http", &format!("127.0.0.1:{}", other.port()), "/"));
    assert_eq!(out["status"], 200, "{out}");
}
