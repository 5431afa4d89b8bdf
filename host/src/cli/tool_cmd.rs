//! `warden tool call`.

use std::io::{IsTerminal, Read};
use std::sync::Arc;
use std::time::Instant;

use serde_json::json;

use super::{CallArgs, Exit, fail, open_catalog_with, workspace_trust};
use crate::approval::{Approval, Approvals, NonInteractive, SessionGrant, TerminalApprover};
use crate::base::{CancelToken, Verbosity, secrets, terminal_line, terminal_text};
use crate::capability::WriteMode;
use crate::pipeline::{self, CallResult, Invocation, Stage};
use crate::protocol::ToolOutcome;
use crate::runtime::Instances;
use crate::runtime::InteractionParty;

pub fn call(args: CallArgs, verbosity: Verbosity) -> Exit {
    if args.allow_write {
        return fail(
            args.json,
            Exit::Usage,
            "--allow-write is gone: every call runs under a policy, which decides what may be \
             written (the default, workspace-write, allows writes inside the workspace; \
             --policy read-only allows none)",
        );
    }
    let inputs = match &args.input_lines {
        Some(source) => read_input(&lines_source(source)).map(|text| {
            text.lines()
                .filter(|l| !l.trim().is_empty())
                .map(str::to_string)
                .collect::<Vec<_>>()
        }),
        None => read_input(&args.input).map(|i| vec![i]),
    };
    let inputs = match inputs {
        Ok(i) => i,
        Err(msg) => return fail(args.json, Exit::Usage, &msg),
    };
    let workspace = match args
        .workspace
        .clone()
        .map(Ok)
        .unwrap_or_else(std::env::current_dir)
    {
        Ok(w) => w,
        Err(e) => {
            return fail(
                args.json,
                Exit::Usage,
                &format!("cannot read the current directory: {e}"),
            );
        }
    };
    let trusted = match workspace_trust::canonical_workspace(&workspace) {
        Ok(w) => w,
        Err(msg) => return fail(args.json, Exit::Usage, &msg),
    };
    let home = match crate::home::Home::from_env() {
        Ok(h) => h,
        Err(e) => return fail(args.json, Exit::Failure, &e.to_string()),
    };
    if let Err(msg) = workspace_trust::check(&trusted, &home, args.trust_workspace) {
        return fail(args.json, Exit::Usage, &msg);
    }
    // One input makes one call; a batch reuses pool slots across its calls.
    let instances = match inputs.len() {
        1 => Instances::OnDemand,
        _ => Instances::Pooled,
    };
    let policy = match super::policy_cmd::effective(args.policy.as_deref()) {
        Ok(p) => p,
        Err(e) => return fail(args.json, Exit::Usage, &e),
    };
    // Before any thread starts: the process confines itself (still able
    // to read the uninstalled component, if any).
    let read = args
        .plugin
        .iter()
        .filter_map(|p| std::path::absolute(p).ok());
    if let Some(warning) =
        super::self_confine::confine_self(&home, &workspace, &policy, read.collect())
        && verbosity.shows_warnings()
    {
        errln!("warden: warning: {warning}");
    }
    crate::runtime::warm_up_wasi_io();
    crate::config::register_key_variables();
    // No call runs unless its record can be written: the log opens, its
    // directory takes the anchor, and room for the records is reserved.
    let room = inputs.iter().map(|i| i.len() as u64).sum::<u64>() + crate::audit::RECORD_ROOM;
    let audit = match super::open_audit().and_then(|log| {
        log.reserve(room).map_err(|e| e.to_string())?;
        Ok(log)
    }) {
        Ok(log) => log,
        Err(e) => {
            let msg = format!("{e}; the call was not run: Warden runs no tool it cannot audit");
            return fail(args.json, Exit::Failure, &msg);
        }
    };
    let mut catalog = match open_catalog_with(args.json, instances) {
        Ok(c) => c,
        Err(code) => return code,
    };
    if let Some(file) = &args.plugin
        && let Err(e) = catalog.use_uninstalled(file)
    {
        let msg = format!("cannot load {}: {e}", file.display());
        return fail(args.json, Exit::Failure, &msg);
    }
    let writes = catalog
        .find_tool(&args.name)
        .is_some_and(|(_, t)| !t.annotations.read_only);
    if writes && !args.json && policy.host_reach().workspace_writes {
        workspace_trust::announce_first_write(&home, &trusted, verbosity);
    }
    let (limits, limit_requests) = match super::limit_args::requested_limits(&args.limit) {
        Ok(l) => l,
        Err(e) => return fail(args.json, Exit::Usage, &e),
    };
    let approvals = approvals(args.non_interactive);
    let interaction = InteractionParty {
        user: super::ask_prompt::asker(args.non_interactive),
        home: Some(home.clone()),
    };
    let cancel = CancelToken::new();
    let on_ctrl_c = cancel.clone();
    super::ctrl_c::watch(move || on_ctrl_c.cancel());
    let mut exit = Exit::Success;
    let mut unrecorded = None;
    for (i, input) in inputs.iter().enumerate() {
        let key = format!("call {i}");
        let progress = super::call_progress::sink(&args.name, args.json, &key, Instant::now());
        let result = pipeline::run(
            &catalog,
            Invocation {
                tool: &args.name,
                input,
                workspace: &workspace,
                write: WriteMode::ReadOnly,
                limits: limits.clone(),
                limit_requests,
                cancel: cancel.clone(),
                progress,
                policy: Some(&policy),
                approval: Some(&approvals),
                rationale: None,
                interaction: Some(interaction.clone()),
            },
        );
        super::progress::end(&key);
        let recorded = audit.record_call(&result, input, None);
        if args.json {
            print_json(&result);
        } else {
            print_human(&result, verbosity);
        }
        if exit == Exit::Success {
            exit = exit_code(&result);
        }
        if let Err(e) = recorded {
            unrecorded = Some(e.to_string());
            break;
        }
        // After Ctrl-C, the rest of a batch does not run.
        if cancel.is_cancelled() {
            if exit == Exit::Success && i + 1 < inputs.len() {
                exit = Exit::Cancelled;
            }
            break;
        }
    }
    if let Some(e) = unrecorded.or_else(|| audit.flush().err().map(|e| e.to_string())) {
        // The call ran; that it went unrecorded is a failure, whatever it returned.
        let msg = format!("the call ran, but recording it failed: {e}");
        exit = fail(args.json, Exit::Failure, &msg);
    }
    // The process exits next: unmapping the engine's pools and compiled code
    // would only add teardown time to every one-shot call.
    std::mem::forget(catalog);
    exit
}

/// Who answers asks: the user at the controlling terminal when the command
/// runs attached to one (stdin, stdout or stderr is a terminal, and
/// `/dev/tty` opens), else no one.
pub(super) fn approvals(non_interactive: bool) -> Approvals {
    if non_interactive {
        return Approvals::new(Arc::new(NonInteractive::new(
            "prompts are off (--non-interactive)",
        )));
    }
    let attached = std::io::stdin().is_terminal()
        || std::io::stdout().is_terminal()
        || std::io::stderr().is_terminal();
    match attached.then(TerminalApprover::open) {
        Some(Ok(terminal)) => {
            Approvals::new(Arc::new(super::progress::Pausing(Arc::new(terminal))))
        }
        Some(Err(_)) | None => Approvals::non_interactive(),
    }
}

/// The exit code for a finished call.
pub fn exit_code(result: &CallResult) -> Exit {
    match (&result.outcome, result.stage) {
        (ToolOutcome::Success(_), _) => Exit::Success,
        (ToolOutcome::Error(_), Stage::Rejected) => Exit::Usage,
        (ToolOutcome::Error(_), Stage::Load) => Exit::Failure,
        (ToolOutcome::Error(_), Stage::Executed) => Exit::ToolError,
        (ToolOutcome::Denied { .. }, _) => Exit::Denied,
        (ToolOutcome::Cancelled, _) => Exit::Cancelled,
    }
}

/// `--input-lines` takes a file or `-`, as `--input` takes `@FILE` or `-`.
fn lines_source(arg: &str) -> String {
    if arg == "-" {
        arg.to_string()
    } else {
        format!("@{arg}")
    }
}

fn read_input(arg: &str) -> Result<String, String> {
    if arg == "-" {
        let mut s = String::new();
        std::io::stdin()
            .read_to_string(&mut s)
            .map_err(|e| format!("cannot read input from stdin: {e}"))?;
        return Ok(s);
    }
    if let Some(path) = arg.strip_prefix('@') {
        return std::fs::read_to_string(path)
            .map_err(|e| format!("cannot read input file {path}: {e}"));
    }
    Ok(arg.to_string())
}

fn describe_grant(grant: &SessionGrant) -> String {
    match grant {
        SessionGrant::Fingerprint { tool, .. } => {
            format!("{} with the same arguments", terminal_line(tool))
        }
        SessionGrant::Pattern { pattern } => {
            format!("pattern `{}`", terminal_line(&pattern.to_string()))
        }
        SessionGrant::Network { tool, destinations } => {
            let targets: Vec<String> = destinations.iter().map(ToString::to_string).collect();
            format!(
                "{} to {}",
                terminal_line(tool),
                terminal_line(&targets.join(", "))
            )
        }
    }
}

fn print_json(r: &CallResult) {
    let report = r.report.as_ref();
    let doc = json!({
        "call_id": r.call_id,
        "tool": r.tool,
        "plugin": r.plugin,
        "origin": r.origin,
        "stage": r.stage,
        "outcome": r.outcome,
        "grant": r.grant,
        "decision": r.decision,
        "approval": r.approval,
        "grant_cuts": r.grant_cuts,
        "logs": report.map(|x| &x.logs),
        "logs_dropped": report.map(|x| x.logs_dropped),
        "stdout": report.map(|x| &x.stdout),
        "stdout_dropped": report.map(|x| x.stdout_dropped),
        "stderr": report.map(|x| &x.stderr),
        "stderr_dropped": report.map(|x| x.stderr_dropped),
        "network": report.map(|x| &x.network),
        "network_denials": report.map(|x| &x.network_denials),
        "exercised": report.map(|x| &x.exercised),
        "boundary_denials": report.map(|x| &x.boundary_denials),
        "processes": report.map(|x| &x.processes),
        "duration_ms": report.map(|x| x.duration.as_secs_f64() * 1000.0),
    });
    outln!("{doc}");
}

/// The call for a human: the result on stdout, the rest on stderr, all of
/// it inert for a terminal (see `docs/terminal-output.md`).
fn print_human(r: &CallResult, verbosity: Verbosity) {
    let tool = terminal_line(&r.tool);
    match &r.outcome {
        ToolOutcome::Success(out) => {
            let text = terminal_text(&out.text);
            out!("{text}");
            if !text.ends_with('\n') {
                outln!();
            }
        }
        ToolOutcome::Error(e) => errln!(
            "warden: {tool} failed ({}): {}",
            e.kind,
            terminal_text(&secrets::redact(&e.message))
        ),
        ToolOutcome::Denied { reason } => {
            errln!(
                "warden: {tool} denied: {}",
                terminal_text(&secrets::redact(reason))
            )
        }
        ToolOutcome::Cancelled => errln!("warden: {tool} cancelled"),
    }
    // Why no one was asked: a grant the user gave changes what happens.
    if let Some(Approval::SessionGrant { grant }) = &r.approval
        && verbosity.shows_warnings()
    {
        errln!(
            "warden: note: allowed without asking by a grant you gave this session ({})",
            describe_grant(grant)
        );
    }
    if let Some(report) = &r.report {
        for line in report.logs.iter().filter(|l| verbosity.shows_log(l.level)) {
            errln!("[{:?}] {}", line.level, terminal_line(&line.message));
        }
    }
    if verbosity.shows_notes() {
        print_notes(r);
    }
}

/// What `-v` adds: grant cuts, network use, what was dropped.
fn print_notes(r: &CallResult) {
    for cut in &r.grant_cuts {
        errln!(
            "warden: note: declared {} → granted {}",
            terminal_line(&cut.declared),
            terminal_line(&cut.granted)
        );
    }
    if let Some(report) = &r.report {
        if report.logs_dropped > 0 {
            errln!(
                "warden: note: {} log lines over the cap were dropped",
                report.logs_dropped
            );
        }
        for u in &report.network {
            let status = u
                .status
                .map_or("no response".to_string(), |s| s.to_string());
            errln!(
                "warden: note: network {} {}://{}:{}{} → {status}, {} bytes in",
                terminal_line(&u.method),
                u.scheme.as_str(),
                terminal_line(&u.host),
                u.port,
                terminal_line(&u.path),
                u.bytes_in
            );
        }
        if report.stdout_dropped + report.stderr_dropped > 0 {
            errln!("warden: note: plugin stdout/stderr past the cap was dropped");
        }
    }
}
