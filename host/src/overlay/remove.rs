//! Deleting an overlay's directory entirely, whatever the run left in it.
//!
//! overlayfs leaves `work/work` with mode 000, and a run may leave
//! unreadable or unwritable directories and files of other owners in
//! `upper/`. Each directory is made accessible (when its owner is us)
//! before it is emptied; symlinks are removed, never followed.

use std::os::unix::fs::{MetadataExt, PermissionsExt};
use std::path::Path;

use super::{Overlay, OverlayError};

impl Overlay {
    /// Delete the overlay's directory and everything in it.
    pub fn remove(self) -> Result<(), OverlayError> {
        remove_tree(self.dir()).map_err(|source| OverlayError::Io {
            id: self.id().to_string(),
            what: "cannot delete its directory",
            source,
        })
    }
}

/// Remove `path` and, if it is a directory, all it holds.
pub(crate) fn remove_tree(path: &Path) -> std::io::Result<()> {
    let meta = match std::fs::symlink_metadata(path) {
        Ok(m) => m,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(()),
        Err(e) => return Err(e),
    };
    if !meta.is_dir() {
        return match std::fs::remove_file(path) {
            Err(e) if e.kind() != std::io::ErrorKind::NotFound => Err(e),
            _ => Ok(()),
        };
    }
    if meta.uid() == rustix::process::geteuid().as_raw() && meta.mode() & 0o700 != 0o700 {
        std::fs::set_permissions(path, std::fs::Permissions::from_mode(0o700))?;
    }
    for entry in std::fs::read_dir(path)? {
        remove_tree(&entry?.path())?;
    }
    match std::fs::remove_dir(path) {
        Err(e) if e.kind() != std::io::ErrorKind::NotFound => Err(e),
        _ => Ok(()),
    }
}
