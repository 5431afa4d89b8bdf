//! A call's grant: the capabilities it runs with.

use std::path::PathBuf;

use super::PathGuard;
use super::egress::NetworkGrant;
use super::extra_dirs::{self, DirGrant};
use super::process::ProcessGrant;

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
    /// Commands the call may run, and how they are confined, if processes
    /// are granted: only then is `warden:tool/process` linked.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub process: Option<ProcessGrant>,
    /// The plan, questions to the user and (if granted) memory notes, if
    /// interaction is granted: only then is `warden:tool/interaction` linked.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub interaction: Option<InteractionGrant>,
}

/// What a call may do through `warden:tool/interaction`: publish a plan and
/// ask the user always; read and write the workspace's memory notes only
/// when `memory` is granted.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct InteractionGrant {
    /// The workspace's memory notes.
    pub memory: bool,
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
        let process = match &self.process {
            None => "",
            Some(_) => ", commands in the process sandbox (no network)",
        };
        let interaction = match &self.interaction {
            None => "",
            Some(InteractionGrant { memory: false }) => ", plan and questions to the user",
            Some(InteractionGrant { memory: true }) => {
                ", plan, questions to the user and memory notes"
            }
        };
        format!(
            "{fs}{}, {net}{process}{interaction}",
            extra_dirs::describe(&self.extra_dirs)
        )
    }
}
