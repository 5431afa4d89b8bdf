//! The lockfile: the sha256 of every installed component, as the user
//! approved it (`<data dir>/plugins.lock`).
//!
//! Invariant: an installed plugin runs only while its component's bytes on
//! disk hash to the sha256 the lockfile holds for it; anything else — bytes
//! changed, no entry, an unreadable lockfile — refuses the plugin until it
//! is approved again (`warden plugin approve NAME`, or a new install).
//! Built-in plugins are embedded in the binary and never consulted here.

use std::collections::BTreeMap;
use std::fs::{File, OpenOptions};
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use crate::base::{Rename, create_private_dir, write_atomic};

/// The lockfile's name in the data directory.
pub const LOCKFILE: &str = "plugins.lock";

/// The lockfile holds hashes, not secrets.
const LOCKFILE_MODE: u32 = 0o644;

const HEADER: &str = "# Written by warden: the sha256 of each installed plugin component, as approved.\n\
# A component whose bytes differ is refused until `warden plugin approve NAME`.\n\n";

/// One approved component.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Locked {
    pub version: String,
    pub sha256: String,
    /// Where it was fetched from: a URL or `oci://HOST/REPO:TAG`; none for
    /// a local file.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub source: Option<String>,
    /// For an OCI source, the `sha256:…` digest of the manifest installed:
    /// installing the same reference again must match it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub manifest_digest: Option<String>,
}

/// Every approved component, by plugin name.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Lockfile {
    #[serde(default)]
    pub plugins: BTreeMap<String, Locked>,
}

/// The lockfile could not be read or written.
#[derive(Debug, thiserror::Error)]
pub enum LockError {
    #[error(
        "cannot read the plugin lockfile {path}: {message}; fix or delete it, then approve each plugin again with `warden plugin approve NAME`"
    )]
    Read { path: PathBuf, message: String },
    #[error("cannot write the plugin lockfile {path}: {source}")]
    Write {
        path: PathBuf,
        source: std::io::Error,
    },
}

impl Lockfile {
    /// Read the lockfile at `path`; none yet is an empty one.
    pub fn read(path: &Path) -> Result<Lockfile, LockError> {
        let text = match std::fs::read_to_string(path) {
            Ok(t) => t,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(Lockfile::default()),
            Err(e) => {
                return Err(LockError::Read {
                    path: path.to_path_buf(),
                    message: e.to_string(),
                });
            }
        };
        toml::from_str(&text).map_err(|e| LockError::Read {
            path: path.to_path_buf(),
            message: e.to_string(),
        })
    }

    /// Change the lockfile at `path` with `change`, holding a lock so that
    /// concurrent installs never lose each other's entries; the new file
    /// replaces the old one whole, and is synced.
    pub fn update(path: &Path, change: impl FnOnce(&mut Lockfile)) -> Result<(), LockError> {
        let write_err = |source| LockError::Write {
            path: path.to_path_buf(),
            source,
        };
        let guard = lock_guard(path).map_err(write_err)?;
        let mut lock = Lockfile::read(path)?;
        change(&mut lock);
        let text = toml::to_string(&lock).map_err(|e| write_err(std::io::Error::other(e)))?;
        let mut bytes = HEADER.as_bytes().to_vec();
        bytes.extend_from_slice(text.as_bytes());
        let written = write_atomic(path, &bytes, LOCKFILE_MODE, Rename::Synced);
        drop(guard);
        written.map_err(write_err)
    }
}

/// An exclusive lock on `<lockfile>.guard`, released when dropped.
fn lock_guard(path: &Path) -> std::io::Result<File> {
    if let Some(dir) = path.parent() {
        create_private_dir(dir)?;
    }
    let f = OpenOptions::new()
        .create(true)
        .truncate(false)
        .write(true)
        .open(path.with_extension("lock.guard"))?;
    f.lock()?;
    Ok(f)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn entries_round_trip_and_a_broken_file_is_an_error() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join(LOCKFILE);
        assert_eq!(Lockfile::read(&path).unwrap(), Lockfile::default());
        let locked = Locked {
            version: "0.1.0".into(),
            sha256: "ab".repeat(32),
            source: Some("oci://127.0.0.1:5000/echo:1".into()),
            manifest_digest: Some(format!("sha256:{}", "cd".repeat(32))),
        };
        Lockfile::update(&path, |l| {
            l.plugins.insert("echo".into(), locked.clone());
        })
        .unwrap();
        let text = std::fs::read_to_string(&path).unwrap();
        assert!(text.starts_with("# Written by warden"), "{text}");
        assert_eq!(Lockfile::read(&path).unwrap().plugins["echo"], locked);
        Lockfile::update(&path, |l| {
            l.plugins.remove("echo");
        })
        .unwrap();
        assert!(Lockfile::read(&path).unwrap().plugins.is_empty());

        std::fs::write(&path, "plugins = 3").unwrap();
        let err = Lockfile::read(&path).unwrap_err().to_string();
        assert!(err.contains("warden plugin approve"), "{err}");
    }
}
