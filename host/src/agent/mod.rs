//! The agent: a turn loop that streams a model, runs the tools it calls
//! through the policy pipeline and the sandbox, and feeds the results back
//! until the model is done or a stop condition fires.
//!
//! Invariant: every tool call the model issues gets exactly one result in
//! the conversation, in the order issued — also when it is denied, fails,
//! is cancelled or never runs because the run stops.

mod compact;
mod context;
mod deadline;
mod event;
mod instructions;
mod interaction;
mod results;
mod review_cap;
mod scheduler;
mod session;
mod stop;
mod turn;

use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

pub use context::{ContextLimits, message_tokens, request_tokens, text_tokens};
pub use event::{AgentEvent, StopReason};
pub use instructions::{DEFAULT_CAP as INSTRUCTIONS_CAP, FILE_NAME as INSTRUCTIONS_FILE};
pub use instructions::{InstructionFile, ProjectInstructions, tool_guidance};
pub use interaction::with_restored_plan;
pub use review_cap::ReviewCap;
pub use session::{
    CallRecord, LoadedSession, Record, SessionError, SessionMeta, SessionStore, SessionWriter,
};
pub use stop::LoopLimits;
pub use turn::{Agent, Interrupt, RunSummary};

use crate::base::Limits;
use crate::plugin::Catalog;
use crate::policy::{CallFacts, Policy, Verdict};
use crate::provider::ToolDef;

/// Where a run's events go, as they happen.
pub type EventSink = Arc<dyn Fn(AgentEvent) + Send + Sync>;

/// The shortest time between two `tool_progress` events of one call.
pub const PROGRESS_INTERVAL: Duration = Duration::from_millis(200);

/// The optional field the host adds to every tool's input schema: a short
/// rationale the model may give. It is shown and recorded, never used to
/// decide, and removed before the plugin sees the input.
pub const RATIONALE_FIELD: &str = "rationale";

/// How a run behaves.
#[derive(Debug, Clone)]
pub struct AgentConfig {
    pub workspace: PathBuf,
    pub model: String,
    pub system_prompt: String,
    /// Most model turns in one run.
    pub max_turns: u32,
    /// Wall-clock budget for the run: when it runs out, the model's stream
    /// and the running calls are cut short.
    pub time_budget: Option<Duration>,
    /// Tokens (input plus output, over all turns) the run may use.
    pub token_budget: Option<u64>,
    pub loops: LoopLimits,
    pub context: ContextLimits,
    /// Read-only calls that may run at once.
    pub parallel: usize,
    /// Per-call limits, before the policy's own.
    pub limits: Limits,
    pub max_output_tokens: Option<u32>,
    /// The project's `AGENTS.md` files: those given just in time are
    /// looked for here (those of the start are in `system_prompt`).
    pub instructions: ProjectInstructions,
    /// With `--review`: the overlay the run writes to and its cap.
    pub review: Option<ReviewCap>,
}

impl AgentConfig {
    pub fn new(workspace: PathBuf, model: String) -> AgentConfig {
        AgentConfig {
            workspace,
            model,
            system_prompt: SYSTEM_PROMPT.to_string(),
            max_turns: 50,
            time_budget: None,
            token_budget: None,
            loops: LoopLimits::default(),
            context: ContextLimits::default(),
            parallel: 4,
            limits: Limits::default(),
            max_output_tokens: None,
            instructions: ProjectInstructions::off(),
            review: None,
        }
    }
}

/// The default system prompt.
pub const SYSTEM_PROMPT: &str = "You are Warden, a careful software agent working in the user's \
workspace. Every tool you call runs in a sandbox under a policy the user chose: paths are \
relative to the workspace, and a call may be denied — a denial is final, so do not repeat the \
same call; adapt or explain. Read before you edit. You may add a short `rationale` to any call. \
When the task is done, answer in plain text without calling a tool.";

/// The specs of the tools the policy does not deny outright, each with the
/// optional rationale field added. A tool is left out when a call with no
/// arguments would be denied (by a rule with no argument matchers, or by
/// the mode), or that the policy turns off (memory, see
/// [`Policy::capability_refusal`]), and so are the tools of a plugin whose component is not the
/// approved one (see `warden plugin approve`).
pub fn offered_tools(catalog: &Catalog, policy: &Policy) -> Vec<ToolDef> {
    let empty = serde_json::json!({});
    catalog
        .tools()
        .filter(|(entry, _)| entry.refused().is_none())
        .filter(|(entry, spec)| {
            let declared = &entry.meta.manifest.capabilities;
            policy
                .capability_refusal(entry.name(), spec.name.as_str(), declared)
                .is_none()
        })
        .filter(|(entry, spec)| {
            let d = policy.decide(&CallFacts {
                tool: spec.name.as_str(),
                plugin: entry.name(),
                annotations: spec.annotations,
                input: &empty,
            });
            d.verdict != Verdict::Deny
        })
        .map(|(_, spec)| ToolDef {
            name: spec.name.as_str().to_string(),
            description: spec.description.clone(),
            parameters: with_rationale(&spec.input_schema),
        })
        .collect()
}

fn with_rationale(schema: &serde_json::Value) -> serde_json::Value {
    let mut schema = schema.clone();
    if let Some(obj) = schema.as_object_mut() {
        let props = obj
            .entry("properties")
            .or_insert_with(|| serde_json::json!({}));
        if let Some(props) = props.as_object_mut() {
            props.entry(RATIONALE_FIELD).or_insert_with(|| {
                serde_json::json!({
                    "type": "string",
                    "description": "Optional: one short sentence on why you make this call. \
                        Shown to the user; it does not affect permissions."
                })
            });
        }
    }
    schema
}

/// `text` as canonical JSON (the approval fingerprint's form: keys sorted
/// at every level, no spaces) when it parses, else the text itself.
pub fn canonical_json(text: &str) -> String {
    match serde_json::from_str::<serde_json::Value>(text) {
        Ok(v) => crate::approval::canonical_json(&v),
        Err(_) => text.to_string(),
    }
}
