//! `warden:tool/process` (0.2): a guest's command, run in the process
//! sandbox under the call's process grant, and recorded on its report.
//!
//! Invariant: linked only for a call whose grant includes processes; a
//! command never outlives the call's deadline or its cancellation, and
//! keeps no more output than the grant allows.

use std::cell::RefCell;
use std::ffi::OsString;
use std::path::PathBuf;
use std::sync::Arc;
use std::time::{Duration, Instant};

use super::bindings::v0_2::process as wit;
use super::state::CallState;
use crate::base::{ProgressEvent, cut_to};
use crate::capability::process::{
    self, CapturedOutput, ExitStatus, LineSink, OutputLine, ProcessError, ProcessReport,
    ProcessRequest, ProcessUse, StopReason, shell_argv,
};

/// Bytes of an output line shown as progress.
const LINE_PROGRESS_BYTES: usize = 200;

impl wit::Host for CallState {
    fn run(&mut self, cmd: wit::Command) -> Result<wit::Outcome, wit::RunError> {
        let Some(call) = &self.process else {
            // Not linked without a grant; a stale instance cannot reach it.
            return Err(wit::RunError::Unavailable(
                "this call's grant includes no processes".into(),
            ));
        };
        let (argv, shown) = match cmd.program {
            wit::Program::Argv(argv) if argv.is_empty() => {
                return Err(wit::RunError::Invalid(
                    "argv is empty: give the program, then its arguments".into(),
                ));
            }
            wit::Program::Argv(argv) => {
                let shown = argv.join(" ");
                (argv.into_iter().map(OsString::from).collect(), shown)
            }
            wit::Program::Shell(line) if line.trim().is_empty() => {
                return Err(wit::RunError::Invalid("the command line is empty".into()));
            }
            wit::Program::Shell(line) => (shell_argv(&line), line),
        };
        let limit = call.grant.limits.output_bytes;
        let keep = cmd.output_bytes.map_or(limit, |b| b.min(limit));
        let keep = usize::try_from(keep).unwrap_or(usize::MAX);
        let mut req = ProcessRequest::new(argv, self.command_deadline(cmd.timeout_ms));
        req.cwd = PathBuf::from(&cmd.cwd);
        req.stdin = cmd.stdin.map(String::into_bytes).unwrap_or_default();
        req.cancel = self.bounds.cancel.clone();
        req.stdout_cap = keep;
        req.stderr_cap = keep;
        req.on_line = if cmd.stream_output {
            self.record.progress_sink.clone().map(|sink| {
                Arc::new(move |line: &OutputLine| {
                    sink(&ProgressEvent {
                        message: cut_to(&line.text, LINE_PROGRESS_BYTES),
                        fraction: None,
                    })
                }) as LineSink
            })
        } else {
            None
        };
        let grant = call.grant.clone();
        let ran = on_this_thread(process::run(&grant, &req));
        match ran {
            Ok(report) => {
                if let Some(call) = &mut self.process {
                    call.note(ProcessUse::of(&shown, &cmd.cwd, &report));
                }
                Ok(outcome(report))
            }
            Err(e) => Err(run_error(e)),
        }
    }
}

/// Runs `f` on a current-thread runtime of the calling thread (made on
/// first use and kept), so that the process's exit and output wake this
/// thread itself rather than a worker that then wakes it; on wasmtime's
/// runtime when that cannot be (re-entered, or not made).
fn on_this_thread<F: std::future::Future>(f: F) -> F::Output {
    thread_local! {
        static LOCAL: RefCell<Option<tokio::runtime::Runtime>> = RefCell::new(
            tokio::runtime::Builder::new_current_thread().enable_all().build().ok(),
        );
    }
    LOCAL.with(|local| match local.try_borrow_mut() {
        Ok(runtime) => match runtime.as_ref() {
            Some(runtime) => runtime.block_on(f),
            None => wasmtime_wasi::runtime::in_tokio(f),
        },
        Err(_) => wasmtime_wasi::runtime::in_tokio(f),
    })
}

impl CallState {
    /// When a command must end: its own timeout, if any, within the call's
    /// deadline.
    fn command_deadline(&self, timeout_ms: Option<u64>) -> Instant {
        let call = self.bounds.deadline;
        timeout_ms
            .and_then(|ms| Instant::now().checked_add(Duration::from_millis(ms)))
            .map_or(call, |own| own.min(call))
    }
}

fn outcome(r: ProcessReport) -> wit::Outcome {
    wit::Outcome {
        status: match r.exit {
            ExitStatus::Code { code } => wit::ExitStatus::Code(code),
            ExitStatus::Signal { signal } => wit::ExitStatus::Signal(signal),
        },
        stdout: captured(&r.stdout),
        stderr: captured(&r.stderr),
        duration_ms: u64::try_from(r.duration.as_millis()).unwrap_or(u64::MAX),
        stopped: r.stopped.map(|s| match s {
            StopReason::Deadline => wit::StopReason::Deadline,
            StopReason::Cancelled => wit::StopReason::Cancelled,
            StopReason::OutputLimit => wit::StopReason::OutputCap,
            StopReason::ProcessLimit => wit::StopReason::ProcessLimit,
        }),
    }
}

fn captured(c: &CapturedOutput) -> wit::Captured {
    wit::Captured {
        text: c.text(),
        total_bytes: c.total,
        cut_bytes: c.cut,
    }
}

/// Why a command did not run, as the guest reads it.
fn run_error(e: ProcessError) -> wit::RunError {
    let message = e.to_string();
    match e {
        ProcessError::BadCwd { .. } | ProcessError::BadCommand(_) => {
            wit::RunError::Invalid(message)
        }
        ProcessError::Unavailable { .. } | ProcessError::SecretEnv { .. } => {
            wit::RunError::Unavailable(message)
        }
        ProcessError::ProgramNotFound(_)
        | ProcessError::Exec { .. }
        | ProcessError::Workspace { .. }
        | ProcessError::Landlock(_)
        | ProcessError::Prepare { .. }
        | ProcessError::Confine { .. }
        | ProcessError::HostThreads(_)
        | ProcessError::Wait(_) => wit::RunError::SpawnFailed(message),
    }
}
