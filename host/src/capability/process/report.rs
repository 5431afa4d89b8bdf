//! How a process ended, and under which confinement: what the audit record
//! keeps.

use std::time::Duration;

use super::{CapturedOutput, ConfinementMode};

/// How the process (the namespace's first process) ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum ExitStatus {
    /// It exited with this code.
    Code { code: i32 },
    /// A signal ended it (`9` when Warden killed the tree).
    Signal { signal: i32 },
}

impl ExitStatus {
    /// Whether it exited with code 0.
    pub fn success(&self) -> bool {
        matches!(self, ExitStatus::Code { code: 0 })
    }
}

/// Why Warden ended the process tree before it ended on its own.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum StopReason {
    /// The request's deadline passed.
    Deadline,
    /// The request's cancel token was set.
    Cancelled,
    /// The streams together passed the request's output limit.
    OutputLimit,
    /// The tree tried to run more processes than the grant allows.
    ProcessLimit,
}

/// A namespace the process ran in.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Namespace {
    User,
    Mount,
    Pid,
    Network,
    Ipc,
    Uts,
}

/// What bounded the number of processes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ProcessBound {
    /// A pids cgroup of the call's own (`pids.max`).
    Cgroup,
    /// `RLIMIT_NPROC` (not for root, which the kernel exempts).
    Rlimit,
    /// Nothing: only under [`ConfinementMode::UnboundedProcesses`].
    Unbounded,
}

/// The confinement a process actually ran under.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct AppliedConfinement {
    pub mode: ConfinementMode,
    /// The Landlock ABI the ruleset was built for.
    pub landlock_abi: u8,
    pub namespaces: Vec<Namespace>,
    /// Whether the seccomp filter was installed (always, today).
    pub seccomp: bool,
    pub process_bound: ProcessBound,
    /// Protected paths mounted read-only (or unreadable) for the call.
    pub protected_mounts: usize,
}

/// How a process ran and ended.
#[derive(Debug, Clone)]
pub struct ProcessReport {
    pub exit: ExitStatus,
    pub stdout: CapturedOutput,
    pub stderr: CapturedOutput,
    /// From the spawn to the end of the last process.
    pub duration: Duration,
    /// Set when Warden ended the tree.
    pub stopped: Option<StopReason>,
    pub confinement: AppliedConfinement,
    /// Protected paths the call created (they did not exist before it),
    /// removed when it ended; workspace-relative.
    pub removed_protected: Vec<String>,
}

/// The most commands one call's record lists; the rest are counted.
pub const MAX_PROCESS_USES: usize = 64;

/// Bytes of a command line a record keeps.
const MAX_RECORDED_COMMAND: usize = 2048;

/// One command a call ran, as its report and audit record keep it.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct ProcessUse {
    /// The command line (a shell line, or the arguments joined by spaces),
    /// cut at 2048 bytes.
    pub command: String,
    /// The working directory, relative to the workspace (empty for its root).
    pub cwd: String,
    pub exit: ExitStatus,
    pub duration_ms: u64,
    /// Bytes the command wrote to stdout and stderr.
    pub stdout_bytes: u64,
    pub stderr_bytes: u64,
    /// What stopped it, when Warden ended it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub stopped: Option<StopReason>,
    /// The confinement it actually ran under.
    pub confinement: AppliedConfinement,
    /// Protected paths it created, removed when it ended.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub removed_protected: Vec<String>,
}

impl ProcessUse {
    /// The record of `report`, a run of `command` in `cwd`.
    pub fn of(command: &str, cwd: &str, report: &ProcessReport) -> ProcessUse {
        ProcessUse {
            command: crate::base::keep_at_most(command.to_string(), MAX_RECORDED_COMMAND),
            cwd: crate::base::keep_at_most(cwd.to_string(), MAX_RECORDED_COMMAND),
            exit: report.exit,
            duration_ms: u64::try_from(report.duration.as_millis()).unwrap_or(u64::MAX),
            stdout_bytes: report.stdout.total,
            stderr_bytes: report.stderr.total,
            stopped: report.stopped,
            confinement: report.confinement.clone(),
            removed_protected: report.removed_protected.clone(),
        }
    }
}
