//! Warden's built-in `shell` tool: one command line, run by bash (sh where
//! bash is absent) in the workspace, inside the host's process sandbox.
//!
//! The plugin only describes the command; the host decides whether it may
//! run (the policy's rules over each part of the command line) and what it
//! may touch (the process sandbox). The result tells the model the exit
//! status, the output (head and tail when long) and why the host stopped
//! the command, if it did.

use serde::Deserialize;
use warden_sdk::process::{Captured, Command, ExitStatus, Outcome, StopReason};
use warden_sdk::{
    Annotations, Context, ErrorKind, Output, Tool, ToolError, register,
    serde_json::{Value, json},
};

register!(Shell);

/// The `shell` tool.
pub struct Shell;

/// The longest `timeout_ms` a call may ask for; the call's own deadline,
/// which the policy sets, bounds it too.
const MAX_TIMEOUT_MS: u64 = 600_000;

/// Input of `shell`; see the schema for each field.
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Input {
    command: String,
    #[serde(default)]
    cwd: Option<String>,
    #[serde(default)]
    timeout_ms: Option<u64>,
}

impl Tool for Shell {
    type Input = Input;
    const NAME: &'static str = "shell";
    const DESCRIPTION: &'static str = "Run a command line with bash (sh where bash is absent) in the \
        workspace, e.g. to build, run tests, or use git. It runs in a sandbox: no network at all; \
        files outside the workspace are not readable except the system and the toolchains the \
        policy lists; writes succeed only inside the workspace when the policy allows writes, and \
        never to protected paths such as .git/ or .env; /tmp is private and empty; no environment \
        variables besides PATH, HOME, LANG, TERM and TMPDIR (and those the policy names). The \
        policy may allow, ask about or deny each part of the command line. When `timeout_ms` (or \
        the call's deadline) passes, every process the command started is killed, background \
        ones included, and nothing survives the call. The result gives the exit code, stdout and \
        stderr; long output keeps its head and tail.";
    const ANNOTATIONS: Annotations = Annotations::DESTRUCTIVE;

    fn input_schema(&self) -> Value {
        json!({
            "type": "object",
            "properties": {
                "command": {
                    "type": "string",
                    "minLength": 1,
                    "description": "The command line, as you would type it in bash."
                },
                "cwd": {
                    "type": "string",
                    "description": "Directory to run in, relative to the workspace root. Default: the root."
                },
                "timeout_ms": {
                    "type": "integer",
                    "minimum": 1,
                    "maximum": MAX_TIMEOUT_MS,
                    "description": "Milliseconds before the command is killed. Default and upper bound: the call's deadline."
                }
            },
            "required": ["command"],
            "additionalProperties": false
        })
    }

    fn call(&self, input: Input, cx: &Context) -> Result<Output, ToolError> {
        let cwd = match input.cwd.as_deref() {
            None | Some("") | Some(".") => String::new(),
            Some(dir) => cx.path(dir)?.relative().to_string(),
        };
        let mut cmd = Command::shell(&input.command).cwd(cwd).stream_output(true);
        if let Some(ms) = input.timeout_ms {
            cmd = cmd.timeout_ms(ms.min(MAX_TIMEOUT_MS));
        }
        let outcome = cmd.run()?;
        result(&input.command, outcome)
    }
}

/// The model's view of a command that ran.
fn result(command: &str, o: Outcome) -> Result<Output, ToolError> {
    let status = match o.status {
        ExitStatus::Code(code) => format!("exit code {code}"),
        ExitStatus::Signal(sig) => format!("killed by signal {sig}"),
    };
    let mut text = format!("{status} ({} ms)\n", o.duration_ms);
    section(&mut text, "stdout", &o.stdout);
    section(&mut text, "stderr", &o.stderr);
    let structured = json!({
        "exit_code": match o.status { ExitStatus::Code(c) => Some(c), ExitStatus::Signal(_) => None },
        "signal": match o.status { ExitStatus::Signal(s) => Some(s), ExitStatus::Code(_) => None },
        "duration_ms": o.duration_ms,
        "stdout": o.stdout.text,
        "stderr": o.stderr.text,
        "stdout_bytes": o.stdout.total_bytes,
        "stderr_bytes": o.stderr.total_bytes,
        "stdout_cut_bytes": o.stdout.cut_bytes,
        "stderr_cut_bytes": o.stderr.cut_bytes,
        "stopped": o.stopped.map(stop_name),
    });
    let stopped = match o.stopped {
        None => return Ok(Output::text(text).with_structured(structured)),
        Some(why) => why,
    };
    let (kind, why) = match stopped {
        StopReason::Deadline => (
            ErrorKind::Timeout,
            "it ran past its time limit (raise `timeout_ms`, or run something shorter)",
        ),
        StopReason::Cancelled => (ErrorKind::Cancelled, "the call was cancelled"),
        StopReason::OutputCap => (
            ErrorKind::LimitExceeded,
            "it wrote more output than the cap (filter it, e.g. with `| tail -n 200`)",
        ),
        StopReason::ProcessLimit => (
            ErrorKind::LimitExceeded,
            "it hit a process limit (too many processes, CPU time, file size, open files or memory)",
        ),
    };
    Err(ToolError::new(
        kind,
        format!("`{command}` was stopped: {why}; every process it started was killed.\n{text}"),
    ))
}

fn section(text: &mut String, name: &str, c: &Captured) {
    if c.total_bytes == 0 {
        return;
    }
    text.push_str(&format!("--- {name} ---\n{}", c.text));
    if !c.text.ends_with('\n') {
        text.push('\n');
    }
}

fn stop_name(s: StopReason) -> &'static str {
    match s {
        StopReason::Deadline => "deadline",
        StopReason::Cancelled => "cancelled",
        StopReason::OutputCap => "output_cap",
        StopReason::ProcessLimit => "process_limit",
    }
}
