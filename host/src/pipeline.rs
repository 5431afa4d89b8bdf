//! One tool call, end to end: the tool exists → the input is JSON that
//! satisfies the tool's schema → the policy decides (allowed, denied, or
//! needs approval, each naming its rule) → an ask is settled by a session
//! grant or the user → the call runs in the sandbox with the effective
//! grant. Every path ends in a [`ToolOutcome`]; rejections before execution
//! are marked so the CLI can tell bad input from tool failure, and a call
//! that needs approval never runs without it.

use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};

use crate::approval::{Approval, ApprovalRequest, Approvals};
use crate::base::{CancelToken, Limits, ProgressSink};
use crate::capability::{Grant, GrantCut, WriteMode};
use crate::plugin::Catalog;
use crate::policy::{CallFacts, DecidedBy, Decision, LimitOverrides, Policy, Verdict};
use crate::policy::{grant_from_declared, grant_from_policy};
use crate::protocol::{ErrorKind, ToolError, ToolOutcome};
use crate::runtime::{CallReport, CallRequest};

/// A request to run one tool.
pub struct Invocation<'a> {
    pub tool: &'a str,
    /// The input as JSON text, exactly as received.
    pub input: &'a str,
    pub workspace: &'a Path,
    pub write: WriteMode,
    /// The limits to start from: the runtime defaults, plus any the caller
    /// set that no policy governs.
    pub limits: Limits,
    /// Deadline, memory and output the caller asked for explicitly: under a
    /// policy they may lower its limits, never raise them (a request above
    /// a policy's ceiling rejects the call as bad usage).
    pub limit_requests: LimitOverrides,
    pub cancel: CancelToken,
    pub progress: Option<ProgressSink>,
    /// The policy deciding the call and its grant. Without one, the grant is
    /// the plugin's declared needs limited to the workspace, writable only
    /// under [`WriteMode::AllowWrite`].
    pub policy: Option<&'a Policy>,
    /// Who settles a call the policy asks about, and the session grants
    /// shared with the other calls of the session. `None`: no one can be
    /// asked, so an ask is refused with a reason saying so.
    pub approval: Option<&'a Approvals>,
    /// Why the model wants this call, shown with an approval prompt; never
    /// used to decide.
    pub rationale: Option<&'a str>,
}

/// Where a call stopped.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Stage {
    /// Refused before running: unknown tool, bad JSON, schema violation, bad workspace.
    Rejected,
    /// The plugin could not be loaded.
    Load,
    /// The call ran in the sandbox.
    Executed,
}

/// How a call went.
#[derive(Debug, Clone, serde::Serialize)]
pub struct CallResult {
    pub call_id: String,
    pub tool: String,
    pub plugin: Option<String>,
    pub stage: Stage,
    pub outcome: ToolOutcome,
    pub grant: Option<Grant>,
    /// The policy's decision, when a policy was given.
    pub decision: Option<Decision>,
    /// Who let the call run, or refused it, when the policy allowed it or
    /// asked: the policy, the user (once or for the session), an earlier
    /// session grant, or no one.
    pub approval: Option<Approval>,
    /// Declared capabilities the grant did not include.
    pub grant_cuts: Vec<GrantCut>,
    pub report: Option<CallReport>,
}

/// Run `inv` through the pipeline. What the outcome says never carries the
/// workspace's host path.
pub fn run(catalog: &Catalog, inv: Invocation<'_>) -> CallResult {
    let mut hidden = vec![inv.workspace.display().to_string()];
    let mut canonical = None;
    let mut result = run_unhidden(catalog, inv, &mut canonical);
    hidden.extend(canonical.map(|c| c.display().to_string()));
    result.outcome = result.outcome.hide_paths(&hidden);
    result
}

/// The pipeline itself; `canonical` receives the workspace's canonical
/// path once it is resolved (the caller hides it from the outcome too).
fn run_unhidden(
    catalog: &Catalog,
    inv: Invocation<'_>,
    canonical: &mut Option<PathBuf>,
) -> CallResult {
    let call_id = new_call_id();
    let mut result = CallResult {
        call_id: call_id.clone(),
        tool: inv.tool.to_string(),
        plugin: None,
        stage: Stage::Rejected,
        outcome: ToolOutcome::Cancelled,
        grant: None,
        decision: None,
        approval: None,
        grant_cuts: Vec::new(),
        report: None,
    };
    let reject = |mut r: CallResult, kind: ErrorKind, msg: String| {
        r.outcome = ToolOutcome::Error(ToolError::new(kind, msg));
        r
    };

    let Some((entry, _spec)) = catalog.find_tool(inv.tool) else {
        return reject(
            result,
            ErrorKind::UnknownTool,
            unknown_tool_message(catalog, inv.tool),
        );
    };
    result.plugin = Some(entry.name().to_string());
    let input: serde_json::Value = match serde_json::from_str(inv.input) {
        Ok(v) => v,
        Err(e) => {
            return reject(
                result,
                ErrorKind::InvalidInput,
                format!("input is not valid JSON: {e}"),
            );
        }
    };
    if !input.is_object() {
        return reject(
            result,
            ErrorKind::InvalidInput,
            "input must be a JSON object".into(),
        );
    }
    let workspace = match canonical_workspace(inv.workspace) {
        Ok(p) => p,
        Err(msg) => return reject(result, ErrorKind::InvalidInput, msg),
    };
    *canonical = Some(workspace.clone());

    let plugin = match catalog.load(entry) {
        Ok(p) => p,
        Err(e) => {
            result.stage = Stage::Load;
            return reject(result, ErrorKind::Host, e.to_string());
        }
    };
    let validator = match plugin.validator(inv.tool) {
        Ok(v) => v,
        Err(e) => {
            result.stage = Stage::Load;
            return reject(
                result,
                ErrorKind::Host,
                format!("cannot check the input of {}: {e}", inv.tool),
            );
        }
    };
    let problems: Vec<String> = validator
        .iter_errors(&input)
        .map(|e| describe_violation(&e))
        .collect();
    if !problems.is_empty() {
        let message = format!(
            "input does not match the schema of {}: {}",
            inv.tool,
            problems.join("; ")
        );
        return reject(result, ErrorKind::InvalidInput, message);
    }

    let mut limits = inv.limits.clone();
    let (grant, cuts) = match inv.policy {
        None => {
            limits = inv.limit_requests.apply(limits);
            grant_from_declared(&plugin.meta.manifest.capabilities, &workspace, inv.write)
        }
        Some(policy) => {
            let spec = plugin
                .tool(inv.tool)
                .map(|t| t.annotations)
                .unwrap_or_default();
            let facts = CallFacts {
                tool: inv.tool,
                plugin: plugin.name(),
                annotations: spec,
                input: &input,
            };
            let decision = policy.decide(&facts);
            result.decision = Some(decision.clone());
            let granted = policy.grant_for_call(&facts);
            limits = match granted.limits.with_requests(&inv.limit_requests, limits) {
                Ok(l) => l,
                Err(e) => {
                    let msg = format!("{e} (policy {}, tool {})", policy.name, inv.tool);
                    return reject(result, ErrorKind::InvalidInput, msg);
                }
            };
            let (grant, cuts) =
                grant_from_policy(&plugin.meta.manifest.capabilities, &workspace, &granted);
            let approval = match decision.verdict {
                Verdict::Allow => Approval::Policy,
                Verdict::Deny => {
                    result.outcome = ToolOutcome::Denied {
                        reason: denial(policy, &decision),
                    };
                    return result;
                }
                Verdict::Ask => {
                    let req = ApprovalRequest {
                        call_id: result.call_id.clone(),
                        tool: inv.tool.to_string(),
                        plugin: plugin.name().to_string(),
                        input: input.clone(),
                        policy: policy.name.clone(),
                        decision,
                        grant: grant.clone(),
                        limits: limits.clone(),
                        rationale: inv.rationale.map(str::to_string),
                    };
                    let approval = settle(inv.approval, &req);
                    if let Some(reason) = approval.refusal(&req) {
                        result.approval = Some(approval);
                        result.outcome = ToolOutcome::Denied { reason };
                        return result;
                    }
                    approval
                }
            };
            result.approval = Some(approval);
            (grant, cuts)
        }
    };
    let canonical_input = input.to_string();
    let report = plugin.call(CallRequest {
        call_id,
        tool: inv.tool,
        input: &canonical_input,
        grant: &grant,
        limits: &limits,
        cancel: inv.cancel,
        progress: inv.progress,
    });
    result.stage = Stage::Executed;
    result.outcome = report.outcome.clone();
    result.grant = Some(grant);
    result.grant_cuts = cuts;
    result.report = Some(report);
    result
}

/// Settle an ask through `approvals`; with none, no one can be asked.
fn settle(approvals: Option<&Approvals>, req: &ApprovalRequest) -> Approval {
    match approvals {
        Some(approvals) => approvals.resolve(req),
        None => Approvals::non_interactive().resolve(req),
    }
}

/// Why the policy denied a call: the rule or mode, the policy, the reason.
fn denial(policy: &Policy, d: &Decision) -> String {
    let by = match &d.by {
        DecidedBy::Rule { name, .. } => format!("rule {name}"),
        DecidedBy::Mode(mode) => format!("{mode} mode"),
    };
    let because = d
        .reason
        .as_deref()
        .map(|r| format!(": {r}"))
        .unwrap_or_default();
    format!("denied by {by} of policy {}{because}", policy.name)
}

/// `input.a.b: message`, naming the offending field.
fn describe_violation(e: &jsonschema::ValidationError<'_>) -> String {
    let pointer = e.instance_path().to_string();
    let field: String =
        pointer
            .split('/')
            .filter(|s| !s.is_empty())
            .fold("input".to_string(), |acc, part| {
                if part.bytes().all(|b| b.is_ascii_digit()) {
                    format!("{acc}[{part}]")
                } else {
                    format!("{acc}.{part}")
                }
            });
    format!("{field}: {e}")
}

fn unknown_tool_message(catalog: &Catalog, name: &str) -> String {
    let best = catalog
        .tools()
        .map(|(_, t)| t.name.as_str())
        .map(|t| (strsim::levenshtein(t, name), t))
        .filter(|(d, _)| *d <= 3)
        .min();
    match best {
        Some((_, t)) => {
            format!("unknown tool `{name}`; did you mean `{t}`? (see `warden tool list`)")
        }
        None => format!("unknown tool `{name}` (see `warden tool list`)"),
    }
}

fn canonical_workspace(path: &Path) -> Result<PathBuf, String> {
    let canonical = std::fs::canonicalize(path)
        .map_err(|e| format!("the workspace cannot be opened: {}", e.kind()))?;
    if !canonical.is_dir() {
        return Err("the workspace is not a directory".to_string());
    }
    Ok(canonical)
}

fn new_call_id() -> String {
    static NEXT: AtomicU64 = AtomicU64::new(0);
    let nanos = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_nanos() as u64)
        .unwrap_or(0);
    format!(
        "call_{:x}{:04x}_{}",
        nanos,
        std::process::id() & 0xffff,
        NEXT.fetch_add(1, Ordering::Relaxed)
    )
}
