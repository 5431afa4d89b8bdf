//! Running one tool call: a fresh store and instance, every limit set, and
//! every way the guest can end mapped to exactly one [`ToolOutcome`].

use std::time::{Duration, Instant};

use wasmtime::{Store, UpdateDeadline};

use super::bindings::ToolPluginPre;
use super::bindings::types;
use super::component::LoadedPlugin;
use super::egress_report::{redact_report, with_denials};
use super::fan_out::Workers;
use super::pipe::CappedPipe;
use super::state::CallState;
use crate::base::{
    CancelToken, Interrupt, Interrupted, LogLine, ProgressEvent, ProgressSink, floor_char_boundary,
};
use crate::base::{Limits, MAX_MEMORY_BYTES};
use crate::capability::egress::{
    EgressCall, EgressEnv, EgressLimits, NetworkDenial, NetworkUse, Redactor,
};
use crate::capability::{
    BoundaryDenial, Exercised, FsBoundary, GUEST_WORKSPACE, Grant, build_wasi,
};
use crate::protocol::{ErrorKind, ToolError, ToolOutcome, ToolOutput};

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

/// What happened during a call.
#[derive(Debug, Clone, serde::Serialize)]
pub struct CallReport {
    pub outcome: ToolOutcome,
    pub logs: Vec<LogLine>,
    pub logs_dropped: u64,
    pub progress: Vec<ProgressEvent>,
    /// Captured stdout (lossy UTF-8), at most the stdio cap.
    pub stdout: String,
    pub stdout_dropped: u64,
    pub stderr: String,
    pub stderr_dropped: u64,
    /// Operations the filesystem layer refused on protected paths, at most
    /// [`crate::capability::MAX_BOUNDARY_DENIALS`].
    pub boundary_denials: Vec<BoundaryDenial>,
    /// Refusals past that cap, counted only.
    pub boundary_denials_dropped: u64,
    /// Each HTTP request that passed the egress checks and was sent, at
    /// most [`crate::capability::egress::MAX_NETWORK_RECORDS`].
    pub network: Vec<NetworkUse>,
    /// Requests past that cap, counted only.
    pub network_dropped: u64,
    /// Each HTTP request the egress checks refused, same cap.
    pub network_denials: Vec<NetworkDenial>,
    /// Refusals past that cap, counted only.
    pub network_denials_dropped: u64,
    /// What the call did with its grant, as the host's WASI layer saw it.
    pub exercised: Exercised,
    /// Worker instances the call ran through `fan-out` (their logs, file
    /// and network use and refusals are in this report).
    pub workers: u64,
    #[serde(with = "duration_ms")]
    pub duration: Duration,
}

impl CallReport {
    /// A report of `outcome` with nothing logged, captured or used.
    pub fn empty(outcome: ToolOutcome) -> CallReport {
        CallReport {
            outcome,
            logs: Vec::new(),
            logs_dropped: 0,
            progress: Vec::new(),
            stdout: String::new(),
            stdout_dropped: 0,
            stderr: String::new(),
            stderr_dropped: 0,
            boundary_denials: Vec::new(),
            boundary_denials_dropped: 0,
            network: Vec::new(),
            network_dropped: 0,
            network_denials: Vec::new(),
            network_denials_dropped: 0,
            exercised: Exercised::default(),
            workers: 0,
            duration: Duration::ZERO,
        }
    }
}

mod duration_ms {
    pub fn serialize<S: serde::Serializer>(
        d: &std::time::Duration,
        s: S,
    ) -> Result<S::Ok, S::Error> {
        s.serialize_f64(d.as_secs_f64() * 1000.0)
    }
}

impl LoadedPlugin {
    /// Run `req` in a fresh instance and report how it ended; requests go
    /// out with the system resolver and TLS roots.
    pub fn call(&self, req: CallRequest<'_>) -> CallReport {
        self.call_in(req, EgressEnv::system)
    }

    /// [`LoadedPlugin::call`] with egress resolving and trusting as `env`
    /// says (a library caller's test resolver or CA; nothing a policy or
    /// the CLI can set).
    pub fn call_with(&self, req: CallRequest<'_>, env: &EgressEnv) -> CallReport {
        self.call_in(req, || env.clone())
    }

    /// The call itself. `env` is asked for only when the grant has network
    /// access, so a call without it never sets up TLS roots.
    fn call_in(&self, req: CallRequest<'_>, env: impl FnOnce() -> EgressEnv) -> CallReport {
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
                    FsBoundary::for_grant(req.grant),
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
                if self.fans_out {
                    state.workers = self.workers(&req, &stdout);
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
                report.logs = state.logs;
                report.logs_dropped = state.logs_dropped;
                report.progress = state.progress;
                report.workers = state.workers_run;
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
        let pre = match self.instance_pre(req.grant.link_profile()) {
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
        let pre = self.instance_pre(req.grant.link_profile()).ok()?;
        Some(Box::new(Workers {
            pre,
            grant: req.grant.clone(),
            tool: req.tool.to_string(),
            context: call_context(req, req.limits),
            stdout: stdout.clone(),
        }))
    }
}

/// How a guest's `call` ended, before its output is checked.
pub(super) enum Ended {
    /// It returned normally; the output is the guest's, unchecked.
    Returned(types::ToolOutput),
    /// It returned an error, trapped or hit a limit.
    Failed(ToolError),
    /// The user cancelled the call while it ran.
    Cancelled,
}

/// The context a call's guest receives.
fn call_context(req: &CallRequest<'_>, limits: &Limits) -> types::CallContext {
    types::CallContext {
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

/// Instantiate `pre` in `store` and run `tool` on `input`.
pub(super) fn run_instance(
    pre: &ToolPluginPre<CallState>,
    store: &mut Store<CallState>,
    tool: &str,
    input: &str,
    context: &types::CallContext,
    limits: &Limits,
) -> Ended {
    let instance = match pre.instantiate(&mut *store) {
        Ok(i) => i,
        Err(e) => return classify_trap(store, e, limits),
    };
    let result = instance
        .warden_tool_plugin()
        .call_call(&mut *store, tool, input, context);
    match result {
        Err(e) => classify_trap(store, e, limits),
        // A call cancelled while it ran is cancelled, whatever it returned.
        Ok(_) if store.data().cancel.is_cancelled() => Ended::Cancelled,
        Ok(Err(e)) => Ended::Failed(ToolError::new(guest_kind(e.kind), e.message)),
        Ok(Ok(out)) => Ended::Returned(out),
    }
}

/// The host paths a call's error text must not show.
pub(super) fn hidden_paths(grant: &Grant) -> Vec<String> {
    grant
        .filesystem
        .iter()
        .map(|fs| fs.host_dir.display().to_string())
        .collect()
}

/// A store for one call with every limit applied: memory through the
/// limiter, host-call fuel, and the epoch check for deadline and cancellation.
pub(crate) fn new_store(
    engine: &wasmtime::Engine,
    state: CallState,
    limits: &Limits,
) -> Store<CallState> {
    let mut store = Store::new(engine, state);
    store.limiter(|s| s);
    store.set_hostcall_fuel(limits.hostcall_fuel);
    store.set_epoch_deadline(1);
    store.epoch_deadline_callback(|mut cx| match cx.data_mut().check_interrupt() {
        Some(why) => Err(Interrupted(why).into()),
        None => Ok(UpdateDeadline::Continue(1)),
    });
    store
}

/// Cut `text` to the output cap, with a marker saying so; true if it was cut.
pub(super) fn cap_text(text: &mut String, limits: &Limits) -> bool {
    if text.len() <= limits.output_bytes {
        return false;
    }
    let total = text.len();
    text.truncate(floor_char_boundary(text, limits.output_bytes));
    text.push_str(&format!(
        "\n[output truncated by the host: {total} bytes exceeded the {}-byte cap]",
        limits.output_bytes
    ));
    true
}

fn success(out: types::ToolOutput, limits: &Limits) -> ToolOutcome {
    let structured = match out
        .structured
        .as_deref()
        .map(serde_json::from_str::<serde_json::Value>)
    {
        None => None,
        Some(Ok(v)) => Some(v),
        Some(Err(e)) => {
            return ToolOutcome::Error(ToolError::new(
                ErrorKind::Internal,
                format!("the plugin returned structured output that is not JSON: {e}"),
            ));
        }
    };
    let mut text = out.text;
    let truncated = cap_text(&mut text, limits);
    ToolOutcome::Success(ToolOutput {
        text,
        structured,
        truncated,
    })
}

fn guest_kind(kind: types::ErrorKind) -> ErrorKind {
    match kind {
        types::ErrorKind::InvalidInput => ErrorKind::InvalidInput,
        types::ErrorKind::NotFound => ErrorKind::NotFound,
        types::ErrorKind::PermissionDenied => ErrorKind::PermissionDenied,
        types::ErrorKind::Io => ErrorKind::Io,
        types::ErrorKind::Timeout => ErrorKind::Timeout,
        types::ErrorKind::Internal => ErrorKind::Internal,
    }
}

/// Map a trap to the outcome that explains it.
fn classify_trap(store: &Store<CallState>, err: wasmtime::Error, limits: &Limits) -> Ended {
    if let Some(Interrupted(why)) = err.downcast_ref::<Interrupted>() {
        return match why {
            Interrupt::Cancelled => Ended::Cancelled,
            Interrupt::Deadline => Ended::Failed(ToolError::new(
                ErrorKind::Timeout,
                format!(
                    "the call ran past its {} deadline and was stopped",
                    human_duration(limits.deadline)
                ),
            )),
        };
    }
    let state = store.data();
    if state.memory_refused {
        return Ended::Failed(ToolError::new(
            ErrorKind::MemoryLimit,
            format!(
                "the plugin tried to use more than its {} MiB memory limit and was stopped",
                limits.memory_bytes >> 20
            ),
        ));
    }
    let text = format!("{err:#}");
    if let Some(message) = host_limit_message(&text, limits) {
        return Ended::Failed(ToolError::new(ErrorKind::LimitExceeded, message));
    }
    if let Some(rest) = text.split("unknown import: `").nth(1) {
        let name = rest.split(['`', '#']).next().unwrap_or("an interface");
        return Ended::Failed(ToolError::new(
            ErrorKind::PermissionDenied,
            format!("the plugin called {name}, which its grant does not include"),
        ));
    }
    let stderr = state.stderr.captured();
    let tail = String::from_utf8_lossy(&stderr.bytes);
    let root = err.root_cause().to_string();
    let message = match panic_message(&tail) {
        Some(p) => format!("the plugin panicked: {p} ({root})"),
        None => format!("the plugin crashed: {root}"),
    };
    Ended::Failed(ToolError::new(ErrorKind::Crashed, message))
}

/// Explain a trap raised by one of the WASI host-call limits, if it is one.
fn host_limit_message(trap: &str, limits: &Limits) -> Option<String> {
    if trap.contains("fuel allocated for hostcalls has been exhausted") {
        Some(format!(
            "the plugin passed more than {} bytes to the host in a single call or result (host-call fuel) and was stopped",
            limits.hostcall_fuel
        ))
    } else if trap.contains("resource table has no free keys") {
        Some(format!(
            "the plugin held more than {} open handles (files, streams) at once and was stopped",
            limits.resource_handles
        ))
    } else if trap.contains("requested len") && trap.contains("exceeds limit") {
        Some(format!(
            "the plugin asked for more than {} random bytes in one call and was stopped",
            limits.random_bytes
        ))
    } else {
        None
    }
}

/// The message of the last Rust panic in a guest's stderr: the text after
/// the "panicked at FILE:LINE:COL:" line (the file path is the plugin
/// author's build path, so it is left out).
fn panic_message(stderr: &str) -> Option<String> {
    let lines: Vec<&str> = stderr.lines().collect();
    let at = lines.iter().rposition(|l| l.contains("panicked at"))?;
    let message: Vec<&str> = lines[at + 1..]
        .iter()
        .take_while(|l| !l.starts_with("note: "))
        .take(5)
        .map(|l| l.trim())
        .collect();
    if message.is_empty() {
        None
    } else {
        Some(message.join(" "))
    }
}

fn host_error(message: String) -> ToolOutcome {
    ToolOutcome::Error(ToolError::new(ErrorKind::Host, message))
}

fn human_duration(d: Duration) -> String {
    if d.as_millis().is_multiple_of(1000) {
        format!("{}s", d.as_secs())
    } else {
        format!("{}ms", d.as_millis())
    }
}
