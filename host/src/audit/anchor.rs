//! The anchor: where the chain stood after the last durable append, kept
//! beside the log (`anchor.json`) so that a log cut short, rewritten from
//! some record on, or deleted no longer verifies.
//!
//! Invariant: the anchor is moved only after the records it names are
//! synced, under the log's lock, so it never names more of the log than is
//! on disk; after a crash it may lag the log, never lead it. It is always
//! [`ANCHOR_BYTES`] long, so it is moved by overwriting its first sector in
//! place and syncing that (a sector is written whole or not at all); only a
//! missing or odd file (another length, a link, not a regular file) is
//! replaced whole ([`write_atomic`], its rename not made durable:
//! [`Rename::MayRevert`]). Readers hold the log's lock, so none sees a
//! write half done.

use std::fs::{File, OpenOptions};
use std::os::unix::fs::{FileExt, MetadataExt, OpenOptionsExt};
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

/// A shared lock on the log at `log`, held until the returned file is
/// dropped: writers wait while it is held, so the log and the anchor read
/// under it agree (and no anchor is read half written). `None` when there
/// is no log.
pub fn read_lock(log: &Path) -> std::io::Result<Option<File>> {
    match File::open(log) {
        Ok(file) => {
            file.lock_shared()?;
            Ok(Some(file))
        }
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(None),
        Err(e) => Err(e),
    }
}

/// The length of every anchor file: its JSON, padded with spaces and ended
/// with a newline. Under 512 bytes, so it lies in the file's first sector.
pub const ANCHOR_BYTES: usize = 256;

/// Move the anchor at `path` to `anchor`: in place when the file is an
/// anchor of the fixed length (one write and one data sync, no new file),
/// otherwise by replacing it whole.
pub(super) fn write_anchor(path: &Path, anchor: &Anchor) -> std::io::Result<()> {
    let mut bytes = serde_json::to_vec(anchor).map_err(std::io::Error::other)?;
    if bytes.len() < ANCHOR_BYTES {
        bytes.resize(ANCHOR_BYTES - 1, b' ');
        bytes.push(b'\n');
        if let Some(file) = open_in_place(path) {
            file.write_all_at(&bytes, 0)?;
            return file.sync_data();
        }
    }
    write_atomic(path, &bytes, PRIVATE_FILE, Rename::MayRevert)
}

/// The anchor at `path` opened for writing, if it can be overwritten in
/// place: a regular file of [`ANCHOR_BYTES`] with no other name (a write
/// through a hard link would change the other file too). Opened without
/// following a symbolic link and without blocking on a FIFO.
fn open_in_place(path: &Path) -> Option<File> {
    let file = OpenOptions::new()
        .write(true)
        .custom_flags(libc::O_NOFOLLOW | libc::O_NONBLOCK)
        .open(path)
        .ok()?;
    let meta = file.metadata().ok()?;
    let fits = meta.is_file() && meta.len() == ANCHOR_BYTES as u64 && meta.nlink() == 1;
    fits.then_some(file)
}
