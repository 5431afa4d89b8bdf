//! `warden audit show | verify | caps`.

use std::time::SystemTime;

use serde_json::json;

use super::{AuditCommand, Exit, fail};
use crate::audit::{AuditEvent, AuditRecord, log_path, verify};
use crate::home::Home;

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
    let bytes = match std::fs::read(&path) {
        Ok(b) => b,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Vec::new(),
        Err(e) => {
            return fail(
                json,
                Exit::Failure,
                &format!("cannot read {}: {e}", path.display()),
            );
        }
    };
    match cmd {
        AuditCommand::Verify { json } => verify_cmd(&bytes, &path, json),
        AuditCommand::Show {
            session,
            tool,
            since,
            json,
        } => {
            let since = match since.as_deref().map(humantime::parse_rfc3339_weak) {
                None => None,
                Some(Ok(t)) => Some(t),
                Some(Err(e)) => {
                    return fail(
                        json,
                        Exit::Usage,
                        &format!("--since: {e} (use e.g. 2026-11-22T10:00:00)"),
                    );
                }
            };
            show(
                &records(&bytes),
                session.as_deref(),
                tool.as_deref(),
                since,
                json,
            )
        }
        AuditCommand::Caps { json } => {
            let catalog = Home::from_env()
                .ok()
                .and_then(|h| crate::plugin::Catalog::open(&h).ok());
            super::audit_caps::caps(&records(&bytes), catalog.as_ref(), json)
        }
    }
}

/// The records that parse, in order (verification is `verify`'s job).
fn records(bytes: &[u8]) -> Vec<AuditRecord> {
    bytes
        .split(|&b| b == b'\n')
        .filter_map(|l| serde_json::from_slice(l).ok())
        .collect()
}

fn verify_cmd(bytes: &[u8], path: &std::path::Path, json: bool) -> Exit {
    let v = verify(bytes);
    if json {
        println!(
            "{}",
            json!({ "log": path.display().to_string(), "verification": v })
        );
    } else {
        match &v.broken {
            None => println!(
                "{}: {} records, chain intact; head {}",
                path.display(),
                v.valid,
                v.head
            ),
            Some(b) => println!(
                "{}: chain broken at line {}{}: {}; the {} records before it check out",
                path.display(),
                b.line,
                b.seq.map(|s| format!(" (record {s})")).unwrap_or_default(),
                b.reason,
                v.valid
            ),
        }
        if v.torn_tail {
            println!(
                "the last line is incomplete (a crash while writing); the next record replaces it"
            );
        }
    }
    if v.broken.is_some() {
        Exit::ToolError
    } else {
        Exit::Success
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
            AuditEvent::PluginInstalled { .. } | AuditEvent::PluginRemoved { .. } => (None, None),
        };
        recent
            && session.is_none_or(|want| s == Some(want))
            && tool.is_none_or(|want| t == Some(want))
    });
    for r in selected {
        if json {
            if let Ok(line) = serde_json::to_string(r) {
                println!("{line}");
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
                format!(
                    "call {} {}{by} → {} ({} ms, {} bytes){}{}",
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
                        .map(|s| format!(" from {}", crate::approval::printable(s)))
                        .unwrap_or_default()
                )
            }
        };
        println!("{:>6}  {}  {what}", r.seq, r.time);
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
