//! Network egress through the host, against loopback servers only: what
//! policies let through, what they refuse, and that the refusals happen
//! at the host boundary (the `netprobe` fixture checks nothing itself).

mod addresses;
mod boundary;
mod cli;
mod credentials;
mod dns;
mod limits;
pub(crate) mod server;
mod tls;

use std::path::Path;
use std::time::Duration;

use serde_json::Value;
use warden::base::{CancelToken, Limits};
use warden::capability::{EgressEnv, Grant};
use warden::policy::Policy;
use warden::protocol::ToolOutcome;
use warden::runtime::{CallReport, CallRequest};

use crate::support::*;
use warden::policy::grant_from_policy;

/// A policy parsed from `text`.
pub fn policy(text: &str) -> Policy {
    Policy::parse(text, "test.toml").unwrap()
}

/// A policy granting netprobe the network `rules` (TOML array items) and
/// running every call without asking.
pub fn net_policy(rules: &str) -> Policy {
    policy(&format!(
        "name = \"t\"\nmode = \"auto\"\n[grants.plugin.netprobe]\nnetwork = [{rules}]\n"
    ))
}

/// The grant netprobe's `tool` gets under `policy` with workspace `ws`.
pub fn grant_under(policy: &Policy, ws: &Path, tool: &str) -> Grant {
    let spec = policy.grant_for("netprobe", tool);
    grant_from_policy(&netprobe().meta.manifest.capabilities, ws, &spec).0
}

/// Limits with a short deadline, so no test can hang.
pub fn short_limits() -> Limits {
    Limits {
        deadline: Duration::from_secs(10),
        ..Limits::default()
    }
}

/// Run a netprobe tool under `grant`, `limits` and `env`.
pub fn probe_with(
    tool: &str,
    input: Value,
    grant: &Grant,
    limits: &Limits,
    env: &EgressEnv,
) -> CallReport {
    let input = input.to_string();
    netprobe().call_with(
        CallRequest {
            call_id: "egress-test".into(),
            tool,
            input: &input,
            grant,
            limits,
            cancel: CancelToken::new(),
            progress: None,
        },
        env,
    )
}

/// `http_raw` with `input` under `policy`, system resolver and roots.
pub fn raw(policy: &Policy, input: Value) -> (CallReport, Value) {
    let sb = Sandbox::new();
    let grant = grant_under(policy, &sb.ws(), "http_raw");
    let report = probe_with(
        "http_raw",
        input,
        &grant,
        &short_limits(),
        &EgressEnv::system(),
    );
    let json = probe_json(&report);
    (report, json)
}

/// What `http_raw` reported, or a panic showing the outcome.
#[track_caller]
pub fn probe_json(report: &CallReport) -> Value {
    match &report.outcome {
        ToolOutcome::Success(out) => out
            .structured
            .clone()
            .expect("http_raw returns structured output"),
        other => panic!("expected http_raw to return, got {other:?}"),
    }
}

/// A GET of `path` on `authority` over `scheme`.
pub fn get(scheme: &str, authority: &str, path: &str) -> Value {
    serde_json::json!({"method": "GET", "scheme": scheme, "authority": authority, "path": path})
}

/// The model-visible text of a report's outcome.
pub fn model_text(report: &CallReport) -> String {
    report.outcome.model_text()
}
