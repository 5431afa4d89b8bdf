//! `warden tool call http_fetch` with a policy file, as a user runs it: the
//! page comes back, the credential from the environment reaches the server
//! and nothing printed or logged, and the audit record holds the request
//! with its destination and byte counts.

use serde_json::{Value, json};

use super::*;
use crate::egress::server::{Loopback, respond};

const SECRET: &str = "cli-fetch-s3cr3t-0123456789";

#[test]
fn warden_tool_call_fetches_and_the_audit_log_records_the_request() {
    let server = Loopback::http(|req, out| {
        let body = format!(
            "<html><body><h1>Hello</h1><p>{}</p></body></html>",
            req.header("authorization").join(",")
        );
        respond(out, 200, &[("content-type", "text/html")], body.as_bytes());
    });
    let port = server.port();
    let home = fresh_home();
    let sb = Sandbox::new();
    let policy_file = sb.parent().join("fetch.toml");
    std::fs::write(
        &policy_file,
        format!(
            "name = \"fetch-cli\"\nmode = \"auto\"\n\
             [[credential]]\nname = \"svc\"\naudience = \"http://127.0.0.1:{port}\"\n\
             header = \"authorization\"\nprefix = \"Bearer \"\nenv = \"WARDEN_FETCH_TEST_TOKEN\"\n\
             [grants.plugin.web]\nnetwork = [\"http://127.0.0.1:{port}\"]\n\
             credentials = [\"svc\"]\n"
        ),
    )
    .unwrap();
    let input = json!({"url": format!("http://127.0.0.1:{port}/hello")});
    let out = warden(home.path())
        .args(["tool", "call", "http_fetch", "--policy"])
        .arg(&policy_file)
        .arg("-w")
        .arg(sb.ws())
        .args(["--input", &input.to_string(), "--json"])
        .env("WARDEN_FETCH_TEST_TOKEN", SECRET)
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(0), "{stdout}{stderr}");
    assert!(
        !stdout.contains(SECRET) && !stderr.contains(SECRET),
        "leak: {stdout}{stderr}"
    );
    let doc: Value = serde_json::from_str(&stdout).unwrap();
    let text = doc["outcome"]["text"].as_str().unwrap();
    assert!(
        text.starts_with(&format!(
            "HTTP 200 OK\nurl: http://127.0.0.1:{port}/hello\n"
        )),
        "{text}"
    );
    // Redacted before the page was converted: Markdown escapes the brackets.
    assert!(
        text.ends_with("\n\n# Hello\n\nBearer \\[REDACTED:svc\\]"),
        "{text}"
    );
    assert_eq!(
        server.requests()[0].header("authorization"),
        [format!("Bearer {SECRET}")]
    );
    let body_len = "<html><body><h1>Hello</h1><p>Bearer </p></body></html>".len() + SECRET.len();

    let (calls, shown) = audited_calls(home.path(), "http_fetch");
    assert_eq!(calls.len(), 1, "{shown}");
    let mut expected = use_of(port, "GET", "/hello", 200, 0, body_len);
    expected["credential"] = json!("svc");
    assert_eq!(
        calls[0]["exercised"]["network"],
        json!([expected]),
        "{shown}"
    );
    let log = std::fs::read_to_string(home.path().join("audit/audit.jsonl")).unwrap();
    assert!(
        !log.contains(SECRET),
        "the credential reached the audit log"
    );
}
