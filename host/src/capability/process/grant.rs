//! What a call may do with processes: pure data, no I/O but canonicalising
//! the workspace.

use std::path::PathBuf;

use crate::capability::{FsAccess, PathGuard};

use super::ProcessError;

/// How strictly a process is confined. Every variant but [`Full`] is a
/// documented weakening (see `docs/sandbox.md`) that a grant names on
/// purpose; where the kernel cannot give what the mode requires, the
/// process is refused, never run with less.
///
/// [`Full`]: ConfinementMode::Full
#[derive(
    Debug, Clone, Copy, Default, PartialEq, Eq, Hash, serde::Serialize, serde::Deserialize,
)]
#[serde(rename_all = "kebab-case")]
pub enum ConfinementMode {
    /// Every layer: Landlock (ABI 6 or later: filesystem, TCP and scopes),
    /// user, mount, pid, network, ipc and uts namespaces, seccomp, rlimits
    /// and a bound on the number of processes (a pids cgroup, or
    /// `RLIMIT_NPROC` for a host not running as root).
    #[default]
    Full,
    /// As [`Full`](ConfinementMode::Full), except that where neither a
    /// pids cgroup nor `RLIMIT_NPROC` can bound the number of processes (a
    /// host running as root without a writable pids cgroup), the process
    /// runs without that bound. Every process still dies with the call.
    UnboundedProcesses,
}

impl ConfinementMode {
    /// The name policy files use.
    pub fn as_str(self) -> &'static str {
        match self {
            ConfinementMode::Full => "full",
            ConfinementMode::UnboundedProcesses => "unbounded-processes",
        }
    }
}

/// Resource bounds for one call's whole process tree (rlimits apply per
/// process; the process count applies to the tree).
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct ProcessLimits {
    /// CPU seconds per process (`RLIMIT_CPU`).
    pub cpu_seconds: u64,
    /// Largest file a process may write, in bytes (`RLIMIT_FSIZE`).
    pub file_size: u64,
    /// Open file descriptors per process (`RLIMIT_NOFILE`).
    pub open_files: u64,
    /// Address space per process in bytes (`RLIMIT_AS`); `None` leaves it
    /// unbounded, since some runtimes reserve far more than they use.
    pub address_space: Option<u64>,
    /// Processes and threads alive at once in the whole tree.
    pub processes: u64,
    /// Size of the private `/tmp`, in bytes.
    pub tmp_size: u64,
    /// Bytes of stdout and of stderr kept per command, each (head and
    /// tail); the rest is counted, not kept.
    pub output_bytes: u64,
}

impl Default for ProcessLimits {
    fn default() -> Self {
        ProcessLimits {
            cpu_seconds: 600,
            file_size: 4 << 30,
            open_files: 4096,
            address_space: None,
            processes: 512,
            tmp_size: 1 << 30,
            output_bytes: 1 << 20,
        }
    }
}

/// What one call may do with processes.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct ProcessGrant {
    /// The workspace, canonical: the only user directory a process sees.
    pub workspace: PathBuf,
    /// Whether the process may change the workspace.
    pub access: FsAccess,
    /// Paths in the workspace the process may never change (nor read, if
    /// the guard refuses reads).
    pub protected: PathGuard,
    /// Directories exposed read and execute, e.g. `~/.cargo`, `~/.rustup`
    /// or a virtualenv; canonical.
    pub toolchains: Vec<PathBuf>,
    /// Environment variables passed through besides the fixed allowlist
    /// (`PATH`, `LANG`, `LC_*`, `TERM`); names of secrets are refused.
    pub env: Vec<String>,
    pub limits: ProcessLimits,
    pub mode: ConfinementMode,
}

impl ProcessGrant {
    /// `workspace` (canonicalised) with `access`, the default protected
    /// paths, no toolchains, the default limits and [`ConfinementMode::Full`].
    pub fn new(workspace: impl Into<PathBuf>, access: FsAccess) -> Result<Self, ProcessError> {
        let workspace = workspace.into();
        let workspace = workspace
            .canonicalize()
            .map_err(|source| ProcessError::Workspace {
                path: workspace.clone(),
                source,
            })?;
        Ok(ProcessGrant {
            workspace,
            access,
            protected: PathGuard::defaults(),
            toolchains: Vec::new(),
            env: Vec::new(),
            limits: ProcessLimits::default(),
            mode: ConfinementMode::Full,
        })
    }

    /// Adds a toolchain directory (canonicalised; a missing one is an error).
    pub fn with_toolchain(mut self, dir: impl Into<PathBuf>) -> Result<Self, ProcessError> {
        let dir = dir.into();
        let canonical = dir
            .canonicalize()
            .map_err(|source| ProcessError::Workspace { path: dir, source })?;
        self.toolchains.push(canonical);
        Ok(self)
    }
}
