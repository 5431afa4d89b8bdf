//! The append-only, hash-chained audit log.
//!
//! Invariant: each line is written whole, in one `write`, while the writer
//! holds an exclusive lock on the file, and names the sha256 of the line
//! before it — so writers in several processes never interleave partial
//! lines, and an edited, deleted or reordered line breaks the chain where
//! it happened. A line torn by a crash is cut off by the next writer.

use std::fs::{File, OpenOptions};
use std::io::{Read, Seek, SeekFrom, Write};
use std::path::{Path, PathBuf};
use std::sync::Mutex;
use std::time::SystemTime;

use sha2::{Digest, Sha256};

use super::record::{AuditEvent, AuditRecord, GENESIS};

/// Writing the audit log failed.
#[derive(Debug, thiserror::Error)]
pub enum AuditError {
    #[error("audit log {path}: {source}")]
    Io {
        path: String,
        source: std::io::Error,
    },
    #[error(
        "audit log {path}: the last record cannot be read ({message}); run `warden audit verify`"
    )]
    BadTail { path: String, message: String },
}

/// Where the chain stands after the last line this process knows of.
#[derive(Debug, Clone)]
struct Head {
    /// File length after that line.
    len: u64,
    seq: u64,
    hash: String,
}

/// An audit log file, shared by every writer in the process.
pub struct AuditLog {
    path: PathBuf,
    file: Mutex<(File, Option<Head>)>,
    /// Syncs written records in the background; a record is durable within
    /// one sync's time of being written, and [`AuditLog::flush`] (or
    /// dropping the log) waits for it.
    syncer: crate::durable::BackgroundSync,
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
        let syncer =
            crate::durable::BackgroundSync::start(file.try_clone().map_err(io)?).map_err(io)?;
        Ok(AuditLog {
            path: path.to_path_buf(),
            file: Mutex::new((file, None)),
            syncer,
        })
    }

    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Wait until every record appended so far is on disk.
    pub fn flush(&self) -> Result<(), AuditError> {
        self.syncer.wait().map_err(|source| AuditError::Io {
            path: self.path.display().to_string(),
            source,
        })
    }

    /// Append `event`, chained to the last record; it is synced in the
    /// background (see [`AuditLog::flush`]).
    pub fn append(&self, event: AuditEvent) -> Result<AuditRecord, AuditError> {
        let io = |source| AuditError::Io {
            path: self.path.display().to_string(),
            source,
        };
        let mut guard = self
            .file
            .lock()
            .map_err(|_| io(std::io::Error::other("the audit log lock is poisoned")))?;
        let (file, cached) = &mut *guard;
        file.lock().map_err(io)?;
        let result = (|| {
            let len = file.metadata().map_err(io)?.len();
            let head = match cached.take() {
                Some(h) if h.len == len => h,
                Some(_) | None => self.read_head(file, len)?,
            };
            let record = AuditRecord {
                seq: head.seq + 1,
                time: humantime::format_rfc3339_micros(SystemTime::now()).to_string(),
                prev: head.hash.clone(),
                event,
            };
            let mut line = serde_json::to_vec(&record).map_err(|e| io(e.into()))?;
            let hash = hex::encode(Sha256::digest(&line));
            line.push(b'\n');
            file.write_all(&line).map_err(io)?;
            self.syncer.request().map_err(io)?;
            *cached = Some(Head {
                len: head.len + line.len() as u64,
                seq: record.seq,
                hash,
            });
            Ok(record)
        })();
        // Unlocking also happens when the file closes.
        let _ = file.unlock();
        result
    }

    /// Find the last complete line, cutting off a torn one.
    fn read_head(&self, file: &mut File, len: u64) -> Result<Head, AuditError> {
        let io = |source| AuditError::Io {
            path: self.path.display().to_string(),
            source,
        };
        if len == 0 {
            return Ok(Head {
                len: 0,
                seq: 0,
                hash: GENESIS.to_string(),
            });
        }
        // Read backwards in growing windows until a whole last line is in view.
        let mut window = 64 * 1024u64;
        loop {
            let start = len.saturating_sub(window);
            file.seek(SeekFrom::Start(start)).map_err(io)?;
            let mut buf = Vec::with_capacity((len - start) as usize);
            Read::by_ref(file)
                .take(len - start)
                .read_to_end(&mut buf)
                .map_err(io)?;
            let complete = buf.iter().rposition(|&b| b == b'\n').map(|i| i + 1);
            let Some(complete) = complete else {
                if start == 0 {
                    // Nothing but a torn first line.
                    file.set_len(0).map_err(io)?;
                    return self.read_head(file, 0);
                }
                window *= 4;
                continue;
            };
            if complete < buf.len() {
                file.set_len(start + complete as u64).map_err(io)?;
            }
            let body = &buf[..complete - 1];
            let line_start = body.iter().rposition(|&b| b == b'\n').map(|i| i + 1);
            let line = match line_start {
                Some(i) => &body[i..],
                None if start == 0 => body,
                None => {
                    window *= 4;
                    continue;
                }
            };
            let record: AuditRecord =
                serde_json::from_slice(line).map_err(|e| AuditError::BadTail {
                    path: self.path.display().to_string(),
                    message: e.to_string(),
                })?;
            return Ok(Head {
                len: start + complete as u64,
                seq: record.seq,
                hash: hex::encode(Sha256::digest(line)),
            });
        }
    }
}
