//! What a call actually did with its grant, as the host's WASI layer saw
//! it: the files it used and how.
//!
//! Invariant: every entry is an operation that succeeded at the WASI
//! boundary (refusals are [`BoundaryDenial`](super::BoundaryDenial)s), named
//! by its workspace-relative path; the same operation on the same path is
//! kept once, in order of first use, and past [`MAX_FILE_USES`] entries
//! further uses are only counted.

use std::collections::HashSet;

/// How a call used a file or directory.
#[derive(
    Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, serde::Serialize, serde::Deserialize,
)]
#[serde(rename_all = "kebab-case")]
pub enum FileOp {
    /// Opened an existing file for reading, listed a directory, or read a link.
    Read,
    /// Opened an existing file for writing or truncating, or set its size.
    Write,
    /// Created a file, directory, link or symlink that did not exist.
    Create,
    /// Deleted a file or an empty directory.
    Delete,
    /// Moved it to [`FileUse::to`].
    Rename,
    /// Changed its timestamps.
    Metadata,
}

impl FileOp {
    /// Whether the operation changes the workspace.
    pub fn changes(self) -> bool {
        match self {
            FileOp::Read => false,
            FileOp::Write | FileOp::Create | FileOp::Delete | FileOp::Rename | FileOp::Metadata => {
                true
            }
        }
    }

    pub fn as_str(self) -> &'static str {
        match self {
            FileOp::Read => "read",
            FileOp::Write => "write",
            FileOp::Create => "create",
            FileOp::Delete => "delete",
            FileOp::Rename => "rename",
            FileOp::Metadata => "metadata",
        }
    }
}

/// One use of one path.
#[derive(Debug, Clone, PartialEq, Eq, Hash, serde::Serialize, serde::Deserialize)]
pub struct FileUse {
    pub op: FileOp,
    /// Workspace-relative, `.` for the workspace itself, as the guest named
    /// it (a symlink is not resolved).
    pub path: String,
    /// Where a rename moved it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub to: Option<String>,
}

/// File uses kept per call; later distinct ones are only counted.
pub const MAX_FILE_USES: usize = 256;

/// The capabilities a call exercised.
#[derive(Debug, Clone, Default, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct Exercised {
    /// Files and directories used, in order of first use.
    pub files: Vec<FileUse>,
    /// Uses past [`MAX_FILE_USES`] distinct ones, counted only (a repeated
    /// one each time).
    #[serde(default)]
    pub files_dropped: u64,
}

/// Collects a call's file uses as the filesystem boundary sees them.
#[derive(Debug, Default)]
pub struct FileUses {
    kept: Vec<FileUse>,
    seen: HashSet<FileUse>,
    dropped: u64,
}

impl FileUses {
    /// Note that `op` succeeded on `path` (moving it to `to`, for a rename).
    pub fn note(&mut self, op: FileOp, path: String, to: Option<String>) {
        let used = FileUse { op, path, to };
        if self.seen.contains(&used) {
            return;
        }
        if self.kept.len() >= MAX_FILE_USES {
            // Not remembered, so memory stays bounded: a repeat counts again.
            self.dropped += 1;
            return;
        }
        self.seen.insert(used.clone());
        self.kept.push(used);
    }

    /// Count `n` uses that were dropped elsewhere (by a worker's boundary).
    pub fn count_dropped(&mut self, n: u64) {
        self.dropped += n;
    }

    pub fn into_exercised(self) -> Exercised {
        Exercised {
            files: self.kept,
            files_dropped: self.dropped,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn uses_are_kept_once_in_order_and_capped() {
        let mut u = FileUses::default();
        u.note(FileOp::Read, "a".into(), None);
        u.note(FileOp::Write, "b".into(), None);
        u.note(FileOp::Read, "a".into(), None);
        u.note(FileOp::Rename, "e".into(), Some("f".into()));
        let e = u.into_exercised();
        assert_eq!(
            e.files.iter().map(|f| f.op).collect::<Vec<_>>(),
            [FileOp::Read, FileOp::Write, FileOp::Rename]
        );
        assert_eq!(e.files[2].to.as_deref(), Some("f"));

        let mut u = FileUses::default();
        for i in 0..MAX_FILE_USES + 5 {
            u.note(FileOp::Read, format!("f{i}"), None);
        }
        u.note(FileOp::Read, format!("f{}", MAX_FILE_USES + 1), None);
        let e = u.into_exercised();
        assert_eq!((e.files.len(), e.files_dropped), (MAX_FILE_USES, 6));
    }
}
