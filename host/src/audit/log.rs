//! The append-only, hash-chained audit log.
//!
//! Invariant: each line is written whole, in one `write`, while the writer
//! holds an exclusive lock on the file, and names the sha256 of the line
//! before it — so writers in several processes never interleave partial
//! lines, and an edited, deleted or reordered line breaks the chain where
//! it happened. A line torn by a crash is cut off by the next writer.
//!
//! Records are written by a background thread in batches (group commit):
//! [`AuditLog::append`] queues a record and returns (a call's record is
//! even built there, from a copy of its result); the writer takes
//! everything queued, chains it to the file's last line under the lock,
//! writes it in one go and syncs it, while the next batch gathers. A record
//! is on disk within one batch's write and sync of being appended, and
//! [`AuditLog::flush`] (or dropping the log) waits for it.

use std::fs::{File, OpenOptions};
use std::path::{Path, PathBuf};
use std::sync::{Arc, Condvar, Mutex, MutexGuard};
use std::time::SystemTime;

use super::call::{PendingCall, Queued, audit_copy};
use super::record::AuditEvent;
use super::writer::{Batch, Head, write_batch};
use crate::pipeline::CallResult;

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
    shared: Arc<Shared>,
    writer: Option<std::thread::JoinHandle<()>>,
}

#[derive(Default)]
struct Shared {
    state: Mutex<State>,
    /// The writer waits here for records.
    wake: Condvar,
    /// Flushes wait here for the writer.
    written: Condvar,
}

#[derive(Default)]
struct State {
    queue: Batch,
    /// Records appended so far, and of those, written and synced.
    appended: u64,
    durable: u64,
    /// Whether the writer is at work (and will look at the queue again
    /// before it sleeps), so appends need not wake it.
    busy: bool,
    closed: bool,
    /// The last failure, reported once to the next append or flush.
    error: Option<String>,
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
        let shared = Arc::new(Shared::default());
        let state = shared.clone();
        let display = path.display().to_string();
        let writer = std::thread::Builder::new()
            .name("warden-audit".into())
            .spawn(move || writer_loop(file, &display, &state))
            .map_err(io)?;
        Ok(AuditLog {
            path: path.to_path_buf(),
            shared,
            writer: Some(writer),
        })
    }

    pub fn path(&self) -> &Path {
        &self.path
    }

    fn state(&self) -> Result<MutexGuard<'_, State>, AuditError> {
        self.shared.state.lock().map_err(|_| AuditError::Io {
            path: self.path.display().to_string(),
            source: std::io::Error::other("the audit writer failed"),
        })
    }

    fn failed(&self, message: String) -> AuditError {
        AuditError::Io {
            path: self.path.display().to_string(),
            source: std::io::Error::other(message),
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
        let now = SystemTime::now();
        let mut s = self.state()?;
        if let Some(e) = s.error.take() {
            return Err(self.failed(e));
        }
        s.queue.push((now, item));
        s.appended += 1;
        if !s.busy {
            s.busy = true;
            self.shared.wake.notify_one();
        }
        Ok(())
    }

    /// Wait until every record appended so far is written and synced.
    pub fn flush(&self) -> Result<(), AuditError> {
        let mut s = self.state()?;
        let target = s.appended;
        while s.durable < target && s.error.is_none() {
            s = self
                .shared
                .written
                .wait(s)
                .map_err(|_| self.failed("the audit writer failed".into()))?;
        }
        match s.error.take() {
            Some(e) => Err(self.failed(e)),
            None => Ok(()),
        }
    }
}

impl AuditLog {
    /// Append the record of `result` (see [`CallAudit::of`]), keeping
    /// every value of `secrets` out of it.
    pub fn record_call(
        &self,
        result: &CallResult,
        input: &str,
        session_id: Option<&str>,
        secrets: &[String],
    ) -> Result<(), AuditError> {
        self.record_call_from(result, input, session_id, None, secrets)
    }

    /// [`record_call`](Self::record_call) for a call `caller` asked for
    /// (e.g. `mcp:claude-code/1.2.0`).
    pub fn record_call_from(
        &self,
        result: &CallResult,
        input: &str,
        session_id: Option<&str>,
        caller: Option<&str>,
        secrets: &[String],
    ) -> Result<(), AuditError> {
        let (result, output_bytes) = audit_copy(result);
        self.queue(Queued::Call(Box::new(PendingCall {
            result,
            output_bytes,
            input: input.to_string(),
            session_id: session_id.map(str::to_string),
            caller: caller.map(str::to_string),
            secrets: secrets.to_vec(),
        })))
    }
}

impl Drop for AuditLog {
    fn drop(&mut self) {
        if let Ok(mut s) = self.shared.state.lock() {
            s.closed = true;
            self.shared.wake.notify_one();
        }
        if let Some(t) = self.writer.take() {
            // The writer drains the queue before it ends.
            let _ = t.join();
        }
    }
}

fn writer_loop(mut file: File, path: &str, shared: &Shared) {
    let mut head: Option<Head> = None;
    let Ok(mut s) = shared.state.lock() else {
        return;
    };
    loop {
        while s.queue.is_empty() && !s.closed {
            s.busy = false;
            s = match shared.wake.wait(s) {
                Ok(s) => s,
                Err(_) => return,
            };
        }
        if s.queue.is_empty() {
            return;
        }
        s.busy = true;
        let batch = std::mem::take(&mut s.queue);
        let upto = s.appended;
        drop(s);
        let result = write_batch(&mut file, &mut head, batch);
        s = match shared.state.lock() {
            Ok(s) => s,
            Err(_) => return,
        };
        s.durable = upto;
        if let Err(e) = result {
            head = None;
            s.error = Some(format!("{path}: {e}"));
        }
        shared.written.notify_all();
    }
}
