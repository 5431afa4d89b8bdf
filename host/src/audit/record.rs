//! What the audit log records: one [`AuditEvent`] per line, wrapped in an
//! [`AuditRecord`] that chains it to the line before.

use serde::{Deserialize, Serialize};

use crate::base::secrets;
use crate::capability::egress::{NetworkDenial, NetworkUse};
use crate::capability::process::ProcessUse;
use crate::capability::{BoundaryDenial, FileUse};
use crate::plugin::{CapChange, PluginOrigin};

/// One line of the log. Field order is fixed: the hash covers the line's
/// bytes exactly as written.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct AuditRecord {
    /// Position in the log, from 1, without gaps.
    pub seq: u64,
    /// RFC 3339, UTC, with microseconds.
    pub time: String,
    /// sha256 (hex) of the previous line's bytes; 64 zeros for the first.
    pub prev: String,
    pub event: AuditEvent,
}

/// The hash `prev` holds for the first record.
pub const GENESIS: &str = "0000000000000000000000000000000000000000000000000000000000000000";

/// Something that happened.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum AuditEvent {
    /// A plugin was installed, upgraded, or approved again after its
    /// component changed on disk.
    PluginInstalled {
        name: String,
        version: String,
        sha256: String,
        /// The installed version it replaced, if any.
        #[serde(skip_serializing_if = "Option::is_none")]
        replaced_sha256: Option<String>,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        replaced_version: Option<String>,
        /// Whether this approved the bytes already on disk
        /// (`warden plugin approve`).
        #[serde(default, skip_serializing_if = "std::ops::Not::not")]
        approved_again: bool,
        /// Declared capabilities, as `warden plugin inspect` shows them.
        declared: serde_json::Value,
        /// The most its imports allow, as `warden plugin inspect` shows it.
        #[serde(default, skip_serializing_if = "serde_json::Value::is_null")]
        imports: serde_json::Value,
        /// How its capabilities differ from the version replaced.
        #[serde(default, skip_serializing_if = "Vec::is_empty")]
        changes: Vec<CapChange>,
        /// Who accepted grown capabilities: `--yes` or `user`; absent when
        /// none grew.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        confirmed_by: Option<String>,
    },
    /// A plugin was removed.
    PluginRemoved {
        name: String,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        version: Option<String>,
        sha256: String,
    },
    /// One tool call: the decision, the grant, and what came of it.
    ToolCall(Box<CallAudit>),
    /// `warden run --review` made an overlay: the run's writes go there.
    OverlayCreated {
        overlay: String,
        workspace: String,
        policy: String,
    },
    /// `warden review apply` copied files from an overlay into the
    /// workspace.
    OverlayApplied {
        overlay: String,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        session_id: Option<String>,
        workspace: String,
        files: Vec<AppliedFile>,
        /// Whether `--force` overrode a conflict with the workspace.
        #[serde(default, skip_serializing_if = "std::ops::Not::not")]
        forced: bool,
    },
    /// `warden review discard` (or `clean`) deleted an overlay unapplied.
    OverlayDiscarded {
        overlay: String,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        session_id: Option<String>,
        workspace: String,
        /// How many changed paths it held.
        changes: u64,
        /// `discard` or `clean` (by age).
        by: String,
    },
}

/// One path `warden review apply` wrote into the workspace.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct AppliedFile {
    /// Relative to the workspace.
    pub path: String,
    /// `added`, `modified`, `deleted`, `renamed` (from `from`).
    pub change: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub from: Option<String>,
    /// sha256 of the content written (none for a deletion or a directory).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sha256: Option<String>,
}

/// One tool call's audit record.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct CallAudit {
    pub call_id: String,
    /// The agent session, when the call came from `warden run`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub session_id: Option<String>,
    /// Who asked for the call when it was not `warden run` or `warden tool
    /// call`: an MCP client, as `mcp:NAME/VERSION` from its `initialize`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub caller: Option<String>,
    pub tool: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub plugin: Option<String>,
    /// Where the plugin's component came from, when it was not installed
    /// or built in: an uninstalled file's path and sha256.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub origin: Option<PluginOrigin>,
    /// sha256 (hex) of the input as received.
    pub args_sha256: String,
    /// The input, with secret-looking values redacted.
    pub arguments: serde_json::Value,
    /// The policy's decision: verdict, rule or mode, reason.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub decision: Option<serde_json::Value>,
    /// Who settled the decision: `policy`, `user`, `user, for the session`,
    /// `session-grant`, `denied by the user`, `unanswered`; absent if the
    /// call stopped before the policy.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub approved_by: Option<String>,
    /// The grant the call ran with.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub grant: Option<serde_json::Value>,
    /// Declared capabilities the grant cut.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub cuts: Vec<serde_json::Value>,
    /// `success`, `error`, `cancelled` or `denied`.
    pub outcome: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub error_kind: Option<String>,
    pub duration_ms: u64,
    pub output_bytes: u64,
    /// Capabilities the call exercised, and refusals at the boundary;
    /// absent when the call did not run.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub exercised: Option<ExercisedAudit>,
}

/// What a call did with its grant, as the host saw it.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct ExercisedAudit {
    /// Files and directories used and how, workspace-relative.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub files: Vec<FileUse>,
    /// Uses past the per-call cap, counted only.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub files_dropped: u64,
    /// Requests sent (scheme, host, vetted address, port, method, path,
    /// status, bytes out and in, credential name), as the egress layer
    /// reports them.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub network: Vec<NetworkUse>,
    /// Requests past the per-call cap, counted only.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub network_dropped: u64,
    /// Requests the egress checks refused (destination and reason).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub network_denials: Vec<NetworkDenial>,
    /// Refusals past the per-call cap, counted only.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub network_denials_dropped: u64,
    /// Operations refused at the WASI boundary.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub denials: Vec<BoundaryDenial>,
    /// Refusals past the per-call cap, counted only.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub denials_dropped: u64,
    /// Worker instances the call ran through `fan-out`; their use of the
    /// grant is in the fields above.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub workers: u64,
    /// Commands the call ran: the command line, working directory, how it
    /// ended, its output size, what stopped it and the confinement applied.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub processes: Vec<ProcessUse>,
    /// Commands past the per-call cap, counted only.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub processes_dropped: u64,
    /// Questions the call asked the user (`ask_user`), each with what came
    /// of it: `{question, answer}`, secrets redacted.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub asked: Vec<serde_json::Value>,
}

fn is_zero(n: &u64) -> bool {
    *n == 0
}

/// Object keys whose values are never recorded.
const SECRET_KEYS: &[&str] = &[
    "api_key",
    "apikey",
    "token",
    "secret",
    "password",
    "passwd",
    "authorization",
    "auth",
    "cookie",
    "credential",
    "credentials",
    "private_key",
];

/// `value` with secrets replaced by `"[redacted]"`: values under
/// secret-looking keys, and every secret this process resolved (see
/// [`secrets`]) wherever it appears.
pub fn redact(value: &serde_json::Value) -> serde_json::Value {
    use serde_json::Value;
    match value {
        Value::Object(map) => Value::Object(
            map.iter()
                .map(|(k, v)| {
                    let lower = k.to_ascii_lowercase().replace('-', "_");
                    let secret = SECRET_KEYS
                        .iter()
                        .any(|s| lower == *s || lower.ends_with(&format!("_{s}")));
                    let v = if secret {
                        Value::String("[redacted]".into())
                    } else {
                        redact(v)
                    };
                    (k.clone(), v)
                })
                .collect(),
        ),
        Value::Array(items) => Value::Array(items.iter().map(redact).collect()),
        other => {
            let mut other = other.clone();
            secrets::redact_value(&mut other);
            other
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn secrets_are_redacted_by_key_and_by_value() {
        let v = json!({
            "path": "a.txt",
            "headers": {"Authorization": "Bearer sk-live-123456789", "x": "y"},
            "github_token": "ghp_abc",
            "note": "key is sk-live-123456789 ok",
            "list": ["sk-live-123456789"],
        });
        secrets::register("sk-live-123456789");
        let r = redact(&v);
        let text = r.to_string();
        assert!(!text.contains("sk-live"), "{text}");
        assert!(!text.contains("ghp_abc"), "{text}");
        assert_eq!(r["path"], "a.txt");
        assert_eq!(r["headers"]["x"], "y");
        assert_eq!(r["note"], "key is [redacted] ok");
    }
}
