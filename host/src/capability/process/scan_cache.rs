//! The protected-path scan of a workspace, kept across calls while every
//! directory it read is unchanged.
//!
//! Invariant: a cached scan is returned only when every directory it listed
//! still has the device, inode and change time it had when listed, and
//! none of them had changed within [`RACY`] before the listing began; it is
//! then exactly what a new walk would find. A directory gains, loses or
//! renames an entry only with a new ctime, which no process can set back;
//! a directory replaced by another has another inode or ctime. A change
//! made too soon after the listing could share its ctime on a filesystem
//! with coarse timestamps, so such a directory is never trusted (as git
//! treats "racy" index entries). See `docs/sandbox.md`.

use std::collections::HashMap;
use std::fs;
use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, PoisonError};
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use crate::capability::PathGuard;

/// How recent a directory's change may be, against the start of the walk
/// that listed it, before its ctime is not trusted to reveal later changes:
/// longer than the coarsest timestamps of a Linux filesystem in use for
/// workspaces (one second on ext4 with small inodes) and the kernel's
/// coarse clock tick. Unit tests rely on the kernel's fine-grained ctimes
/// (Linux 6.13 and later) instead, so as not to wait.
pub(super) const RACY: Duration = match cfg!(test) {
    true => Duration::ZERO,
    false => Duration::from_secs(2),
};

/// Workspaces remembered at once; the oldest is dropped past it.
const CAPACITY: usize = 16;

/// What a path is, as far as covering it goes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Kind {
    Dir,
    /// A regular file, device, fifo or socket.
    File,
    Symlink,
}

/// What a walk of a workspace found: everything in a protected-path scan
/// but the git directories, which are read again for each call.
#[derive(Debug, Default)]
pub(super) struct Walked {
    /// Workspace-relative protected paths, and other names of hard-linked
    /// protected files.
    pub paths: Vec<(PathBuf, Kind)>,
    /// Every unprotected directory walked (`""` for the root), with its
    /// stamp: a directory gains or loses entries only with a new ctime,
    /// which no process can set back, so the sweep reads only the
    /// directories whose stamp moved (or that were racy).
    pub dirs: Vec<(PathBuf, Stamp)>,
    /// The protected directories, and their subdirectories, whose files
    /// were examined for other links.
    pub link_dirs: Vec<(PathBuf, Stamp)>,
    /// When the walk began ([`now`]).
    pub started: i128,
    /// Whether every directory could be read.
    pub complete: bool,
}

/// What identifies a directory's entries: a new entry, a removed or
/// renamed one, or another directory at the same path changes it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) struct Stamp {
    dev: u64,
    ino: u64,
    /// Change time, in nanoseconds since the epoch.
    ctime: i128,
}

impl Stamp {
    /// The stamp of `path` itself (a symlink is not followed).
    pub fn of(path: &Path) -> Option<Stamp> {
        fs::symlink_metadata(path).ok().map(|m| Stamp {
            dev: m.dev(),
            ino: m.ino(),
            ctime: i128::from(m.ctime()) * 1_000_000_000 + i128::from(m.ctime_nsec()),
        })
    }

    /// Whether this directory changed too close to `since` (the start of
    /// the walk that listed it) for its ctime to reveal a later change.
    pub fn racy(&self, since: i128) -> bool {
        self.ctime + RACY.as_nanos() as i128 > since
    }
}

/// Now, in nanoseconds since the epoch (the clock file times are read on).
pub(super) fn now() -> i128 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| d.as_nanos() as i128)
}

struct Entry {
    guard: PathGuard,
    walked: Arc<Walked>,
    used: u64,
}

#[derive(Default)]
struct Cache {
    entries: HashMap<PathBuf, Entry>,
    clock: u64,
}

static CACHE: Mutex<Option<Cache>> = Mutex::new(None);

/// Whether every directory `walked` listed is as it was, and none was racy.
fn still_valid(workspace: &Path, walked: &Walked) -> bool {
    walked
        .dirs
        .iter()
        .chain(&walked.link_dirs)
        .all(|(rel, stamp)| {
            !stamp.racy(walked.started) && Stamp::of(&workspace.join(rel)) == Some(*stamp)
        })
}

/// The walk of `workspace` under `guard`: the cached one when still valid,
/// else a new one from `walk` (cached when it read every directory).
pub(super) fn walked(
    workspace: &Path,
    guard: &PathGuard,
    walk: impl FnOnce() -> std::io::Result<Walked>,
) -> std::io::Result<Arc<Walked>> {
    let cached = {
        let mut lock = CACHE.lock().unwrap_or_else(PoisonError::into_inner);
        let cache = lock.get_or_insert_with(Cache::default);
        cache.clock += 1;
        let clock = cache.clock;
        cache
            .entries
            .get_mut(workspace)
            .filter(|e| e.guard == *guard)
            .map(|e| {
                e.used = clock;
                Arc::clone(&e.walked)
            })
    };
    if let Some(walked) = cached.filter(|w| still_valid(workspace, w)) {
        return Ok(walked);
    }
    let walked = Arc::new(walk()?);
    if walked.complete {
        let mut lock = CACHE.lock().unwrap_or_else(PoisonError::into_inner);
        let cache = lock.get_or_insert_with(Cache::default);
        if cache.entries.len() >= CAPACITY && !cache.entries.contains_key(workspace) {
            let oldest = cache
                .entries
                .iter()
                .min_by_key(|(_, e)| e.used)
                .map(|(k, _)| k.clone());
            if let Some(k) = oldest {
                cache.entries.remove(&k);
            }
        }
        let used = cache.clock;
        cache.entries.insert(
            workspace.to_path_buf(),
            Entry {
                guard: guard.clone(),
                walked: Arc::clone(&walked),
                used,
            },
        );
    }
    Ok(walked)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_change_within_racy_of_the_walk_is_not_trusted() {
        let stamp = Stamp {
            dev: 1,
            ino: 2,
            ctime: 10_000,
        };
        assert!(stamp.racy(10_000 + RACY.as_nanos() as i128 - 1));
        assert!(!stamp.racy(10_000 + RACY.as_nanos() as i128));
    }
}
