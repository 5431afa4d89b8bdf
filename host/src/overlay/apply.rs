//! Applying an overlay's changes to the workspace: atomic per file, after
//! a three-way check.
//!
//! A file is written to a temporary name in its destination directory,
//! synced and renamed over; every directory is reached through a handle
//! on the workspace that refuses symlinks (see `beneath`), so a symlink
//! placed in the workspace since cannot redirect a write. A path changed
//! in the workspace since the run started (ctime at or after `started_ns`)
//! conflicts unless it already holds the overlay's content; without
//! `force`, one conflict applies nothing. Applied entries leave the upper
//! directory, so the overlay shows what is left.

use std::collections::BTreeSet;
use std::io::{Read, Write};
use std::os::fd::{AsFd, OwnedFd};

use rustix::fs::{AtFlags, FileType, Mode, OFlags};
use sha2::{Digest, Sha256};

use super::beneath;
use super::changes::{Change, ChangeKind, Changes, Node, node};
use super::status::RunStatus;
use super::{Overlay, OverlayError};

/// Why an apply was refused or stopped.
#[derive(Debug, thiserror::Error)]
pub enum ApplyError {
    #[error("overlay {id}: its run (pid {pid}) is still going; apply it once the run has ended")]
    Running { id: String, pid: u32 },
    #[error("{0:?} is not a path inside the workspace (give it relative, without `..`)")]
    BadPath(String),
    #[error("the overlay has no change at {0} (see `warden review`)")]
    NoChange(String),
    #[error("{path}: the overlay holds a {what}, which Warden does not apply")]
    Unsupported { path: String, what: String },
    #[error("{} path(s) changed in the workspace since the run started; nothing was applied (use --force to overwrite them)", .0.len())]
    Conflicts(Vec<Conflict>),
    #[error("{path}: {what}: {source}")]
    Io {
        path: String,
        what: &'static str,
        source: std::io::Error,
    },
    #[error(transparent)]
    Overlay(#[from] OverlayError),
}

/// A path the workspace changed since the run started.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct Conflict {
    pub path: String,
    pub reason: &'static str,
}

/// One path written, deleted or renamed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Applied {
    pub path: String,
    pub change: &'static str,
    pub from: Option<String>,
    /// sha256 of the bytes written (files only).
    pub sha256: Option<String>,
}

/// What an apply did; `error` when it stopped part way (what is in
/// `applied` was written all the same).
#[derive(Debug, Default)]
pub struct ApplyOutcome {
    pub applied: Vec<Applied>,
    pub error: Option<ApplyError>,
    /// Whether the overlay was emptied and its directory removed.
    pub removed: bool,
}

/// The changes `paths` select (all when empty): a path selects the change
/// at it and every change under it; a rename is selected by either end.
pub fn select<'a>(changes: &'a Changes, paths: &[String]) -> Result<Vec<&'a Change>, ApplyError> {
    let mut wanted = Vec::new();
    for p in paths {
        wanted.push(normalise(p)?);
    }
    let under = |path: &str, sel: &str| {
        path == sel || (path.starts_with(sel) && path.as_bytes().get(sel.len()) == Some(&b'/'))
    };
    for sel in &wanted {
        let any = changes.changes.iter().any(|c| {
            under(&c.path, sel)
                || matches!(&c.kind, ChangeKind::Renamed { from } if under(from, sel))
        });
        if !any {
            return Err(ApplyError::NoChange(sel.clone()));
        }
    }
    Ok(changes
        .changes
        .iter()
        .filter(|c| {
            wanted.is_empty()
                || wanted.iter().any(|sel| {
                    under(&c.path, sel)
                        || matches!(&c.kind, ChangeKind::Renamed { from } if under(from, sel))
                })
        })
        .collect())
}

/// `path` as a workspace-relative, `/`-separated path, or why not.
fn normalise(path: &str) -> Result<String, ApplyError> {
    use std::path::Component;
    let mut parts = Vec::new();
    for c in std::path::Path::new(path).components() {
        match c {
            Component::Normal(s) => match s.to_str() {
                Some(s) => parts.push(s),
                None => return Err(ApplyError::BadPath(path.to_string())),
            },
            Component::CurDir => {}
            Component::ParentDir | Component::RootDir | Component::Prefix(_) => {
                return Err(ApplyError::BadPath(path.to_string()));
            }
        }
    }
    if parts.is_empty() {
        return Err(ApplyError::BadPath(path.to_string()));
    }
    Ok(parts.join("/"))
}

/// Refuse an overlay whose run is alive, and what cannot be applied.
pub fn check(overlay: &Overlay, selected: &[&Change]) -> Result<(), ApplyError> {
    if overlay.status() == RunStatus::Running {
        return Err(ApplyError::Running {
            id: overlay.id().to_string(),
            pid: overlay.meta().pid,
        });
    }
    for c in selected {
        if c.kind == ChangeKind::Unsupported {
            let what = match &c.new {
                Some(Node::Special { what }) => what.clone(),
                _ => "special file".to_string(),
            };
            return Err(ApplyError::Unsupported {
                path: c.path.clone(),
                what,
            });
        }
    }
    Ok(())
}

/// The selected paths the workspace changed since `started_ns`.
pub fn conflicts(
    changes: &Changes,
    selected: &[&Change],
    started_ns: i128,
) -> Result<Vec<Conflict>, ApplyError> {
    let ws = changes.workspace();
    let mut out = Vec::new();
    for c in selected {
        let mut expect: Vec<(&str, bool, Option<&Node>)> = Vec::new();
        match &c.kind {
            ChangeKind::Added => expect.push((&c.path, c.copied_up, c.new.as_ref())),
            ChangeKind::Renamed { from } => {
                expect.push((&c.path, false, c.new.as_ref()));
                expect.push((from, true, None));
            }
            ChangeKind::Deleted => expect.push((&c.path, true, None)),
            ChangeKind::Modified | ChangeKind::TypeChanged | ChangeKind::ModeChanged => {
                expect.push((&c.path, c.copied_up, c.new.as_ref()))
            }
            ChangeKind::Unsupported => {}
        }
        for (path, existed, desired) in expect {
            if let Some(reason) = conflict(ws, path, existed, desired, started_ns)? {
                out.push(Conflict {
                    path: path.to_string(),
                    reason,
                });
            }
        }
    }
    Ok(out)
}

fn conflict(
    ws: &OwnedFd,
    path: &str,
    existed: bool,
    desired: Option<&Node>,
    started_ns: i128,
) -> Result<Option<&'static str>, ApplyError> {
    let io = |source| ApplyError::Io {
        path: path.to_string(),
        what: "cannot check it in the workspace",
        source,
    };
    let now = match beneath::stat(ws, path) {
        Ok(now) => now,
        Err(e)
            if matches!(
                e.raw_os_error(),
                Some(libc::ELOOP | libc::ENOTDIR | libc::EXDEV)
            ) =>
        {
            return Ok(Some(
                "a symlink or a file now stands on its way in the workspace",
            ));
        }
        Err(e) => return Err(io(e)),
    };
    let Some(st) = now else {
        if desired.is_none() || !existed {
            return Ok(None);
        }
        let (parent, _) = beneath::split(path);
        let changed = match beneath::stat(ws, if parent.is_empty() { "." } else { parent }) {
            Ok(Some(p)) => beneath::ctime_ns(&p).max(beneath::mtime_ns(&p)) >= started_ns,
            Ok(None) | Err(_) => true,
        };
        return Ok(changed.then_some("deleted in the workspace since the run started"));
    };
    let (parent, name) = beneath::split(path);
    let dir = beneath::open_dir(ws, parent).map_err(io)?;
    let current = node(&dir, name, &st).map_err(io)?;
    let same = match (desired, &current) {
        (Some(Node::Dir { .. }), Node::Dir { .. }) => true,
        (Some(Node::File { sha256: a, .. }), Node::File { sha256: b, .. }) => a == b,
        (Some(d), c) => d == c,
        (None, _) => false,
    };
    if same {
        return Ok(None);
    }
    if beneath::ctime_ns(&st) < started_ns {
        return Ok(None);
    }
    Ok(Some(if existed {
        "changed in the workspace since the run started"
    } else {
        "created in the workspace since the run started"
    }))
}

/// Apply `selected` (checked with [`check`] and, unless forced, free of
/// [`conflicts`]), then remove the overlay when nothing is left.
pub fn apply(overlay: Overlay, changes: &Changes, selected: &[&Change]) -> ApplyOutcome {
    let mut out = ApplyOutcome::default();
    let paths: BTreeSet<&str> = selected.iter().map(|c| c.path.as_str()).collect();
    if let Err(e) = deopaque_ancestors(changes, &paths) {
        out.error = Some(e);
        return out;
    }
    let mut removals: Vec<&Change> = selected
        .iter()
        .copied()
        .filter(|c| {
            c.kind == ChangeKind::Deleted
                || (c.kind == ChangeKind::TypeChanged && matches!(c.old, Some(Node::Dir { .. })))
        })
        .collect();
    removals.sort_by(|a, b| b.path.cmp(&a.path));
    let mut writes: Vec<&Change> = selected
        .iter()
        .copied()
        .filter(|c| c.kind != ChangeKind::Deleted)
        .collect();
    writes.sort_by(|a, b| a.path.cmp(&b.path));
    let step = |c: &Change, out: &mut ApplyOutcome, first: bool| -> Result<(), ApplyError> {
        if first {
            remove_in_workspace(changes, &c.path)?;
            if c.kind == ChangeKind::Deleted {
                forget(changes, &c.path)?;
                out.applied.push(applied(c, None));
            }
            return Ok(());
        }
        let sha256 = write(changes, c)?;
        if let ChangeKind::Renamed { from } = &c.kind {
            remove_in_workspace(changes, from)?;
            forget(changes, from)?;
        }
        forget(changes, &c.path)?;
        out.applied.push(applied(c, sha256));
        Ok(())
    };
    let run = removals
        .iter()
        .map(|c| (*c, true))
        .chain(writes.iter().map(|c| (*c, false)));
    for (c, first) in run {
        if let Err(e) = step(c, &mut out, first) {
            out.error = Some(e);
            break;
        }
    }
    if let Err(e) = sync_dirs(changes, selected) {
        out.error.get_or_insert(e);
    }
    prune(changes, &paths);
    if out.error.is_none() {
        match Changes::read(&overlay) {
            Ok(left) if left.changes.is_empty() => match overlay.remove() {
                Ok(()) => out.removed = true,
                Err(e) => out.error = Some(e.into()),
            },
            Ok(_) | Err(_) => {}
        }
    }
    out
}

fn applied(c: &Change, sha256: Option<String>) -> Applied {
    let from = match &c.kind {
        ChangeKind::Renamed { from } => Some(from.clone()),
        _ => None,
    };
    Applied {
        path: c.path.clone(),
        change: c.kind.word(),
        from,
        sha256,
    }
}

fn io_err(path: &str, what: &'static str) -> impl FnOnce(std::io::Error) -> ApplyError {
    let path = path.to_string();
    move |source| ApplyError::Io { path, what, source }
}

/// Write what the overlay has at `c.path` into the workspace; the sha256
/// of a file's bytes as written.
fn write(changes: &Changes, c: &Change) -> Result<Option<String>, ApplyError> {
    let (parent, name) = beneath::split(&c.path);
    let dir = beneath::open_dir(changes.workspace(), parent).map_err(io_err(
        &c.path,
        "cannot open its directory in the workspace (a symlink on the way is refused)",
    ))?;
    match &c.new {
        Some(Node::File { mode, .. }) => {
            let (mut src, _) = beneath::open_file(changes.upper(), &c.path)
                .map_err(io_err(&c.path, "cannot read it in the overlay"))?;
            let tmp = temp_name(name);
            let result = (|| {
                let fd = rustix::fs::openat(
                    &dir,
                    tmp.as_str(),
                    OFlags::WRONLY
                        | OFlags::CREATE
                        | OFlags::EXCL
                        | OFlags::NOFOLLOW
                        | OFlags::CLOEXEC,
                    Mode::from_raw_mode(0o600),
                )?;
                let mut dst = std::fs::File::from(fd);
                let mut hasher = Sha256::new();
                let mut buf = vec![0u8; 64 * 1024];
                loop {
                    let n = src.read(&mut buf)?;
                    if n == 0 {
                        break;
                    }
                    hasher.update(&buf[..n]);
                    dst.write_all(&buf[..n])?;
                }
                rustix::fs::fchmod(&dst, Mode::from_raw_mode(*mode))?;
                dst.sync_all()?;
                replace(&dir, &tmp, name)?;
                Ok::<_, std::io::Error>(hex::encode(hasher.finalize()))
            })();
            match result {
                Ok(h) => Ok(Some(h)),
                Err(e) => {
                    let _ = rustix::fs::unlinkat(&dir, tmp.as_str(), AtFlags::empty());
                    Err(io_err(&c.path, "cannot write it in the workspace")(e))
                }
            }
        }
        Some(Node::Symlink { target }) => {
            let tmp = temp_name(name);
            let result = rustix::fs::symlinkat(target.as_str(), &dir, tmp.as_str())
                .map_err(std::io::Error::from)
                .and_then(|()| replace(&dir, &tmp, name));
            if result.is_err() {
                let _ = rustix::fs::unlinkat(&dir, tmp.as_str(), AtFlags::empty());
            }
            result.map_err(io_err(&c.path, "cannot make the symlink in the workspace"))?;
            Ok(None)
        }
        Some(Node::Dir { mode }) => {
            let made = (|| {
                match beneath::stat_at(&dir, name)? {
                    Some(st) if FileType::from_raw_mode(st.st_mode) == FileType::Directory => {}
                    Some(_) => {
                        rustix::fs::unlinkat(&dir, name, AtFlags::empty())?;
                        rustix::fs::mkdirat(&dir, name, Mode::from_raw_mode(0o700))?;
                    }
                    None => rustix::fs::mkdirat(&dir, name, Mode::from_raw_mode(0o700))?,
                }
                let sub = beneath::open_dir(&dir, name)?;
                rustix::fs::fchmod(&sub, Mode::from_raw_mode(*mode))?;
                Ok::<_, std::io::Error>(())
            })();
            made.map_err(io_err(
                &c.path,
                "cannot make the directory in the workspace",
            ))?;
            Ok(None)
        }
        Some(Node::Special { what }) => Err(ApplyError::Unsupported {
            path: c.path.clone(),
            what: what.clone(),
        }),
        None => Ok(None),
    }
}

/// Rename `tmp` over `name` in `dir`, which is not a directory.
fn replace(dir: &OwnedFd, tmp: &str, name: &str) -> std::io::Result<()> {
    if let Some(st) = beneath::stat_at(dir, name)?
        && FileType::from_raw_mode(st.st_mode) == FileType::Directory
    {
        rustix::fs::unlinkat(dir, name, AtFlags::REMOVEDIR)?;
    }
    rustix::fs::renameat(dir, tmp, dir, name)?;
    Ok(())
}

fn temp_name(name: &str) -> String {
    format!(".{name}.warden-apply-{:08x}", fastrand::u32(..))
}

/// Remove `path` from the workspace (an empty directory, or anything
/// else); already gone is fine.
fn remove_in_workspace(changes: &Changes, path: &str) -> Result<(), ApplyError> {
    let (parent, name) = beneath::split(path);
    let err = io_err(path, "cannot delete it in the workspace");
    let dir = match beneath::open_dir(changes.workspace(), parent) {
        Ok(d) => d,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(()),
        Err(e) => return Err(err(e)),
    };
    let Some(st) = beneath::stat_at(&dir, name).map_err(io_err(path, "cannot check it"))? else {
        return Ok(());
    };
    let flags = if FileType::from_raw_mode(st.st_mode) == FileType::Directory {
        AtFlags::REMOVEDIR
    } else {
        AtFlags::empty()
    };
    rustix::fs::unlinkat(&dir, name, flags).map_err(|e| err(e.into()))
}

/// Take an applied non-directory entry out of the upper directory.
fn forget(changes: &Changes, path: &str) -> Result<(), ApplyError> {
    let (parent, name) = beneath::split(path);
    let err = io_err(path, "applied, but cannot remove it from the overlay");
    let dir = match beneath::open_dir(changes.upper(), parent) {
        Ok(d) => d,
        Err(e)
            if matches!(
                e.kind(),
                std::io::ErrorKind::NotFound | std::io::ErrorKind::NotADirectory
            ) =>
        {
            return Ok(());
        }
        Err(e) => return Err(err(e)),
    };
    match beneath::stat_at(&dir, name) {
        Ok(Some(st)) if FileType::from_raw_mode(st.st_mode) != FileType::Directory => {
            rustix::fs::unlinkat(&dir, name, AtFlags::empty()).map_err(|e| err(e.into()))
        }
        Ok(_) => Ok(()),
        Err(e) => Err(err(e)),
    }
}

/// Sync each directory a change was written into.
fn sync_dirs(changes: &Changes, selected: &[&Change]) -> Result<(), ApplyError> {
    let parents: BTreeSet<&str> = selected.iter().map(|c| beneath::split(&c.path).0).collect();
    for p in parents {
        if let Ok(dir) = beneath::open_dir(changes.workspace(), p) {
            rustix::fs::fsync(&dir)
                .map_err(|e| io_err(p, "cannot sync the directory")(e.into()))?;
        }
    }
    Ok(())
}

/// Turn each opaque upper directory above an applied path into explicit
/// whiteouts, so the workspace entries an apply writes under it are not
/// hidden by it afterwards.
fn deopaque_ancestors(changes: &Changes, paths: &BTreeSet<&str>) -> Result<(), ApplyError> {
    let mut dirs = BTreeSet::new();
    for p in paths {
        let mut at = 0;
        while let Some(i) = p[at..].find('/') {
            dirs.insert(&p[..at + i]);
            at += i + 1;
        }
        dirs.insert(*p);
    }
    for d in dirs {
        let upper = match beneath::open_dir(changes.upper(), d) {
            Ok(u) => u,
            Err(_) => continue,
        };
        if !beneath::is_opaque(&upper).map_err(io_err(d, "cannot read the overlay"))? {
            continue;
        }
        if let Ok(lower) = beneath::open_dir(changes.workspace(), d) {
            let have: BTreeSet<String> = beneath::names(&upper)
                .map_err(io_err(d, "cannot list"))?
                .into_iter()
                .collect();
            for name in beneath::names(&lower).map_err(io_err(d, "cannot list"))? {
                if !have.contains(&name) {
                    rustix::fs::mknodat(
                        &upper,
                        name.as_str(),
                        FileType::CharacterDevice,
                        Mode::empty(),
                        0,
                    )
                    .map_err(|e| io_err(d, "cannot make a whiteout in the overlay")(e.into()))?;
                } else if is_dir(&upper, &name) && is_dir(&lower, &name) {
                    let sub = beneath::open_dir(&upper, &name).map_err(io_err(d, "cannot open"))?;
                    rustix::fs::fsetxattr(
                        &sub,
                        beneath::OPAQUE_XATTR,
                        b"y",
                        rustix::fs::XattrFlags::empty(),
                    )
                    .map_err(|e| io_err(d, "cannot mark a directory opaque")(e.into()))?;
                }
            }
        }
        rustix::fs::fremovexattr(&upper, beneath::OPAQUE_XATTR)
            .map_err(|e| io_err(d, "cannot rewrite the overlay's opaque directory")(e.into()))?;
    }
    Ok(())
}

fn is_dir(dir: impl AsFd, name: &str) -> bool {
    matches!(beneath::stat_at(dir, name), Ok(Some(st)) if FileType::from_raw_mode(st.st_mode) == FileType::Directory)
}

/// Remove the upper directories an apply left empty that no longer say
/// anything: applied, or the same as the workspace's.
fn prune(changes: &Changes, applied: &BTreeSet<&str>) {
    fn walk(upper: &OwnedFd, ws: &OwnedFd, prefix: &str, applied: &BTreeSet<&str>) -> bool {
        let Ok(names) = beneath::names(upper) else {
            return false;
        };
        let mut empty = true;
        for name in names {
            let rel = super::changes::join(prefix, &name);
            if !is_dir(upper, &name) {
                empty = false;
                continue;
            }
            let Ok(sub) = beneath::open_dir(upper, &name) else {
                empty = false;
                continue;
            };
            let sub_empty = walk(&sub, ws, &rel, applied);
            let opaque = beneath::is_opaque(&sub).unwrap_or(true);
            let same = match (beneath::stat_at(&sub, "."), beneath::stat(ws, &rel)) {
                (Ok(Some(u)), Ok(Some(l))) => {
                    FileType::from_raw_mode(l.st_mode) == FileType::Directory
                        && u.st_mode & 0o7777 == l.st_mode & 0o7777
                }
                _ => false,
            };
            if sub_empty
                && !opaque
                && (same || applied.contains(rel.as_str()))
                && rustix::fs::unlinkat(upper, name.as_str(), AtFlags::REMOVEDIR).is_ok()
            {
                continue;
            }
            empty = false;
        }
        empty
    }
    walk(changes.upper(), changes.workspace(), "", applied);
}
