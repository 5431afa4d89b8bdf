//! `warden policy suggest`: read a session's (or a time range's) calls
//! from the audit log, as `warden audit` reads it, and write the policy
//! [`crate::policy::suggest`] generates from them.
//!
//! Invariant: nothing is written unless the generated policy parsed,
//! passed its own tests and the installed-tool checks, and an existing
//! file is replaced only with `--force` (atomically).

use std::path::{Path, PathBuf};
use std::time::SystemTime;

use serde_json::{Value, json};

use super::audit_caps::destination;
use super::audit_cmd::records;
use super::{Exit, fail, open_catalog};
use crate::agent::SessionStore;
use crate::audit::{AuditEvent, CallAudit, log_path};
use crate::base::{Rename, write_atomic};
use crate::home::Home;
use crate::plugin::Catalog;
use crate::policy::KnownTool;
use crate::policy::suggest::{RecordedCall, SuggestRequest, suggest};

/// Which calls to learn from.
pub enum Source {
    Session(String),
    Last,
    Since(String),
}

/// What `warden policy suggest` was asked.
pub struct SuggestArgs {
    pub source: Source,
    pub output: Option<PathBuf>,
    pub force: bool,
    pub name: Option<String>,
    pub json: bool,
    /// The installed tools, as `warden policy check` lints against them.
    pub known_tools: for<'a> fn(&'a Catalog) -> Vec<KnownTool<'a>>,
}

pub fn run(args: SuggestArgs) -> Exit {
    let json = args.json;
    match build(args) {
        Ok(code) => code,
        Err((code, message)) => fail(json, code, &message),
    }
}

fn build(args: SuggestArgs) -> Result<Exit, (Exit, String)> {
    let failure = |e: String| (Exit::Failure, e);
    let home = Home::from_env().map_err(|e| failure(e.to_string()))?;
    if let Some(out) = &args.output
        && out.exists()
        && !args.force
    {
        return Err((
            Exit::Usage,
            format!(
                "{} exists; pass --force to replace it, or choose another --output",
                out.display()
            ),
        ));
    }
    let (label, session, since) = match &args.source {
        Source::Session(id) => (format!("session {id}"), Some(id.clone()), None),
        Source::Last => {
            let id = SessionStore::new(&home)
                .last()
                .map_err(|e| failure(e.to_string()))?;
            (format!("session {id}"), Some(id), None)
        }
        Source::Since(text) => {
            let at = since(text).map_err(|e| (Exit::Usage, e))?;
            let shown = humantime::format_rfc3339_seconds(at);
            (format!("the audit log since {shown}"), None, Some(at))
        }
    };
    let path = log_path(&home);
    let bytes = match std::fs::read(&path) {
        Ok(b) => b,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Vec::new(),
        Err(e) => return Err(failure(format!("cannot read {}: {e}", path.display()))),
    };
    let calls: Vec<RecordedCall> = records(&bytes)
        .iter()
        .filter(|r| {
            since.is_none_or(|s| humantime::parse_rfc3339_weak(&r.time).is_ok_and(|w| w >= s))
        })
        .filter_map(|r| match &r.event {
            AuditEvent::ToolCall(c) => Some(c),
            AuditEvent::PluginInstalled { .. }
            | AuditEvent::PluginRemoved { .. }
            | AuditEvent::OverlayCreated { .. }
            | AuditEvent::OverlayApplied { .. }
            | AuditEvent::OverlayDiscarded { .. } => None,
        })
        .filter(|c| session.is_none() || c.session_id == session)
        .map(|c| recorded(c))
        .collect();
    let catalog = open_catalog(args.json).map_err(|code| (code, String::new()))?;
    let called: std::collections::BTreeSet<&str> = calls.iter().map(|c| c.tool.as_str()).collect();
    let mut unused_tools: Vec<String> = catalog
        .tools()
        .map(|(_, t)| t.name.to_string())
        .filter(|t| !called.contains(t.as_str()))
        .collect();
    unused_tools.sort();
    let name = args.name.clone().unwrap_or_else(|| match &session {
        Some(id) => format!("suggested-{id}"),
        None => "suggested".to_string(),
    });
    let req = SuggestRequest {
        name,
        source: label,
        generated_at: humantime::format_rfc3339_seconds(SystemTime::now()).to_string(),
        version: env!("CARGO_PKG_VERSION").to_string(),
        calls,
        unused_tools,
    };
    let lookup = |tool: &str| {
        catalog
            .find_tool(tool)
            .map(|(p, t)| (p.name().to_string(), t.annotations))
    };
    let suggestion = suggest(&req, &lookup).map_err(|e| failure(e.to_string()))?;
    let policy = crate::policy::Policy::parse(&suggestion.toml, "suggested policy")
        .map_err(|e| failure(e.to_string()))?;
    let lints = policy.lint(&(args.known_tools)(&catalog));
    if let Some(lint) = lints.first() {
        return Err(failure(format!(
            "the suggested policy fails `warden policy check` ({lint}); this is a bug in `warden policy suggest`, please report it"
        )));
    }
    if let Some(out) = &args.output {
        write(out, &suggestion.toml, args.force).map_err(|e| (Exit::Usage, e))?;
    }
    if args.json {
        let mut v = json!({ "policy": suggestion.toml, "summary": suggestion.summary });
        if let Some(out) = &args.output {
            v["written"] = Value::String(out.display().to_string());
        }
        outln!("{v}");
    } else if let Some(out) = &args.output {
        let s = &suggestion.summary;
        outln!(
            "wrote {} ({} tools, {} tests allow the run's calls, {} deny calls just outside; {} calls not allowed)",
            out.display(),
            s.tools.len(),
            s.allow_tests,
            s.deny_tests,
            s.not_allowed.len()
        );
    } else {
        out!("{}", suggestion.toml);
    }
    Ok(Exit::Success)
}

/// One audit record as the generator needs it.
fn recorded(c: &CallAudit) -> RecordedCall {
    let verdict = c.decision.as_ref().and_then(|d| d["verdict"].as_str());
    let reason = c.decision.as_ref().and_then(|d| d["reason"].as_str());
    let refused = match (c.outcome.as_str(), verdict, c.approved_by.as_deref()) {
        ("denied", _, _) | (_, Some("deny"), _) => Some(format!(
            "denied{}",
            reason.map(|r| format!(": {r}")).unwrap_or_default()
        )),
        (_, _, None) => Some(format!(
            "stopped before the policy decided ({})",
            c.error_kind.as_deref().unwrap_or(c.outcome.as_str())
        )),
        (_, _, Some(by @ ("denied by the user" | "unanswered"))) => Some(by.to_string()),
        _ => None,
    };
    let grant = c.grant.as_ref();
    let strings = |v: Option<&Value>| -> Vec<String> {
        v.and_then(Value::as_array)
            .into_iter()
            .flatten()
            .filter_map(|s| s.as_str().map(str::to_string))
            .collect()
    };
    let process = grant.map(|g| &g["process"]);
    let ex = c.exercised.as_ref();
    let wrote = ex.is_some_and(|e| e.files.iter().any(|f| f.op.changes()))
        || (c.tool == crate::policy::command::SHELL_TOOL
            && grant.is_some_and(|g| g["filesystem"]["access"] == "read-write"));
    RecordedCall {
        tool: c.tool.clone(),
        plugin: c.plugin.clone(),
        arguments: c.arguments.clone(),
        refused,
        wrote,
        network: ex
            .map(|e| e.network.iter().map(destination).collect())
            .unwrap_or_default(),
        toolchains: strings(process.map(|p| &p["toolchains"])),
        process_env: strings(process.map(|p| &p["env"])),
        duration_ms: c.duration_ms,
        output_bytes: c.output_bytes,
    }
}

/// `--since`: a duration back from now (`2h`, `30min`), or a time as
/// `warden audit show --since` takes it.
fn since(text: &str) -> Result<SystemTime, String> {
    match humantime::parse_duration(text.trim()) {
        Ok(d) => SystemTime::now()
            .checked_sub(d)
            .ok_or_else(|| format!("--since {text} reaches before the epoch")),
        Err(_) => super::since::parse(text).map_err(|e| {
            format!("--since: {e}; or give a duration back from now, e.g. 2h or 30min")
        }),
    }
}

/// Write `text` to `path`: with `force`, atomically over what is there;
/// without, only as a new file (an existing one is never touched).
fn write(path: &Path, text: &str, force: bool) -> Result<(), String> {
    use std::io::Write;
    let cannot = |e: std::io::Error| format!("cannot write {}: {e}", path.display());
    if let Some(dir) = path.parent().filter(|d| !d.as_os_str().is_empty()) {
        std::fs::create_dir_all(dir)
            .map_err(|e| format!("cannot create {}: {e}", dir.display()))?;
    }
    if force {
        return write_atomic(path, text.as_bytes(), 0o644, Rename::Synced).map_err(cannot);
    }
    let mut file = std::fs::OpenOptions::new()
        .write(true)
        .create_new(true)
        .open(path)
        .map_err(|e| match e.kind() {
            std::io::ErrorKind::AlreadyExists => format!(
                "{} exists; pass --force to replace it, or choose another --output",
                path.display()
            ),
            _ => cannot(e),
        })?;
    file.write_all(text.as_bytes())
        .and_then(|()| file.sync_all())
        .map_err(cannot)
}
