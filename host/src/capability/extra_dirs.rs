//! Directories outside the workspace that a policy grants, as a call gets
//! them.
//!
//! Invariant: a call gets an extra directory only if it also gets the
//! workspace (the plugin declares a filesystem need and the policy grants
//! workspace access), never with more access than either the policy grants
//! the directory or the plugin declares (`read` makes every directory
//! read-only), and only if the directory exists: one that cannot be opened
//! is left out and the call's record says so.

use std::path::PathBuf;

use super::FsAccess;

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

    #[test]
    fn extra_directories_are_described_with_their_access() {
        let dirs = [
            DirGrant {
                path: PathBuf::from("/data"),
                host_dir: PathBuf::from("/data"),
                access: FsAccess::ReadOnly,
            },
            DirGrant {
                path: PathBuf::from("/tmp/out"),
                host_dir: PathBuf::from("/tmp/out"),
                access: FsAccess::ReadWrite,
            },
        ];
        assert_eq!(describe(&dirs), ", /data read-only, /tmp/out read-write");
        assert_eq!(describe(&[]), "");
    }
}
