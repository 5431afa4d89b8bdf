//! `warden audit show | verify | caps`.
//!
//! A record holds what plugins and models sent (tool names, call ids,
//! versions): each is shown as one line, inert for a terminal.

use std::time::SystemTime;

use serde_json::json;

use super::{AuditCommand, Exit, fail};
use crate::audit::{
    Anchor, AnchorCheck, AuditEvent, AuditRecord, anchor_path, log_path, read_anchor, read_lock,
    verify,
};
use crate::base::terminal_line;
use crate::home::Home;
use crate::plugin::PluginOrigin;

pub fn run(cmd: AuditCommand) -> Exit {
    let json = match &cmd {
        AuditCommand::Show { json, .. }
        | AuditCommand::Verify { json }
        | AuditCommand::Caps { json } => *json,
    };
    let path = match Home::from_env() {
        Ok(home) => log_path(&home),
        Err(e) => return fail(json, Exit::Failure, &e.to_string()),
    };
    // The log and its anchor are read under the log's lock (so no writer
    // moves either meanwhile), which is let go before anything is shown.
    let held = match read_lock(&path) {
        Ok(held) => held,
        Err(e) => {
            let msg = format!("cannot read {}: {e}", path.display());
            return fail(json, Exit::Failure, &msg);
        }
    };
    let read = std::fs::read(&path);
    let anchor = read_anchor(&anchor_path(&path));
    drop(held);
    let log = match read {
        Ok(b) => Some(b),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => None,
        Err(e) => {
            return fail(
                json,
                Exit::Failure,
                &format!("cannot read {}: {e}", path.display()),
            );
        }
    };
    let bytes = log.as_deref().unwrap_or_default();
    match cmd {
        AuditCommand::Verify { json } => verify_cmd(log.as_deref(), anchor, &path, json),
        AuditCommand::Show {
            session,
            tool,
            since,
            json,
        } => show(
            &records(bytes),
            session.as_deref(),
            tool.as_deref(),
            since,
            json,
        ),
        AuditCommand::Caps { json } => {
            let catalog = Home::from_env()
                .ok()
                .and_then(|h| crate::plugin::Catalog::open(&h).ok());
            super::audit_caps::caps(&records(bytes), catalog.as_ref(), json)
        }
    }
}

/// The records that parse, in order (verification is `verify`'s job).
pub(super) fn records(bytes: &[u8]) -> Vec<AuditRecord> {
    bytes
        .split(|&b| b == b'\n')
        .filter_map(|l| serde_json::from_slice(l).ok())
        .collect()
}

fn verify_cmd(
    log: Option<&[u8]>,
    anchor: std::io::Result<Option<Anchor>>,
    path: &std::path::Path,
    json: bool,
) -> Exit {
    let anchor_path = anchor_path(path);
    let anchor = match anchor {
        Ok(a) => a,
        Err(e) => {
            let msg = format!(
                "the anchor {} cannot be read ({e}): the log's end cannot be checked",
                anchor_path.display()
            );
            return fail(json, Exit::ToolError, &msg);
        }
    };
    let v = verify(log, anchor.as_ref());
    if json {
        outln!(
            "{}",
            json!({ "log": path.display().to_string(), "verification": v })
        );
    } else {
        match &v.broken {
            None if log.is_none() => outln!("{}: no log", path.display()),
            None => outln!(
                "{}: {} records, chain intact; head {}",
                path.display(),
                v.valid,
                v.head
            ),
            Some(b) => outln!(
                "{}: chain broken at line {}{}: {}; the {} records before it check out",
                path.display(),
                b.line,
                b.seq.map(|s| format!(" (record {s})")).unwrap_or_default(),
                terminal_line(&b.reason),
                v.valid
            ),
        }
        if v.torn_tail {
            outln!(
                "the last line is incomplete (a crash while writing); the next record replaces it"
            );
        }
        if let Some(line) = anchor_line(&v.anchor, &anchor_path) {
            outln!("{line}");
        }
    }
    if v.intact() {
        Exit::Success
    } else {
        Exit::ToolError
    }
}

/// What a human is told about the anchor, when there is something to say.
fn anchor_line(check: &AnchorCheck, anchor: &std::path::Path) -> Option<String> {
    let anchor = anchor.display();
    match check {
        AnchorCheck::Matches { .. } | AnchorCheck::Unchecked => None,
        AnchorCheck::Missing => Some(format!(
            "no anchor ({anchor}): records removed from the end could not be detected"
        )),
        AnchorCheck::Behind { anchored, records } => Some(format!(
            "the anchor names record {anchored} of {records}: the writer stopped before moving it (records after it are checked by the chain only)"
        )),
        AnchorCheck::Truncated { anchored, records } => Some(format!(
            "truncated: the log ends after {records} records, but its anchor ({anchor}) says {anchored}: the last {} were removed",
            anchored - records
        )),
        AnchorCheck::Rewritten { line } => Some(format!(
            "rewritten: line {line} is not the record the anchor ({anchor}) names: it was changed, or the log was rewritten from some record before it"
        )),
        AnchorCheck::LogMissing { anchored } => Some(format!(
            "the log is missing, but its anchor ({anchor}) says it held {anchored} records: it was deleted"
        )),
    }
}

fn show(
    records: &[AuditRecord],
    session: Option<&str>,
    tool: Option<&str>,
    since: Option<SystemTime>,
    json: bool,
) -> Exit {
    let selected = records.iter().filter(|r| {
        let when = humantime::parse_rfc3339_weak(&r.time).ok();
        let recent = match (since, when) {
            (Some(s), Some(w)) => w >= s,
            (Some(_), None) => false,
            (None, _) => true,
        };
        let (s, t) = match &r.event {
            AuditEvent::ToolCall(c) => (c.session_id.as_deref(), Some(c.tool.as_str())),
            AuditEvent::OverlayApplied { session_id, .. }
            | AuditEvent::OverlayDiscarded { session_id, .. } => (session_id.as_deref(), None),
            AuditEvent::PluginInstalled { .. }
            | AuditEvent::PluginRemoved { .. }
            | AuditEvent::OverlayCreated { .. } => (None, None),
        };
        recent
            && session.is_none_or(|want| s == Some(want))
            && tool.is_none_or(|want| t == Some(want))
    });
    for r in selected {
        if json {
            if let Ok(line) = serde_json::to_string(r) {
                outln!("{line}");
            }
            continue;
        }
        let what = match &r.event {
            AuditEvent::PluginInstalled {
                name,
                version,
                sha256,
                replaced_sha256,
                replaced_version,
                approved_again,
                changes,
                confirmed_by,
                ..
            } => {
                let what = match (replaced_sha256, approved_again) {
                    (Some(old), true) => format!(
                        "approve {name} {version} sha256 {} (was {})",
                        short(sha256),
                        short(old)
                    ),
                    (Some(old), false) => format!(
                        "upgrade {name} {} → {version} sha256 {} (was {})",
                        replaced_version.as_deref().unwrap_or("?"),
                        short(sha256),
                        short(old)
                    ),
                    (None, _) => format!("install {name} {version} sha256 {}", short(sha256)),
                };
                let changed: Vec<String> = changes
                    .iter()
                    .map(|c| {
                        let mark = if c.grows { '+' } else { '-' };
                        format!("{mark}{} {} → {}", c.capability, c.from, c.to)
                    })
                    .collect();
                let confirmed = confirmed_by
                    .as_deref()
                    .map(|b| format!(" confirmed by {b}"))
                    .unwrap_or_default();
                if changed.is_empty() {
                    what
                } else {
                    format!("{what}: {}{confirmed}", changed.join(", "))
                }
            }
            AuditEvent::PluginRemoved { name, sha256, .. } => {
                format!("remove {name} sha256 {}", short(sha256))
            }
            AuditEvent::OverlayCreated {
                overlay, workspace, ..
            } => format!("overlay {overlay} created over {workspace}"),
            AuditEvent::OverlayApplied {
                overlay,
                files,
                forced,
                ..
            } => {
                let forced = if *forced { " (forced)" } else { "" };
                format!("overlay {overlay} applied: {} files{forced}", files.len())
            }
            AuditEvent::OverlayDiscarded {
                overlay,
                changes,
                by,
                ..
            } => format!("overlay {overlay} discarded by {by}: {changes} changes"),
            AuditEvent::ToolCall(c) => {
                let by = c
                    .decision
                    .as_ref()
                    .map(|d| {
                        format!(
                            " [{} by {}]",
                            d["verdict"].as_str().unwrap_or("?"),
                            by(&d["by"])
                        )
                    })
                    .unwrap_or_default();
                let origin = match &c.origin {
                    Some(PluginOrigin::Uninstalled { path, sha256 }) => {
                        format!(" from uninstalled {path} sha256 {}", short(sha256))
                    }
                    None => String::new(),
                };
                format!(
                    "call {}{origin} {}{by} → {} ({} ms, {} bytes){}{}",
                    c.tool,
                    c.call_id,
                    c.outcome,
                    c.duration_ms,
                    c.output_bytes,
                    c.session_id
                        .as_deref()
                        .map(|s| format!(" session {s}"))
                        .unwrap_or_default(),
                    c.caller
                        .as_deref()
                        .map(|s| format!(" from {}", terminal_line(s)))
                        .unwrap_or_default()
                )
            }
        };
        outln!(
            "{:>6}  {}  {}",
            r.seq,
            terminal_line(&r.time),
            terminal_line(&what)
        );
    }
    Exit::Success
}

fn short(sha: &str) -> &str {
    sha.get(..12).unwrap_or(sha)
}

fn by(v: &serde_json::Value) -> String {
    if let Some(rule) = v.get("rule") {
        return format!("rule {}", rule["name"].as_str().unwrap_or("?"));
    }
    match v.get("mode").and_then(|m| m.as_str()) {
        Some(m) => format!("{m} mode"),
        None => "?".into(),
    }
}
