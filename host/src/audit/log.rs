//! The append-only, hash-chained audit log.
//!
//! Invariant: each line is written whole, in one `write`, while the writer
//! holds an exclusive lock on the file, and names the sha256 of the line
//! before it — so writers in several processes never interleave partial
//! lines, and an edited, deleted or reordered line breaks the chain where
//! it happened. A line torn by a crash is cut off by the next writer.
//!
//! Records are committed in batches by a [`GroupCommit`] writer:
//! [`AuditLog::append`] queues a record and returns (a call's record is
//! even built there, from a copy of its result); the writer takes
//! everything queued, chains it to the file's last line under the lock,
//! writes it in one go and syncs it, while the next batch gathers. A record
//! is on disk within one batch's write and sync of being appended, and
//! [`AuditLog::flush`] (or dropping the log) waits for it.

use std::fs::OpenOptions;
use std::path::{Path, PathBuf};
use std::time::SystemTime;

use crate::base::durable::GroupCommit;

use super::call::Queued;
use super::record::AuditEvent;
use super::writer::LogCommit;

/// Writing the audit log failed.
#[derive(Debug, thiserror::Error)]
pub enum AuditError {
    #[error("audit log {path}: {source}")]
    Io {
        path: String,
        source: std::io::Error,
    },
}

/// An audit log file, shared by every writer in the process.
pub struct AuditLog {
    path: PathBuf,
    writer: GroupCommit<LogCommit>,
}

impl AuditLog {
    /// Open (creating) the log at `path`.
    pub fn open(path: &Path) -> Result<AuditLog, AuditError> {
        let io = |source| AuditError::Io {
            path: path.display().to_string(),
            source,
        };
        if let Some(dir) = path.parent() {
            std::fs::create_dir_all(dir).map_err(io)?;
        }
        let file = OpenOptions::new()
            .create(true)
            .read(true)
            .append(true)
            .open(path)
            .map_err(io)?;
        let commit = LogCommit { file, head: None };
        let writer = GroupCommit::start("warden-audit", commit).map_err(io)?;
        Ok(AuditLog {
            path: path.to_path_buf(),
            writer,
        })
    }

    pub fn path(&self) -> &Path {
        &self.path
    }

    fn failed(&self, source: std::io::Error) -> AuditError {
        AuditError::Io {
            path: self.path.display().to_string(),
            source,
        }
    }

    /// Queue `event`, to be chained to the last record and written by the
    /// background writer (see [`AuditLog::flush`]). Fails if an earlier
    /// write failed.
    pub fn append(&self, event: AuditEvent) -> Result<(), AuditError> {
        self.queue(Queued::Event(Box::new(event)))
    }

    /// Queue a record (or what the writer makes one of).
    pub(super) fn queue(&self, item: Queued) -> Result<(), AuditError> {
        self.writer
            .submit((SystemTime::now(), item))
            .map_err(|e| self.failed(e))
    }

    /// Wait until every record appended so far is written and synced.
    pub fn flush(&self) -> Result<(), AuditError> {
        self.writer.wait().map_err(|e| self.failed(e))
    }
}
