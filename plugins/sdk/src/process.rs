//! Running commands in the host's process sandbox.
//!
//! A call reaches this only when its grant includes processes (the
//! manifest declares `processes = true` and the policy grants them);
//! otherwise [`Command::run`] fails the call, naming the interface. The
//! sandbox, not the plugin, decides what a command may touch: no network,
//! writes only where the grant allows, every process killed when the
//! command ends or its time runs out.
//!
//! ```ignore
//! let out = Command::shell("cargo test").cwd("crates/core").timeout_ms(60_000).run()?;
//! ```

use crate::bindings::process as wit;
use crate::{ErrorKind, ToolError};

pub use wit::{Captured, ExitStatus, StopReason};

/// One command to run.
#[derive(Debug, Clone)]
pub struct Command {
    program: wit::Program,
    cwd: String,
    stdin: Option<String>,
    timeout_ms: Option<u64>,
    output_bytes: Option<u64>,
    stream_output: bool,
}

impl Command {
    /// A command line, run by `bash -c` (`sh -c` where bash is absent).
    pub fn shell(line: impl Into<String>) -> Command {
        Command::with(wit::Program::Shell(line.into()))
    }

    /// `program` with `args`; the program is found on the sandbox's `PATH`
    /// unless it contains a `/`.
    pub fn new<I, S>(program: impl Into<String>, args: I) -> Command
    where
        I: IntoIterator<Item = S>,
        S: Into<String>,
    {
        let mut argv = vec![program.into()];
        argv.extend(args.into_iter().map(Into::into));
        Command::with(wit::Program::Argv(argv))
    }

    fn with(program: wit::Program) -> Command {
        Command {
            program,
            cwd: String::new(),
            stdin: None,
            timeout_ms: None,
            output_bytes: None,
            stream_output: false,
        }
    }

    /// Run in `dir`, relative to the workspace (the default is its root).
    pub fn cwd(mut self, dir: impl Into<String>) -> Command {
        self.cwd = dir.into();
        self
    }

    /// Write `text` to the command's standard input, then close it.
    pub fn stdin(mut self, text: impl Into<String>) -> Command {
        self.stdin = Some(text.into());
        self
    }

    /// Stop the command after `ms` milliseconds (the call's deadline
    /// bounds it too).
    pub fn timeout_ms(mut self, ms: u64) -> Command {
        self.timeout_ms = Some(ms);
        self
    }

    /// Keep at most `bytes` of stdout and of stderr each (head and tail).
    pub fn output_bytes(mut self, bytes: u64) -> Command {
        self.output_bytes = Some(bytes);
        self
    }

    /// Report each output line as the call's progress while it runs.
    pub fn stream_output(mut self, on: bool) -> Command {
        self.stream_output = on;
        self
    }

    /// Run the command and wait for it to end.
    pub fn run(&self) -> Result<Outcome, ToolError> {
        let cmd = wit::Command {
            program: self.program.clone(),
            cwd: self.cwd.clone(),
            stdin: self.stdin.clone(),
            timeout_ms: self.timeout_ms,
            output_bytes: self.output_bytes,
            stream_output: self.stream_output,
        };
        match wit::run(&cmd) {
            Ok(o) => Ok(Outcome {
                status: o.status,
                stdout: o.stdout,
                stderr: o.stderr,
                duration_ms: o.duration_ms,
                stopped: o.stopped,
            }),
            Err(wit::RunError::Invalid(m)) => Err(ToolError::invalid_input(m)),
            Err(wit::RunError::Unavailable(m)) => Err(ToolError::new(ErrorKind::Unsupported, m)),
            Err(wit::RunError::SpawnFailed(m)) => Err(ToolError::not_found(m)),
        }
    }
}

/// A command that ran.
#[derive(Debug, Clone)]
pub struct Outcome {
    pub status: ExitStatus,
    pub stdout: Captured,
    pub stderr: Captured,
    pub duration_ms: u64,
    /// Set when the host stopped the command.
    pub stopped: Option<StopReason>,
}

impl Outcome {
    /// True when the command exited with code 0 and was not stopped.
    pub fn success(&self) -> bool {
        self.stopped.is_none() && matches!(self.status, ExitStatus::Code(0))
    }
}
