//! Everything a policy could let any call reach on the host: what the
//! Warden process itself must be able to touch once it confines itself.
//!
//! Invariant: a call's grant never reaches beyond this, so confining the
//! host to it takes nothing away from any call.

use std::path::PathBuf;

use super::Policy;
use super::grants::GrantTable;
use crate::capability::FsAccess;
use crate::capability::egress::CredentialSource;

/// The union of every grant layer of a policy.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct HostReach {
    /// Whether any call may write the workspace.
    pub workspace_writes: bool,
    /// Every extra directory any layer names, with the most access any
    /// layer gives it.
    pub extra_dirs: Vec<(PathBuf, FsAccess)>,
    /// Every toolchain directory any layer exposes to processes.
    pub toolchains: Vec<PathBuf>,
    /// Files the host reads while calls run: credential files.
    pub files: Vec<PathBuf>,
}

impl Policy {
    /// What any call under this policy could reach on the host.
    pub fn host_reach(&self) -> HostReach {
        let mut reach = HostReach::default();
        let layers = std::iter::once(&self.grants.default)
            .chain(self.grants.plugin.values())
            .chain(self.grants.tool.values());
        for layer in layers {
            add_layer(&mut reach, layer);
        }
        for c in &self.credentials {
            if let CredentialSource::File(path) = &c.source {
                reach.files.push(path.clone());
            }
        }
        reach
    }
}

fn add_layer(reach: &mut HostReach, layer: &GrantTable) {
    if layer
        .workspace
        .is_some_and(|w| w.fs_access() == Some(FsAccess::ReadWrite))
    {
        reach.workspace_writes = true;
    }
    for dir in layer.extra_dirs.iter().flatten() {
        match reach.extra_dirs.iter_mut().find(|(p, _)| *p == dir.path) {
            Some((_, access)) => {
                if dir.access == FsAccess::ReadWrite {
                    *access = FsAccess::ReadWrite;
                }
            }
            None => reach.extra_dirs.push((dir.path.clone(), dir.access)),
        }
    }
    if let Some(process) = &layer.process {
        for dir in process.toolchains.iter().flatten() {
            if let Some(path) = &dir.path
                && !reach.toolchains.contains(path)
            {
                reach.toolchains.push(path.clone());
            }
        }
    }
}
