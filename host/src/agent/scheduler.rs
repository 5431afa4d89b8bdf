//! Running one turn's tool calls: read-only calls in parallel (bounded),
//! mutating calls alone, every call through the policy pipeline.
//!
//! Invariant: calls take the gate in the order the model issued them — a
//! shared hold for read-only calls, an exclusive one for the rest — so a
//! mutating call never overlaps another call and sees the effects of every
//! call issued before it.

use std::path::PathBuf;
use std::sync::{Arc, Mutex};
use std::time::Instant;

use tokio::task::JoinHandle;

use crate::approval::Approvals;
use crate::audit::AuditLog;
use crate::base::{CallGate, CancelToken, Limits, ProgressEvent};
use crate::capability::WriteMode;
use crate::pipeline::{self, CallResult, Invocation, MAX_INPUT_BYTES, stored_input};
use crate::plugin::Catalog;
use crate::policy::Policy;
use crate::protocol::ToolOutcome;
use crate::provider::ToolCall;
use crate::runtime::InteractionParty;

use super::{AgentEvent, EventSink, PROGRESS_INTERVAL, RATIONALE_FIELD};

/// A call as the model issued it, with the host's own field taken out.
#[derive(Debug, Clone)]
pub struct PreparedCall {
    /// The call as records keep it (see [`stored`]).
    pub call: ToolCall,
    /// The input the pipeline gets: the model's arguments without the
    /// rationale (or the raw text when it is not a JSON object, or over
    /// [`MAX_INPUT_BYTES`], which the pipeline refuses).
    pub input: String,
    pub rationale: Option<String>,
    pub read_only: bool,
}

impl PreparedCall {
    /// Take the call apart. Unknown tools count as read-only: they are
    /// refused before anything runs.
    pub fn new(call: ToolCall, catalog: &Catalog) -> PreparedCall {
        let read_only = catalog
            .find_tool(&call.name)
            .map(|(_, spec)| spec.annotations.read_only)
            .unwrap_or(true);
        if call.arguments.len() > MAX_INPUT_BYTES {
            return PreparedCall {
                call: stored(&call),
                input: call.arguments,
                rationale: None,
                read_only,
            };
        }
        let mut input = call.arguments.clone();
        let mut rationale = None;
        if let Ok(serde_json::Value::Object(mut map)) =
            serde_json::from_str::<serde_json::Value>(&call.arguments)
        {
            if let Some(serde_json::Value::String(r)) = map.remove(RATIONALE_FIELD) {
                rationale = Some(r);
            }
            input = serde_json::Value::Object(map).to_string();
        }
        PreparedCall {
            call,
            input,
            rationale,
            read_only,
        }
    }

    /// The arguments for display: parsed when they parse.
    pub fn shown_arguments(&self) -> serde_json::Value {
        if self.input.len() > MAX_INPUT_BYTES {
            return serde_json::Value::String(self.call.arguments.clone());
        }
        serde_json::from_str(&self.input)
            .unwrap_or_else(|_| serde_json::Value::String(self.input.clone()))
    }
}

/// `call` as the session, the context and the recording keep it: its
/// arguments cut to a short prefix and their size when they are over
/// [`MAX_INPUT_BYTES`].
pub fn stored(call: &ToolCall) -> ToolCall {
    ToolCall {
        id: call.id.clone(),
        name: call.name.clone(),
        arguments: stored_input(&call.arguments).into_owned(),
    }
}

/// A call that ran (or was refused, or cancelled).
#[derive(Debug, Clone)]
pub struct FinishedCall {
    pub prepared: PreparedCall,
    pub result: Option<CallResult>,
    pub outcome: ToolOutcome,
    pub duration_ms: u64,
}

/// Shared by every call of a run.
pub struct Scheduler {
    pub catalog: Arc<Catalog>,
    pub policy: Arc<Policy>,
    pub workspace: PathBuf,
    pub limits: Limits,
    pub events: EventSink,
    /// Set by an interrupt or when the run's time is up; running guests
    /// see it and stop.
    pub cancel: CancelToken,
    /// Where every call is recorded, with the session it belongs to.
    pub audit: Option<(Arc<AuditLog>, String)>,
    /// Who answers calls the policy asks about, and the session's grants.
    pub approvals: Arc<Approvals>,
    /// Who the calls' plans and questions go to, and where memory lives.
    pub interaction: Option<InteractionParty>,
    gate: CallGate,
}

impl Scheduler {
    pub fn new(
        catalog: Arc<Catalog>,
        policy: Arc<Policy>,
        workspace: PathBuf,
        limits: Limits,
        events: EventSink,
        cancel: CancelToken,
        parallel: usize,
    ) -> Scheduler {
        Scheduler {
            catalog,
            policy,
            workspace,
            limits,
            events,
            cancel,
            audit: None,
            approvals: Arc::new(Approvals::non_interactive()),
            interaction: None,
            gate: CallGate::new(parallel),
        }
    }

    /// Take the gate for `call` (waiting for earlier calls as the
    /// invariant requires), then run it in the background.
    pub async fn start(&self, call: PreparedCall) -> JoinHandle<FinishedCall> {
        let hold = self.gate.hold(call.read_only).await;
        let catalog = self.catalog.clone();
        let policy = self.policy.clone();
        let workspace = self.workspace.clone();
        let limits = self.limits.clone();
        let cancel = self.cancel.clone();
        let events = self.events.clone();
        let audit = self.audit.clone();
        let approvals = self.approvals.clone();
        let interaction = self.interaction.clone();
        tokio::spawn(async move {
            let pass = hold.admit().await;
            let started = Instant::now();
            if cancel.is_cancelled() {
                return cancelled(call);
            }
            let run = {
                let call = call.clone();
                tokio::task::spawn_blocking(move || {
                    let progress = progress_sink(call.call.id.clone(), events.clone(), started);
                    let result = pipeline::run(
                        &catalog,
                        Invocation {
                            tool: &call.call.name,
                            input: &call.input,
                            workspace: &workspace,
                            write: WriteMode::ReadOnly,
                            limits,
                            limit_requests: Default::default(),
                            cancel,
                            progress: Some(progress),
                            policy: Some(&policy),
                            approval: Some(&approvals),
                            rationale: call.rationale.as_deref(),
                            interaction,
                        },
                    );
                    if let Some((log, session)) = &audit {
                        let written = log.record_call(&result, &call.input, Some(session));
                        if let Err(e) = written {
                            events(AgentEvent::Warning {
                                message: format!(
                                    "the audit record of {} was not written: {e}",
                                    call.call.id
                                ),
                            });
                        }
                    }
                    result
                })
            };
            let result = run.await;
            drop(pass);
            let duration_ms = started.elapsed().as_millis() as u64;
            match result {
                Ok(r) => FinishedCall {
                    outcome: r.outcome.clone(),
                    result: Some(r),
                    prepared: call,
                    duration_ms,
                },
                Err(join) => FinishedCall {
                    outcome: ToolOutcome::Error(crate::protocol::ToolError::new(
                        crate::protocol::ErrorKind::Host,
                        format!("the call's worker failed: {join}"),
                    )),
                    result: None,
                    prepared: call,
                    duration_ms,
                },
            }
        })
    }
}

/// Where a call's progress reports go: out as `tool_progress` events with
/// the time since `started`, at most one per [`PROGRESS_INTERVAL`] (the
/// first at once; reports within the interval of the last one shown are
/// dropped here, and kept in the call's report).
fn progress_sink(id: String, events: EventSink, started: Instant) -> crate::base::ProgressSink {
    let last: Mutex<Option<Instant>> = Mutex::new(None);
    Arc::new(move |p: &ProgressEvent| {
        let now = Instant::now();
        {
            let Ok(mut last) = last.lock() else { return };
            if last.is_some_and(|at| now.duration_since(at) < PROGRESS_INTERVAL) {
                return;
            }
            *last = Some(now);
        }
        events(AgentEvent::ToolProgress {
            call_id: id.clone(),
            message: p.message.clone(),
            fraction: p.fraction,
            elapsed_ms: now.duration_since(started).as_millis() as u64,
        })
    })
}

/// A call that never ran because the run was interrupted or ran out of
/// time.
pub fn cancelled(call: PreparedCall) -> FinishedCall {
    FinishedCall {
        prepared: call,
        result: None,
        outcome: ToolOutcome::Cancelled,
        duration_ms: 0,
    }
}

/// Whether a finished call counts as a failure for the watchdog.
pub fn failed(f: &FinishedCall) -> bool {
    match &f.outcome {
        ToolOutcome::Success(_) | ToolOutcome::Cancelled => false,
        ToolOutcome::Error(_) | ToolOutcome::Denied { .. } => true,
    }
}
