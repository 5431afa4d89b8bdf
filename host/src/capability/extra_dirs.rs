//! Directories outside the workspace that a policy grants, as a call gets
//! them.
//!
//! Invariant: a call gets an extra directory only if it also gets the
//! workspace (the plugin declares a filesystem need and the policy grants
//! workspace access), never with more access than either the policy grants
//! the directory or the plugin declares (`read` makes every directory
//! read-only), and only if the directory exists: one that cannot be opened
//! is left out and the call's record says so.

use std::path::{Path, PathBuf};

use super::{FsAccess, GrantCut};
use crate::plugin::FsNeed;
use crate::policy::ExtraDir;

/// A directory besides the workspace, preopened in the guest at the path
/// the policy names.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct DirGrant {
    /// The absolute path the policy names: the guest sees the directory
    /// here, and messages name it so.
    pub path: PathBuf,
    /// The same directory on the host, canonicalised.
    pub host_dir: PathBuf,
    /// Read-only or read-write.
    pub access: FsAccess,
}

impl DirGrant {
    /// The guest path, as a string.
    pub fn guest_path(&self) -> String {
        self.path.to_string_lossy().into_owned()
    }
}

/// The extra directories a call gets: `granted` limited by the plugin's
/// declared `need`, for a call whose workspace access is `workspace`
/// (`None`: no filesystem, so no extra directories either). Directories
/// that cannot be opened are left out, each with a cut saying why.
pub(super) fn extra_dirs_for(
    need: FsNeed,
    workspace: Option<FsAccess>,
    granted: &[ExtraDir],
    cuts: &mut Vec<GrantCut>,
) -> Vec<DirGrant> {
    if workspace.is_none() || granted.is_empty() {
        return Vec::new();
    }
    let mut dirs = Vec::with_capacity(granted.len());
    for dir in granted {
        let access = match (need, dir.access) {
            (FsNeed::None, _) => continue,
            (FsNeed::Read, _) | (FsNeed::ReadWrite, FsAccess::ReadOnly) => FsAccess::ReadOnly,
            (FsNeed::ReadWrite, FsAccess::ReadWrite) => FsAccess::ReadWrite,
        };
        match canonical_dir(&dir.path) {
            Some(host_dir) => dirs.push(DirGrant {
                path: dir.path.clone(),
                host_dir,
                access,
            }),
            None => cuts.push(GrantCut {
                declared: format!("filesystem: {}", need.as_str()),
                granted: format!(
                    "without the extra directory {}: it does not exist or is not a directory",
                    dir.path.display()
                ),
            }),
        }
    }
    dirs
}

fn canonical_dir(path: &Path) -> Option<PathBuf> {
    std::fs::canonicalize(path).ok().filter(|p| p.is_dir())
}

/// One phrase for a list of extra directories, e.g.
/// `, /data read-only, /tmp/out read-write`; empty for none.
pub(super) fn describe(dirs: &[DirGrant]) -> String {
    dirs.iter()
        .map(|d| {
            let access = match d.access {
                FsAccess::ReadOnly => "read-only",
                FsAccess::ReadWrite => "read-write",
            };
            format!(", {} {access}", d.path.display())
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn extra(path: &Path, access: FsAccess) -> ExtraDir {
        ExtraDir {
            path: path.to_path_buf(),
            access,
        }
    }

    #[test]
    fn the_declared_need_and_the_workspace_bound_every_directory() {
        let tmp = tempfile::tempdir().unwrap();
        let granted = [
            extra(tmp.path(), FsAccess::ReadWrite),
            extra(&tmp.path().join("missing"), FsAccess::ReadOnly),
        ];
        let mut cuts = Vec::new();
        let rw = extra_dirs_for(
            FsNeed::ReadWrite,
            Some(FsAccess::ReadOnly),
            &granted,
            &mut cuts,
        );
        assert_eq!(rw.len(), 1);
        assert_eq!(rw[0].access, FsAccess::ReadWrite);
        assert_eq!(rw[0].host_dir, std::fs::canonicalize(tmp.path()).unwrap());
        assert_eq!(cuts.len(), 1);
        assert!(
            cuts[0].granted.contains("missing: it does not exist"),
            "{cuts:?}"
        );

        let ro = extra_dirs_for(FsNeed::Read, Some(FsAccess::ReadOnly), &granted, &mut cuts);
        assert_eq!(ro[0].access, FsAccess::ReadOnly);
        assert!(
            extra_dirs_for(FsNeed::None, Some(FsAccess::ReadWrite), &granted, &mut cuts).is_empty()
        );
        assert!(extra_dirs_for(FsNeed::ReadWrite, None, &granted, &mut cuts).is_empty());
        assert_eq!(
            describe(&rw),
            format!(", {} read-write", tmp.path().display())
        );
    }
}
