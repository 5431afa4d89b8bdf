//! A policy's credential reaches its audience through `http_fetch` without
//! the plugin or the model ever holding it: the host injects it over the
//! plugin's own header, and redacts it from the body, the headers, the
//! redirect the plugin then refuses to follow, and everything the call
//! returns. A redirect to another allowed origin carries no credential,
//! neither the host's nor the plugin's.

use serde_json::json;
use warden::capability::egress::DenialReason;
use warden::protocol::ErrorKind;

use super::*;
use crate::egress::server::{Loopback, Seen, ok_with, respond};

/// Shorter than `[REDACTED:svc]`, so redaction makes the body longer than
/// its Content-Length says.
const SECRET: &str = "sh0rt-s3cr3";

/// A policy allowing `rules` and injecting credential `svc`, read from
/// `token`, into requests to 127.0.0.1:`audience`.
fn policy_with(rules: &str, audience: u16, token: &std::path::Path) -> Policy {
    web_policy(
        rules,
        &format!(
            "credentials = [\"svc\"]\n\
             [[credential]]\nname = \"svc\"\naudience = \"http://127.0.0.1:{audience}\"\n\
             header = \"Authorization\"\nprefix = \"Bearer \"\nfile = {:?}\n",
            token.display().to_string()
        ),
    )
}

#[track_caller]
fn assert_no_secret(what: &str, text: &str) {
    assert!(
        !text.contains(SECRET),
        "the secret leaked into {what}: {text}"
    );
}

/// Echoes the Authorization header in the body and in `x-echo`; on
/// `/away`, redirects to port `other` with the token in the query; on
/// `/onward`, redirects to port `other` plainly.
fn echo(other: u16) -> impl Fn(&Seen, &mut dyn std::io::Write) + Send + Sync + 'static {
    move |req, out| {
        let auth = req.header("authorization").join(",");
        if req.head.starts_with("GET /away ") {
            let token = auth.trim_start_matches("Bearer ");
            let to = format!("http://127.0.0.1:{other}/leak?token={token}");
            respond(out, 302, &[("location", &to)], b"");
        } else if req.head.starts_with("GET /onward ") {
            let to = format!("http://127.0.0.1:{other}/landing");
            respond(out, 302, &[("location", &to)], b"");
        } else {
            let body = format!("you sent: {auth}\n");
            let headers = [("content-type", "text/plain"), ("x-echo", auth.as_str())];
            respond(out, 200, &headers, body.as_bytes());
        }
    }
}

#[test]
fn the_host_injects_the_credential_and_nothing_returned_holds_it() {
    let other = Loopback::http(ok_with("must not be reached"));
    let audience = Loopback::http(echo(other.port()));
    let port = audience.port();
    let dir = tempfile::tempdir().unwrap();
    let token = dir.path().join("token");
    std::fs::write(&token, format!("{SECRET}\n")).unwrap();
    let policy = policy_with(&loopback_rule(port), port, &token);

    let r = fetch(
        &policy,
        json!({
            "url": format!("http://127.0.0.1:{port}/whoami"),
            "headers": {"Authorization": "Bearer chosen-by-the-model"},
        }),
    );
    let seen = audience.requests();
    assert_eq!(
        seen[0].header("authorization"),
        [format!("Bearer {SECRET}")]
    );
    let (text, s) = fetched(&r);
    assert!(
        text.ends_with("\n\nyou sent: Bearer [REDACTED:svc]\n"),
        "{text}"
    );
    assert_eq!(s["headers"]["x-echo"], "Bearer [REDACTED:svc]");
    assert_eq!(uses(&r)[0]["credential"], "svc");
    assert_no_secret("the CallResult", &serde_json::to_string(&r).unwrap());

    let from = format!("http://127.0.0.1:{port}/away");
    let r = fetch(&policy, json!({"url": from}));
    let msg = err(&r, ErrorKind::PermissionDenied);
    assert_no_secret("the error", &msg);
    assert_no_secret("the CallResult", &serde_json::to_string(&r).unwrap());
    assert!(
        msg.contains(&format!(
            "(while following a 302 redirect from {from} to http://127.0.0.1:{}/leak?token=",
            other.port()
        )),
        "{msg}"
    );
    assert!(msg.contains("REDACTED:svc"), "{msg}");
    assert!(
        msg.ends_with(&format!(
            "[host: network access to 127.0.0.1:{} denied: no rule allows it]",
            other.port()
        )),
        "{msg}"
    );
    assert_eq!(report(&r).network_denials[0].reason, DenialReason::NoRule);
    assert!(
        other.requests().is_empty(),
        "the token left for another host"
    );
    assert_eq!(audience.requests().len(), 2);
}

#[test]
fn a_redirect_to_another_allowed_origin_carries_no_credential() {
    let other = Loopback::http(echo(0));
    let audience = Loopback::http(echo(other.port()));
    let port = audience.port();
    let dir = tempfile::tempdir().unwrap();
    let token = dir.path().join("token");
    std::fs::write(&token, SECRET).unwrap();
    let rules = format!("{}, {}", loopback_rule(port), loopback_rule(other.port()));
    let r = fetch(
        &policy_with(&rules, port, &token),
        json!({
            "url": format!("http://127.0.0.1:{port}/onward"),
            "headers": {"Authorization": "Bearer chosen-by-the-model", "X-Trace": "t1"},
        }),
    );
    let (text, _) = fetched(&r);
    assert!(text.ends_with("\n\nyou sent: \n"), "{text}");
    assert_eq!(
        audience.requests()[0].header("authorization"),
        [format!("Bearer {SECRET}")]
    );
    let landed = &other.requests()[0];
    assert!(landed.head.starts_with("GET /landing "), "{}", landed.head);
    assert!(landed.header("authorization").is_empty(), "{}", landed.head);
    assert_eq!(landed.header("x-trace"), ["t1"]);
    let used = uses(&r);
    assert_eq!(used.as_array().unwrap().len(), 2, "{used}");
    assert_eq!(
        (&used[0]["credential"], &used[1]["credential"]),
        (&json!("svc"), &Value::Null)
    );
}
