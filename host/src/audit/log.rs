//! The append-only, hash-chained audit log.
//!
//! Invariant: each line is written whole, in one `write`, while the writer
//! holds an exclusive lock on the file, and names the sha256 of the line
//! before it — so writers in several processes never interleave partial
//! lines. A line torn by a crash is cut off by the next writer. Opening
//! the log checks that records can be written (directory, file, room,
//! anchor) before anything is recorded, so a caller can refuse to act
//! when they cannot.
//!
//! Records are committed in batches by a [`GroupCommit`] writer:
//! [`AuditLog::append`] queues a record and returns (a call's record is
//! even built there, from a copy of its result); a record is on disk within
//! [`LINGER`] and one batch's write and sync, and [`AuditLog::flush`] (or
//! dropping the log) waits for it, without the linger.

use std::fs::{File, OpenOptions};
use std::os::unix::fs::{MetadataExt, OpenOptionsExt};
use std::path::{Path, PathBuf};
use std::sync::OnceLock;
use std::time::{Duration, SystemTime};

use crate::base::durable::GroupCommit;
use crate::base::{PRIVATE_FILE, create_private_dir};

use super::anchor::anchor_path;
use super::call::{PendingCall, Queued, audit_copy};
use super::record::AuditEvent;
use super::writer::LogCommit;
use crate::pipeline::CallResult;

/// Room reserved in the log when it is opened, for the records to come.
pub const RECORD_ROOM: u64 = 64 * 1024;

/// How long a batch of records waits for more after its first, unless a
/// caller waits for them: calls in quick succession (a server's) share one
/// sync and one anchor move instead of paying for them every few calls.
pub const LINGER: Duration = Duration::from_millis(1);

/// Room allocated beyond what a reservation asks for, so that the next
/// ones (a call's record is a few KiB) need no allocation of their own.
const ROOM_CHUNK: u64 = 64 * 1024;

/// Of the blocks a log holds, what is not counted as room (its extent
/// tree may take some).
const ROOM_MARGIN: u64 = 16 * 1024;

/// The audit log cannot be opened or written.
#[derive(Debug, thiserror::Error)]
pub enum AuditError {
    #[error("{} is not a directory; the audit log goes there (move that file away)", dir.display())]
    NotADirectory { dir: PathBuf },
    #[error("cannot open the audit log {}: {source}", path.display())]
    Open {
        path: PathBuf,
        source: std::io::Error,
    },
    #[error("no room for audit records in {}: {source}", path.display())]
    NoRoom {
        path: PathBuf,
        source: std::io::Error,
    },
    #[error("cannot write the audit log {}: {source}", path.display())]
    Write {
        path: PathBuf,
        source: std::io::Error,
    },
    #[error(
        "an audit record could not be written to {} ({first}); no call runs until the log \
         can be written again: fix the cause, then restart warden",
        path.display()
    )]
    Broken { path: PathBuf, first: String },
}

/// An audit log file, shared by every writer in the process.
pub struct AuditLog {
    path: PathBuf,
    /// The log, for reserving room.
    file: File,
    writer: GroupCommit<LogCommit>,
    /// The first write that failed. From then on the chain cannot be
    /// trusted to go on, so every later reservation fails: no call runs
    /// unrecorded.
    broken: OnceLock<String>,
}

impl AuditLog {
    /// Open (creating, `0600` in a `0700` directory) the log at `path`,
    /// and check that records can be written to it: the directory is
    /// writable (for the anchor), [`RECORD_ROOM`] bytes are reserved on
    /// disk, and the log still ends with the record its anchor names.
    pub fn open(path: &Path) -> Result<AuditLog, AuditError> {
        let open_err = |source| AuditError::Open {
            path: path.to_path_buf(),
            source,
        };
        let dir = match path.parent() {
            Some(d) if !d.as_os_str().is_empty() => d,
            Some(_) | None => Path::new("."),
        };
        if dir.exists() && !dir.is_dir() {
            return Err(AuditError::NotADirectory {
                dir: dir.to_path_buf(),
            });
        }
        create_private_dir(dir).map_err(|source| match source.kind() {
            std::io::ErrorKind::AlreadyExists | std::io::ErrorKind::NotADirectory => {
                AuditError::NotADirectory {
                    dir: dir.to_path_buf(),
                }
            }
            _ => open_err(source),
        })?;
        let file = OpenOptions::new()
            .create(true)
            .read(true)
            .append(true)
            .mode(PRIVATE_FILE)
            .open(path)
            .map_err(open_err)?;
        rustix::fs::access(dir, rustix::fs::Access::WRITE_OK)
            .map_err(|e| open_err(std::io::Error::from(e)))?;
        let mut commit = LogCommit {
            file: file.try_clone().map_err(open_err)?,
            anchor: anchor_path(path),
            head: None,
        };
        commit.check().map_err(open_err)?;
        let writer =
            GroupCommit::start_lingering("warden-audit", commit, LINGER).map_err(open_err)?;
        let log = AuditLog {
            path: path.to_path_buf(),
            file,
            writer,
            broken: OnceLock::new(),
        };
        log.reserve(RECORD_ROOM)?;
        Ok(log)
    }

    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Make sure `bytes` more can be appended: the space is allocated to
    /// the log now, so a disk that fills later cannot take it.
    /// Fails for good once a record could not be written.
    ///
    /// Space is allocated [`ROOM_CHUNK`] ahead, so most calls find their
    /// room already there (the log is append-only, so it has no holes: the
    /// blocks it holds past its end are room) and make no allocation.
    pub fn reserve(&self, bytes: u64) -> Result<(), AuditError> {
        if let Err(e) = self.writer.take_error() {
            return Err(self.failed(e));
        }
        if let Some(first) = self.broken.get() {
            return Err(AuditError::Broken {
                path: self.path.clone(),
                first: first.clone(),
            });
        }
        let no_room = |source| AuditError::NoRoom {
            path: self.path.clone(),
            source,
        };
        let meta = self.file.metadata().map_err(no_room)?;
        let len = meta.len();
        // Blocks can also hold the file's extent tree: count a margin.
        let held = (meta.blocks() * 512).saturating_sub(ROOM_MARGIN);
        if held >= len.saturating_add(bytes) {
            return Ok(());
        }
        let allocate = |bytes| {
            rustix::fs::fallocate(
                &self.file,
                rustix::fs::FallocateFlags::KEEP_SIZE,
                len,
                bytes,
            )
        };
        // Ahead if the disk has room for it; else only what was asked.
        match allocate(bytes.saturating_add(ROOM_CHUNK)).or_else(|_| allocate(bytes)) {
            Ok(()) => Ok(()),
            // A filesystem that cannot reserve space is not a full one.
            Err(rustix::io::Errno::OPNOTSUPP | rustix::io::Errno::NOSYS) => Ok(()),
            Err(e) => Err(no_room(e.into())),
        }
    }

    /// The error of a failed write, remembered as the log's first failure.
    fn failed(&self, source: std::io::Error) -> AuditError {
        let _ = self.broken.set(source.to_string());
        AuditError::Write {
            path: self.path.clone(),
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

impl AuditLog {
    /// Append the record of `result` (see [`CallAudit::of`]).
    ///
    /// [`CallAudit::of`]: super::record::CallAudit::of
    pub fn record_call(
        &self,
        result: &CallResult,
        input: &str,
        session_id: Option<&str>,
    ) -> Result<(), AuditError> {
        self.record_call_from(result, input, session_id, None)
    }

    /// [`record_call`](Self::record_call) for a call `caller` asked for
    /// (e.g. `mcp:claude-code/1.2.0`).
    pub fn record_call_from(
        &self,
        result: &CallResult,
        input: &str,
        session_id: Option<&str>,
        caller: Option<&str>,
    ) -> Result<(), AuditError> {
        let (result, output_bytes) = audit_copy(result);
        self.queue(Queued::Call(Box::new(PendingCall {
            result,
            output_bytes,
            input: input.to_string(),
            session_id: session_id.map(str::to_string),
            caller: caller.map(str::to_string),
        })))
    }
}
