//! Writing a whole file atomically, and the private directories Warden's
//! own state lives in.
//!
//! Invariant: after [`write_atomic`] returns `Ok`, `path` holds exactly the
//! new bytes, synced (and, with [`Rename::Synced`], so is its directory
//! entry); after it returns `Err`, `path` is as it was and no temporary
//! file is left behind. A reader never sees a partial file, even after a
//! crash. Directories made by [`create_private_dir`] are `0700`; files,
//! with the mode asked for.

use std::io::Write;
use std::os::unix::fs::PermissionsExt;
use std::path::Path;

/// Files only their owner may read or write: sessions, the audit log.
pub const PRIVATE_FILE: u32 = 0o600;

/// Whether the rename that puts a new file in place is made durable.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Rename {
    /// The directory is synced after the rename: once [`write_atomic`]
    /// returns, the new file survives a crash of the machine.
    Synced,
    /// The directory is not synced (one sync less): after a crash of the
    /// machine the previous file may be back, whole. For files whose
    /// readers accept an older version, such as the audit anchor (which may
    /// lag the log, never lead it).
    MayRevert,
}

/// Replace `path` with `bytes`: a temporary file in the same directory
/// (created with `mode`, less the umask), written, synced and renamed over
/// `path`, then the directory synced as `rename` says. The directory must
/// exist.
pub fn write_atomic(path: &Path, bytes: &[u8], mode: u32, rename: Rename) -> std::io::Result<()> {
    let dir = match path.parent() {
        Some(d) if !d.as_os_str().is_empty() => d,
        Some(_) | None => Path::new("."),
    };
    let name = path
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    // Dropping the temporary file (on any error below) removes it.
    let mut tmp = tempfile::Builder::new()
        .prefix(&format!(".{name}.tmp-"))
        .permissions(std::fs::Permissions::from_mode(mode))
        .tempfile_in(dir)?;
    tmp.write_all(bytes)?;
    tmp.as_file().sync_all()?;
    tmp.persist(path).map_err(|e| e.error)?;
    match rename {
        Rename::Synced => std::fs::File::open(dir)?.sync_all(),
        Rename::MayRevert => Ok(()),
    }
}

/// Create `dir` and any missing parents, each `0700`; directories that
/// already exist keep their mode.
pub fn create_private_dir(dir: &Path) -> std::io::Result<()> {
    let mut builder = std::fs::DirBuilder::new();
    builder.recursive(true);
    std::os::unix::fs::DirBuilderExt::mode(&mut builder, 0o700);
    builder.create(dir)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn entries(dir: &Path) -> Vec<String> {
        let mut names: Vec<String> = std::fs::read_dir(dir)
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .collect();
        names.sort();
        names
    }

    #[test]
    fn a_file_is_replaced_whole_with_the_mode_asked_for() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("anchor.json");
        std::fs::write(&path, "old").unwrap();
        write_atomic(&path, b"new", PRIVATE_FILE, Rename::Synced).unwrap();
        assert_eq!(std::fs::read_to_string(&path).unwrap(), "new");
        let mode = std::fs::metadata(&path).unwrap().permissions().mode() & 0o777;
        assert_eq!(mode, 0o600);
        assert_eq!(entries(dir.path()), ["anchor.json"]);
    }

    #[test]
    fn a_failed_rename_leaves_no_temporary_file_and_the_old_file_alone() {
        let dir = tempfile::tempdir().unwrap();
        // A non-empty directory where the file should go: the rename fails.
        let path = dir.path().join("entry");
        std::fs::create_dir(&path).unwrap();
        std::fs::write(path.join("inside"), "x").unwrap();
        assert!(write_atomic(&path, b"bytes", PRIVATE_FILE, Rename::Synced).is_err());
        assert_eq!(entries(dir.path()), ["entry"]);
        assert_eq!(entries(&path), ["inside"]);
    }

    #[test]
    fn private_dirs_are_owner_only_and_existing_ones_keep_their_mode() {
        let root = tempfile::tempdir().unwrap();
        let mode = |p: &Path| std::fs::metadata(p).unwrap().permissions().mode() & 0o777;
        let existing = root.path().join("data");
        std::fs::create_dir(&existing).unwrap();
        std::fs::set_permissions(&existing, std::fs::Permissions::from_mode(0o755)).unwrap();
        create_private_dir(&existing.join("audit/deeper")).unwrap();
        assert_eq!(mode(&existing), 0o755);
        assert_eq!(mode(&existing.join("audit")), 0o700);
        assert_eq!(mode(&existing.join("audit/deeper")), 0o700);
    }
}
