//! A call's grant: the capabilities it runs with.

use std::path::{Path, PathBuf};

use super::PathGuard;
use super::egress::NetworkGrant;
use super::extra_dirs::{self, DirGrant, extra_dirs_for};
use crate::plugin::{DeclaredCapabilities, FsNeed};

/// Access to a directory.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum FsAccess {
    /// Read files and list directories; every write is refused.
    ReadOnly,
    /// Read, create, modify, rename and delete inside the directory.
    ReadWrite,
}

/// The workspace directory a call may touch.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct FsGrant {
    /// The host directory, canonicalised.
    pub host_dir: PathBuf,
    pub access: FsAccess,
    /// Paths inside `host_dir` the call may never change (nor read, if the
    /// guard says so), refused by the filesystem layer whatever the plugin
    /// does. `None` protects nothing; a grant read without the field gets
    /// the defaults.
    #[serde(default = "default_protection")]
    pub protected: Option<PathGuard>,
}

fn default_protection() -> Option<PathGuard> {
    Some(PathGuard::defaults())
}

/// Whether the user allowed writes for this call (until policies decide).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub enum WriteMode {
    /// Writes are refused at the WASI layer.
    #[default]
    ReadOnly,
    /// Plugins that declare write access get it, inside the workspace.
    AllowWrite,
}

/// What one call may use.
#[derive(Debug, Clone, Default, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct Grant {
    /// The workspace, if any filesystem access is granted.
    pub filesystem: Option<FsGrant>,
    /// Directories besides the workspace, only ever with it; the
    /// workspace grant's protected paths apply in each.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub extra_dirs: Vec<DirGrant>,
    /// Where requests may go, if any network access is granted: only then
    /// is `wasi:http` linked.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub network: Option<NetworkGrant>,
}

/// A capability the plugin declared but the call does not get.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct GrantCut {
    /// What was declared, e.g. `filesystem: read-write`.
    pub declared: String,
    /// What the call gets instead, and why.
    pub granted: String,
}

impl Grant {
    /// No capabilities at all.
    pub fn none() -> Self {
        Grant::default()
    }

    /// The plugin's declared needs, limited to `workspace`, read-only unless
    /// `write` allows more, with the default protected paths. Returns the
    /// grant and what was cut from the declaration.
    pub fn from_declared(
        declared: &DeclaredCapabilities,
        workspace: &Path,
        write: WriteMode,
    ) -> (Grant, Vec<GrantCut>) {
        let mut cuts = Vec::new();
        let access = match (declared.filesystem, write) {
            (FsNeed::None, _) => None,
            (FsNeed::Read, _) => Some(FsAccess::ReadOnly),
            (FsNeed::ReadWrite, WriteMode::AllowWrite) => Some(FsAccess::ReadWrite),
            (FsNeed::ReadWrite, WriteMode::ReadOnly) => {
                cuts.push(GrantCut {
                    declared: "filesystem: read-write".into(),
                    granted: "filesystem: read-only (writes need --allow-write)".into(),
                });
                Some(FsAccess::ReadOnly)
            }
        };
        for rule in &declared.network {
            cuts.push(GrantCut {
                declared: format!("network: {rule}"),
                granted: "no network (no policy grants it)".into(),
            });
        }
        let filesystem = access.map(|access| FsGrant {
            host_dir: workspace.to_path_buf(),
            access,
            protected: Some(PathGuard::defaults()),
        });
        let grant = Grant {
            filesystem,
            extra_dirs: Vec::new(),
            network: None,
        };
        (grant, cuts)
    }

    /// The plugin's declared needs intersected with what a policy grants:
    /// never more than either, with the policy's protected paths. The
    /// declared filesystem need covers the policy's extra directories too
    /// (`read` gets them read-only). Returns the grant and what was cut.
    pub fn from_policy(
        declared: &DeclaredCapabilities,
        workspace: &Path,
        granted: &crate::policy::GrantSpec,
    ) -> (Grant, Vec<GrantCut>) {
        let mut cuts = Vec::new();
        let access = match (declared.filesystem, granted.workspace) {
            (FsNeed::None, _) => None,
            (need, None) => {
                cuts.push(GrantCut {
                    declared: format!("filesystem: {}", need.as_str()),
                    granted: "no filesystem (the policy grants none)".into(),
                });
                None
            }
            (FsNeed::Read, Some(_)) => Some(FsAccess::ReadOnly),
            (FsNeed::ReadWrite, Some(FsAccess::ReadWrite)) => Some(FsAccess::ReadWrite),
            (FsNeed::ReadWrite, Some(FsAccess::ReadOnly)) => {
                cuts.push(GrantCut {
                    declared: "filesystem: read-write".into(),
                    granted: "filesystem: read-only (the policy grants no writes)".into(),
                });
                Some(FsAccess::ReadOnly)
            }
        };
        let extra_dirs =
            extra_dirs_for(declared.filesystem, access, &granted.extra_dirs, &mut cuts);
        let (network, net_cuts) =
            NetworkGrant::intersect(&declared.network, &granted.network, &granted.credentials);
        cuts.extend(net_cuts);
        let filesystem = access.map(|access| FsGrant {
            host_dir: workspace.to_path_buf(),
            access,
            protected: Some(granted.protected.clone()),
        });
        let grant = Grant {
            filesystem,
            extra_dirs,
            network,
        };
        (grant, cuts)
    }

    /// The interfaces this grant links.
    pub fn link_profile(&self) -> super::LinkProfile {
        super::LinkProfile {
            filesystem: self.filesystem.is_some() || !self.extra_dirs.is_empty(),
            http: self.network.is_some(),
        }
    }

    /// One line describing the grant, for humans.
    pub fn describe(&self) -> String {
        let fs = match &self.filesystem {
            None => "no filesystem",
            Some(FsGrant {
                access: FsAccess::ReadOnly,
                ..
            }) => "workspace read-only",
            Some(FsGrant {
                access: FsAccess::ReadWrite,
                ..
            }) => "workspace read-write",
        };
        let net = match &self.network {
            None => "no network".to_string(),
            Some(n) => n.describe(),
        };
        format!("{fs}{}, {net}", extra_dirs::describe(&self.extra_dirs))
    }
}
