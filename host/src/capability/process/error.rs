//! Why a process could not be run.

use std::path::PathBuf;

/// A process that could not be run, or whose confinement failed. Nothing
/// ran unconfined in any of these cases.
#[derive(Debug, thiserror::Error)]
pub enum ProcessError {
    /// The kernel lacks a layer the grant's mode requires.
    #[error(
        "process confinement unavailable: {missing}; Warden refuses to run commands without it \
         (see docs/sandbox.md for the kernel features each mode needs)"
    )]
    Unavailable { missing: String },
    /// The working directory is not a directory inside the workspace.
    #[error("bad working directory `{cwd}`: {reason}")]
    BadCwd { cwd: PathBuf, reason: String },
    /// The command line is empty or holds a NUL byte.
    #[error("bad command: {0}")]
    BadCommand(String),
    /// The program is not an executable file in the child's `PATH`.
    #[error("program `{0}` not found in the sandbox's PATH")]
    ProgramNotFound(String),
    /// The grant asks to pass a variable that holds a secret.
    #[error(
        "refusing to pass environment variable `{name}` to a process: it names or holds a secret \
         (provider keys and credentials never reach commands)"
    )]
    SecretEnv { name: String },
    /// The workspace or a toolchain directory cannot be used.
    #[error("cannot use `{}`: {source}", path.display())]
    Workspace {
        path: PathBuf,
        source: std::io::Error,
    },
    /// Building the Landlock ruleset failed.
    #[error("cannot build the Landlock ruleset: {0}")]
    Landlock(String),
    /// Preparing the spawn failed (pipes, cgroup, scan).
    #[error("cannot prepare the process: {what}: {source}")]
    Prepare {
        what: &'static str,
        source: std::io::Error,
    },
    /// The child failed while confining itself, before the command ran.
    #[error("confining the process failed at {stage}: {source}")]
    Confine {
        stage: &'static str,
        source: std::io::Error,
    },
    /// The command could not be executed once confined.
    #[error("cannot execute `{program}`: {source}")]
    Exec {
        program: String,
        source: std::io::Error,
    },
    /// Host confinement was asked for after other threads started.
    #[error(
        "the host can only be confined while it has one thread (it has {0}); call confine_host \
         in main, before the async runtime starts"
    )]
    HostThreads(usize),
    /// Waiting on the process failed.
    #[error("waiting on the process failed: {0}")]
    Wait(std::io::Error),
}
