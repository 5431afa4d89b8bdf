//! The anchor: where the chain stood after the last durable append, kept
//! beside the log (`anchor.json`) so that a log cut short, rewritten from
//! some record on, or deleted no longer verifies.
//!
//! Invariant: the anchor is replaced whole ([`write_atomic`]) only after
//! the records it names are synced, under the log's lock, so it never
//! names more of the log than is on disk; after a crash it may lag the log
//! (its rename is not made durable: [`Rename::MayRevert`]), never lead it.

use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use crate::base::{PRIVATE_FILE, Rename, write_atomic};

/// The last record's position and hash, as the writer left them.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Anchor {
    /// Records in the log (the last record's `seq`).
    pub records: u64,
    /// sha256 (hex) of the last record's line.
    pub head: String,
}

/// The anchor of the log at `log`.
pub fn anchor_path(log: &Path) -> PathBuf {
    log.with_file_name("anchor.json")
}

/// The anchor at `path`; `None` if there is none.
pub fn read_anchor(path: &Path) -> std::io::Result<Option<Anchor>> {
    match std::fs::read(path) {
        Ok(bytes) => serde_json::from_slice(&bytes)
            .map(Some)
            .map_err(|e| std::io::Error::new(std::io::ErrorKind::InvalidData, e)),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(None),
        Err(e) => Err(e),
    }
}

/// Replace the anchor at `path`.
pub(super) fn write_anchor(path: &Path, anchor: &Anchor) -> std::io::Result<()> {
    let bytes = serde_json::to_vec(anchor).map_err(std::io::Error::other)?;
    write_atomic(path, &bytes, PRIVATE_FILE, Rename::MayRevert)
}
