//! A workspace's memory notes: one short text file per workspace, kept in
//! Warden's data directory (`<data dir>/memory/<hash of the workspace>.md`),
//! never in the workspace itself.
//!
//! Invariant: what is stored is at most [`MAX_MEMORY_BYTES`] of UTF-8 text,
//! with every secret this process knows and every token of a well-known
//! secret shape replaced by [`REDACTED`] before it reaches the disk; a
//! write replaces the file atomically (`0600` in a `0700` directory), so a
//! reader sees the old notes or the new ones, never a mix.

use std::path::{Path, PathBuf};
use std::sync::LazyLock;

use crate::base::secrets::{self, REDACTED};
use crate::base::{PRIVATE_FILE, Rename, create_private_dir, sha256_hex, write_atomic};
use crate::home::Home;

/// The most bytes of notes one workspace keeps.
pub const MAX_MEMORY_BYTES: usize = 16 << 10;

/// Token shapes redacted whether or not this process knows the value:
/// provider API keys, GitHub and Slack tokens, AWS access key ids, private
/// key blocks, and `password=`/`token:`-style assignments.
static SECRET_SHAPES: LazyLock<Vec<regex::Regex>> = LazyLock::new(|| {
    [
        r"\bsk-[A-Za-z0-9_-]{16,}",
        r"\bgh[pousr]_[A-Za-z0-9]{20,}",
        r"\bxox[abpr]-[A-Za-z0-9-]{10,}",
        r"\bAKIA[0-9A-Z]{16}\b",
        r"-----BEGIN [A-Z ]*PRIVATE KEY-----[\s\S]*?-----END [A-Z ]*PRIVATE KEY-----",
        r"(?i)\b(password|passwd|secret|api[_-]?key|token)\b\s*[:=]\s*\S{8,}",
    ]
    .iter()
    .filter_map(|p| regex::Regex::new(p).ok())
    .collect()
});

/// Why notes were not read or written.
#[derive(Debug, thiserror::Error)]
pub enum MemoryError {
    #[error(
        "the notes are {bytes} bytes; memory holds at most {MAX_MEMORY_BYTES} bytes \
         (16 KiB) per workspace: keep only what later sessions need"
    )]
    TooLarge { bytes: usize },
    #[error("the memory file {path} is not UTF-8 text; fix or clear it (`warden memory clear`)")]
    NotText { path: String },
    #[error("the memory file {path}: {source}")]
    Io {
        path: String,
        source: std::io::Error,
    },
}

/// The memory notes of one workspace.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct MemoryNotes {
    file: PathBuf,
}

impl MemoryNotes {
    /// The notes of `workspace` (canonicalised when it can be), under
    /// `home`'s data directory.
    pub fn for_workspace(home: &Home, workspace: &Path) -> MemoryNotes {
        let canonical = std::fs::canonicalize(workspace).unwrap_or_else(|_| workspace.into());
        let key = sha256_hex(canonical.as_os_str().as_encoded_bytes());
        MemoryNotes {
            file: home
                .root()
                .join("memory")
                .join(format!("{}.md", &key[..32])),
        }
    }

    /// Where the notes are kept.
    pub fn file(&self) -> &Path {
        &self.file
    }

    fn io(&self, source: std::io::Error) -> MemoryError {
        MemoryError::Io {
            path: self.file.display().to_string(),
            source,
        }
    }

    /// The notes; empty when there are none yet.
    pub fn read(&self) -> Result<String, MemoryError> {
        match std::fs::read(&self.file) {
            Ok(bytes) => String::from_utf8(bytes).map_err(|_| MemoryError::NotText {
                path: self.file.display().to_string(),
            }),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(String::new()),
            Err(e) => Err(self.io(e)),
        }
    }

    /// Replace the notes with `notes`, redacted; returns what was stored.
    /// Notes over [`MAX_MEMORY_BYTES`] (after redaction) are refused and
    /// the old ones kept.
    pub fn write(&self, notes: &str) -> Result<String, MemoryError> {
        let stored = redact_notes(notes);
        if stored.len() > MAX_MEMORY_BYTES {
            return Err(MemoryError::TooLarge {
                bytes: stored.len(),
            });
        }
        if let Some(dir) = self.file.parent() {
            create_private_dir(dir).map_err(|e| self.io(e))?;
        }
        write_atomic(&self.file, stored.as_bytes(), PRIVATE_FILE, Rename::Synced)
            .map_err(|e| self.io(e))?;
        Ok(stored)
    }

    /// Remove the notes; true when there were some.
    pub fn clear(&self) -> Result<bool, MemoryError> {
        match std::fs::remove_file(&self.file) {
            Ok(()) => Ok(true),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(false),
            Err(e) => Err(self.io(e)),
        }
    }
}

/// `notes` with every known secret and every secret-shaped token redacted.
pub fn redact_notes(notes: &str) -> String {
    let mut text = secrets::redact(notes).into_owned();
    for shape in SECRET_SHAPES.iter() {
        if shape.is_match(&text) {
            text = shape.replace_all(&text, REDACTED).into_owned();
        }
    }
    text
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn secret_shaped_tokens_never_reach_the_notes_file() {
        let home = tempfile::tempdir().unwrap();
        let ws = tempfile::tempdir().unwrap();
        let notes = MemoryNotes::for_workspace(&Home::at(home.path().into()), ws.path());
        let stored = notes
            .write(
                "use cargo nextest\nkey sk-abcdefghijklmnopqrstuv and password = hunter2hunter2\n",
            )
            .unwrap();
        assert_eq!(stored, "use cargo nextest\nkey [redacted] and [redacted]\n");
        let on_disk = std::fs::read_to_string(notes.file()).unwrap();
        assert_eq!(on_disk, stored);
        assert!(!notes.file().starts_with(ws.path()));
    }

    #[test]
    fn notes_over_the_cap_are_refused_and_the_old_ones_kept() {
        let home = tempfile::tempdir().unwrap();
        let notes = MemoryNotes::for_workspace(&Home::at(home.path().into()), Path::new("/w"));
        notes.write("old").unwrap();
        let err = notes.write(&"x".repeat(MAX_MEMORY_BYTES + 1)).unwrap_err();
        assert!(matches!(err, MemoryError::TooLarge { .. }), "{err}");
        assert_eq!(notes.read().unwrap(), "old");
        assert!(notes.clear().unwrap());
        assert_eq!(notes.read().unwrap(), "");
    }
}
