//! One process to run: what, where, with which input, until when.

use std::ffi::OsString;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Instant;

use crate::base::CancelToken;

/// Which output stream a line came from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Stream {
    Stdout,
    Stderr,
}

/// One line of output, as it arrived (lossily decoded, at most
/// [`MAX_LINE`] bytes: a longer line arrives in pieces).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct OutputLine {
    pub stream: Stream,
    pub text: String,
}

/// The longest line handed to a [`LineSink`] in one piece.
pub const MAX_LINE: usize = 4096;

/// Receives output lines as they arrive (later: progress events).
pub type LineSink = Arc<dyn Fn(&OutputLine) + Send + Sync>;

/// One process to run.
#[derive(Clone)]
pub struct ProcessRequest {
    /// Program and arguments; the program is looked up in the child's
    /// `PATH` unless it contains a `/`.
    pub argv: Vec<OsString>,
    /// Working directory, relative to the workspace (`""` or `.` for its
    /// root); `..`, absolute paths and symlinks out of it are refused.
    pub cwd: PathBuf,
    /// Bytes written to the process's standard input, then closed.
    pub stdin: Vec<u8>,
    /// When the whole tree is killed.
    pub deadline: Instant,
    /// Cancelling kills the whole tree.
    pub cancel: CancelToken,
    /// Bytes of stdout kept (half from the start, half from the end).
    pub stdout_cap: usize,
    /// Bytes of stderr kept (half from the start, half from the end).
    pub stderr_cap: usize,
    /// Output (both streams) after which the tree is killed.
    pub output_limit: u64,
    /// Called with each output line as it arrives.
    pub on_line: Option<LineSink>,
}

impl ProcessRequest {
    /// `argv` in the workspace root until `deadline`, no input, 64 KiB kept
    /// of each stream, killed after 64 MiB of output.
    pub fn new(argv: Vec<OsString>, deadline: Instant) -> Self {
        ProcessRequest {
            argv,
            cwd: PathBuf::new(),
            stdin: Vec::new(),
            deadline,
            cancel: CancelToken::new(),
            stdout_cap: 64 << 10,
            stderr_cap: 64 << 10,
            output_limit: 64 << 20,
            on_line: None,
        }
    }
}

impl std::fmt::Debug for ProcessRequest {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ProcessRequest")
            .field("argv", &self.argv)
            .field("cwd", &self.cwd)
            .field("stdin_bytes", &self.stdin.len())
            .field("deadline", &self.deadline)
            .finish_non_exhaustive()
    }
}

/// `bash -c COMMAND`, or `sh -c COMMAND` where bash is absent.
pub fn shell_argv(command: &str) -> Vec<OsString> {
    let shell = ["/usr/bin/bash", "/bin/bash"]
        .into_iter()
        .find(|p| Path::new(p).is_file())
        .unwrap_or("/bin/sh");
    vec![shell.into(), "-c".into(), command.into()]
}
