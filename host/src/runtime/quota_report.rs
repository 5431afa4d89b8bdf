//! What a call's outcome says when its write quota stopped a write.
//!
//! Invariant: a call one of whose writes the quota cut or refused ends as
//! `limit-exceeded`, naming the quota and how to raise it, whatever the
//! plugin made of the `quota` error it got (gave up, crashed, or carried
//! on and reported success with some writes missing); the plugin's own
//! words follow. Only a timeout, a memory limit or a host failure keeps its
//! kind, the quota noted beside it; a cancelled call stays cancelled.

use crate::capability::WriteQuota;
use crate::protocol::{ErrorKind, ToolError, ToolOutcome};

/// `outcome`, saying so if `quota` stopped a write.
pub(super) fn with_write_quota(outcome: ToolOutcome, quota: &WriteQuota) -> ToolOutcome {
    if !quota.exceeded() {
        return outcome;
    }
    let note = format!(
        "the plugin tried to write more than the call's write quota of {} bytes \
         (limit write-bytes), and the host refused what did not fit; write less, or \
         raise the quota with `--limit write-bytes=N` (the policy's `write_bytes` \
         is the most a call may ask for)",
        quota.cap()
    );
    let exceeded = |said: &str, words: &str| {
        ToolOutcome::Error(ToolError::new(
            ErrorKind::LimitExceeded,
            format!("{note} [{said}: {words}]"),
        ))
    };
    match outcome {
        ToolOutcome::Success(out) => exceeded("the plugin returned", &out.text),
        ToolOutcome::Error(e) => match e.kind {
            ErrorKind::Timeout | ErrorKind::MemoryLimit | ErrorKind::Host => ToolOutcome::Error(
                ToolError::new(e.kind, format!("{} [host: {note}]", e.message)),
            ),
            ErrorKind::InvalidInput
            | ErrorKind::NotFound
            | ErrorKind::PermissionDenied
            | ErrorKind::Io
            | ErrorKind::Internal
            | ErrorKind::Unsupported
            | ErrorKind::LimitExceeded
            | ErrorKind::Crashed
            | ErrorKind::UnknownTool => exceeded("plugin", &e.message),
        },
        other @ (ToolOutcome::Cancelled | ToolOutcome::Denied { .. }) => other,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::protocol::ToolOutput;

    fn used_up() -> WriteQuota {
        let q = WriteQuota::new(8);
        let _ = q.take_up_to(9);
        q
    }

    #[test]
    fn a_call_the_quota_stopped_says_so_and_how_to_raise_it() {
        let ok = ToolOutcome::Success(ToolOutput {
            text: "wrote 8 of 9 bytes".into(),
            structured: None,
            truncated: false,
        });
        assert_eq!(with_write_quota(ok.clone(), &WriteQuota::new(8)), ok);
        let ToolOutcome::Error(e) = with_write_quota(ok, &used_up()) else {
            panic!("a success the quota cut is an error")
        };
        assert_eq!(e.kind, ErrorKind::LimitExceeded);
        assert!(
            e.message.contains("write quota of 8 bytes"),
            "{}",
            e.message
        );
        assert!(e.message.contains("--limit write-bytes=N"), "{}", e.message);
        assert!(
            e.message
                .ends_with("[the plugin returned: wrote 8 of 9 bytes]")
        );
        let io = ToolOutcome::Error(ToolError::new(ErrorKind::Io, "disk quota exceeded"));
        let ToolOutcome::Error(e) = with_write_quota(io, &used_up()) else {
            panic!("still an error")
        };
        assert_eq!(e.kind, ErrorKind::LimitExceeded);
        assert!(e.message.ends_with("[plugin: disk quota exceeded]"));
        let late = ToolOutcome::Error(ToolError::new(ErrorKind::Timeout, "ran past"));
        let ToolOutcome::Error(e) = with_write_quota(late, &used_up()) else {
            panic!("still an error")
        };
        assert_eq!(e.kind, ErrorKind::Timeout);
        assert!(e.message.starts_with("ran past [host: the plugin tried"));
        let cancelled = with_write_quota(ToolOutcome::Cancelled, &used_up());
        assert_eq!(cancelled, ToolOutcome::Cancelled);
    }
}
