//! Checking an audit log: its hash chain line by line, and its end
//! against the anchor (see `docs/audit.md` for what this can and cannot
//! detect).

use serde::Serialize;

use crate::base::sha256_hex;

use super::anchor::Anchor;
use super::record::{AuditRecord, GENESIS};

/// The result of checking a log.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Verification {
    /// Records that check out, from the start.
    pub valid: u64,
    /// The first record that does not, and why.
    pub broken: Option<Broken>,
    /// The log ends in a line torn by a crash (ignored; the next writer cuts it).
    pub torn_tail: bool,
    /// sha256 of the last valid line.
    pub head: String,
    /// How the log's end compares with its anchor.
    pub anchor: AnchorCheck,
}

impl Verification {
    /// Nothing was found wrong: the chain holds and the anchor agrees.
    pub fn intact(&self) -> bool {
        self.broken.is_none() && self.anchor.agrees()
    }
}

/// Where the chain breaks.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Broken {
    /// Line number in the file, from 1.
    pub line: usize,
    /// The `seq` the record claims, if it parses.
    pub seq: Option<u64>,
    pub reason: String,
}

/// The log's end against its anchor.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(tag = "state", rename_all = "snake_case")]
pub enum AnchorCheck {
    /// There is no anchor: a log written before anchors existed, an empty
    /// one, or the anchor was deleted. Nothing can be said about its end.
    Missing,
    /// The anchored record is the log's last, with the anchored hash.
    Matches { records: u64 },
    /// The anchored record is there, and more follow it (the writer stopped
    /// between syncing the log and moving the anchor).
    Behind { anchored: u64, records: u64 },
    /// The log ends before the anchored record: its last records were
    /// removed.
    Truncated { anchored: u64, records: u64 },
    /// The record at the anchored position is not the anchored one: it
    /// was changed, or the log was rewritten from some record before it.
    Rewritten { line: usize },
    /// The anchor names records, and there is no log.
    LogMissing { anchored: u64 },
    /// The chain breaks before the anchored record (see `broken`).
    Unchecked,
}

impl AnchorCheck {
    /// Whether the log's end is what the anchor says (or nothing says).
    pub fn agrees(&self) -> bool {
        match self {
            AnchorCheck::Missing
            | AnchorCheck::Matches { .. }
            | AnchorCheck::Behind { .. }
            | AnchorCheck::Unchecked => true,
            AnchorCheck::Truncated { .. }
            | AnchorCheck::Rewritten { .. }
            | AnchorCheck::LogMissing { .. } => false,
        }
    }
}

/// Check every line of `log` (`None`: there is no log file) against the
/// one before, and its end against `anchor`.
pub fn verify(log: Option<&[u8]>, anchor: Option<&Anchor>) -> Verification {
    let text = log.unwrap_or_default();
    let torn_tail = !text.is_empty() && !text.ends_with(b"\n");
    let complete = match text.iter().rposition(|&b| b == b'\n') {
        Some(i) => &text[..i],
        None => &text[..0],
    };
    let lines: Vec<&[u8]> = match complete.is_empty() {
        true => Vec::new(),
        false => complete.split(|&b| b == b'\n').collect(),
    };
    let (valid, broken, hashes) = check_chain(&lines);
    let anchor = match (log, anchor) {
        (_, None) => AnchorCheck::Missing,
        (None, Some(a)) if a.records > 0 => AnchorCheck::LogMissing {
            anchored: a.records,
        },
        (_, Some(a)) => against(a, lines.len() as u64, valid, &hashes),
    };
    Verification {
        valid,
        broken,
        torn_tail,
        head: hashes
            .last()
            .cloned()
            .unwrap_or_else(|| GENESIS.to_string()),
        anchor,
    }
}

fn against(a: &Anchor, records: u64, valid: u64, hashes: &[String]) -> AnchorCheck {
    if records < a.records {
        return AnchorCheck::Truncated {
            anchored: a.records,
            records,
        };
    }
    if a.records == 0 {
        return AnchorCheck::Matches { records };
    }
    if valid < a.records {
        return AnchorCheck::Unchecked;
    }
    let at = a.records as usize;
    if hashes.get(at - 1) != Some(&a.head) {
        return AnchorCheck::Rewritten { line: at };
    }
    match records > a.records {
        true => AnchorCheck::Behind {
            anchored: a.records,
            records,
        },
        false => AnchorCheck::Matches { records },
    }
}

/// Records valid from the start, the first break, and the hash of each
/// valid line.
fn check_chain(lines: &[&[u8]]) -> (u64, Option<Broken>, Vec<String>) {
    let mut hashes: Vec<String> = Vec::with_capacity(lines.len());
    let mut last_seq = None;
    for (i, line) in lines.iter().enumerate() {
        let record: AuditRecord = match serde_json::from_slice(line) {
            Ok(r) => r,
            Err(e) => {
                let broken = Broken {
                    line: i + 1,
                    seq: None,
                    reason: format!("not a record: {e}"),
                };
                return (hashes.len() as u64, Some(broken), hashes);
            }
        };
        let expected_seq = i as u64 + 1;
        if record.seq != expected_seq {
            let broken = Broken {
                line: i + 1,
                seq: Some(record.seq),
                reason: format!(
                    "sequence {} where {expected_seq} was expected: a record was deleted, inserted or moved",
                    record.seq
                ),
            };
            return (hashes.len() as u64, Some(broken), hashes);
        }
        let prev = hashes.last().map_or(GENESIS, String::as_str);
        if record.prev != prev {
            // The line before no longer hashes to what this one names: it
            // is the one that changed (or this `prev` was).
            let broken = match i {
                0 => Broken {
                    line: 1,
                    seq: Some(record.seq),
                    reason: "its `prev` is not the start of a chain: it was changed".into(),
                },
                _ => Broken {
                    line: i,
                    seq: last_seq,
                    reason: format!(
                        "it was changed: its hash is not the `prev` that line {} names",
                        i + 1
                    ),
                },
            };
            let valid = broken.line as u64 - 1;
            hashes.truncate(valid as usize);
            return (valid, Some(broken), hashes);
        }
        hashes.push(sha256_hex(line));
        last_seq = Some(record.seq);
    }
    (hashes.len() as u64, None, hashes)
}
