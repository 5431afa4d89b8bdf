//! What a run reports while it goes, and why it stopped.
//!
//! [`AgentEvent`] is the `warden run --json` stream: one JSON object per
//! line, tagged by `type`. Fields are only ever added, never renamed.

use serde::{Deserialize, Serialize};

use crate::policy::{DecidedBy, Verdict};
use crate::provider::Usage;

/// One step of a run, as it happens.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum AgentEvent {
    /// The run began (or resumed).
    SessionStarted {
        session_id: String,
        resumed: bool,
        provider: String,
        model: String,
        policy: String,
        workspace: String,
        /// The project instruction files (`AGENTS.md`) added to the system
        /// prompt, outermost first, as paths relative to the workspace.
        #[serde(default)]
        instructions: Vec<String>,
        /// With `--review`: the id of the overlay every write goes to
        /// (see `warden review`).
        #[serde(default, skip_serializing_if = "Option::is_none")]
        overlay: Option<String>,
    },
    /// A model turn begins.
    TurnStarted { turn: u32 },
    /// More assistant text, as the model streams it.
    TextDelta { text: String },
    /// More of the model's reasoning, as it streams (shown dimmed; kept in
    /// the session record with the assistant message).
    Reasoning { text: String },
    /// The provider failed an attempt and retries; text streamed since the
    /// turn began is void and will come again.
    Retrying {
        attempt: u32,
        delay_ms: u64,
        reason: String,
    },
    /// The model asked for a tool call.
    ToolCall {
        call_id: String,
        tool: String,
        /// The arguments as the model sent them, rationale removed.
        arguments: serde_json::Value,
        #[serde(skip_serializing_if = "Option::is_none")]
        rationale: Option<String>,
    },
    /// The policy's decision on a call (absent for calls rejected before
    /// the policy, such as an unknown tool).
    ToolDecision {
        call_id: String,
        verdict: Verdict,
        /// The rule or mode that decided, as in every other decision.
        by: DecidedBy,
        #[serde(skip_serializing_if = "Option::is_none")]
        reason: Option<String>,
        /// Who let the call run or refused it, as `tool call --json`'s
        /// `approval`: `{"type": "policy"}`, `user_once`, `user_session`,
        /// `session_grant`, `user_denied` or `unanswered`, with their
        /// fields. Absent when the policy denied the call.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        approval: Option<crate::approval::Approval>,
    },
    /// A running tool reported progress. At most one per call every
    /// [`super::PROGRESS_INTERVAL`]; reports in between are not shown.
    ToolProgress {
        call_id: String,
        message: String,
        #[serde(skip_serializing_if = "Option::is_none")]
        fraction: Option<f32>,
        /// Time since the call started.
        elapsed_ms: u64,
    },
    /// A call ended; exactly one per [`AgentEvent::ToolCall`].
    ToolResult {
        call_id: String,
        tool: String,
        /// `success`, `error`, `cancelled` or `denied`.
        outcome: String,
        /// The first line of what the model is told.
        summary: String,
        duration_ms: u64,
    },
    /// The `AGENTS.md` of a directory inside the workspace was given to
    /// the model with the result of call `call_id`, which named a path
    /// there (once per session, unless compaction dropped it).
    InstructionsAdded { call_id: String, file: String },
    /// The usage notes the plugin gives for `tool` (its manifest's
    /// `[guidance]`) were given to the model with the result of `call_id`:
    /// the tool's first result in the session, or the first since
    /// compaction dropped them.
    GuidanceAdded { call_id: String, tool: String },
    /// The plan changed: a call of `update_plan` (`call_id`) replaced it,
    /// or a resumed session restored it (no `call_id`). `steps` is the
    /// whole plan, each step `pending`, `in_progress` or `done`.
    PlanUpdated {
        #[serde(default, skip_serializing_if = "Option::is_none")]
        call_id: Option<String>,
        steps: Vec<crate::protocol::PlanStep>,
    },
    /// Older turns were summarized to fit the context window.
    Compacted {
        messages_before: usize,
        messages_after: usize,
        tokens_before: u64,
        tokens_after: u64,
    },
    /// A model turn ended.
    TurnCompleted {
        turn: u32,
        #[serde(skip_serializing_if = "Option::is_none")]
        usage: Option<Usage>,
    },
    /// Something went wrong that does not stop the run.
    Warning { message: String },
    /// The user interrupted (Ctrl-C): the stream and running calls are
    /// being cancelled, and the run ends with `cancelled` once every call
    /// has its result. Another interrupt exits at once (exit code 130).
    Interrupted,
    /// The run is over.
    Finished {
        reason: StopReason,
        turns: u32,
        usage: Usage,
        /// The model's last answer, if it gave one.
        #[serde(skip_serializing_if = "Option::is_none")]
        answer: Option<String>,
    },
}

/// Why a run stopped.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum StopReason {
    /// The model answered without calling a tool.
    Done,
    /// `--max-turns` model turns ran.
    MaxTurns { limit: u32 },
    /// The wall-clock budget ran out.
    TimeBudget { limit_secs: u64 },
    /// The token budget ran out.
    TokenBudget { limit: u64, used: u64 },
    /// The model repeated itself without progress.
    LoopDetected { detail: String },
    /// Every tool call failed in `count` turns in a row (see
    /// [`super::LoopLimits::consecutive_errors`]).
    RepeatedErrors { count: u32 },
    /// The user interrupted the run.
    Cancelled,
    /// No one reads the run's output any more (its stdout pipe closed).
    OutputClosed,
    /// The model could not be reached or answered nonsense.
    ProviderFailed { message: String },
    /// The conversation does not fit the model's context window, even
    /// after older turns were summarized and the request was retried once.
    ContextOverflow { message: String },
    /// The session could not be written.
    SessionFailed { message: String },
    /// A `--review` run wrote more to its overlay than `--review-max-bytes`.
    ReviewCap { limit: u64, used: u64 },
}

impl StopReason {
    /// Whether the run reached its goal.
    pub fn is_success(&self) -> bool {
        match self {
            StopReason::Done => true,
            StopReason::MaxTurns { .. }
            | StopReason::TimeBudget { .. }
            | StopReason::TokenBudget { .. }
            | StopReason::ReviewCap { .. }
            | StopReason::LoopDetected { .. }
            | StopReason::RepeatedErrors { .. }
            | StopReason::Cancelled
            | StopReason::OutputClosed
            | StopReason::ProviderFailed { .. }
            | StopReason::ContextOverflow { .. }
            | StopReason::SessionFailed { .. } => false,
        }
    }
}

impl std::fmt::Display for StopReason {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            StopReason::Done => write!(f, "done"),
            StopReason::MaxTurns { limit } => {
                write!(f, "stopped after {limit} turns (--max-turns)")
            }
            StopReason::TimeBudget { limit_secs } => {
                write!(f, "stopped: the {limit_secs} s time budget ran out")
            }
            StopReason::TokenBudget { limit, used } => {
                write!(f, "stopped: {used} tokens used, budget {limit}")
            }
            StopReason::ReviewCap { limit, used } => write!(
                f,
                "stopped: the run wrote {used} bytes to its overlay, more than the {limit} \
                 allowed (--review-max-bytes)"
            ),
            StopReason::LoopDetected { detail } => write!(f, "stopped: loop detected ({detail})"),
            StopReason::RepeatedErrors { count } => {
                write!(
                    f,
                    "stopped: every tool call failed in {count} turns in a row"
                )
            }
            StopReason::Cancelled => write!(f, "cancelled"),
            StopReason::OutputClosed => write!(f, "stopped: the output was closed"),
            StopReason::ProviderFailed { message } => write!(f, "model failed: {message}"),
            StopReason::ContextOverflow { message } => write!(
                f,
                "stopped: the conversation does not fit the model's context window, \
                 even after compaction ({message}); start a new session or use a model \
                 with a larger window"
            ),
            StopReason::SessionFailed { message } => {
                write!(f, "the session could not be saved: {message}")
            }
        }
    }
}
