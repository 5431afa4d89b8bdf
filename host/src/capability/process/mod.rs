//! Processes the host spawns: one confined child per call, and how it
//! ended; and the host's own confinement.
//!
//! Invariant: a process runs only with every layer its grant's mode
//! requires (fail closed, naming what the kernel lacks): new user, mount,
//! pid, ipc and uts namespaces and an empty network namespace shared by
//! confined processes only; protected paths mounted read-only
//! (or unreadable) by descriptor, never through a symlink; a fresh `/proc`
//! and a private `/tmp`; `no_new_privs`, no capabilities; a Landlock
//! ruleset allowing only system directories, toolchains, the workspace
//! (writable only under a write grant) and no TCP; a seccomp filter; rlimits
//! and a bound on the number of processes; an allowlisted environment. When
//! [`run`] returns, no process the call started is alive. The design, the
//! guarantees and their limits are in `docs/sandbox.md`.

mod cgroup;
#[allow(unsafe_code)]
mod child;
mod env;
mod error;
mod grant;
mod host_confine;
mod landlock;
mod output;
mod protected;
mod report;
mod request;
mod scan_cache;
mod seccomp;
mod seccomp_search;
#[allow(unsafe_code)]
mod shared_net;
mod spawn;
#[allow(unsafe_code)]
mod spawner;
#[allow(unsafe_code)]
mod supervise;
#[allow(unsafe_code)]
mod support;
#[allow(unsafe_code)]
mod sys;

pub use env::is_secret_name;
pub use error::ProcessError;
pub use grant::{ConfinementMode, ProcessGrant, ProcessLimits};
pub use host_confine::{HostConfinement, HostPaths, confine_host};
pub use output::CapturedOutput;
pub use report::{
    AppliedConfinement, ExitStatus, MAX_PROCESS_USES, Namespace, ProcessBound, ProcessReport,
    ProcessUse, StopReason,
};
pub use request::{LineSink, MAX_LINE, OutputLine, ProcessRequest, Stream, shell_argv};
pub use support::{
    NamespaceError, REQUIRED_LANDLOCK_ABI, Support, landlock_abi, pids_cgroup_parent,
    require_landlock, support,
};

use crate::capability::FsAccess;

/// Runs `request` confined by `grant`, and reports how it ended.
///
/// Errors mean the command did not run (or did not get past its own
/// confinement); a command that ran and failed is an `Ok` report with its
/// exit status.
pub async fn run(
    grant: &ProcessGrant,
    request: &ProcessRequest,
) -> Result<ProcessReport, ProcessError> {
    let bound = support().admit(grant.mode)?;
    let mut prepared = spawn::prepare(grant, request, bound)?;
    let started = spawn::start(&mut prepared)?;
    let (mut report, before) = supervise::supervise(prepared, started, request).await?;
    if let (FsAccess::ReadWrite, Some(before)) = (grant.access, before) {
        report.removed_protected = protected::sweep(&grant.workspace, &grant.protected, &before);
    }
    Ok(report)
}
