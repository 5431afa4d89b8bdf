//! The per-call state of the filesystem boundary: the protected paths, the
//! workspace-relative path of the descriptors the guest holds, the
//! refusals made so far and the file uses that succeeded.

use std::collections::HashMap;
use std::path::{Path, PathBuf};

use super::exercised::{Exercised, FileOp, FileUses};
use super::path_guard::join_rel;
use super::{FsAccess, GUEST_WORKSPACE, Grant, PathGuard, PathUse};

/// An operation on a path, as the filesystem boundary names it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum FsOp {
    /// `open-at`: opening, creating or truncating.
    Open,
    /// Writing or appending through a descriptor.
    Write,
    /// `set-size`: truncating or extending through a descriptor.
    SetSize,
    /// `set-times` or `set-times-at`.
    SetTimes,
    /// `create-directory-at`.
    CreateDirectory,
    /// `remove-directory-at`.
    RemoveDirectory,
    /// `unlink-file-at`.
    Unlink,
    /// `rename-at`, either end.
    Rename,
    /// `link-at`, either end.
    Link,
    /// `symlink-at`: the link's name or where it points.
    Symlink,
    /// `readlink-at`.
    Readlink,
    /// `read-directory`.
    ReadDirectory,
}

/// One operation refused at the filesystem boundary.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct BoundaryDenial {
    /// What the guest tried.
    pub op: FsOp,
    /// The workspace-relative path refused: where the operation really
    /// led, after any symlink.
    pub path: String,
}

/// Refusals kept per call; later ones are only counted.
pub const MAX_BOUNDARY_DENIALS: usize = 64;

/// Stands for a path the boundary could not place inside the workspace.
const UNPLACED: &str = "(a path the host could not place in the workspace)";

/// The filesystem boundary of one call.
#[derive(Debug, Default)]
pub struct FsBoundary {
    /// `None`: nothing protected, every operation passes straight through.
    guard: Option<PathGuard>,
    /// The workspace on the host, canonical.
    host_dir: PathBuf,
    /// Whether the grant allows changes at all; without it wasmtime refuses
    /// every change itself.
    changes_granted: bool,
    /// Workspace-relative path of descriptors, by resource rep, as of when
    /// they were opened.
    pub(super) paths: HashMap<u32, String>,
    denials: Vec<BoundaryDenial>,
    denials_dropped: u64,
    uses: FileUses,
}

/// What the boundary saw during a call.
#[derive(Debug, Default)]
pub struct BoundaryReport {
    /// Refusals, at most [`MAX_BOUNDARY_DENIALS`].
    pub denials: Vec<BoundaryDenial>,
    /// Refusals past that cap, counted only.
    pub denials_dropped: u64,
    /// The file uses that succeeded.
    pub exercised: Exercised,
}

impl FsBoundary {
    /// The boundary for `grant`'s workspace and protected paths.
    pub fn for_grant(grant: &Grant) -> FsBoundary {
        match &grant.filesystem {
            None => FsBoundary::default(),
            Some(fs) => FsBoundary {
                guard: fs.protected.clone(),
                host_dir: fs.host_dir.clone(),
                changes_granted: fs.access == FsAccess::ReadWrite,
                ..FsBoundary::default()
            },
        }
    }

    /// The refusals and the uses.
    pub fn into_report(self) -> BoundaryReport {
        BoundaryReport {
            denials: self.denials,
            denials_dropped: self.denials_dropped,
            exercised: self.uses.into_exercised(),
        }
    }

    /// Note that `op` succeeded on `path` (moving it to `to`, for a rename).
    pub(super) fn used(&mut self, op: FileOp, path: Option<String>, to: Option<String>) {
        if let Some(path) = path {
            self.uses.note(op, path, to);
        }
    }

    /// Whether operations that `how` a path need checking at all.
    pub(super) fn checks(&self, how: PathUse) -> bool {
        match (&self.guard, how) {
            (None, _) => false,
            (Some(_), PathUse::Change) => self.changes_granted,
            (Some(guard), PathUse::Read) => guard.refuses_reads(),
        }
    }

    pub(super) fn refuses(&self, rel: &str, how: PathUse) -> bool {
        self.guard.as_ref().is_some_and(|g| g.refuses(rel, how))
    }

    pub(super) fn guards_below(&self, rel: &str) -> bool {
        self.guard.as_ref().is_some_and(|g| g.guards_below(rel))
    }

    pub(super) fn record(&mut self, op: FsOp, path: Option<&str>) {
        if self.denials.len() >= MAX_BOUNDARY_DENIALS {
            self.denials_dropped += 1;
            return;
        }
        let path = path.unwrap_or(UNPLACED).to_string();
        self.denials.push(BoundaryDenial { op, path });
    }

    /// The workspace-relative path of a host path, `.` for the workspace
    /// itself; `None` outside it.
    pub(super) fn relative(&self, host: &Path) -> Option<String> {
        let rel = host.strip_prefix(&self.host_dir).ok()?;
        let rel = rel.to_string_lossy();
        Some(if rel.is_empty() {
            ".".into()
        } else {
            rel.into_owned()
        })
    }

    /// Where a symlink in `dir_rel` whose contents are `text` points,
    /// lexically; `None` when it points outside the workspace (which
    /// wasmtime never follows).
    pub(super) fn link_target(&self, dir_rel: &str, text: &str) -> Option<String> {
        let host = self.host_dir.to_string_lossy();
        let roots = [GUEST_WORKSPACE, host.as_ref()];
        let inside = roots
            .into_iter()
            .filter(|r| !r.is_empty())
            .find_map(|root| {
                text.strip_prefix(root)
                    .filter(|rest| rest.is_empty() || rest.starts_with('/'))
            });
        match inside {
            Some(rest) => join_rel(".", rest.trim_start_matches('/')),
            None => join_rel(dir_rel, text),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::capability::FsGrant;

    fn boundary(access: FsAccess, protected: Option<PathGuard>) -> FsBoundary {
        FsBoundary::for_grant(&Grant {
            filesystem: Some(FsGrant {
                host_dir: PathBuf::from("/home/u/proj"),
                access,
                protected,
            }),
        })
    }

    #[test]
    fn only_what_the_grant_could_do_is_checked() {
        let rw = boundary(FsAccess::ReadWrite, Some(PathGuard::defaults()));
        assert!(rw.checks(PathUse::Change) && !rw.checks(PathUse::Read));
        let ro = boundary(FsAccess::ReadOnly, Some(PathGuard::defaults()));
        assert!(!ro.checks(PathUse::Change));
        let open = boundary(FsAccess::ReadWrite, None);
        assert!(!open.checks(PathUse::Change) && !open.refuses(".git/config", PathUse::Change));
        assert!(!FsBoundary::for_grant(&Grant::none()).checks(PathUse::Change));
    }

    #[test]
    fn paths_are_placed_in_the_workspace() {
        let b = boundary(FsAccess::ReadWrite, Some(PathGuard::defaults()));
        assert_eq!(b.relative(Path::new("/home/u/proj")).as_deref(), Some("."));
        assert_eq!(
            b.relative(Path::new("/home/u/proj/.git/config")).as_deref(),
            Some(".git/config")
        );
        assert_eq!(b.relative(Path::new("/home/u/project")), None);
        assert_eq!(b.link_target("src", "../.env").as_deref(), Some(".env"));
        assert_eq!(
            b.link_target("src", "/workspace/.git").as_deref(),
            Some(".git")
        );
        assert_eq!(
            b.link_target("src", "/home/u/proj/.git/HEAD").as_deref(),
            Some(".git/HEAD")
        );
        assert_eq!(b.link_target("src", "/workspacex/.git"), None);
        assert_eq!(b.link_target(".", "../outside"), None);
    }

    #[test]
    fn denials_are_capped() {
        let mut b = boundary(FsAccess::ReadWrite, Some(PathGuard::defaults()));
        for _ in 0..MAX_BOUNDARY_DENIALS + 3 {
            b.record(FsOp::Open, Some(".env"));
        }
        b.record(FsOp::Open, None);
        let r = b.into_report();
        let (kept, dropped) = (r.denials, r.denials_dropped);
        assert_eq!((kept.len(), dropped), (MAX_BOUNDARY_DENIALS, 4));
        assert_eq!(
            kept[0],
            BoundaryDenial {
                op: FsOp::Open,
                path: ".env".into()
            }
        );
    }
}
