//! `warden review`: show, list, apply, discard and clean the overlays
//! `warden run --review` leaves.
//!
//! Nothing is applied or discarded unless its audit record can be
//! written: the log is opened and room reserved first. An apply with a
//! conflict writes nothing (exit 3) unless `--force`.

use std::time::{Duration, SystemTime};

use clap::{Args, Subcommand};
use serde_json::json;

use super::{Exit, fail};
use crate::audit::{AppliedFile, AuditEvent, AuditLog};
use crate::base::terminal_line;
use crate::home::Home;
use crate::overlay::apply::{self, ApplyError};
use crate::overlay::{Changes, Overlay, OverlayError, RunStatus};

/// `warden review`.
#[derive(Debug, Args)]
#[command(args_conflicts_with_subcommands = true)]
pub struct ReviewArgs {
    #[command(subcommand)]
    pub command: Option<ReviewCommand>,
    /// An overlay id or the session id of its run [default: the most recent overlay].
    #[arg(value_name = "ID|SESSION")]
    pub id: Option<String>,
    /// The most recent overlay.
    #[arg(long, conflicts_with = "id")]
    pub last: bool,
    /// One summary line per file (`+12 -3 src/lib.rs`), no diff.
    #[arg(long)]
    pub stat: bool,
    /// One JSON document (see docs/json-schemas/review.schema.json).
    #[arg(long)]
    pub json: bool,
}

#[derive(Debug, Subcommand)]
pub enum ReviewCommand {
    /// Overlays: id, session, state, created, changes, size on disk, workspace.
    List {
        #[arg(long)]
        json: bool,
    },
    /// Copy an overlay's changes into the workspace, all or the PATHs given,
    /// each file atomically; refuses paths changed in the workspace since the run started.
    Apply {
        /// The overlay id or session id (with --last, the first PATH).
        #[arg(value_name = "ID|SESSION")]
        id: Option<String>,
        /// Workspace-relative paths to apply; a directory selects what is under it.
        #[arg(value_name = "PATH")]
        paths: Vec<String>,
        /// The most recent overlay.
        #[arg(long)]
        last: bool,
        /// Overwrite paths changed in the workspace since the run started.
        #[arg(long)]
        force: bool,
    },
    /// Delete an overlay and everything in it, unapplied.
    Discard {
        #[arg(value_name = "ID|SESSION", required_unless_present = "last")]
        id: Option<String>,
        /// The most recent overlay.
        #[arg(long, conflicts_with = "id")]
        last: bool,
    },
    /// Discard finished and interrupted overlays older than DURATION (never a running one).
    Clean {
        /// How old, e.g. 7d, 12h.
        #[arg(long, value_name = "DURATION", value_parser = humantime::parse_duration)]
        older_than: Duration,
    },
}

pub fn run(args: ReviewArgs) -> Exit {
    let json = args.json || matches!(args.command, Some(ReviewCommand::List { json: true }));
    let home = match Home::from_env() {
        Ok(h) => h,
        Err(e) => return fail(json, Exit::Failure, &e.to_string()),
    };
    match args.command {
        None => match find(&home, args.id.as_deref(), true) {
            Ok(o) => super::review_show::show(&o, args.stat, args.json),
            Err((code, msg)) => fail(args.json, code, &msg),
        },
        Some(ReviewCommand::List { json }) => list(&home, json),
        Some(ReviewCommand::Apply {
            id,
            mut paths,
            last,
            force,
        }) => {
            let id = match (last, id) {
                (true, Some(first)) => {
                    paths.insert(0, first);
                    None
                }
                (true, None) => None,
                (false, None) => {
                    let msg = "give the overlay to apply (an id, a session id, or --last)";
                    return fail(false, Exit::Usage, msg);
                }
                (false, id) => id,
            };
            match find(&home, id.as_deref(), last) {
                Ok(o) => apply_cmd(o, &paths, force),
                Err((code, msg)) => fail(false, code, &msg),
            }
        }
        Some(ReviewCommand::Discard { id, last }) => match find(&home, id.as_deref(), last) {
            Ok(o) => discard(o, "discard"),
            Err((code, msg)) => fail(false, code, &msg),
        },
        Some(ReviewCommand::Clean { older_than }) => clean(&home, older_than),
    }
}

/// The overlay `id` (or of session `id`), or the most recent when `last`.
fn find(home: &Home, id: Option<&str>, last: bool) -> Result<Overlay, (Exit, String)> {
    let failure = |e: OverlayError| (Exit::Failure, e.to_string());
    let Some(id) = id else {
        if !last {
            return Err((
                Exit::Usage,
                "give an overlay id, a session id or --last".into(),
            ));
        }
        let mut all = Overlay::list(home).map_err(failure)?;
        return all.pop().ok_or((
            Exit::Usage,
            "no overlays: `warden run --review` makes one".to_string(),
        ));
    };
    match Overlay::open(home, id) {
        Ok(o) => Ok(o),
        Err(OverlayError::NotFound(_)) => {
            let all = Overlay::list(home).map_err(failure)?;
            let mut of_session: Vec<Overlay> = all
                .into_iter()
                .filter(|o| o.meta().session_id.as_deref() == Some(id))
                .collect();
            of_session.pop().ok_or_else(|| {
                let shown = terminal_line(id);
                (
                    Exit::Usage,
                    format!("no overlay or session {shown:?} (see `warden review list`)"),
                )
            })
        }
        Err(e) => Err(failure(e)),
    }
}

fn list(home: &Home, json: bool) -> Exit {
    let all = match Overlay::list(home) {
        Ok(a) => a,
        Err(e) => return fail(json, Exit::Failure, &e.to_string()),
    };
    let rows: Vec<_> = all
        .iter()
        .map(|o| {
            let changes = Changes::read(o).ok().map(|c| c.changes.len());
            (o, changes, o.disk_usage())
        })
        .collect();
    if json {
        let rows: Vec<_> = rows
            .iter()
            .map(|(o, changes, bytes)| {
                let m = o.meta();
                json!({
                    "id": m.id,
                    "session_id": m.session_id,
                    "workspace": m.workspace,
                    "state": o.status().word(),
                    "created": m.created,
                    "changes": changes,
                    "bytes": bytes,
                })
            })
            .collect();
        outln!("{}", json!({ "overlays": rows }));
        return Exit::Success;
    }
    if rows.is_empty() {
        outln!("no overlays");
        return Exit::Success;
    }
    outln!(
        "{:<26} {:<12} {:<11} {:<20} {:>7} {:>9}  WORKSPACE",
        "ID",
        "SESSION",
        "STATE",
        "CREATED",
        "CHANGES",
        "SIZE"
    );
    for (o, changes, bytes) in rows {
        let m = o.meta();
        let changes = changes.map_or("?".to_string(), |n| n.to_string());
        outln!(
            "{:<26} {:<12} {:<11} {:<20} {:>7} {:>9}  {}",
            m.id,
            terminal_line(m.session_id.as_deref().unwrap_or("-")),
            o.status().word(),
            terminal_line(&m.created),
            changes,
            size(bytes),
            terminal_line(&m.workspace.display().to_string())
        );
    }
    Exit::Success
}

fn size(bytes: u64) -> String {
    match bytes {
        b if b < 1024 => format!("{b} B"),
        b if b < 1024 * 1024 => format!("{:.1} KiB", b as f64 / 1024.0),
        b => format!("{:.1} MiB", b as f64 / (1024.0 * 1024.0)),
    }
}

/// Open the audit log with room for `records` more, or say why not.
fn audit_room(records: usize, doing: &str) -> Result<AuditLog, String> {
    let room = crate::audit::RECORD_ROOM + 512 * records as u64;
    super::open_audit()
        .and_then(|log| {
            log.reserve(room).map_err(|e| e.to_string())?;
            Ok(log)
        })
        .map_err(|e| format!("{e}; nothing was {doing}: Warden changes nothing it cannot audit"))
}

fn apply_cmd(overlay: Overlay, paths: &[String], force: bool) -> Exit {
    let changes = match Changes::read(&overlay) {
        Ok(c) => c,
        Err(e) => return fail(false, Exit::Failure, &e.to_string()),
    };
    let usage = |e: ApplyError| match e {
        ApplyError::Running { .. } => fail(false, Exit::Denied, &e.to_string()),
        _ => fail(false, Exit::Usage, &e.to_string()),
    };
    let selected = match apply::select(&changes, paths) {
        Ok(s) => s,
        Err(e) => return usage(e),
    };
    if let Err(e) = apply::check(&overlay, &selected) {
        return usage(e);
    }
    if selected.is_empty() {
        outln!("nothing to apply");
        return Exit::Success;
    }
    let conflicts = match apply::conflicts(&changes, &selected, overlay.meta().started_ns) {
        Ok(c) => c,
        Err(e) => return fail(false, Exit::Failure, &e.to_string()),
    };
    for c in &conflicts {
        let verb = if force { "overwriting" } else { "conflict" };
        errln!("warden: {verb}: {}: {}", terminal_line(&c.path), c.reason);
    }
    if !conflicts.is_empty() && !force {
        let e = ApplyError::Conflicts(conflicts);
        return fail(false, Exit::Denied, &e.to_string());
    }
    let log = match audit_room(selected.len(), "applied") {
        Ok(l) => l,
        Err(e) => return fail(false, Exit::Failure, &e),
    };
    let meta = overlay.meta().clone();
    let outcome = apply::apply(overlay, &changes, &selected);
    for a in &outcome.applied {
        let from = a
            .from
            .as_deref()
            .map(|f| format!(" (from {})", terminal_line(f)));
        outln!(
            "{:<12} {}{}",
            a.change,
            terminal_line(&a.path),
            from.unwrap_or_default()
        );
    }
    let mut code = Exit::Success;
    if !outcome.applied.is_empty() {
        let files = outcome
            .applied
            .iter()
            .map(|a| AppliedFile {
                path: a.path.clone(),
                change: a.change.to_string(),
                from: a.from.clone(),
                sha256: a.sha256.clone(),
            })
            .collect();
        let event = AuditEvent::OverlayApplied {
            overlay: meta.id.clone(),
            session_id: meta.session_id.clone(),
            workspace: meta.workspace.display().to_string(),
            files,
            forced: force && !conflicts.is_empty(),
        };
        if let Err(e) = log.append(event).and_then(|()| log.flush()) {
            code = fail(
                false,
                Exit::Failure,
                &format!("applied, but not audited: {e}"),
            );
        }
    }
    if let Some(e) = outcome.error {
        return fail(false, Exit::Failure, &e.to_string());
    }
    if outcome.removed {
        errln!("warden: every change applied; overlay {} removed", meta.id);
    }
    code
}

fn discard(overlay: Overlay, by: &str) -> Exit {
    if overlay.status() == RunStatus::Running {
        let msg = format!(
            "overlay {}: its run (pid {}) is still going; discard it once the run has ended",
            overlay.id(),
            overlay.meta().pid
        );
        return fail(false, Exit::Denied, &msg);
    }
    let log = match audit_room(1, "discarded") {
        Ok(l) => l,
        Err(e) => return fail(false, Exit::Failure, &e),
    };
    let changes = Changes::read(&overlay).map_or(0, |c| c.changes.len() as u64);
    let meta = overlay.meta().clone();
    if let Err(e) = overlay.remove() {
        return fail(false, Exit::Failure, &e.to_string());
    }
    outln!("discarded {} ({changes} change(s))", meta.id);
    let event = AuditEvent::OverlayDiscarded {
        overlay: meta.id,
        session_id: meta.session_id,
        workspace: meta.workspace.display().to_string(),
        changes,
        by: by.to_string(),
    };
    match log.append(event).and_then(|()| log.flush()) {
        Ok(()) => Exit::Success,
        Err(e) => fail(
            false,
            Exit::Failure,
            &format!("discarded, but not audited: {e}"),
        ),
    }
}

fn clean(home: &Home, older_than: Duration) -> Exit {
    let all = match Overlay::list(home) {
        Ok(a) => a,
        Err(e) => return fail(false, Exit::Failure, &e.to_string()),
    };
    let now = SystemTime::now();
    let mut code = Exit::Success;
    let mut cleaned = 0;
    for o in all {
        let created = humantime::parse_rfc3339(&o.meta().created).unwrap_or(now);
        let old = now.duration_since(created).unwrap_or_default() > older_than;
        if !old || o.status() == RunStatus::Running {
            continue;
        }
        match discard(o, "clean") {
            Exit::Success => cleaned += 1,
            other => code = other,
        }
    }
    if cleaned == 0 {
        outln!("nothing to clean");
    }
    code
}
