//! Audit: an append-only, hash-chained record of every plugin change and
//! every tool call, an anchor holding where it ends, and the checks.
//!
//! Invariant: `warden audit verify` reports a record edited, deleted,
//! inserted or moved, records cut from the end and a deleted log — unless
//! the anchor was rewritten (or deleted) to match, which a hash chain
//! without a secret cannot tell (see `docs/audit.md`); no record holds a
//! secret this process resolved (`base::secrets`).

mod anchor;
mod call;
mod log;
mod record;
mod verify;
mod writer;

pub use anchor::{ANCHOR_BYTES, Anchor, anchor_path, read_anchor, read_lock};
pub use log::{AuditError, AuditLog, RECORD_ROOM};
pub use record::{
    AppliedFile, AuditEvent, AuditRecord, CallAudit, ExercisedAudit, GENESIS, redact,
};
pub use verify::{AnchorCheck, Broken, Verification, verify};

use crate::home::Home;

/// Where the audit log of `home` lives.
pub fn log_path(home: &Home) -> std::path::PathBuf {
    home.root().join("audit").join("audit.jsonl")
}

#[cfg(test)]
mod tests;
