//! A call's grant: what the plugin declares it needs, intersected with what
//! the policy grants.
//!
//! Invariant: a call never gets more than either side allows: no
//! filesystem the plugin does not declare or the policy does not grant, no
//! writes unless both allow them, extra directories only with the
//! workspace, network only where a declared pattern and a policy rule
//! both match.

use std::path::{Path, PathBuf};

use super::{ExtraDir, GrantSpec};
use crate::capability::process::ProcessGrant;
use crate::capability::{
    DeclaredCapabilities, DirGrant, FsAccess, FsGrant, FsNeed, Grant, GrantCut, InteractionGrant,
    NetworkGrant, PathGuard, WriteMode,
};

/// The plugin's declared needs, limited to `workspace`, read-only unless
/// `write` allows more, with the default protected paths. Returns the
/// grant and what was cut from the declaration.
pub fn grant_from_declared(
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
    if declared.processes {
        cuts.push(GrantCut {
            declared: "processes".into(),
            granted: "no processes (no policy grants them)".into(),
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
        process: None,
        interaction: declared.wants_interaction().then_some(InteractionGrant {
            memory: declared.memory,
        }),
    };
    (grant, cuts)
}

/// The plugin's declared needs intersected with what a policy grants:
/// never more than either, with the policy's protected paths. The
/// declared filesystem need covers the policy's extra directories too
/// (`read` gets them read-only). Returns the grant and what was cut.
pub fn grant_from_policy(
    declared: &DeclaredCapabilities,
    workspace: &Path,
    granted: &GrantSpec,
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
    let extra_dirs = extra_dirs_for(declared.filesystem, access, &granted.extra_dirs, &mut cuts);
    let (network, net_cuts) =
        NetworkGrant::intersect(&declared.network, &granted.network, &granted.credentials);
    cuts.extend(net_cuts);
    let process = process_grant(declared, access, workspace, granted, &mut cuts);
    let filesystem = access.map(|access| FsGrant {
        host_dir: workspace.to_path_buf(),
        access,
        protected: Some(granted.protected.clone()),
    });
    let interaction = interaction_grant(declared, granted, &mut cuts);
    let grant = Grant {
        filesystem,
        extra_dirs,
        network,
        process,
        interaction,
    };
    (grant, cuts)
}

/// The processes a call gets: only when the plugin declares them and the
/// policy grants them, and only with the workspace, whose access (and
/// protected paths) they share. Toolchain directories that cannot be
/// opened are left out, each with a cut saying why.
fn process_grant(
    declared: &DeclaredCapabilities,
    workspace_access: Option<FsAccess>,
    workspace: &Path,
    granted: &GrantSpec,
    cuts: &mut Vec<GrantCut>,
) -> Option<ProcessGrant> {
    if !declared.processes {
        return None;
    }
    let spec = &granted.process;
    let cut = |cuts: &mut Vec<GrantCut>, why: String| {
        cuts.push(GrantCut {
            declared: "processes".into(),
            granted: why,
        })
    };
    if !spec.enabled {
        cut(cuts, "no processes (the policy grants none)".into());
        return None;
    }
    let Some(access) = workspace_access else {
        cut(
            cuts,
            "no processes (they run in the workspace, which the call does not get)".into(),
        );
        return None;
    };
    let mut toolchains = Vec::with_capacity(spec.toolchains.len());
    for dir in &spec.toolchains {
        match dir.path.as_deref().and_then(canonical_dir) {
            Some(path) => toolchains.push(path),
            None => cut(
                cuts,
                format!(
                    "processes without the toolchain directory {}: {}",
                    dir.written,
                    match dir.path {
                        None => "$HOME is not set",
                        Some(_) => "it does not exist or is not a directory",
                    }
                ),
            ),
        }
    }
    Some(ProcessGrant {
        workspace: workspace.to_path_buf(),
        access,
        protected: granted.protected.clone(),
        toolchains,
        env: spec.env.clone(),
        limits: spec.limits,
        mode: spec.confinement,
    })
}

/// The interaction a call gets: what the plugin declares, less what the
/// policy turns off (`interaction = false`, `memory = false`).
fn interaction_grant(
    declared: &DeclaredCapabilities,
    granted: &GrantSpec,
    cuts: &mut Vec<GrantCut>,
) -> Option<InteractionGrant> {
    if !declared.wants_interaction() {
        return None;
    }
    if !granted.interaction {
        cuts.push(GrantCut {
            declared: "interaction".into(),
            granted: "no interaction (the policy sets `interaction = false`)".into(),
        });
        return None;
    }
    if declared.memory && !granted.memory {
        cuts.push(GrantCut {
            declared: "memory".into(),
            granted: "no memory (the policy sets `memory = false`)".into(),
        });
    }
    Some(InteractionGrant {
        memory: declared.memory && granted.memory,
    })
}

/// The extra directories a call gets: `granted` limited by the plugin's
/// declared `need`, for a call whose workspace access is `workspace`
/// (`None`: no filesystem, so no extra directories either). Directories
/// that cannot be opened are left out, each with a cut saying why.
fn extra_dirs_for(
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
    }
}
