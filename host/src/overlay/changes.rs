//! What an overlay changed: its upper directory read against the workspace
//! as it is now.
//!
//! Both trees are walked through directory handles (see `beneath`): no
//! symlink is ever followed, in the upper directory or the workspace, and
//! a FIFO, socket or device other than a whiteout is reported as
//! [`ChangeKind::Unsupported`], never opened. Contents are hashed by
//! streaming and only read whole, up to [`MAX_DIFF_BYTES`], for a diff.

use std::collections::BTreeSet;
use std::io::Read;
use std::os::fd::{AsFd, OwnedFd};

use rustix::fs::{FileType, Stat};
use serde::Serialize;

use super::Overlay;
use super::beneath;

/// Files larger than this are not read whole for a diff.
pub const MAX_DIFF_BYTES: u64 = 4 * 1024 * 1024;

/// How far into a file a NUL byte marks it binary.
const BINARY_PROBE: usize = 8 * 1024;

/// What is at a path, on one side.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum Node {
    File {
        mode: u32,
        size: u64,
        sha256: String,
    },
    Symlink {
        target: String,
    },
    Dir {
        mode: u32,
    },
    /// A FIFO, socket or device (other than a whiteout): never read.
    Special {
        what: String,
    },
}

/// How a path changed.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(tag = "change", rename_all = "snake_case")]
pub enum ChangeKind {
    Added,
    Modified,
    Deleted,
    /// Added with the content of `from`, which is deleted.
    Renamed {
        from: String,
    },
    /// A file became a directory or a symlink, or the other way round.
    TypeChanged,
    /// Same content, other permissions.
    ModeChanged,
    /// The upper directory holds something Warden will not read or apply.
    Unsupported,
}

impl ChangeKind {
    /// The word `--stat` and the audit use.
    pub fn word(&self) -> &'static str {
        match self {
            ChangeKind::Added => "added",
            ChangeKind::Modified => "modified",
            ChangeKind::Deleted => "deleted",
            ChangeKind::Renamed { .. } => "renamed",
            ChangeKind::TypeChanged => "type_changed",
            ChangeKind::ModeChanged => "mode_changed",
            ChangeKind::Unsupported => "unsupported",
        }
    }
}

/// One changed path (relative to the workspace, `/`-separated).
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Change {
    pub path: String,
    #[serde(flatten)]
    pub kind: ChangeKind,
    /// What the workspace has (for a rename: at `from`).
    pub old: Option<Node>,
    /// What the overlay has.
    pub new: Option<Node>,
    /// The overlay's entry was copied up from the workspace's (overlayfs
    /// marked it with its origin): the run changed a path that existed.
    #[serde(skip)]
    pub copied_up: bool,
}

/// Which tree a path is read from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Side {
    /// The workspace.
    Workspace,
    /// The overlay's upper directory.
    Overlay,
}

impl std::fmt::Display for Side {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            Side::Workspace => "workspace",
            Side::Overlay => "overlay",
        })
    }
}

/// Why an overlay's changes could not be read.
#[derive(Debug, thiserror::Error)]
pub enum ChangesError {
    #[error("cannot open the {side} directory {path}: {source}")]
    Root {
        side: Side,
        path: String,
        source: std::io::Error,
    },
    #[error("{path} (in the {side}): {source}")]
    Read {
        side: Side,
        path: String,
        source: std::io::Error,
    },
}

/// A file's content, as a diff shows it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Content {
    Text(String),
    /// A NUL byte in its first 8 KiB, or not UTF-8.
    Binary,
    /// Larger than [`MAX_DIFF_BYTES`].
    TooLarge(u64),
}

/// An overlay's changes, with handles on both trees to read contents by.
#[derive(Debug)]
pub struct Changes {
    upper: OwnedFd,
    workspace: OwnedFd,
    pub changes: Vec<Change>,
}

impl Changes {
    /// Read what `overlay` changed in its workspace.
    pub fn read(overlay: &Overlay) -> Result<Changes, ChangesError> {
        let root = |side, path: std::path::PathBuf| {
            beneath::open_root(&path).map_err(|source| ChangesError::Root {
                side,
                path: path.display().to_string(),
                source,
            })
        };
        let upper = root(Side::Overlay, overlay.upper())?;
        let workspace = root(Side::Workspace, overlay.meta().workspace.clone())?;
        let mut walk = Walk {
            changes: Vec::new(),
        };
        walk.dir(&upper, Some(&workspace), false, "")?;
        let mut changes = pair_renames(walk.changes);
        changes.sort_by(|a, b| a.path.cmp(&b.path));
        Ok(Changes {
            upper,
            workspace,
            changes,
        })
    }

    pub fn upper(&self) -> &OwnedFd {
        &self.upper
    }

    pub fn workspace(&self) -> &OwnedFd {
        &self.workspace
    }

    /// The content of regular file `path` on `side`, for a diff.
    pub fn content(&self, side: Side, path: &str) -> Result<Content, ChangesError> {
        let dir = match side {
            Side::Workspace => &self.workspace,
            Side::Overlay => &self.upper,
        };
        let err = |source| ChangesError::Read {
            side,
            path: path.to_string(),
            source,
        };
        let (file, st) = beneath::open_file(dir, path).map_err(err)?;
        let size = st.st_size as u64;
        if size > MAX_DIFF_BYTES {
            return Ok(Content::TooLarge(size));
        }
        let mut bytes = Vec::new();
        file.take(MAX_DIFF_BYTES + 1)
            .read_to_end(&mut bytes)
            .map_err(err)?;
        Ok(classify(bytes))
    }
}

/// Text, or binary when it has a NUL early on or is not UTF-8.
pub fn classify(bytes: Vec<u8>) -> Content {
    let probe = &bytes[..bytes.len().min(BINARY_PROBE)];
    if memchr::memchr(0, probe).is_some() {
        return Content::Binary;
    }
    match String::from_utf8(bytes) {
        Ok(text) => Content::Text(text),
        Err(_) => Content::Binary,
    }
}

struct Walk {
    changes: Vec<Change>,
}

/// An upper entry: a node, or a whiteout.
enum Upper {
    Node(Node),
    Whiteout,
}

impl Walk {
    fn push(&mut self, path: &str, kind: ChangeKind, old: Option<Node>, new: Option<Node>) {
        self.changes.push(Change {
            path: path.to_string(),
            kind,
            old,
            new,
            copied_up: false,
        });
    }

    /// Compare upper directory `upper` with the workspace's `lower` (if
    /// there is one); `opaque` hides what `lower` holds beyond `upper`.
    fn dir(
        &mut self,
        upper: &OwnedFd,
        lower: Option<&OwnedFd>,
        opaque: bool,
        prefix: &str,
    ) -> Result<(), ChangesError> {
        let oerr = |path: &str| {
            let path = path.to_string();
            move |source| ChangesError::Read {
                side: Side::Overlay,
                path,
                source,
            }
        };
        let werr = |path: &str| {
            let path = path.to_string();
            move |source| ChangesError::Read {
                side: Side::Workspace,
                path,
                source,
            }
        };
        let shown = if prefix.is_empty() { "." } else { prefix };
        let upper_names = beneath::names(upper).map_err(oerr(shown))?;
        for name in &upper_names {
            let rel = join(prefix, name);
            let ust = beneath::stat_at(upper, name)
                .map_err(oerr(&rel))?
                .ok_or_else(|| oerr(&rel)(std::io::ErrorKind::NotFound.into()))?;
            let unode = upper_node(upper, name, &ust).map_err(oerr(&rel))?;
            let copied_up = beneath::has_xattr_at(upper, name, beneath::ORIGIN_XATTR);
            let first = self.changes.len();
            let lst = match lower {
                Some(l) => beneath::stat_at(l, name).map_err(werr(&rel))?,
                None => None,
            };
            let lnode = match (lower, &lst) {
                (Some(l), Some(st)) => Some(lower_node(l, name, st).map_err(werr(&rel))?),
                _ => None,
            };
            let lower_dir = match (&lnode, lower) {
                (Some(Node::Dir { .. }), Some(l)) => {
                    Some(beneath::open_dir(l, name).map_err(werr(&rel))?)
                }
                _ => None,
            };
            match unode {
                Upper::Whiteout => match lnode {
                    None => {}
                    Some(old) => {
                        self.push(&rel, ChangeKind::Deleted, Some(old), None);
                        if let Some(d) = &lower_dir {
                            self.deleted_under(d, &rel)?;
                        }
                    }
                },
                Upper::Node(Node::Special { what }) => {
                    let new = Some(Node::Special { what });
                    self.push(&rel, ChangeKind::Unsupported, lnode, new);
                }
                Upper::Node(new @ Node::Dir { .. }) => {
                    let udir = beneath::open_dir(upper, name).map_err(oerr(&rel))?;
                    let child_opaque = beneath::is_opaque(&udir).map_err(oerr(&rel))?;
                    match &lnode {
                        None => self.push(&rel, ChangeKind::Added, None, Some(new)),
                        Some(old @ Node::Dir { .. }) => {
                            if *old != new {
                                self.push(&rel, ChangeKind::ModeChanged, lnode.clone(), Some(new));
                            }
                        }
                        Some(_) => self.push(&rel, ChangeKind::TypeChanged, lnode, Some(new)),
                    }
                    self.dir(&udir, lower_dir.as_ref(), child_opaque, &rel)?;
                }
                Upper::Node(new) => match lnode {
                    None => self.push(&rel, ChangeKind::Added, None, Some(new)),
                    Some(old) => {
                        if let Some(d) = &lower_dir {
                            self.deleted_under(d, &rel)?;
                        }
                        if let Some(kind) = compare(&old, &new) {
                            self.push(&rel, kind, Some(old), Some(new));
                        }
                    }
                },
            }
            if let Some(c) = self.changes[first..].iter_mut().find(|c| c.path == rel) {
                c.copied_up = copied_up;
            }
        }
        if opaque && let Some(l) = lower {
            let known: BTreeSet<&String> = upper_names.iter().collect();
            for name in beneath::names(l).map_err(werr(shown))? {
                if !known.contains(&name) {
                    self.deleted(l, &name, &join(prefix, &name))?;
                }
            }
        }
        Ok(())
    }

    /// `name` in workspace directory `dir` is gone, with all it holds.
    fn deleted(&mut self, dir: &OwnedFd, name: &str, rel: &str) -> Result<(), ChangesError> {
        let err = |source| ChangesError::Read {
            side: Side::Workspace,
            path: rel.to_string(),
            source,
        };
        let Some(st) = beneath::stat_at(dir, name).map_err(err)? else {
            return Ok(());
        };
        let node = lower_node(dir, name, &st).map_err(err)?;
        let is_dir = matches!(node, Node::Dir { .. });
        self.push(rel, ChangeKind::Deleted, Some(node), None);
        if is_dir {
            let sub = beneath::open_dir(dir, name).map_err(err)?;
            self.deleted_under(&sub, rel)?;
        }
        Ok(())
    }

    /// Everything in workspace directory `dir` (at `rel`) is gone.
    fn deleted_under(&mut self, dir: &OwnedFd, rel: &str) -> Result<(), ChangesError> {
        let names = beneath::names(dir).map_err(|source| ChangesError::Read {
            side: Side::Workspace,
            path: rel.to_string(),
            source,
        })?;
        for name in names {
            self.deleted(dir, &name, &join(rel, &name))?;
        }
        Ok(())
    }
}

/// How `new` differs from `old` at the same path, if it does.
fn compare(old: &Node, new: &Node) -> Option<ChangeKind> {
    match (old, new) {
        (
            Node::File {
                mode: om,
                sha256: oh,
                ..
            },
            Node::File {
                mode: nm,
                sha256: nh,
                ..
            },
        ) => match (oh == nh, om == nm) {
            (true, true) => None,
            (true, false) => Some(ChangeKind::ModeChanged),
            (false, _) => Some(ChangeKind::Modified),
        },
        (Node::Symlink { target: o }, Node::Symlink { target: n }) => {
            (o != n).then_some(ChangeKind::Modified)
        }
        (Node::Dir { mode: o }, Node::Dir { mode: n }) => {
            (o != n).then_some(ChangeKind::ModeChanged)
        }
        _ => Some(ChangeKind::TypeChanged),
    }
}

fn upper_node(dir: &OwnedFd, name: &str, st: &Stat) -> std::io::Result<Upper> {
    if FileType::from_raw_mode(st.st_mode) == FileType::CharacterDevice && st.st_rdev == 0 {
        return Ok(Upper::Whiteout);
    }
    Ok(Upper::Node(node(dir, name, st)?))
}

fn lower_node(dir: &OwnedFd, name: &str, st: &Stat) -> std::io::Result<Node> {
    node(dir, name, st)
}

/// What `name` in `dir` is, its content hashed (never followed or opened
/// unless it is a regular file).
pub(crate) fn node(dir: impl AsFd, name: &str, st: &Stat) -> std::io::Result<Node> {
    let mode = st.st_mode & 0o7777;
    Ok(match FileType::from_raw_mode(st.st_mode) {
        FileType::RegularFile => Node::File {
            mode,
            size: st.st_size as u64,
            sha256: beneath::hash_file(dir, name)?,
        },
        FileType::Directory => Node::Dir { mode },
        FileType::Symlink => {
            let target = rustix::fs::readlinkat(dir, name, Vec::new())?;
            match target.into_string() {
                Ok(target) => Node::Symlink { target },
                Err(_) => Node::Special {
                    what: "symlink to a name that is not UTF-8".into(),
                },
            }
        }
        FileType::Fifo => Node::Special {
            what: "fifo".into(),
        },
        FileType::Socket => Node::Special {
            what: "socket".into(),
        },
        FileType::CharacterDevice | FileType::BlockDevice | FileType::Unknown => Node::Special {
            what: "device".into(),
        },
    })
}

/// A deleted file whose content an added file has becomes one rename.
fn pair_renames(changes: Vec<Change>) -> Vec<Change> {
    let mut deleted: Vec<Option<Change>> = Vec::new();
    let mut rest = Vec::new();
    for c in changes {
        let is_file = matches!(c.old, Some(Node::File { size, .. }) if size > 0);
        if c.kind == ChangeKind::Deleted && is_file {
            deleted.push(Some(c));
        } else {
            rest.push(c);
        }
    }
    for c in rest.iter_mut() {
        let Some(Node::File { sha256, .. }) = &c.new else {
            continue;
        };
        if c.kind != ChangeKind::Added {
            continue;
        }
        let found = deleted.iter_mut().find(|d| {
            matches!(d, Some(Change { old: Some(Node::File { sha256: h, .. }), .. }) if h == sha256)
        });
        if let Some(slot) = found
            && let Some(from) = slot.take()
        {
            c.kind = ChangeKind::Renamed { from: from.path };
            c.old = from.old;
        }
    }
    rest.extend(deleted.into_iter().flatten());
    rest
}

/// `prefix/name`, or `name` at the top.
pub(crate) fn join(prefix: &str, name: &str) -> String {
    if prefix.is_empty() {
        name.to_string()
    } else {
        format!("{prefix}/{name}")
    }
}

#[cfg(test)]
#[path = "changes_tests.rs"]
mod tests;
