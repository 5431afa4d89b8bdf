//! Running one tool call: a fresh store and instance, every limit set, and
//! every way the guest can end mapped to exactly one [`ToolOutcome`].

use std::time::Instant;

use wasmtime::Store;

use super::component::LoadedPlugin;
use super::egress_report::{redact_report, with_denials};
use super::guest::{GuestContext, GuestOutput};
use super::instance::{Ended, cap_text, hidden_paths, host_error, new_store, run_instance};
use super::interaction_call::{CallInteraction, InteractionReport, InteractionState};
use super::link::LinkProfile;
use super::process_call::ProcessCall;
use super::quota_report::with_write_quota;
use super::report::CallReport;
use super::state::{CallState, Workers};
use crate::base::{CancelToken, Limits, MAX_MEMORY_BYTES, ProgressSink};
use crate::capability::egress::{EgressCall, EgressEnv, EgressLimits, Redactor};
use crate::capability::{CappedPipe, FsBoundary, GUEST_WORKSPACE, Grant, build_wasi};
use crate::protocol::{ErrorKind, NoOneToAsk, ToolError, ToolOutcome, ToolOutput};

/// One call to make.
#[derive(Clone)]
pub struct CallRequest<'a> {
    pub call_id: String,
    pub tool: &'a str,
    /// The input object as JSON text, already validated against the schema.
    pub input: &'a str,
    pub grant: &'a Grant,
    pub limits: &'a Limits,
    pub cancel: CancelToken,
    pub progress: Option<ProgressSink>,
}

impl LoadedPlugin {
    /// Run `req` in a fresh instance and report how it ended; requests go
    /// out with the system resolver and TLS roots.
    pub fn call(&self, req: CallRequest<'_>) -> CallReport {
        self.call_in(req, EgressEnv::system, None)
    }

    /// [`LoadedPlugin::call`], with `interaction` serving the call's
    /// `warden:tool/interaction` (used only if its grant includes it).
    pub fn call_interacting(
        &self,
        req: CallRequest<'_>,
        interaction: Option<CallInteraction>,
    ) -> CallReport {
        self.call_in(req, EgressEnv::system, interaction)
    }

    /// [`LoadedPlugin::call`] with egress resolving and trusting as `env`
    /// says (a library caller's test resolver or CA; nothing a policy or
    /// the CLI can set).
    pub fn call_with(&self, req: CallRequest<'_>, env: &EgressEnv) -> CallReport {
        self.call_in(req, || env.clone(), None)
    }

    /// The call itself. `env` is asked for only when the grant has network
    /// access, so a call without it never sets up TLS roots.
    fn call_in(
        &self,
        req: CallRequest<'_>,
        env: impl FnOnce() -> EgressEnv,
        interaction: Option<CallInteraction>,
    ) -> CallReport {
        let started = Instant::now();
        let mut limits = req.limits.clone();
        limits.memory_bytes = limits.memory_bytes.min(MAX_MEMORY_BYTES);
        let stdout = CappedPipe::new(limits.stdio_bytes);
        let stderr = CappedPipe::new(limits.stdio_bytes);
        let mut report = CallReport::empty(ToolOutcome::Cancelled);
        let mut redactor = Redactor::default();
        if req.cancel.is_cancelled() {
            report.duration = started.elapsed();
            return report;
        }
        let outcome = match build_wasi(req.grant, &limits, &stdout, &stderr) {
            Err(e) => host_error(format!(
                "cannot open the workspace for this call: {}",
                e.kind()
            )),
            Ok(wasi) => {
                let mut state = CallState::new(
                    wasi,
                    FsBoundary::for_grant(req.grant).with_write_quota(limits.write_bytes),
                    stderr.clone(),
                    limits.clone(),
                    req.cancel.clone(),
                    req.progress.clone(),
                );
                if let Some(net) = &req.grant.network {
                    let deadline = state.deadline();
                    state.set_egress(std::sync::Arc::new(EgressCall::new(
                        net,
                        env(),
                        EgressLimits::from_limits(&limits),
                        deadline,
                        req.cancel.clone(),
                    )));
                }
                if let Some(process) = &req.grant.process {
                    state.process = Some(ProcessCall::new(process.clone()));
                }
                if req.grant.interaction.is_some() {
                    let setup = interaction.unwrap_or_else(|| CallInteraction {
                        user: std::sync::Arc::new(NoOneToAsk(
                            "no one can answer: this call was made without a user to ask".into(),
                        )),
                        notes: None,
                    });
                    state.interaction = Some(InteractionState {
                        call_id: req.call_id.clone(),
                        setup,
                        report: InteractionReport::default(),
                    });
                }
                if self.fans_out {
                    state.fan.workers = self.workers(&req, &stdout);
                }
                let mut store = new_store(&self.engine, state, &limits);
                let mut outcome = self.run(&mut store, &req, &limits);
                let state = store.into_data();
                if let Some(egress) = &state.egress_call {
                    redactor = egress.redactor().clone();
                    let records = egress.records();
                    outcome = with_denials(outcome, &records);
                    report.network = records.uses;
                    report.network_dropped = records.uses_dropped;
                    report.network_denials = records.denials;
                    report.network_denials_dropped = records.denials_dropped;
                }
                report.logs = state.record.logs;
                report.logs_dropped = state.record.logs_dropped;
                report.progress = state.record.progress;
                report.workers = state.fan.workers_run;
                if let Some(interaction) = state.interaction {
                    report.interaction = interaction.report;
                }
                if let Some(process) = state.process {
                    report.processes = process.uses;
                    report.processes_dropped = process.uses_dropped;
                }
                outcome = with_write_quota(outcome, state.fs_boundary.write_quota());
                let boundary = state.fs_boundary.into_report();
                report.boundary_denials = boundary.denials;
                report.boundary_denials_dropped = boundary.denials_dropped;
                report.exercised = boundary.exercised;
                outcome
            }
        };
        let out = stdout.captured();
        let err = stderr.captured();
        report.stdout = String::from_utf8_lossy(&out.bytes).into_owned();
        report.stdout_dropped = out.dropped;
        report.stderr = String::from_utf8_lossy(&err.bytes).into_owned();
        report.stderr_dropped = err.dropped;
        report.outcome = outcome.hide_paths(&hidden_paths(req.grant));
        report.duration = started.elapsed();
        if !redactor.is_empty() {
            redact_report(&mut report, &redactor);
        }
        report
    }

    fn run(
        &self,
        store: &mut Store<CallState>,
        req: &CallRequest<'_>,
        limits: &Limits,
    ) -> ToolOutcome {
        let pre = match self.instance_pre(LinkProfile::for_grant(req.grant)) {
            Ok(pre) => pre,
            Err(e) => return host_error(e.to_string()),
        };
        let context = call_context(req, limits);
        match run_instance(&pre, store, req.tool, req.input, &context, limits) {
            Ended::Returned(out) => success(out, limits),
            Ended::Failed(e) => ToolOutcome::Error(e),
            Ended::Cancelled => ToolOutcome::Cancelled,
        }
    }

    /// What this call's workers need, should the guest fan out.
    fn workers(&self, req: &CallRequest<'_>, stdout: &CappedPipe) -> Option<Box<Workers>> {
        let pre = self.instance_pre(LinkProfile::for_grant(req.grant)).ok()?;
        Some(Box::new(Workers {
            pre,
            grant: req.grant.clone(),
            tool: req.tool.to_string(),
            context: call_context(req, req.limits),
            stdout: stdout.clone(),
        }))
    }
}

/// The context a call's guest receives.
fn call_context(req: &CallRequest<'_>, limits: &Limits) -> GuestContext {
    GuestContext {
        call_id: req.call_id.clone(),
        workspace: req
            .grant
            .filesystem
            .as_ref()
            .map(|_| GUEST_WORKSPACE.to_string()),
        workspace_display: req
            .grant
            .filesystem
            .as_ref()
            .map(|fs| fs.host_dir.display().to_string()),
        deadline_ms: u64::try_from(limits.deadline.as_millis()).unwrap_or(u64::MAX),
    }
}

/// The most structured output (JSON text) the host parses and keeps for a
/// call. The model reads the text; the structured part is for programs.
pub const MAX_STRUCTURED_BYTES: usize = 4 << 20;

fn success(out: GuestOutput, limits: &Limits) -> ToolOutcome {
    let mut text = out.text;
    let mut truncated = cap_text(&mut text, limits);
    let structured = match out.structured {
        None => None,
        // Never parsed, never kept: parsing could multiply it in memory.
        Some(s) if s.len() > MAX_STRUCTURED_BYTES => {
            text.push_str(&format!(
                "\n[structured output dropped by the host: {} bytes exceeded the \
                 {MAX_STRUCTURED_BYTES}-byte cap]",
                s.len()
            ));
            truncated = true;
            None
        }
        Some(s) => match serde_json::from_str::<serde_json::Value>(&s) {
            Ok(v) => Some(v),
            Err(e) => {
                return ToolOutcome::Error(ToolError::new(
                    ErrorKind::Internal,
                    format!("the plugin returned structured output that is not JSON: {e}"),
                ));
            }
        },
    };
    ToolOutcome::Success(ToolOutput {
        text,
        structured,
        truncated,
    })
}
