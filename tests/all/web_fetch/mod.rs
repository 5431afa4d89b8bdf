//! The built-in `http_fetch` end to end: the real `web` component in real
//! wasmtime, every request through the host's egress layer, answered by
//! loopback servers that record what reached them. What a policy allows is
//! fetched and rendered; what it does not — a redirect's next hop included —
//! is refused by the host, which says why, and the server gets nothing.

mod cli;
mod credentials;
mod limits;
mod pages;
mod redirects;
mod refusals;

use std::time::Duration;

use serde_json::Value;
use warden::approval::Approvals;
use warden::base::{CancelToken, Limits};
use warden::capability::WriteMode;
use warden::pipeline::{self, CallResult, Invocation, Stage};
use warden::policy::Policy;
use warden::protocol::ToolOutcome;
use warden::runtime::CallReport;

use crate::support::*;

/// A policy running every call unasked, granting plugin `web` the network
/// `rules` (TOML array items), followed by `extra` lines of its grant table.
pub fn web_policy(rules: &str, extra: &str) -> Policy {
    Policy::parse(
        &format!(
            "name = \"t\"\nmode = \"auto\"\n[grants.plugin.web]\nnetwork = [{rules}]\n{extra}"
        ),
        "web-test.toml",
    )
    .unwrap()
}

/// `http://127.0.0.1:PORT`, as a quoted rule.
pub fn loopback_rule(port: u16) -> String {
    format!("\"http://127.0.0.1:{port}\"")
}

/// `http_fetch` with `input` under `policy`, through the full pipeline,
/// with a deadline short enough that no test can hang.
pub fn fetch(policy: &Policy, input: Value) -> CallResult {
    fetch_approved(policy, input, None)
}

/// [`fetch`], with asks answered by `approvals` (none: asks are denied).
pub fn fetch_approved(policy: &Policy, input: Value, approvals: Option<&Approvals>) -> CallResult {
    let sb = Sandbox::new();
    let input = input.to_string();
    let r = pipeline::run(
        catalog(),
        Invocation {
            tool: "http_fetch",
            input: &input,
            workspace: &sb.ws(),
            write: WriteMode::ReadOnly,
            limits: Limits {
                deadline: Duration::from_secs(10),
                ..Limits::default()
            },
            limit_requests: Default::default(),
            cancel: CancelToken::new(),
            progress: None,
            policy: Some(policy),
            approval: approvals,
            rationale: None,
            interaction: None,
        },
    );
    assert_no_host_paths(&r.outcome.model_text(), &sb);
    r
}

/// Load the `web` plugin now, so that a test timing a call times the call
/// and not the first load of the component.
pub fn warm() {
    let (entry, _) = catalog().find_tool("http_fetch").unwrap();
    catalog().load(entry).unwrap();
}

/// The report of a call that ran.
#[track_caller]
pub fn report(r: &CallResult) -> &CallReport {
    assert_eq!(r.stage, Stage::Executed, "{:?}", r.outcome);
    r.report.as_ref().expect("an executed call has a report")
}

/// The text and structured result of a successful fetch.
#[track_caller]
pub fn fetched(r: &CallResult) -> (&str, &Value) {
    match &r.outcome {
        ToolOutcome::Success(out) => (
            out.text.as_str(),
            out.structured
                .as_ref()
                .expect("http_fetch returns structured output"),
        ),
        other => panic!("expected a fetched page, got {other:?}"),
    }
}

/// The call's network uses as JSON, as the audit log records them.
pub fn uses(r: &CallResult) -> Value {
    serde_json::to_value(&report(r).network).unwrap()
}

/// One network use as the report records it, with no credential or error.
pub fn use_of(
    port: u16,
    method: &str,
    path: &str,
    status: u16,
    bytes_out: usize,
    bytes_in: usize,
) -> Value {
    serde_json::json!({
        "scheme": "http", "host": "127.0.0.1", "port": port, "address": "127.0.0.1",
        "method": method, "path": path, "status": status,
        "bytes_out": bytes_out, "bytes_in": bytes_in, "credential": null, "error": null,
    })
}

/// What the web plugin says when the host refuses a request for any reason
/// but its address; the host's own sentence follows in `[host: …]`.
pub const REFUSED: &str = "network access denied: the host refused this request";

/// The refusal of a redirect hop, as the model reads it.
pub fn hop_refused(sdk: &str, status: u16, from: &str, to: &str, host: &str) -> String {
    format!("{sdk} (while following a {status} redirect from {from} to {to}) [host: {host}]")
}
