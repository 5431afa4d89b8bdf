//! Committing one batch of records: under an exclusive lock on the log,
//! chained to its last complete line (cutting off a torn one), redacted,
//! written in one `write`, synced, and then the anchor moved to the new
//! last record.

use std::fs::File;
use std::io::{Read, Seek, SeekFrom, Write};
use std::path::PathBuf;
use std::time::SystemTime;

use crate::base::durable::Commit;
use crate::base::{secrets, sha256_hex};

use super::anchor::{Anchor, read_anchor, write_anchor};
use super::call::Queued;
use super::record::{AuditRecord, GENESIS};

/// Where the chain stands after the last line this process wrote.
#[derive(Debug, Clone)]
pub(super) struct Head {
    /// File length after that line.
    len: u64,
    seq: u64,
    hash: String,
}

/// The log file and where this process left its chain.
pub(super) struct LogCommit {
    pub(super) file: File,
    pub(super) anchor: PathBuf,
    /// Used only if the file still ends there (no other process wrote
    /// since).
    pub(super) head: Option<Head>,
}

impl Commit for LogCommit {
    type Item = (SystemTime, Queued);

    fn commit(&mut self, batch: Vec<(SystemTime, Queued)>) -> std::io::Result<()> {
        self.file.lock()?;
        let committed = self.commit_locked(batch);
        // Unlocking also happens when the file closes.
        let _ = self.file.unlock();
        if committed.is_err() {
            self.head = None;
        }
        committed
    }
}

impl LogCommit {
    /// Find the log's head (cutting a torn tail) and check it against the
    /// anchor, under the lock: what opening the log checks.
    pub(super) fn check(&mut self) -> std::io::Result<()> {
        self.file.lock()?;
        let head = self.file.metadata().and_then(|m| self.fresh_head(m.len()));
        let _ = self.file.unlock();
        self.head = Some(head?);
        Ok(())
    }

    fn commit_locked(&mut self, batch: Vec<(SystemTime, Queued)>) -> std::io::Result<()> {
        let len = self.file.metadata()?.len();
        let mut head = match self.head.take() {
            Some(h) if h.len == len => h,
            Some(_) | None => self.fresh_head(len)?,
        };
        let mut buf = Vec::with_capacity(batch.len() * 1024);
        for (time, queued) in batch {
            let record = AuditRecord {
                seq: head.seq + 1,
                time: humantime::format_rfc3339_micros(time).to_string(),
                prev: std::mem::take(&mut head.hash),
                event: queued.into_event(),
            };
            let start = buf.len();
            serde_json::to_writer(&mut buf, &record).map_err(std::io::Error::other)?;
            if let Some(clean) = secrets::redact_json(&buf[start..]) {
                buf.truncate(start);
                buf.extend_from_slice(&clean);
            }
            head.hash = sha256_hex(&buf[start..]);
            head.seq = record.seq;
            buf.push(b'\n');
        }
        if let Err(e) = self.file.write_all(&buf) {
            // Leave no partial line behind.
            let _ = self.file.set_len(len);
            return Err(e);
        }
        head.len += buf.len() as u64;
        self.file.sync_data()?;
        write_anchor(
            &self.anchor,
            &Anchor {
                records: head.seq,
                head: head.hash.clone(),
            },
        )
        .map_err(|e| {
            let what = format!(
                "the records were written, but their anchor {} could not be moved \
                 (until a later write moves it, `warden audit verify` cannot check the \
                 log's end)",
                self.anchor.display()
            );
            annotate(e, &what)
        })?;
        self.head = Some(head);
        Ok(())
    }

    /// The head read from the file, refused if the anchor names a record
    /// the log no longer ends with (it was cut short or rewritten: going on
    /// would hide that).
    fn fresh_head(&mut self, len: u64) -> std::io::Result<Head> {
        let head = read_head(&mut self.file, len)?;
        let anchor = read_anchor(&self.anchor)
            .map_err(|e| annotate(e, &format!("anchor {}", self.anchor.display())))?;
        let diverged = match &anchor {
            Some(a) if a.records > head.seq => Some(format!(
                "it holds {} records but its anchor says {}",
                head.seq, a.records
            )),
            Some(a) if a.records == head.seq && a.head != head.hash => Some(format!(
                "its last record ({}) is not the one its anchor names",
                head.seq
            )),
            Some(_) | None => None,
        };
        match diverged {
            Some(why) => Err(std::io::Error::other(format!(
                "{why}: records were removed or rewritten; see `warden audit verify`, \
                 and move the log and {} aside to start a new one",
                self.anchor.display()
            ))),
            None => Ok(head),
        }
    }
}

fn annotate(e: std::io::Error, what: &str) -> std::io::Error {
    std::io::Error::new(e.kind(), format!("{what}: {e}"))
}

/// How much of the log's end is read first to find its last record: a
/// call's record is usually under 2 KiB, and every page read is a page
/// fault on a cold call's critical path (it waits for its record).
const FIRST_WINDOW: u64 = 8 * 1024;

/// Find the last complete line, cutting off a torn one.
fn read_head(file: &mut File, len: u64) -> std::io::Result<Head> {
    if len == 0 {
        return Ok(Head {
            len: 0,
            seq: 0,
            hash: GENESIS.to_string(),
        });
    }
    // Read backwards in growing windows until a whole last line is in view.
    let mut window = FIRST_WINDOW;
    loop {
        let start = len.saturating_sub(window);
        file.seek(SeekFrom::Start(start))?;
        let mut buf = Vec::with_capacity((len - start) as usize);
        Read::by_ref(file).take(len - start).read_to_end(&mut buf)?;
        let complete = buf.iter().rposition(|&b| b == b'\n').map(|i| i + 1);
        let Some(complete) = complete else {
            if start == 0 {
                // Nothing but a torn first line.
                file.set_len(0)?;
                return read_head(file, 0);
            }
            window *= 4;
            continue;
        };
        if complete < buf.len() {
            file.set_len(start + complete as u64)?;
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
        let record: AuditRecord = serde_json::from_slice(line).map_err(|e| {
            std::io::Error::other(format!(
                "the last record cannot be read ({e}); run `warden audit verify`"
            ))
        })?;
        return Ok(Head {
            len: start + complete as u64,
            seq: record.seq,
            hash: sha256_hex(line),
        });
    }
}
