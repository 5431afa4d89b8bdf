//! One `tools/call`: through the gate, the pipeline and the audit log,
//! with the client's progress token and cancellation wired to the guest.
//!
//! Invariants: the guest runs only while the call holds the gate (the pass
//! goes into the job, so it is held until the guest has ended even if the
//! request's future is dropped); the pipeline and the audit record, once
//! started, run to their end on a thread of tokio's blocking pool even when
//! the client or its request goes away, so every call that reaches the
//! pipeline is recorded, with the client as its caller; a cancelled call's
//! outcome (and record) is `cancelled`; no progress notification follows
//! the call's result.

use std::path::PathBuf;
use std::sync::Arc;

use rmcp::RoleServer;
use rmcp::model::{ProgressNotificationParam, ProgressToken};
use rmcp::service::{Peer, RequestContext};
use tokio::sync::mpsc;

use super::approve::with_call_cancel;
use super::server::McpServer;
use crate::approval::{Approval, Approvals};
use crate::base::{CancelToken, ProgressEvent, ProgressSink, Verbosity, terminal_line};
use crate::capability::WriteMode;
use crate::pipeline::{self, CallResult, Invocation};
use crate::protocol::ToolOutcome;
use crate::runtime::InteractionParty;

/// Who is calling, for the pipeline and the audit record.
pub(super) struct Caller {
    /// `mcp:NAME/VERSION`, as the client introduced itself.
    pub(super) name: String,
    /// The session's approver and its session grants.
    pub(super) approvals: Arc<Approvals>,
    /// Who `ask_user` asks (the same client), and where memory notes live.
    pub(super) interaction: InteractionParty,
}

/// The worker running a call's pipeline failed (it panicked).
#[derive(Debug, thiserror::Error)]
#[error("the call's worker failed: {0}")]
pub(super) struct WorkerFailed(tokio::task::JoinError);

/// Run `tool` with `input` (JSON text) in `workspace` for `caller`; an
/// error only when the worker running the pipeline failed.
pub(super) async fn run(
    server: &Arc<McpServer>,
    caller: &Caller,
    tool: &str,
    input: String,
    workspace: PathBuf,
    ctx: &RequestContext<RoleServer>,
) -> Result<CallResult, WorkerFailed> {
    let catalog = server.catalog();
    let read_only = catalog
        .find_tool(tool)
        .map(|(_, spec)| spec.annotations.read_only)
        .unwrap_or(true);
    let cancel = CancelToken::new();
    let _watcher = {
        let (cancel, request, stopping) = (cancel.clone(), ctx.ct.clone(), server.stopping.clone());
        AbortOnDrop(tokio::spawn(async move {
            tokio::select! {
                _ = request.cancelled() => {}
                _ = stopping.cancelled() => {}
            }
            cancel.cancel();
        }))
    };
    // A call cancelled while it waits for the gate does not wait longer:
    // with its token set, the pipeline decides and records it but no guest
    // starts, so it needs no place in the gate.
    let pass = tokio::select! {
        pass = server.gate.enter(read_only) => Some(pass),
        _ = cancel.cancelled() => None,
    };
    let (progress, forwarder) = match ctx.meta.get_progress_token() {
        Some(token) => {
            let (sink, forwarder) = progress_to(ctx.peer.clone(), token);
            (Some(sink), Some(forwarder))
        }
        None => (None, None),
    };
    let in_flight = server.call_started();
    let job = {
        let (server, tool, caller_name, approvals, cancel) = (
            server.clone(),
            tool.to_string(),
            caller.name.clone(),
            caller.approvals.clone(),
            cancel.clone(),
        );
        let interaction = caller.interaction.clone();
        move || {
            let _pass = pass;
            let mut result = with_call_cancel(&cancel, || {
                pipeline::run(
                    &catalog,
                    Invocation {
                        tool: &tool,
                        input: &input,
                        workspace: &workspace,
                        write: WriteMode::ReadOnly,
                        limits: server.options.limits.clone(),
                        limit_requests: server.options.limit_requests,
                        cancel: cancel.clone(),
                        progress,
                        policy: Some(&server.options.policy),
                        approval: Some(&approvals),
                        rationale: None,
                        interaction: Some(interaction),
                    },
                )
            });
            if cancel.is_cancelled() && matches!(result.approval, Some(Approval::Unanswered { .. }))
            {
                result.outcome = ToolOutcome::Cancelled;
            }
            let recorded = server
                .audit
                .record_call_from(&result, &input, None, Some(&caller_name));
            if let Err(e) = recorded {
                // The writer keeps the failure: the next call's reservation
                // fails, so no later call runs unaudited.
                eprintln!(
                    "warden mcp: warning: the audit record of {} was not written: {e}",
                    result.call_id
                );
            }
            if server.options.verbosity == Verbosity::Verbose {
                say_call(&result, &caller_name);
            }
            drop(in_flight);
            result
        }
    };
    // The pipeline blocks (wasmtime-wasi's synchronous bindings enter the
    // runtime for each WASI call), so it runs on a blocking thread, not on a
    // worker: measured against `block_in_place` on the worker, which hands
    // the worker's core to another thread for each call, this is 5–8%
    // faster for one call and for eight at once (`docs/performance.md`).
    let result = tokio::task::spawn_blocking(job).await;
    if let Some(forwarder) = forwarder {
        let _ = forwarder.await;
    }
    result.map_err(WorkerFailed)
}

/// A task aborted when this is dropped: the call's watcher ends with the
/// call, whether it returns or its future is dropped.
struct AbortOnDrop(tokio::task::JoinHandle<()>);

impl Drop for AbortOnDrop {
    fn drop(&mut self) {
        self.0.abort();
    }
}

/// A progress sink sending each report to `peer` as `notifications/progress`
/// for `token`, in order, and the task doing so (it ends once the sink is
/// dropped and everything sent). The progress value counts reports; the
/// guest's fraction, when it gives one, is in the message.
fn progress_to(
    peer: Peer<RoleServer>,
    token: ProgressToken,
) -> (ProgressSink, tokio::task::JoinHandle<()>) {
    let (tx, mut rx) = mpsc::unbounded_channel::<ProgressEvent>();
    let forwarder = tokio::spawn(async move {
        let mut count = 0u64;
        while let Some(p) = rx.recv().await {
            count += 1;
            let message = match p.fraction {
                Some(f) => format!(
                    "{} ({:.0}%)",
                    crate::base::terminal_line(&p.message),
                    f * 100.0
                ),
                None => crate::base::terminal_line(&p.message),
            };
            let note =
                ProgressNotificationParam::new(token.clone(), count as f64).with_message(message);
            if peer.notify_progress(note).await.is_err() {
                break;
            }
        }
    });
    let sink: ProgressSink = Arc::new(move |p: &ProgressEvent| {
        let _ = tx.send(p.clone());
    });
    (sink, forwarder)
}

/// With `-v`, one line per call on stderr, its grant cuts and every log line.
fn say_call(result: &CallResult, caller: &str) {
    let outcome = match &result.outcome {
        ToolOutcome::Success(_) => "success".to_string(),
        ToolOutcome::Error(e) => format!("error ({})", e.kind),
        ToolOutcome::Denied { .. } => "denied".to_string(),
        ToolOutcome::Cancelled => "cancelled".to_string(),
    };
    let ms = result.report.as_ref().map_or(0, |r| r.duration.as_millis());
    eprintln!(
        "warden mcp: {} from {}: {outcome} ({ms} ms)",
        terminal_line(&result.tool),
        terminal_line(caller)
    );
    for cut in &result.grant_cuts {
        eprintln!(
            "warden mcp: note: declared {} → granted {}",
            terminal_line(&cut.declared),
            terminal_line(&cut.granted)
        );
    }
    for line in result.report.iter().flat_map(|r| &r.logs) {
        eprintln!("[{:?}] {}", line.level, terminal_line(&line.message));
    }
}
