//! Turning a finished call into its audit record.

use std::borrow::Cow;

use super::record::{AuditEvent, CallAudit, ExercisedAudit, redact};
use crate::approval::Approval;
use crate::base::sha256_hex;
use crate::pipeline::{CallResult, stored_input};
use crate::protocol::{ToolOutcome, ToolOutput};
use crate::runtime::CallReport;

impl CallAudit {
    /// The record of `result`, whose input was `input` (as received; the
    /// record keeps its hash, and of input over the limit only a prefix),
    /// its arguments redacted (see [`redact`]).
    pub fn of(result: &CallResult, input: &str, session_id: Option<&str>) -> CallAudit {
        let arguments = match stored_input(input) {
            Cow::Borrowed(whole) => serde_json::from_str(whole)
                .unwrap_or_else(|_| serde_json::Value::String(whole.to_string())),
            Cow::Owned(cut) => serde_json::Value::String(cut),
        };
        let (error_kind, output_bytes) = match &result.outcome {
            ToolOutcome::Success(out) => (None, out.text.len() as u64),
            ToolOutcome::Error(e) => (Some(e.kind.as_str().to_string()), 0),
            ToolOutcome::Cancelled | ToolOutcome::Denied { .. } => (None, 0),
        };
        CallAudit {
            call_id: result.call_id.clone(),
            session_id: session_id.map(str::to_string),
            caller: None,
            tool: result.tool.clone(),
            plugin: result.plugin.clone(),
            origin: result.origin.clone(),
            args_sha256: sha256_hex(input.as_bytes()),
            arguments: redact(&arguments),
            decision: result.decision.as_ref().map(json),
            approved_by: result.approval.as_ref().map(|a| match a {
                Approval::Policy => "policy".to_string(),
                Approval::UserOnce => "user".to_string(),
                Approval::UserSession { .. } => "user, for the session".to_string(),
                Approval::SessionGrant { .. } => "session-grant".to_string(),
                Approval::UserDenied { .. } => "denied by the user".to_string(),
                Approval::Unanswered { .. } => "unanswered".to_string(),
            }),
            grant: result.grant.as_ref().map(json),
            cuts: result.grant_cuts.iter().map(json).collect(),
            outcome: result.outcome.label().to_string(),
            error_kind,
            duration_ms: result
                .report
                .as_ref()
                .map(|r| r.duration.as_millis() as u64)
                .unwrap_or(0),
            output_bytes,
            exercised: result.report.as_ref().map(|r| ExercisedAudit {
                files: r.exercised.files.clone(),
                files_dropped: r.exercised.files_dropped,
                network: r.network.clone(),
                network_dropped: r.network_dropped,
                network_denials: r.network_denials.clone(),
                network_denials_dropped: r.network_denials_dropped,
                denials: r.boundary_denials.clone(),
                denials_dropped: r.boundary_denials_dropped,
                workers: r.workers,
                processes: r.processes.clone(),
                processes_dropped: r.processes_dropped,
                asked: (r.interaction.asked.iter())
                    .map(|a| {
                        let mut v = json(a);
                        crate::base::secrets::redact_value(&mut v);
                        v
                    })
                    .collect(),
            }),
        }
    }
}

/// What of `result` its record needs, and the size of its output: the
/// output itself, logs and captured stdio are left behind, so queueing a
/// call costs the same whatever it printed.
pub(super) fn audit_copy(result: &CallResult) -> (CallResult, u64) {
    let (outcome, output_bytes) = match &result.outcome {
        ToolOutcome::Success(out) => (
            ToolOutcome::Success(ToolOutput {
                text: String::new(),
                structured: None,
                truncated: out.truncated,
            }),
            out.text.len() as u64,
        ),
        other => (other.clone(), 0),
    };
    let report = result.report.as_ref().map(|r| CallReport {
        boundary_denials: r.boundary_denials.clone(),
        boundary_denials_dropped: r.boundary_denials_dropped,
        network: r.network.clone(),
        network_dropped: r.network_dropped,
        network_denials: r.network_denials.clone(),
        network_denials_dropped: r.network_denials_dropped,
        exercised: r.exercised.clone(),
        workers: r.workers,
        processes: r.processes.clone(),
        processes_dropped: r.processes_dropped,
        interaction: r.interaction.clone(),
        duration: r.duration,
        ..CallReport::empty(ToolOutcome::Cancelled)
    });
    let copy = CallResult {
        call_id: result.call_id.clone(),
        tool: result.tool.clone(),
        plugin: result.plugin.clone(),
        origin: result.origin.clone(),
        stage: result.stage,
        outcome,
        grant: result.grant.clone(),
        decision: result.decision.clone(),
        approval: result.approval.clone(),
        grant_cuts: result.grant_cuts.clone(),
        report,
    };
    (copy, output_bytes)
}

/// A finished call whose record the writer builds: the caller pays only
/// for a copy, not for hashing, redacting and converting it.
pub(super) struct PendingCall {
    /// The result without its output (see [`audit_copy`]).
    pub(super) result: CallResult,
    pub(super) output_bytes: u64,
    pub(super) input: String,
    pub(super) session_id: Option<String>,
    pub(super) caller: Option<String>,
}

impl PendingCall {
    pub(super) fn into_event(self) -> AuditEvent {
        let mut record = CallAudit::of(&self.result, &self.input, self.session_id.as_deref());
        record.output_bytes = self.output_bytes;
        record.caller = self.caller;
        AuditEvent::ToolCall(Box::new(record))
    }
}

/// What waits in the writer's queue.
pub(super) enum Queued {
    Event(Box<AuditEvent>),
    Call(Box<PendingCall>),
}

impl Queued {
    pub(super) fn into_event(self) -> AuditEvent {
        match self {
            Queued::Event(e) => *e,
            Queued::Call(c) => c.into_event(),
        }
    }
}

/// `v` as JSON; `null` if it cannot be (it always can for these types).
fn json<T: serde::Serialize>(v: &T) -> serde_json::Value {
    serde_json::to_value(v).unwrap_or(serde_json::Value::Null)
}
