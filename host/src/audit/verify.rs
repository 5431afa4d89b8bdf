//! Checking the chain of an audit log.

use crate::base::sha256_hex;

use super::record::{AuditRecord, GENESIS};

/// The result of checking a log.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct Verification {
    /// Records that check out, from the start.
    pub valid: u64,
    /// The first record that does not, and why.
    pub broken: Option<Broken>,
    /// The log ends in a line torn by a crash (ignored; the next writer cuts it).
    pub torn_tail: bool,
    /// sha256 of the last valid line: note it elsewhere to detect a rewrite
    /// of the whole chain from some point on.
    pub head: String,
}

/// Where the chain breaks.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct Broken {
    /// Line number in the file, from 1.
    pub line: usize,
    /// The `seq` the record claims, if it parses.
    pub seq: Option<u64>,
    pub reason: String,
}

/// Check every line of `text` against the one before.
pub fn verify(text: &[u8]) -> Verification {
    let mut prev_hash = GENESIS.to_string();
    let mut expected_seq = 1u64;
    let mut valid = 0;
    let torn_tail = !text.is_empty() && !text.ends_with(b"\n");
    let complete = match text.iter().rposition(|&b| b == b'\n') {
        Some(i) => &text[..i],
        None => &text[..0],
    };
    let mut broken = None;
    if !complete.is_empty() {
        for (i, line) in complete.split(|&b| b == b'\n').enumerate() {
            let record: AuditRecord = match serde_json::from_slice(line) {
                Ok(r) => r,
                Err(e) => {
                    broken = Some(Broken {
                        line: i + 1,
                        seq: None,
                        reason: format!("not a record: {e}"),
                    });
                    break;
                }
            };
            let reason = if record.seq != expected_seq {
                Some(format!(
                    "sequence {} where {expected_seq} was expected: a record was deleted, inserted or moved",
                    record.seq
                ))
            } else if record.prev != prev_hash {
                Some(
                    "its `prev` does not match the hash of the line before: that line was changed, or this one moved"
                        .to_string(),
                )
            } else {
                None
            };
            if let Some(reason) = reason {
                broken = Some(Broken {
                    line: i + 1,
                    seq: Some(record.seq),
                    reason,
                });
                break;
            }
            prev_hash = sha256_hex(line);
            expected_seq += 1;
            valid += 1;
        }
    }
    Verification {
        valid,
        broken,
        torn_tail,
        head: prev_hash,
    }
}
