//! One tool call, end to end: the tool exists → the input is JSON that
//! satisfies the tool's schema → the policy decides (allowed, denied, or
//! needs approval, each naming its rule) → an ask is settled by a session
//! grant or the user → the call runs in the sandbox with the effective
//! grant. Every path ends in a [`ToolOutcome`]; rejections before execution
//! are marked so the CLI can tell bad input from tool failure, and a call
//! that needs approval never runs without it. Input over [`MAX_INPUT_BYTES`]
//! is refused before it is parsed, and no message quotes more than a short
//! prefix of a bad value.

use std::borrow::Cow;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};

use crate::approval::{Approval, ApprovalRequest, Approvals};
use crate::base::{CancelToken, Limits, ProgressSink, QUOTE_BYTES, excerpt, prefix};
use crate::capability::{Grant, GrantCut, InteractionGrant, MemoryNotes, WriteMode};
use crate::plugin::{Catalog, PluginEntry, PluginOrigin};
use crate::policy::{CallFacts, DecidedBy, Decision, LimitOverrides, Policy, Verdict};
use crate::policy::{NetworkAskError, grant_from_declared, grant_from_policy, with_approved};
use crate::protocol::{ErrorKind, ToolError, ToolOutcome};
use crate::runtime::{CallInteraction, CallReport, CallRequest, InteractionParty};

/// The most bytes of input (a call's arguments, as JSON text) one call may
/// carry. Larger input is refused as invalid, and what records of it keep
/// is [`stored_input`].
pub const MAX_INPUT_BYTES: usize = 1 << 20;

/// The most bytes of a tool's error message the host passes on.
pub const MAX_ERROR_BYTES: usize = 1024;

/// Schema violations listed in one error message; the rest are counted.
const MAX_PROBLEMS: usize = 10;

/// What a record (session, audit log, event) keeps of `input`: all of it
/// up to [`MAX_INPUT_BYTES`]; past that, a short prefix and a marker giving
/// its size.
pub fn stored_input(input: &str) -> Cow<'_, str> {
    if input.len() <= MAX_INPUT_BYTES {
        return Cow::Borrowed(input);
    }
    Cow::Owned(format!(
        "{}… [cut: {} bytes, over the {MAX_INPUT_BYTES}-byte limit on a call's input]",
        prefix(input, QUOTE_BYTES),
        input.len()
    ))
}

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
    /// Who the call's plan and questions go to, and where memory notes
    /// live (`warden:tool/interaction`, used only if the grant includes
    /// it). `None`: no one can answer, and there is no memory.
    pub interaction: Option<InteractionParty>,
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
    /// Where the plugin's component came from, when it was not installed
    /// or built in (`tool call --plugin FILE`).
    pub origin: Option<PluginOrigin>,
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
        origin: None,
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

    if inv.input.len() > MAX_INPUT_BYTES {
        let message = format!(
            "the input is {} bytes, over the limit of {MAX_INPUT_BYTES} bytes (1 MiB) \
             on one call's input; send less in one call, splitting the work over several",
            inv.input.len()
        );
        return reject(result, ErrorKind::InvalidInput, message);
    }

    let Some((entry, _spec)) = catalog.find_tool(inv.tool) else {
        return reject(
            result,
            ErrorKind::UnknownTool,
            unknown_tool_message(catalog, inv.tool),
        );
    };
    result.plugin = Some(entry.name().to_string());
    result.origin = entry.origin();
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
        Err(e) => return reject(result, ErrorKind::InvalidInput, e.to_string()),
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
    let problems = schema_problems(&validator, &input);
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
            let declared = &plugin.meta.manifest.capabilities;
            if let Some(reason) = policy.capability_refusal(plugin.name(), inv.tool, declared) {
                result.outcome = ToolOutcome::Denied { reason };
                return result;
            }
            let granted = policy.grant_for_call(&facts);
            limits = match granted.limits.with_requests(&inv.limit_requests, limits) {
                Ok(l) => l,
                Err(e) => {
                    let msg = format!("{e} (policy {}, tool {})", policy.name, inv.tool);
                    return reject(result, ErrorKind::InvalidInput, msg);
                }
            };
            let network = match decision.verdict {
                Verdict::Ask => match policy.network_ask(&facts, &declared.network, &granted) {
                    Ok(network) => network,
                    Err(e) => {
                        result.outcome = ToolOutcome::Denied {
                            reason: network_refusal(policy, &decision, inv.tool, &e),
                        };
                        return result;
                    }
                },
                Verdict::Allow | Verdict::Deny => Vec::new(),
            };
            let granted = with_approved(granted, &network);
            let (grant, cuts) = grant_from_policy(declared, &workspace, &granted);
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
                        network,
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
    let interaction = inv.interaction.map(|party| CallInteraction {
        notes: match (&grant.interaction, &party.home) {
            (Some(InteractionGrant { memory: true }), Some(home)) => {
                Some(MemoryNotes::for_workspace(home, &workspace))
            }
            _ => None,
        },
        user: party.user,
    });
    let mut report = plugin.call_interacting(
        CallRequest {
            call_id,
            tool: inv.tool,
            input: &canonical_input,
            grant: &grant,
            limits: &limits,
            cancel: inv.cancel,
            progress: inv.progress,
        },
        interaction,
    );
    result.stage = Stage::Executed;
    if let ToolOutcome::Error(e) = &mut report.outcome
        && e.message.len() > MAX_ERROR_BYTES
    {
        e.message = excerpt(&e.message, MAX_ERROR_BYTES).into_owned();
    }
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

/// Why a call the policy asks about is refused unasked: no approval could
/// let it reach its destination.
fn network_refusal(policy: &Policy, d: &Decision, tool: &str, e: &NetworkAskError) -> String {
    let by = match &d.by {
        DecidedBy::Rule { name, .. } => format!("rule {name}"),
        DecidedBy::Mode(mode) => format!("{mode} mode"),
    };
    format!(
        "denied without asking: {tool} needs approval under {by} of policy {}, but no \
         approval could let it run: {e}",
        policy.name
    )
}

/// How `input` violates the schema, at most [`MAX_PROBLEMS`] violations
/// and a count of the rest.
fn schema_problems(validator: &jsonschema::Validator, input: &serde_json::Value) -> Vec<String> {
    let mut problems = Vec::new();
    let mut more = 0;
    for e in validator.iter_errors(input) {
        if problems.len() < MAX_PROBLEMS {
            problems.push(describe_violation(&e));
        } else {
            more += 1;
        }
    }
    if more > 0 {
        problems.push(format!("and {more} more"));
    }
    problems
}

/// `input.a.b: message`, naming the offending field and quoting at most
/// [`QUOTE_BYTES`] of the offending value.
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
    let value = e.instance().to_string();
    let message = e.masked_with(excerpt(&value, QUOTE_BYTES)).to_string();
    // Property names come from the input too, in the path and the message.
    excerpt(&format!("{field}: {message}"), 2 * QUOTE_BYTES).into_owned()
}

fn unknown_tool_message(catalog: &Catalog, name: &str) -> String {
    if let Some(entry) = catalog.uninstalled() {
        return not_in_component(entry, name);
    }
    // A name longer than any tool's by more than 3 is no typo of one.
    let best = catalog
        .tools()
        .map(|(_, t)| t.name.as_str())
        .filter(|t| name.chars().nth(t.chars().count() + 3).is_none())
        .map(|t| (strsim::levenshtein(t, name), t))
        .filter(|(d, _)| *d <= 3)
        .min();
    let name = excerpt(name, QUOTE_BYTES);
    match best {
        Some((_, t)) => {
            format!("unknown tool `{name}`; did you mean `{t}`? (see `warden tool list`)")
        }
        None => format!("unknown tool `{name}` (see `warden tool list`)"),
    }
}

/// An uninstalled component lacks tool `name`: say which tools it has.
fn not_in_component(entry: &PluginEntry, name: &str) -> String {
    let tools: Vec<&str> = entry.meta.tools.iter().map(|t| t.name.as_str()).collect();
    let from = match entry.origin() {
        Some(PluginOrigin::Uninstalled { path, .. }) => format!(" ({path})"),
        None => String::new(),
    };
    format!(
        "plugin {}{from} has no tool `{}`; its tools: {}",
        entry.name(),
        excerpt(name, QUOTE_BYTES),
        tools.join(", ")
    )
}

/// Why a call's workspace cannot be used.
#[derive(Debug, thiserror::Error)]
pub enum WorkspaceError {
    /// It cannot be resolved: missing, or not reachable.
    #[error("the workspace cannot be opened: {0}")]
    Unopenable(std::io::ErrorKind),
    /// It is something other than a directory.
    #[error("the workspace is not a directory")]
    NotADirectory,
}

fn canonical_workspace(path: &Path) -> Result<PathBuf, WorkspaceError> {
    let canonical =
        std::fs::canonicalize(path).map_err(|e| WorkspaceError::Unopenable(e.kind()))?;
    if !canonical.is_dir() {
        return Err(WorkspaceError::NotADirectory);
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

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn schema_problems_quote_a_short_prefix_and_count_what_they_leave_out() {
        let schema = json!({"type": "object", "properties": {
            "path": {"type": "string", "maxLength": 10},
            "n": {"type": "array", "items": {"type": "integer"}}},
            "additionalProperties": false});
        let validator = jsonschema::validator_for(&schema).unwrap();
        let long = "p".repeat(5 << 20);
        let problems = schema_problems(&validator, &json!({ "path": long }));
        assert_eq!(problems.len(), 1);
        assert!(problems[0].len() < 2 * QUOTE_BYTES + 40, "{}", problems[0]);
        assert!(
            problems[0].starts_with("input.path: \"ppp")
                && problems[0].contains(&format!("[{} bytes in all]", long.len() + 2)),
            "{}",
            problems[0]
        );

        let many: Vec<&str> = vec!["x"; 50];
        let key = "k".repeat(1 << 20);
        let problems = schema_problems(&validator, &json!({ "n": many, key: 1 }));
        assert_eq!(problems.len(), MAX_PROBLEMS + 1);
        assert_eq!(problems[MAX_PROBLEMS], "and 41 more");
        assert!(problems.iter().all(|p| p.len() < 2 * QUOTE_BYTES + 40));

        let short = schema_problems(&validator, &json!({"path": 7}));
        assert_eq!(short, [r#"input.path: 7 is not of type "string""#]);
    }
}
