//! The built-in `http_fetch` (plugin `web`) through the full pipeline, with
//! no network: its listing and schema, input refused with the field named
//! (by the schema or by the plugin), and calls under grants without network
//! failing cleanly. Requests that reach a server need the host's egress
//! layer and are tested with it.

use serde_json::{Value, json};
use warden::base::{CancelToken, Limits};
use warden::capability::WriteMode;
use warden::pipeline::{self, CallResult, Invocation, Stage};
use warden::policy::Policy;
use warden::protocol::{ErrorKind, ToolOutcome};

use crate::support::*;

/// A destination that can never resolve (RFC 2606), should anything try.
const NOWHERE: &str = "https://nowhere.invalid/page";

#[test]
fn http_fetch_is_listed_with_its_schema() {
    let (entry, spec) = catalog().find_tool("http_fetch").unwrap();
    assert_eq!(entry.name(), "web");
    assert!(entry.is_builtin());
    assert_eq!(
        entry
            .meta
            .manifest
            .capabilities
            .network
            .iter()
            .map(ToString::to_string)
            .collect::<Vec<_>>(),
        ["https://*", "http://*"]
    );
    insta::assert_json_snapshot!("http_fetch_spec", spec);
}

/// The message of raw input refused before the plugin ran.
#[track_caller]
fn rejected_message(raw: &str) -> String {
    let sb = Sandbox::new();
    let r = call_raw(
        "http_fetch",
        raw,
        &sb.ws(),
        WriteMode::ReadOnly,
        Limits::default(),
    );
    assert!(rejected(&r), "expected a rejection, got {:?}", r.outcome);
    err(&r, ErrorKind::InvalidInput)
}

#[test]
fn schema_violations_name_the_field() {
    let cases = [
        r#"{}"#,
        r#"{"url": 7}"#,
        r#"{"url": "https://a.example/", "method": "PUT"}"#,
        r#"{"url": "https://a.example/", "format": "html"}"#,
        r#"{"url": "https://a.example/", "max_bytes": 0}"#,
        r#"{"url": "https://a.example/", "max_bytes": 1000001}"#,
        r#"{"url": "https://a.example/", "headers": {"X-A": 1}}"#,
        r#"{"url": "https://a.example/", "follow_redirects": "yes"}"#,
        r#"{"url": "https://a.example/", "timeout": 5}"#,
    ];
    let messages: Vec<String> = cases.iter().map(|raw| rejected_message(raw)).collect();
    for (needle, msg) in [
        "url",
        "url",
        "method",
        "format",
        "max_bytes",
        "max_bytes",
        "X-A",
        "follow_redirects",
        "timeout",
    ]
    .iter()
    .zip(&messages)
    {
        assert!(msg.contains(needle), "{needle} not named in {msg}");
    }
    insta::assert_snapshot!("http_fetch_schema_violations", messages.join("\n"));
}

/// The message of input the schema accepts but the plugin refuses.
#[track_caller]
fn refused_by_plugin(input: Value) -> String {
    let sb = Sandbox::new();
    let r = call("http_fetch", input, &sb.ws(), WriteMode::ReadOnly);
    assert_eq!(r.stage, Stage::Executed, "{:?}", r.outcome);
    let msg = err(&r, ErrorKind::InvalidInput);
    assert_no_host_paths(&msg, &sb);
    msg
}

#[test]
fn the_plugin_refuses_bad_urls_headers_and_bodies_before_sending() {
    assert_eq!(
        refused_by_plugin(json!({"url": "file:///etc/passwd"})),
        "url: unsupported scheme `file`: only http and https are supported"
    );
    assert_eq!(
        refused_by_plugin(json!({"url": "nowhere.invalid/x"})),
        "url: not an absolute URL: expected scheme://host/path, e.g. https://example.com/"
    );
    assert!(
        refused_by_plugin(json!({"url": "https://user:pw@nowhere.invalid/"}))
            .starts_with("url: user info (user:password@) is not allowed")
    );
    assert_eq!(
        refused_by_plugin(json!({"url": NOWHERE, "body": "x"})),
        "body: only POST sends a body (method is GET); set method to POST or leave body out"
    );
    assert_eq!(
        refused_by_plugin(json!({"url": NOWHERE, "headers": {"X-A": "v\r\nX-Injected: 1"}})),
        "headers.X-A: the value contains a line break or NUL byte"
    );
    assert_eq!(
        refused_by_plugin(json!({"url": NOWHERE, "headers": {"Host": "other.example"}})),
        "headers.Host: this header is set by http_fetch and the host, not by the caller"
    );
}

/// Check that a call's failure is a clean permission error about `wasi:http`:
/// no trap text, no backtrace, no host path.
#[track_caller]
fn assert_clean_network_refusal(r: &CallResult, sb: &Sandbox) {
    assert_eq!(r.stage, Stage::Executed, "{:?}", r.outcome);
    let msg = err(r, ErrorKind::PermissionDenied);
    assert!(msg.contains("wasi:http"), "{msg}");
    assert!(msg.contains("grant does not include"), "{msg}");
    for leak in [
        "backtrace",
        "wasm trap",
        ".rs:",
        "/root/",
        "/home/",
        "target/",
    ] {
        assert!(!msg.contains(leak), "{leak:?} leaked in {msg}");
    }
    assert_no_host_paths(&msg, sb);
    assert_no_host_paths(&r.outcome.model_text(), sb);
}

#[test]
fn without_a_network_grant_a_fetch_fails_cleanly() {
    let sb = Sandbox::new();
    for input in [
        json!({"url": NOWHERE}),
        json!({"url": NOWHERE, "method": "POST", "body": "{}", "headers": {"Content-Type": "application/json"}}),
        json!({"url": "http://127.0.0.1:9/", "method": "HEAD"}),
    ] {
        let r = call("http_fetch", input, &sb.ws(), WriteMode::AllowWrite);
        assert_clean_network_refusal(&r, &sb);
        let cuts: Vec<&str> = r.grant_cuts.iter().map(|c| c.declared.as_str()).collect();
        assert_eq!(cuts, ["network: https://*", "network: http://*"]);
    }
}

fn run_under(policy: &Policy, sb: &Sandbox, input: Value) -> CallResult {
    let input = input.to_string();
    pipeline::run(
        catalog(),
        Invocation {
            tool: "http_fetch",
            input: &input,
            workspace: &sb.ws(),
            write: WriteMode::ReadOnly,
            limits: Limits::default(),
            limit_requests: Default::default(),
            cancel: CancelToken::new(),
            progress: None,
            policy: Some(policy),
            approval: None,
            rationale: None,
            interaction: None,
        },
    )
}

#[test]
fn a_policy_that_grants_no_network_lets_the_call_run_and_fail_cleanly() {
    let sb = Sandbox::new();
    let policy = Policy::parse(
        "name = 'open'\nmode = 'auto'\n[grants.default]\nnetwork = []\n",
        "open.toml",
    )
    .unwrap();
    let r = run_under(&policy, &sb, json!({"url": NOWHERE}));
    assert_clean_network_refusal(&r, &sb);
    assert!(
        r.grant_cuts
            .iter()
            .all(|c| c.declared.starts_with("network: ")),
        "{:?}",
        r.grant_cuts
    );
}

#[test]
fn auto_edit_asks_before_a_fetch_and_non_interactive_runs_deny_it() {
    let sb = Sandbox::new();
    let (_, text) = warden::policy::builtin_policies()
        .into_iter()
        .find(|(name, _)| *name == "ci")
        .unwrap();
    let ci = Policy::parse(text, "ci.toml").unwrap();
    let r = run_under(&ci, &sb, json!({"url": NOWHERE}));
    assert_eq!(r.stage, Stage::Rejected);
    let ToolOutcome::Denied { reason } = &r.outcome else {
        panic!("expected a denial, got {:?}", r.outcome);
    };
    assert!(reason.contains("network"), "{reason}");
    assert!(r.report.is_none(), "the plugin must not have run");
}
