//! Audit: an append-only, hash-chained record of every plugin change and
//! every tool call, and the checks that prove it was not altered.
//!
//! Invariant: a record, once written, can be neither edited, deleted nor
//! moved without `warden audit verify` naming the first broken record; no
//! record holds a secret the host knows (API keys, credential values).

mod call;
mod log;
mod record;
mod verify;
mod writer;

pub use call::host_secrets;
pub use log::{AuditError, AuditLog};
pub use record::{AuditEvent, AuditRecord, CallAudit, ExercisedAudit, GENESIS, redact};
pub use verify::{Broken, Verification, verify};

use crate::home::Home;

/// Where the audit log of `home` lives.
pub fn log_path(home: &Home) -> std::path::PathBuf {
    home.root().join("audit").join("audit.jsonl")
}

#[cfg(test)]
mod tests;
