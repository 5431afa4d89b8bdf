//! The protected paths of a workspace, found before a call and swept after
//! it.
//!
//! Invariant: every existing path a protected glob matches is covered by a
//! mount in the child: read-only, or unreadable when the guard refuses
//! reads. So is every other name of a hard-linked protected file (same
//! device and inode) when the file is matched directly or lies at most two
//! levels inside a protected directory (`.git/config`,
//! `.git/hooks/pre-commit`). A `.git` file's `gitdir:` target (and its
//! `commondir`) is readable and read-only, or unreadable. Protected paths a
//! call creates are removed when it ends (see `docs/sandbox.md`). The walk
//! is reused across calls while the directories it read are unchanged
//! (`scan_cache`).

use std::collections::HashSet;
use std::fs;
use std::io;
use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use walkdir::{DirEntry, WalkDir};

use crate::capability::PathGuard;

pub(super) use super::scan_cache::Kind;
use super::scan_cache::{self, Stamp, Walked};

/// The protected paths found in a workspace.
#[derive(Debug, Default)]
pub(super) struct Scan {
    /// Workspace-relative paths to cover.
    pub paths: Vec<(PathBuf, Kind)>,
    /// The git directories a `.git` file points to, outside the workspace.
    pub gitdirs: Vec<PathBuf>,
    /// The walk the paths came from.
    pub walked: Arc<Walked>,
}

fn kind(entry: &DirEntry) -> Kind {
    let t = entry.file_type();
    if t.is_dir() {
        Kind::Dir
    } else if t.is_symlink() {
        Kind::Symlink
    } else {
        Kind::File
    }
}

fn rel_of<'a>(workspace: &Path, path: &'a Path) -> Option<&'a Path> {
    path.strip_prefix(workspace)
        .ok()
        .filter(|r| !r.as_os_str().is_empty())
}

/// Walks `workspace` without following symlinks, calling `found` for each
/// protected path (and not descending into protected directories).
/// Returns whether every directory could be read.
fn walk(
    workspace: &Path,
    guard: &PathGuard,
    mut found: impl FnMut(&DirEntry, &Path, bool),
) -> io::Result<bool> {
    let mut complete = true;
    let mut it = WalkDir::new(workspace).follow_links(false).into_iter();
    while let Some(entry) = it.next() {
        let entry = match entry {
            Ok(e) => e,
            Err(e) if e.depth() == 0 => return Err(e.into()),
            Err(_) => {
                complete = false;
                continue;
            }
        };
        let Some(rel) = rel_of(workspace, entry.path()) else {
            continue;
        };
        let protected = guard.is_protected(&rel.to_string_lossy());
        found(&entry, rel, protected);
        if protected && entry.file_type().is_dir() {
            it.skip_current_dir();
        }
    }
    Ok(complete)
}

/// Finds the protected paths of `workspace`: the walk is reused while the
/// directories it read are unchanged.
pub(super) fn scan(workspace: &Path, guard: &PathGuard) -> io::Result<Scan> {
    let walked = scan_cache::walked(workspace, guard, || walk_protected(workspace, guard))?;
    let mut scan = Scan {
        paths: walked.paths.clone(),
        gitdirs: Vec::new(),
        walked,
    };
    gitdirs(workspace, guard, &mut scan);
    Ok(scan)
}

/// Walks `workspace` for its protected paths, and the other names of its
/// hard-linked protected files.
fn walk_protected(workspace: &Path, guard: &PathGuard) -> io::Result<Walked> {
    let mut scan = Walked {
        started: scan_cache::now(),
        ..Walked::default()
    };
    let mut linked: HashSet<(u64, u64)> = HashSet::new();
    let mut note_links = |path: &Path| {
        if let Ok(m) = fs::symlink_metadata(path)
            && m.is_file()
            && m.nlink() > 1
        {
            linked.insert((m.dev(), m.ino()));
        }
    };
    scan.dirs
        .extend(Stamp::of(workspace).map(|t| (PathBuf::new(), t)));
    scan.complete = walk(workspace, guard, |entry, rel, protected| {
        if !protected {
            if entry.file_type().is_dir()
                && let Some(t) = Stamp::of(entry.path())
            {
                scan.dirs.push((rel.to_path_buf(), t));
            }
            return;
        }
        let k = kind(entry);
        scan.paths.push((rel.to_path_buf(), k));
        match k {
            Kind::File => note_links(entry.path()),
            Kind::Dir => {
                for e in WalkDir::new(entry.path()).max_depth(2) {
                    let Ok(e) = e else {
                        scan.complete = false;
                        continue;
                    };
                    if e.file_type().is_file() {
                        note_links(e.path());
                    } else if e.file_type().is_dir() && e.depth() < 2 {
                        match Stamp::of(e.path()) {
                            Some(t) => scan.link_dirs.push((
                                rel.join(
                                    e.path().strip_prefix(entry.path()).unwrap_or(Path::new("")),
                                ),
                                t,
                            )),
                            None => scan.complete = false,
                        }
                    }
                }
            }
            Kind::Symlink => {}
        }
    })?;
    if !linked.is_empty() {
        let inos: HashSet<u64> = linked.iter().map(|(_, ino)| *ino).collect();
        let mut aliases = Vec::new();
        let complete = walk(workspace, guard, |entry, rel, protected| {
            use walkdir::DirEntryExt;
            if !protected
                && entry.file_type().is_file()
                && inos.contains(&entry.ino())
                && entry
                    .metadata()
                    .is_ok_and(|m| linked.contains(&(m.dev(), m.ino())))
            {
                aliases.push((rel.to_path_buf(), Kind::File));
            }
        })?;
        scan.complete &= complete;
        scan.paths.extend(aliases);
    }
    Ok(scan)
}

/// Only the git directories of `workspace` (for a read-only grant whose
/// protected paths are readable: Landlock alone keeps them unchanged).
pub(super) fn scan_gitdirs(workspace: &Path, guard: &PathGuard) -> Scan {
    let mut scan = Scan::default();
    gitdirs(workspace, guard, &mut scan);
    scan
}

/// A `.git` file's `gitdir:` target and its `commondir`: covered in place
/// when inside the workspace, listed in `scan.gitdirs` when outside.
fn gitdirs(workspace: &Path, guard: &PathGuard, scan: &mut Scan) {
    let dot_git = workspace.join(".git");
    if !guard.is_protected(".git") {
        return;
    }
    let Ok(meta) = fs::symlink_metadata(&dot_git) else {
        return;
    };
    if !meta.is_file() {
        return;
    }
    let Ok(text) = fs::read_to_string(&dot_git) else {
        return;
    };
    let Some(target) = text.lines().find_map(|l| l.strip_prefix("gitdir:")) else {
        return;
    };
    let mut dirs = Vec::new();
    if let Some(gitdir) = git_dir_at(&workspace.join(target.trim())) {
        let common = fs::read_to_string(gitdir.join("commondir"))
            .ok()
            .and_then(|c| git_dir_at(&gitdir.join(c.trim())));
        dirs.push(gitdir);
        dirs.extend(common);
    }
    for dir in dirs {
        match dir.strip_prefix(workspace) {
            Ok(rel) if !rel.as_os_str().is_empty() => scan.paths.push((rel.into(), Kind::Dir)),
            Ok(_) => {}
            Err(_) => scan.gitdirs.push(dir),
        }
    }
}

/// `path` canonicalised, if it is a directory with a `HEAD`.
fn git_dir_at(path: &Path) -> Option<PathBuf> {
    let dir = path.canonicalize().ok()?;
    (dir.is_dir() && dir.join("HEAD").exists()).then_some(dir)
}

/// Removes the protected paths that exist now but were not in `before`;
/// returns them, workspace-relative. Reads only the directories whose
/// stamp changed since the walk (or that had changed too close to it to
/// tell), and the new ones below them.
pub(super) fn sweep(workspace: &Path, guard: &PathGuard, before: &Scan) -> Vec<String> {
    let known: HashSet<&Path> = before.paths.iter().map(|(p, _)| p.as_path()).collect();
    let walked = &before.walked;
    let old_dirs: HashSet<&Path> = walked.dirs.iter().map(|(p, _)| p.as_path()).collect();
    let mut created = Vec::new();
    let mut changed: Vec<PathBuf> = walked
        .dirs
        .iter()
        .filter(|(rel, t)| t.racy(walked.started) || Stamp::of(&workspace.join(rel)) != Some(*t))
        .map(|(rel, _)| rel.clone())
        .collect();
    while let Some(rel) = changed.pop() {
        let Ok(entries) = fs::read_dir(workspace.join(&rel)) else {
            continue;
        };
        for entry in entries.flatten() {
            let child = rel.join(entry.file_name());
            let Ok(file_type) = entry.file_type() else {
                continue;
            };
            if guard.is_protected(&child.to_string_lossy()) {
                if !known.contains(child.as_path()) {
                    let k = match (file_type.is_dir(), file_type.is_symlink()) {
                        (true, _) => Kind::Dir,
                        (_, true) => Kind::Symlink,
                        _ => Kind::File,
                    };
                    created.push((workspace.join(&child), k));
                }
            } else if file_type.is_dir() && !old_dirs.contains(child.as_path()) {
                changed.push(child);
            }
        }
    }
    created
        .into_iter()
        .filter_map(|(path, kind)| {
            let removed = match kind {
                Kind::Dir => fs::remove_dir_all(&path),
                Kind::File | Kind::Symlink => fs::remove_file(&path),
            };
            let rel = rel_of(workspace, &path)?.to_string_lossy().into_owned();
            removed.is_ok().then_some(rel)
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::capability::ProtectedReads;

    fn guard() -> PathGuard {
        PathGuard::new(
            vec![".git/**".into(), "**/.env*".into(), "**/*.pem".into()],
            ProtectedReads::Allowed,
        )
        .unwrap()
    }

    #[test]
    fn a_hard_link_to_a_protected_file_is_covered_too() {
        let ws = tempfile::tempdir().unwrap();
        let root = ws.path().canonicalize().unwrap();
        fs::create_dir_all(root.join(".git/hooks")).unwrap();
        fs::write(root.join(".git/config"), "x").unwrap();
        fs::write(root.join(".git/hooks/pre-commit"), "x").unwrap();
        fs::create_dir(root.join("src")).unwrap();
        fs::write(root.join("src/.env.local"), "k").unwrap();
        fs::write(root.join("src/a.rs"), "").unwrap();
        fs::hard_link(root.join(".git/config"), root.join("cfg")).unwrap();
        fs::hard_link(root.join(".git/hooks/pre-commit"), root.join("src/hook")).unwrap();
        let scan = scan(&root, &guard()).unwrap();
        let mut paths: Vec<String> = scan
            .paths
            .iter()
            .map(|(p, _)| p.to_string_lossy().into_owned())
            .collect();
        paths.sort();
        assert_eq!(paths, [".git", "cfg", "src/.env.local", "src/hook"]);
    }

    #[test]
    fn a_protected_path_the_call_created_is_swept() {
        let ws = tempfile::tempdir().unwrap();
        let root = ws.path().canonicalize().unwrap();
        fs::write(root.join(".env"), "old").unwrap();
        let before = scan(&root, &guard()).unwrap();
        fs::create_dir_all(root.join(".git/hooks")).unwrap();
        fs::write(root.join("src.pem"), "new").unwrap();
        fs::create_dir_all(root.join("new/deep")).unwrap();
        fs::write(root.join("new/deep/.env.prod"), "new").unwrap();
        let mut removed = sweep(&root, &guard(), &before);
        removed.sort();
        assert_eq!(removed, [".git", "new/deep/.env.prod", "src.pem"]);
        assert!(root.join(".env").exists());
        assert!(!root.join(".git").exists());
    }

    /// Past a coarse clock tick, so that a change gets a new ctime even
    /// without the kernel's fine-grained timestamps.
    fn tick() {
        std::thread::sleep(std::time::Duration::from_millis(20));
    }

    fn paths(scan: &Scan) -> Vec<String> {
        let mut paths: Vec<String> = scan
            .paths
            .iter()
            .map(|(p, _)| p.to_string_lossy().into_owned())
            .collect();
        paths.sort();
        paths
    }

    #[test]
    fn an_unchanged_tree_is_not_walked_again() {
        let ws = tempfile::tempdir().unwrap();
        let root = ws.path().canonicalize().unwrap();
        fs::create_dir_all(root.join("a/b")).unwrap();
        fs::write(root.join("a/b/.env"), "k").unwrap();
        fs::write(root.join("a/b/c.rs"), "x").unwrap();
        let first = scan(&root, &guard()).unwrap();
        let second = scan(&root, &guard()).unwrap();
        assert!(Arc::ptr_eq(&first.walked, &second.walked));
        fs::write(root.join("a/b/c.rs"), "changed content").unwrap();
        let third = scan(&root, &guard()).unwrap();
        assert!(Arc::ptr_eq(&first.walked, &third.walked));
        assert_eq!(paths(&third), ["a/b/.env"]);
    }

    #[test]
    fn a_protected_path_made_after_a_cached_walk_is_found() {
        let ws = tempfile::tempdir().unwrap();
        let root = ws.path().canonicalize().unwrap();
        fs::create_dir_all(root.join("a/b")).unwrap();
        fs::create_dir_all(root.join(".git/hooks")).unwrap();
        fs::write(root.join(".git/config"), "x").unwrap();
        fs::write(root.join("a/b/c.rs"), "x").unwrap();
        let first = scan(&root, &guard()).unwrap();
        assert_eq!(paths(&first), [".git"]);
        tick();
        fs::write(root.join("a/b/key.pem"), "k").unwrap();
        assert_eq!(
            paths(&scan(&root, &guard()).unwrap()),
            [".git", "a/b/key.pem"]
        );
        tick();
        fs::create_dir(root.join("a/b/d")).unwrap();
        fs::write(root.join("a/b/d/.env"), "k").unwrap();
        assert_eq!(
            paths(&scan(&root, &guard()).unwrap()),
            [".git", "a/b/d/.env", "a/b/key.pem"]
        );
        // Another name made inside a protected directory for a workspace
        // file: only the protected directory's ctime moves.
        tick();
        fs::hard_link(root.join("a/b/c.rs"), root.join(".git/hooks/post-merge")).unwrap();
        assert_eq!(
            paths(&scan(&root, &guard()).unwrap()),
            [".git", "a/b/c.rs", "a/b/d/.env", "a/b/key.pem"]
        );
        // A directory replaced by another at the same path.
        tick();
        fs::remove_dir_all(root.join("a")).unwrap();
        fs::create_dir_all(root.join("a/b")).unwrap();
        fs::write(root.join("a/b/.env.local"), "k").unwrap();
        assert_eq!(
            paths(&scan(&root, &guard()).unwrap()),
            [".git", "a/b/.env.local"]
        );
    }

    #[test]
    fn the_sweep_after_a_cached_walk_removes_what_the_call_made() {
        let ws = tempfile::tempdir().unwrap();
        let root = ws.path().canonicalize().unwrap();
        fs::create_dir_all(root.join("src/deep")).unwrap();
        scan(&root, &guard()).unwrap();
        let before = scan(&root, &guard()).unwrap();
        tick();
        fs::write(root.join("src/deep/.env"), "new").unwrap();
        assert_eq!(sweep(&root, &guard(), &before), ["src/deep/.env"]);
        assert!(!root.join("src/deep/.env").exists());
    }
}
