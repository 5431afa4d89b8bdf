//! The catalog's tools as MCP tools, and a call's outcome as an MCP tool
//! result.
//!
//! Invariants: a tool is listed with the input schema its plugin declares
//! and its WIT annotations as the four MCP hints; a tool the policy
//! refuses for every input or turns off (`memory = false`), or whose
//! plugin is refused, is left out unless
//! `--list-denied` asks for it (then its description says why). Every
//! outcome but success is a result with `isError`, worded for the model.

use std::sync::Arc;

use rmcp::model::{CallToolResult, ContentBlock, JsonObject, Tool, ToolAnnotations};

use crate::plugin::{Catalog, PluginEntry};
use crate::policy::{DecidedBy, Decision, Policy, Verdict};
use crate::protocol::{ToolOutcome, ToolSpec};

/// The tools to list. `asks_refused`: no one can answer an ask in this
/// session, so a tool every call of which would ask is refused too.
pub(super) fn listed(
    catalog: &Catalog,
    policy: &Policy,
    asks_refused: bool,
    list_denied: bool,
) -> Vec<Tool> {
    let mut tools = Vec::new();
    for (entry, spec) in catalog.tools() {
        let why_not = refusal(entry, spec, policy, asks_refused);
        match (why_not, list_denied) {
            (None, _) => tools.push(tool(spec, None)),
            (Some(why), true) => tools.push(tool(spec, Some(&why))),
            (Some(_), false) => {}
        }
    }
    tools
}

/// Why every call of `spec` would be refused, if it would.
fn refusal(
    entry: &PluginEntry,
    spec: &ToolSpec,
    policy: &Policy,
    asks_refused: bool,
) -> Option<String> {
    if let Some(why) = entry.refused() {
        return Some(format!("plugin {} is refused: {why}", entry.name()));
    }
    let declared = &entry.meta.manifest.capabilities;
    if let Some(why) = policy.capability_refusal(entry.name(), spec.name.as_str(), declared) {
        return Some(why);
    }
    let decision =
        policy.refuses_every_call(spec.name.as_str(), &spec.annotations, asks_refused)?;
    Some(describe(policy, &decision))
}

/// `denied by rule R of policy P: reason`, or `needs approval under …`.
fn describe(policy: &Policy, d: &Decision) -> String {
    let by = match &d.by {
        DecidedBy::Rule { name, .. } => format!("rule {name}"),
        DecidedBy::Mode(mode) => format!("{mode} mode"),
    };
    let because = d
        .reason
        .as_deref()
        .map(|r| format!(": {r}"))
        .unwrap_or_default();
    match d.verdict {
        Verdict::Deny | Verdict::Allow => {
            format!("denied by {by} of policy {}{because}", policy.name)
        }
        Verdict::Ask => format!(
            "needs approval under {by} of policy {}{because}, and no one can be asked",
            policy.name
        ),
    }
}

/// `spec` as an MCP tool; `denied` notes why every call would be refused.
fn tool(spec: &ToolSpec, denied: Option<&str>) -> Tool {
    let schema: JsonObject = match &spec.input_schema {
        serde_json::Value::Object(map) => map.clone(),
        _ => JsonObject::new(),
    };
    let description = match denied {
        None => spec.description.clone(),
        Some(why) => format!("[DENIED: {why}] {}", spec.description),
    };
    let a = spec.annotations;
    let hints = ToolAnnotations::new()
        .read_only(a.read_only)
        .destructive(a.destructive)
        .idempotent(a.idempotent)
        .open_world(a.open_world);
    Tool::new(
        spec.name.as_str().to_string(),
        description,
        Arc::new(schema),
    )
    .annotate(hints)
}

/// The tool result a client reads for `outcome`.
pub(super) fn result(outcome: &ToolOutcome) -> CallToolResult {
    match outcome {
        ToolOutcome::Success(out) => {
            let mut result = CallToolResult::success(vec![ContentBlock::text(out.text.clone())]);
            result.structured_content = out.structured.clone();
            result
        }
        ToolOutcome::Error(_) | ToolOutcome::Denied { .. } | ToolOutcome::Cancelled => {
            CallToolResult::error(vec![ContentBlock::text(outcome.model_text())])
        }
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;
    use crate::protocol::{Annotations, ErrorKind, ToolError, ToolName, ToolOutput};

    fn spec(read_only: bool) -> ToolSpec {
        ToolSpec {
            name: ToolName::new("write_file").unwrap(),
            description: "Write a file.".into(),
            input_schema: json!({"type": "object", "properties": {"path": {"type": "string"}}}),
            annotations: Annotations {
                read_only,
                destructive: true,
                idempotent: true,
                open_world: false,
            },
        }
    }

    #[test]
    fn hints_and_schema_are_the_plugins_own() {
        let t = serde_json::to_value(tool(&spec(false), None)).unwrap();
        insta::assert_json_snapshot!(t);
    }

    #[test]
    fn only_success_is_not_an_error() {
        let ok = result(&ToolOutcome::Success(ToolOutput {
            text: "hi".into(),
            structured: Some(json!({"n": 1})),
            truncated: false,
        }));
        assert_eq!(ok.is_error, Some(false));
        assert_eq!(ok.structured_content, Some(json!({"n": 1})));
        for outcome in [
            ToolOutcome::Error(ToolError::new(ErrorKind::NotFound, "no such file")),
            ToolOutcome::Denied {
                reason: "denied by rule r".into(),
            },
            ToolOutcome::Cancelled,
        ] {
            let r = result(&outcome);
            assert_eq!(r.is_error, Some(true), "{outcome:?}");
            let text = serde_json::to_value(&r.content).unwrap();
            assert_eq!(text[0]["text"], outcome.model_text());
        }
    }
}
