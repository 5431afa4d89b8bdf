//! Writing one batch of records to the log file: under an exclusive lock,
//! chained to the file's last complete line (cutting off a torn one), in
//! one `write`, then synced.

use std::fs::File;
use std::io::{Read, Seek, SeekFrom, Write};
use std::time::SystemTime;

use crate::base::durable::Commit;
use crate::base::sha256_hex;

use super::call::Queued;
use super::record::{AuditRecord, GENESIS};

/// Records waiting to be written, with the time each was appended.
type Batch = Vec<(SystemTime, Queued)>;

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
    pub(super) head: Option<Head>,
}

impl Commit for LogCommit {
    type Item = (SystemTime, Queued);

    fn commit(&mut self, batch: Batch) -> std::io::Result<()> {
        let written = write_batch(&mut self.file, &mut self.head, batch);
        if written.is_err() {
            self.head = None;
        }
        written.map_err(std::io::Error::other)
    }
}

/// Write `batch` after the file's last record. `cached` is where this
/// process left the chain; it is used only if the file still ends there
/// (no other process wrote since), and updated.
fn write_batch(file: &mut File, cached: &mut Option<Head>, batch: Batch) -> Result<(), String> {
    file.lock().map_err(|e| e.to_string())?;
    let written = append_locked(file, cached, batch);
    // Unlocking also happens when the file closes.
    let _ = file.unlock();
    written?;
    file.sync_data().map_err(|e| e.to_string())
}

fn append_locked(file: &mut File, cached: &mut Option<Head>, batch: Batch) -> Result<(), String> {
    let len = file.metadata().map_err(|e| e.to_string())?.len();
    let mut head = match cached.take() {
        Some(h) if h.len == len => h,
        Some(_) | None => read_head(file, len)?,
    };
    let mut buf = Vec::with_capacity(batch.len() * 1024);
    for (time, queued) in batch {
        let event = queued.into_event();
        let record = AuditRecord {
            seq: head.seq + 1,
            time: humantime::format_rfc3339_micros(time).to_string(),
            prev: std::mem::take(&mut head.hash),
            event,
        };
        let start = buf.len();
        serde_json::to_writer(&mut buf, &record).map_err(|e| e.to_string())?;
        head.hash = sha256_hex(&buf[start..]);
        head.seq = record.seq;
        buf.push(b'\n');
    }
    file.write_all(&buf).map_err(|e| e.to_string())?;
    head.len += buf.len() as u64;
    *cached = Some(head);
    Ok(())
}

/// How much of the log's end is read first to find its last record: a
/// call's record is usually under 2 KiB, and every page read is a page
/// fault on a cold call's critical path (it waits for its record).
const FIRST_WINDOW: u64 = 8 * 1024;

/// Find the last complete line, cutting off a torn one.
fn read_head(file: &mut File, len: u64) -> Result<Head, String> {
    let io = |e: std::io::Error| e.to_string();
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
                return read_head(file, 0);
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
        let record: AuditRecord = serde_json::from_slice(line).map_err(|e| {
            format!("the last record cannot be read ({e}); run `warden audit verify`")
        })?;
        return Ok(Head {
            len: start + complete as u64,
            seq: record.seq,
            hash: sha256_hex(line),
        });
    }
}
