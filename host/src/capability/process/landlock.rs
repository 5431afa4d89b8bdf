//! The Landlock ruleset of a confined process, built in the parent.
//!
//! Invariant: the ruleset handles every filesystem right of ABI 6, TCP
//! bind and connect, and the signal and abstract-socket scopes, as hard
//! requirements (a kernel that lacks one refuses, it is never softened);
//! it allows read and execute on the system directories and toolchains,
//! read (and write, under a read-write grant) on the workspace, a few
//! devices, and no TCP port. The child adds its private `/tmp`.

use std::os::fd::OwnedFd;
use std::path::{Path, PathBuf};

use landlock::{
    ABI, Access, AccessFs, AccessNet, BitFlags, CompatLevel, Compatible, PathBeneath, Ruleset,
    RulesetAttr, RulesetCreatedAttr, Scope,
};

use super::ProcessError;
use crate::capability::FsAccess;

/// The ABI every right is taken from: the first with scopes.
pub(super) const ABI_USED: ABI = ABI::V6;

/// Read and execute everywhere a shell needs its programs and libraries.
pub(super) const SYSTEM_DIRS: &[&str] = &[
    "/usr", "/bin", "/sbin", "/lib", "/lib32", "/lib64", "/libx32", "/etc",
];

/// Devices a shell or a build opens, and what it may do with them.
const DEVICES: &[(&str, bool)] = &[
    ("/dev/null", true),
    ("/dev/zero", false),
    ("/dev/full", true),
    ("/dev/random", false),
    ("/dev/urandom", false),
];

/// What a process may do, as the ruleset sees it.
pub(super) struct Allowed<'a> {
    pub workspace: &'a Path,
    pub access: FsAccess,
    pub toolchains: &'a [PathBuf],
    /// Directories outside the workspace that are readable (a worktree's
    /// git directory).
    pub readable: &'a [PathBuf],
}

/// Every filesystem right of [`ABI_USED`].
pub(super) fn all_fs() -> BitFlags<AccessFs> {
    AccessFs::from_all(ABI_USED)
}

fn read_exec() -> BitFlags<AccessFs> {
    AccessFs::from_read(ABI_USED)
}

/// The ruleset, created and filled, as a descriptor the child restricts
/// itself with.
pub(super) fn ruleset(allowed: &Allowed<'_>) -> Result<OwnedFd, ProcessError> {
    let err = |e: landlock::RulesetError| ProcessError::Landlock(e.to_string());
    let created = Ruleset::default()
        .set_compatibility(CompatLevel::HardRequirement)
        .handle_access(all_fs())
        .map_err(err)?
        .handle_access(AccessNet::BindTcp | AccessNet::ConnectTcp)
        .map_err(err)?
        .scope(Scope::AbstractUnixSocket | Scope::Signal)
        .map_err(err)?
        .create()
        .map_err(err)?;
    let mut rules: Vec<PathBeneath<OwnedFd>> = Vec::new();
    let mut rule = |path: &Path, access: BitFlags<AccessFs>| {
        if let Some((fd, is_dir)) = open_path(path) {
            let access = match is_dir {
                true => access,
                false => access & AccessFs::from_file(ABI_USED),
            };
            rules.push(PathBeneath::new(fd, access));
        }
    };
    for dir in SYSTEM_DIRS {
        rule(Path::new(dir), read_exec());
    }
    for (dev, write) in DEVICES {
        let mut access = AccessFs::ReadFile.into();
        if *write {
            access |= AccessFs::WriteFile | AccessFs::Truncate;
        }
        rule(Path::new(dev), access);
    }
    rule(Path::new("/proc"), AccessFs::ReadFile | AccessFs::ReadDir);
    for dir in allowed.toolchains {
        rule(dir, read_exec());
    }
    for dir in allowed.readable {
        rule(dir, AccessFs::ReadFile | AccessFs::ReadDir);
    }
    let workspace = match allowed.access {
        FsAccess::ReadOnly => read_exec(),
        FsAccess::ReadWrite => all_fs(),
    };
    rule(allowed.workspace, workspace);
    let created = created
        .add_rules(rules.into_iter().map(Ok::<_, landlock::RulesetError>))
        .map_err(err)?;
    Option::<OwnedFd>::from(created)
        .ok_or_else(|| ProcessError::Landlock("the kernel returned no ruleset".into()))
}

/// An `O_PATH` descriptor for `path` and whether it is a directory; `None`
/// when it does not exist (a rule for a missing path grants nothing).
pub(super) fn open_path(path: &Path) -> Option<(OwnedFd, bool)> {
    use std::os::unix::fs::OpenOptionsExt;
    let file = std::fs::File::options()
        .read(true)
        .custom_flags(libc::O_PATH)
        .open(path)
        .ok()?;
    let is_dir = file.metadata().ok()?.is_dir();
    Some((file.into(), is_dir))
}
