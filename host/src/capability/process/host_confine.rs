//! Landlock on the Warden process itself (defence in depth), and the
//! spawner thread that starts confined processes once it is applied.
//!
//! Invariant: [`confine_host`] runs while the process has one thread, so
//! every thread started later (tokio's workers, wasmtime's) inherits the
//! domain: the host may read only what it needs and write only the
//! workspace (under a write grant), its data and cache directories, the
//! temporary directory and its pids cgroup. Landlock forbids a confined
//! process to mount anything, even in its own namespaces, so confined
//! children are cloned from one thread started just before the domain is
//! applied; they confine themselves with their own, narrower ruleset.

use std::path::{Path, PathBuf};

use landlock::{
    AccessFs, BitFlags, CompatLevel, Compatible, PathBeneath, Ruleset, RulesetAttr,
    RulesetCreatedAttr, RulesetStatus,
};

use super::landlock::{ABI_USED, SYSTEM_DIRS, all_fs, open_path};
use super::support::{landlock_abi, pids_cgroup_parent, require_landlock};
use super::{ProcessError, spawner};
use crate::capability::FsAccess;

/// What the confined host may touch.
#[derive(Debug, Clone, Default)]
pub struct HostPaths {
    /// The workspace and what the run may do to it.
    pub workspace: Option<(PathBuf, FsAccess)>,
    /// Warden's data directory (sessions, audit log, plugins); created if
    /// missing.
    pub data_dir: PathBuf,
    /// The cache, when it is not inside the data directory.
    pub cache_dir: Option<PathBuf>,
    /// Files and directories read: configuration, policies, key files.
    pub read: Vec<PathBuf>,
    /// Toolchain directories commands may run from.
    pub toolchains: Vec<PathBuf>,
    /// Directories besides the workspace that calls may be granted, with
    /// the most access any grant gives them.
    pub extra_dirs: Vec<(PathBuf, FsAccess)>,
}

/// The domain the host now runs in.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct HostConfinement {
    /// The Landlock ABI the ruleset was built for.
    pub landlock_abi: u8,
}

fn threads() -> usize {
    std::fs::read_to_string("/proc/self/status")
        .ok()
        .and_then(|s| {
            s.lines()
                .find_map(|l| l.strip_prefix("Threads:"))
                .and_then(|n| n.trim().parse().ok())
        })
        .unwrap_or(usize::MAX)
}

/// Confines this process with Landlock. Call it from `main` before any
/// other thread starts; files named for output must be open already.
pub fn confine_host(paths: &HostPaths) -> Result<HostConfinement, ProcessError> {
    let n = threads();
    if n != 1 {
        return Err(ProcessError::HostThreads(n));
    }
    require_landlock(landlock_abi())?;
    let pids_cgroup = pids_cgroup_parent();
    std::fs::create_dir_all(&paths.data_dir).map_err(|source| ProcessError::Workspace {
        path: paths.data_dir.clone(),
        source,
    })?;

    let read_exec = AccessFs::from_read(ABI_USED);
    let read = AccessFs::ReadFile | AccessFs::ReadDir;
    let mut allowed: Vec<(PathBuf, BitFlags<AccessFs>)> = Vec::new();
    for dir in SYSTEM_DIRS {
        allowed.push((dir.into(), read_exec));
    }
    if let Ok(exe) = std::env::current_exe() {
        allowed.push((exe, read_exec));
    }
    for dir in ["/proc", "/sys", "/dev/urandom", "/dev/random"] {
        allowed.push((dir.into(), read));
    }
    for dev in ["/dev/null", "/dev/zero", "/dev/full"] {
        allowed.push((dev.into(), read | AccessFs::WriteFile | AccessFs::Truncate));
    }
    // Approval prompts open the terminal and set its modes (ioctls).
    allowed.push((
        "/dev/tty".into(),
        read | AccessFs::WriteFile | AccessFs::Truncate | AccessFs::IoctlDev,
    ));
    allowed.extend(paths.read.iter().map(|p| (p.clone(), read)));
    allowed.extend(paths.toolchains.iter().map(|p| (p.clone(), read_exec)));
    for (dir, access) in paths.workspace.iter().chain(&paths.extra_dirs) {
        let rights = match access {
            FsAccess::ReadOnly => read_exec,
            FsAccess::ReadWrite => all_fs(),
        };
        allowed.push((dir.clone(), rights));
    }
    let writable = [
        Some(paths.data_dir.clone()),
        paths.cache_dir.clone(),
        Some(std::env::temp_dir()),
        pids_cgroup,
    ];
    allowed.extend(writable.into_iter().flatten().map(|p| (p, all_fs())));

    spawner::start()?;
    let err = |e: landlock::RulesetError| ProcessError::Landlock(e.to_string());
    let rules = allowed
        .iter()
        .filter_map(|(path, access)| rule(path, *access));
    let status = Ruleset::default()
        .set_compatibility(CompatLevel::HardRequirement)
        .handle_access(all_fs())
        .map_err(err)?
        .create()
        .map_err(err)?
        .add_rules(rules.map(Ok::<_, landlock::RulesetError>))
        .map_err(err)?
        .restrict_self()
        .map_err(err)?;
    match status.ruleset {
        RulesetStatus::FullyEnforced => Ok(HostConfinement {
            landlock_abi: ABI_USED as u8,
        }),
        RulesetStatus::PartiallyEnforced | RulesetStatus::NotEnforced => Err(
            ProcessError::Landlock("the kernel did not fully enforce the host's ruleset".into()),
        ),
    }
}

fn rule(path: &Path, access: BitFlags<AccessFs>) -> Option<PathBeneath<std::os::fd::OwnedFd>> {
    let (fd, is_dir) = open_path(path)?;
    let access = match is_dir {
        true => access,
        false => access & AccessFs::from_file(ABI_USED),
    };
    Some(PathBeneath::new(fd, access))
}
