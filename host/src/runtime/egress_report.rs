//! What leaves a call about its network use: the refusals spelled out
//! for the model, and every credential value redacted.
//!
//! Invariant: [`redact_report`] runs on every report of a call that holds
//! credentials, after everything else is filled in, so no text the report
//! carries — output, error, logs, progress, stdout, stderr, network
//! records — holds a credential's value; transcripts and audit records are
//! built from the report and never see one.

use super::report::CallReport;
use crate::capability::egress::{NetworkRecords, Redactor};
use crate::protocol::{ToolError, ToolOutcome, ToolOutput};

/// How many egress refusals are spelled out to the model.
const DENIALS_SHOWN: usize = 3;

/// `outcome` with the egress refusals the call met spelled out, so the
/// model reads why (the guest only got an error code).
pub(super) fn with_denials(outcome: ToolOutcome, records: &NetworkRecords) -> ToolOutcome {
    if records.denials.is_empty() {
        return outcome;
    }
    let mut lines: Vec<&str> = Vec::new();
    for d in &records.denials {
        if !lines.contains(&d.message.as_str()) && lines.len() < DENIALS_SHOWN {
            lines.push(&d.message);
        }
    }
    let more = records.denials.len() as u64 + records.denials_dropped - lines.len() as u64;
    let mut note = lines.join("; ");
    if more > 0 {
        note.push_str(&format!(" (and {more} more refused requests)"));
    }
    match outcome {
        ToolOutcome::Error(e) if e.message.contains(&note) => ToolOutcome::Error(e),
        ToolOutcome::Error(e) => ToolOutcome::Error(ToolError::new(
            e.kind,
            format!("{} [host: {note}]", e.message),
        )),
        ToolOutcome::Success(mut out) => {
            out.text.push_str(&format!("\n[host: {note}]"));
            ToolOutcome::Success(out)
        }
        other @ (ToolOutcome::Cancelled | ToolOutcome::Denied { .. }) => other,
    }
}

/// Every credential value replaced wherever the report carries guest or
/// host text: the one place all of a call's output passes through.
pub(super) fn redact_report(report: &mut CallReport, r: &Redactor) {
    report.outcome = match std::mem::replace(&mut report.outcome, ToolOutcome::Cancelled) {
        ToolOutcome::Success(out) => ToolOutcome::Success(ToolOutput {
            text: r.text(&out.text),
            structured: out.structured.as_ref().map(|v| r.json(v)),
            truncated: out.truncated,
        }),
        ToolOutcome::Error(e) => ToolOutcome::Error(ToolError::new(e.kind, r.text(&e.message))),
        ToolOutcome::Denied { reason } => ToolOutcome::Denied {
            reason: r.text(&reason),
        },
        ToolOutcome::Cancelled => ToolOutcome::Cancelled,
    };
    for line in &mut report.logs {
        line.message = r.text(&line.message);
    }
    for p in &mut report.progress {
        p.message = r.text(&p.message);
    }
    report.stdout = r.text(&report.stdout);
    report.stderr = r.text(&report.stderr);
    for u in &mut report.network {
        u.path = r.text(&u.path);
        u.error = u.error.as_deref().map(|e| r.text(e));
    }
    for d in &mut report.network_denials {
        d.message = r.text(&d.message);
    }
}
