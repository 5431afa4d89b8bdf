//! The per-call state of the filesystem boundary: the protected paths, the
//! granted directories, the host path of the descriptors the guest holds,
//! the refusals made so far, the file uses that succeeded, and what the
//! call's instances share (the write quota, the protected files' links).

use std::collections::HashMap;
use std::path::Path;
use std::sync::{Arc, Weak};

use super::exercised::{Exercised, FileOp, FileUses};
use super::hard_links::{Linked, ProtectedLinks};
use super::write_quota::WriteQuota;
use super::{FsAccess, GUEST_WORKSPACE, Grant, PathGuard, PathUse, normalize_path};
use crate::base::{Limits, keep_at_most};

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
    /// `stat-at`: reading an entry's metadata.
    Stat,
    /// `read-directory`.
    ReadDirectory,
}

/// One operation refused at the filesystem boundary.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct BoundaryDenial {
    /// What the guest tried.
    pub op: FsOp,
    /// The path refused, where the operation really led after any symlink:
    /// workspace-relative in the workspace, else under the extra directory
    /// as the policy names it.
    pub path: String,
}

/// Refusals kept per call; later ones are only counted.
pub const MAX_BOUNDARY_DENIALS: usize = 64;

/// Bytes of a path a record keeps (Linux's `PATH_MAX`); the rest is cut.
pub const MAX_RECORDED_PATH: usize = 4096;

/// Stands for a path the boundary could not place in a granted directory.
const UNPLACED: &str = "(a path the host could not place in a granted directory)";

/// A directory preopened for the call.
#[derive(Debug)]
struct Root {
    /// Where it is on the host, canonical, as a string.
    host: String,
    /// The guest path of its preopen.
    guest: String,
    /// How refusals name paths in it: `None` for workspace-relative paths,
    /// else the directory as the policy names it.
    shown: Option<String>,
}

/// The filesystem boundary of one call.
///
/// Paths are tracked as host paths, judged against every granted directory
/// they lie in: the protected globs apply relative to each (so `.git/**`
/// protects the `.git` at the top of the workspace and of every extra
/// directory, and a workspace inside an extra directory keeps its own).
#[derive(Debug, Default)]
pub struct FsBoundary {
    /// `None`: nothing protected, every operation passes straight through.
    guard: Option<PathGuard>,
    /// The workspace (if granted) and the extra directories.
    roots: Vec<Root>,
    /// Whether the grant allows changes anywhere; without it wasmtime
    /// refuses every change itself.
    changes_granted: bool,
    /// Host path of descriptors, by resource rep, as of when they were opened.
    pub(super) paths: HashMap<u32, String>,
    /// The file opened last for reading only, and its size then: a read of
    /// it that stops short at or past that size has found the end, without
    /// one more read to hear so. The weak reference keeps the file's
    /// address from being reused by another.
    pub(super) size_at_open: Option<(Weak<std::fs::File>, u64)>,
    denials: Vec<BoundaryDenial>,
    denials_dropped: u64,
    uses: FileUses,
    shared: FsShared,
}

/// What every instance of one call shares at the boundary: a worker's
/// writes count against the call's quota, and the protected files' links
/// are found once for all of them.
#[derive(Debug, Clone)]
pub struct FsShared {
    quota: Arc<WriteQuota>,
    links: Arc<ProtectedLinks>,
}

impl Default for FsShared {
    /// The default quota ([`Limits::write_bytes`]), nothing found yet.
    fn default() -> Self {
        FsShared {
            quota: Arc::new(WriteQuota::new(Limits::default().write_bytes)),
            links: Arc::default(),
        }
    }
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
    /// The boundary for `grant`'s directories and protected paths.
    pub fn for_grant(grant: &Grant) -> FsBoundary {
        let Some(fs) = &grant.filesystem else {
            return FsBoundary::default();
        };
        let mut roots = vec![Root {
            host: fs.host_dir.to_string_lossy().into_owned(),
            guest: GUEST_WORKSPACE.to_string(),
            shown: None,
        }];
        roots.extend(grant.extra_dirs.iter().map(|d| Root {
            host: d.host_dir.to_string_lossy().into_owned(),
            guest: d.guest_path(),
            shown: Some(d.guest_path()),
        }));
        let changes_granted = fs.access == FsAccess::ReadWrite
            || grant
                .extra_dirs
                .iter()
                .any(|d| d.access == FsAccess::ReadWrite);
        FsBoundary {
            guard: fs.protected.clone(),
            roots,
            changes_granted,
            ..FsBoundary::default()
        }
    }

    /// This boundary with a write quota of `bytes` of its own.
    pub fn with_write_quota(mut self, bytes: u64) -> FsBoundary {
        self.shared.quota = Arc::new(WriteQuota::new(bytes));
        self
    }

    /// This boundary sharing another instance's quota and links (a worker's,
    /// sharing its call's).
    pub fn sharing(mut self, shared: FsShared) -> FsBoundary {
        self.shared = shared;
        self
    }

    /// What this boundary shares with the other instances of its call.
    pub fn shared(&self) -> FsShared {
        self.shared.clone()
    }

    /// The call's write quota.
    pub fn write_quota(&self) -> &Arc<WriteQuota> {
        &self.shared.quota
    }

    /// Whether `file` is another name of a protected file in a granted
    /// directory (found on the first question of the call).
    pub(super) fn links_to_protected(&self, file: Linked) -> bool {
        let roots: Vec<&str> = self.roots.iter().map(|r| r.host.as_str()).collect();
        self.shared
            .links
            .contains(file, &roots, |path| self.refuses(path, PathUse::Change))
    }

    /// The refusals and the uses.
    pub fn into_report(self) -> BoundaryReport {
        BoundaryReport {
            denials: self.denials,
            denials_dropped: self.denials_dropped,
            exercised: self.uses.into_exercised(),
        }
    }

    /// Take in what another instance of the same call saw (a worker
    /// started by `fan-out`), under this boundary's caps. A refusal the
    /// call already holds is not repeated: workers splitting one walk each
    /// meet the same protected directory.
    pub fn absorb(&mut self, other: BoundaryReport) {
        for denial in other.denials {
            if self.denials.contains(&denial) {
                continue;
            }
            if self.denials.len() >= MAX_BOUNDARY_DENIALS {
                self.denials_dropped += 1;
            } else {
                self.denials.push(denial);
            }
        }
        self.denials_dropped += other.denials_dropped;
        for used in other.exercised.files {
            self.uses.note(used.op, used.path, used.to);
        }
        self.uses.count_dropped(other.exercised.files_dropped);
    }

    /// Note that `op` succeeded on the host path `path` (moving it to
    /// `to`, for a rename), named as refusals name paths.
    pub(super) fn used(&mut self, op: FileOp, path: Option<String>, to: Option<String>) {
        let Some(path) = path.and_then(|p| self.shown(&p)) else {
            return;
        };
        let to = to.and_then(|t| self.shown(&t));
        self.uses.note(op, path, to);
    }

    /// Whether operations that `how` a path need checking at all.
    pub(super) fn checks(&self, how: PathUse) -> bool {
        match (&self.guard, how) {
            (None, _) => false,
            (Some(_), PathUse::Change) => self.changes_granted,
            (Some(guard), PathUse::Read) => guard.refuses_reads(),
        }
    }

    /// `path` relative to each granted directory it lies in.
    fn rels<'a>(&'a self, path: &'a str) -> impl Iterator<Item = &'a str> + 'a {
        self.roots.iter().filter_map(move |r| below(path, &r.host))
    }

    /// Whether `how` is refused on the host path `path`.
    pub(super) fn refuses(&self, path: &str, how: PathUse) -> bool {
        self.guard
            .as_ref()
            .is_some_and(|g| self.rels(path).any(|rel| g.refuses(rel, how)))
    }

    /// Whether moving `path`, or moving something onto it, would move
    /// protected paths or a granted directory, or put content under them.
    pub(super) fn guards_below(&self, path: &str) -> bool {
        let Some(guard) = &self.guard else {
            return false;
        };
        self.rels(path).any(|rel| guard.guards_below(rel))
            || self.roots.iter().any(|r| below(&r.host, path).is_some())
    }

    pub(super) fn record(&mut self, op: FsOp, path: Option<&str>) {
        if self.denials.len() >= MAX_BOUNDARY_DENIALS {
            self.denials_dropped += 1;
            return;
        }
        let path = path
            .and_then(|p| self.shown(p))
            .unwrap_or_else(|| UNPLACED.to_string());
        self.denials.push(BoundaryDenial { op, path });
    }

    /// How a refusal names a host path: relative to the innermost granted
    /// directory holding it, workspace-relative in the workspace.
    fn shown(&self, path: &str) -> Option<String> {
        let (root, rel) = self
            .roots
            .iter()
            .filter_map(|r| below(path, &r.host).map(|rel| (r, rel)))
            .min_by_key(|(_, rel)| rel.len())?;
        let shown = match (&root.shown, rel) {
            (None, rel) => rel.to_string(),
            (Some(dir), ".") => dir.clone(),
            (Some(dir), rel) => format!("{}/{rel}", dir.trim_end_matches('/')),
        };
        // A guest may name paths far longer than any that exists.
        Some(keep_at_most(shown, MAX_RECORDED_PATH))
    }

    /// `host` as a tracked path, if it lies in a granted directory.
    pub(super) fn place(&self, host: &Path) -> Option<String> {
        let host = host.to_string_lossy();
        self.rels(&host).next()?;
        Some(host.into_owned())
    }

    /// The host path of a granted directory's preopen named `guest`.
    pub(super) fn preopen(&self, guest: &str) -> Option<String> {
        self.roots
            .iter()
            .find(|r| r.guest == guest)
            .map(|r| r.host.clone())
    }

    /// `rel` joined to the tracked directory `dir` and normalised; `None`
    /// if `rel` is absolute or the result lies in no granted directory
    /// (wasmtime refuses both).
    pub(super) fn join(&self, dir: &str, rel: &str) -> Option<String> {
        if rel.starts_with('/') {
            return None;
        }
        let joined = normalize_path(&format!("{dir}/{rel}"));
        self.rels(&joined).next()?;
        Some(joined)
    }

    /// Where a symlink in `dir` whose contents are `text` points,
    /// lexically: absolute text naming a preopen (by its guest path or its
    /// host path) is taken as that directory; `None` when it points into no
    /// granted directory (wasmtime never follows such a link).
    pub(super) fn link_target(&self, dir: &str, text: &str) -> Option<String> {
        if !text.starts_with('/') {
            return self.join(dir, text);
        }
        let text = normalize_path(text);
        self.roots.iter().find_map(|r| {
            let (root, rest) = match below(&text, &r.guest) {
                Some(rest) => (&r.host, rest),
                None => (&r.host, below(&text, &r.host)?),
            };
            Some(normalize_path(&format!("{root}/{rest}")))
        })
    }
}

/// `path` relative to `dir` (`.` for `dir` itself), if it lies in it.
fn below<'a>(path: &'a str, dir: &str) -> Option<&'a str> {
    let dir = dir.trim_end_matches('/');
    let rest = path.strip_prefix(dir)?;
    if rest.is_empty() {
        return Some(".");
    }
    let rest = rest.strip_prefix('/')?;
    Some(if rest.is_empty() { "." } else { rest })
}

#[cfg(test)]
mod tests;
