//! Protected files under other names: hard links.
//!
//! Invariant: wherever the boundary checks a use (a change, always; a read,
//! when protected paths are unreadable), a regular file with more than one
//! link is refused if it is the same inode (device and number) as a
//! protected file in a granted directory, by whatever name it was reached.
//! The check reads the inode off the descriptor opened (or the entry in a
//! pinned directory), not a path looked up again, so a rename between the
//! check and the use changes nothing.
//!
//! The protected files' inodes are found once per call, shared with its
//! workers, by walking every granted directory the first time a checked use
//! meets a multiply-linked file: a call that never does pays nothing. A walk
//! that cannot finish (a directory it cannot list, more than
//! [`MAX_WALK_ENTRIES`] entries) fails closed: every multiply-linked file
//! counts as protected for the rest of the call.

use std::collections::HashSet;
use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};
use std::sync::OnceLock;

/// Entries a walk looks at before it gives up (and fails closed).
pub const MAX_WALK_ENTRIES: usize = 1_000_000;

/// A regular file that has other names.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub(super) struct Linked {
    dev: u64,
    ino: u64,
}

impl Linked {
    /// The file `meta` describes, if it is a regular file with more than one link.
    pub(super) fn of(meta: &std::fs::Metadata) -> Option<Linked> {
        (meta.is_file() && meta.nlink() > 1).then(|| Linked {
            dev: meta.dev(),
            ino: meta.ino(),
        })
    }

    /// The same, from a `stat` of an entry.
    pub(super) fn of_stat(stat: &rustix::fs::Stat) -> Option<Linked> {
        let file =
            rustix::fs::FileType::from_raw_mode(stat.st_mode) == rustix::fs::FileType::RegularFile;
        (file && stat.st_nlink > 1).then_some(Linked {
            dev: stat.st_dev,
            ino: stat.st_ino,
        })
    }
}

/// The protected files of a call's granted directories that have other
/// names, found on first use.
#[derive(Debug, Default)]
pub struct ProtectedLinks(OnceLock<Found>);

#[derive(Debug)]
enum Found {
    /// Every protected file with more than one link.
    All(HashSet<Linked>),
    /// The walk could not finish: any linked file may be one.
    CutShort,
}

impl ProtectedLinks {
    /// Whether `file` is a protected file, walking `roots` for them the
    /// first time (a host path is protected when `protected` says so).
    pub(super) fn contains(
        &self,
        file: Linked,
        roots: &[&str],
        protected: impl Fn(&str) -> bool,
    ) -> bool {
        match self
            .0
            .get_or_init(|| walk(roots, &protected, MAX_WALK_ENTRIES))
        {
            Found::All(files) => files.contains(&file),
            Found::CutShort => true,
        }
    }
}

/// The protected regular files under `roots` with more than one link,
/// looking at no more than `max` entries.
fn walk(roots: &[&str], protected: &dyn Fn(&str) -> bool, max: usize) -> Found {
    let mut found = HashSet::new();
    let mut seen = 0usize;
    let mut dirs: Vec<PathBuf> = roots.iter().map(PathBuf::from).collect();
    while let Some(dir) = dirs.pop() {
        let Ok(entries) = std::fs::read_dir(&dir) else {
            if gone(&dir) {
                continue;
            }
            return Found::CutShort;
        };
        for entry in entries {
            seen += 1;
            let Ok(entry) = entry else {
                return Found::CutShort;
            };
            if seen > max {
                return Found::CutShort;
            }
            // The entry's own type: symlinks are not followed.
            let Ok(kind) = entry.file_type() else {
                return Found::CutShort;
            };
            let path = entry.path();
            if kind.is_dir() {
                dirs.push(path);
            } else if kind.is_file() && protected(&path.to_string_lossy()) {
                // Gone since it was listed: it is no file's other name.
                if let Some(linked) = entry.metadata().ok().as_ref().and_then(Linked::of) {
                    found.insert(linked);
                }
            }
        }
    }
    Found::All(found)
}

/// Whether `dir` went away while the walk ran (removed, or replaced by a
/// file): nothing under it to find.
fn gone(dir: &Path) -> bool {
    std::fs::symlink_metadata(dir).map_or(true, |m| !m.is_dir())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_protected_files_with_other_names_are_found() {
        let dir = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
        let root = dir.path();
        let write =
            |rel: &str| std::fs::write(root.join(rel), rel).unwrap_or_else(|e| panic!("{e}"));
        std::fs::create_dir(root.join("sub")).unwrap_or_else(|e| panic!("{e}"));
        write("sub/secret");
        write("lonely-secret");
        write("plain");
        let link = |from: &str, to: &str| {
            std::fs::hard_link(root.join(from), root.join(to)).unwrap_or_else(|e| panic!("{e}"))
        };
        link("sub/secret", "alias");
        link("plain", "plain-alias");
        let meta = |rel: &str| std::fs::metadata(root.join(rel)).unwrap_or_else(|e| panic!("{e}"));
        let linked = |rel: &str| Linked::of(&meta(rel));
        assert_eq!(linked("lonely-secret"), None, "one name: nothing to find");
        let links = ProtectedLinks::default();
        let root_text = root.to_string_lossy().into_owned();
        let protected = |p: &str| p.contains("secret");
        let alias = linked("alias").unwrap_or_else(|| panic!("alias has two names"));
        assert!(links.contains(alias, &[&root_text], protected));
        let plain = linked("plain-alias").unwrap_or_else(|| panic!("two names"));
        assert!(!links.contains(plain, &[&root_text], protected));
    }

    #[test]
    fn a_walk_that_cannot_finish_fails_closed() {
        let dir = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
        for name in ["a", "b", "c"] {
            std::fs::write(dir.path().join(name), name).unwrap_or_else(|e| panic!("{e}"));
        }
        let root = dir.path().to_string_lossy().into_owned();
        assert!(matches!(walk(&[&root], &|_| true, 3), Found::All(_)));
        assert!(matches!(walk(&[&root], &|_| true, 2), Found::CutShort));
    }
}
