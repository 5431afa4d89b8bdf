//! `warden review [ID|SESSION]`: an overlay's changes as a per-file
//! unified diff, `--stat` summaries, or one JSON document.
//!
//! Paths, symlink targets and file contents come from the run (a model
//! wrote them): they are made inert for a terminal before they are shown.

use serde_json::json;
use similar::{ChangeTag, TextDiff};

use super::colour::{Style, paint_out};
use super::{Exit, fail};
use crate::base::{terminal_line, terminal_text};
use crate::overlay::{Change, ChangeKind, Changes, Content, Node, Overlay, Side};

/// A file's diff, as shown.
struct FileDiff {
    added: usize,
    removed: usize,
    binary: bool,
    /// The unified diff of a text file.
    diff: Option<String>,
    /// What the summary line says besides the counts.
    marks: Vec<String>,
}

pub fn show(overlay: &Overlay, stat: bool, json: bool) -> Exit {
    let changes = match Changes::read(overlay) {
        Ok(c) => c,
        Err(e) => return fail(json, Exit::Failure, &e.to_string()),
    };
    let mut files = Vec::new();
    for c in &changes.changes {
        match file_diff(&changes, c) {
            Ok(d) => files.push((c, d)),
            Err(e) => return fail(json, Exit::Failure, &e.to_string()),
        }
    }
    let meta = overlay.meta();
    if json {
        let rows: Vec<_> = files
            .iter()
            .map(|(c, d)| {
                let from = match &c.kind {
                    ChangeKind::Renamed { from } => Some(from),
                    _ => None,
                };
                json!({
                    "path": c.path,
                    "change": c.kind.word(),
                    "from": from,
                    "binary": d.binary,
                    "added": d.added,
                    "removed": d.removed,
                    "old": c.old,
                    "new": c.new,
                    "diff": if stat { None } else { d.diff.as_deref() },
                })
            })
            .collect();
        let doc = json!({
            "overlay": {
                "id": meta.id,
                "session_id": meta.session_id,
                "workspace": meta.workspace,
                "state": overlay.status().word(),
                "created": meta.created,
            },
            "files": rows,
        });
        outln!("{doc}");
        return Exit::Success;
    }
    let session = meta.session_id.as_deref().unwrap_or("-");
    outln!(
        "{}",
        paint_out(
            Style::Dim,
            &format!(
                "overlay {} · session {} · {} · {} · {} file(s)",
                meta.id,
                terminal_line(session),
                overlay.status().word(),
                terminal_line(&meta.workspace.display().to_string()),
                files.len()
            )
        )
    );
    for (c, d) in &files {
        let marks = if d.marks.is_empty() {
            String::new()
        } else {
            format!(" ({})", d.marks.join(", "))
        };
        outln!(
            "{} {} {}{}",
            paint_out(Style::Green, &format!("+{}", d.added)),
            paint_out(Style::Red, &format!("-{}", d.removed)),
            terminal_line(&c.path),
            terminal_line(&marks)
        );
        if !stat && let Some(diff) = &d.diff {
            for line in terminal_text(diff).lines() {
                let style = match line.as_bytes().first() {
                    Some(b'+') if !line.starts_with("+++") => Some(Style::Green),
                    Some(b'-') if !line.starts_with("---") => Some(Style::Red),
                    Some(b'@') => Some(Style::Yellow),
                    _ => None,
                };
                match style {
                    Some(s) => outln!("{}", paint_out(s, line)),
                    None => outln!("{line}"),
                }
            }
        }
    }
    Exit::Success
}

fn file_diff(changes: &Changes, c: &Change) -> Result<FileDiff, crate::overlay::ChangesError> {
    let mut marks = Vec::new();
    match &c.kind {
        ChangeKind::Added => marks.push("new".to_string()),
        ChangeKind::Deleted => marks.push("deleted".to_string()),
        ChangeKind::Renamed { from } => marks.push(format!("renamed from {from}")),
        ChangeKind::TypeChanged => marks.push(format!(
            "{} → {}",
            kind_word(c.old.as_ref()),
            kind_word(c.new.as_ref())
        )),
        ChangeKind::ModeChanged => {}
        ChangeKind::Unsupported => marks.push("not applicable".to_string()),
        ChangeKind::Modified => {}
    }
    let (om, nm) = (mode(c.old.as_ref()), mode(c.new.as_ref()));
    if let (Some(o), Some(n)) = (om, nm)
        && o != n
    {
        marks.push(format!("mode {o:o} → {n:o}"));
    }
    for node in [&c.old, &c.new].into_iter().flatten() {
        match node {
            Node::Symlink { target } => marks.push(format!("symlink → {target}")),
            Node::Dir { .. } if c.kind != ChangeKind::TypeChanged => {
                marks.push("directory".to_string())
            }
            Node::Special { what } => marks.push(what.clone()),
            Node::Dir { .. } | Node::File { .. } => {}
        }
    }
    let old_path = match &c.kind {
        ChangeKind::Renamed { from } => from.as_str(),
        _ => c.path.as_str(),
    };
    let old = match &c.old {
        Some(Node::File { .. }) => Some(changes.content(Side::Workspace, old_path)?),
        _ => None,
    };
    let new = match &c.new {
        Some(Node::File { .. }) => Some(changes.content(Side::Overlay, &c.path)?),
        _ => None,
    };
    let mut d = FileDiff {
        added: 0,
        removed: 0,
        binary: false,
        diff: None,
        marks,
    };
    let text = |content: &Option<Content>, d: &mut FileDiff| -> Option<String> {
        match content {
            None => Some(String::new()),
            Some(Content::Text(t)) => Some(t.clone()),
            Some(Content::Binary) => {
                d.binary = true;
                None
            }
            Some(Content::TooLarge(n)) => {
                d.binary = true;
                d.marks.push(format!("{n} bytes, too large to diff"));
                None
            }
        }
    };
    if old.is_none() && new.is_none() {
        d.marks.dedup();
        return Ok(d);
    }
    let (o, n) = (text(&old, &mut d), text(&new, &mut d));
    if d.binary {
        d.marks.push("binary".to_string());
    }
    d.marks.dedup();
    let (Some(o), Some(n)) = (o, n) else {
        return Ok(d);
    };
    let diff = TextDiff::from_lines(&o, &n);
    for change in diff.iter_all_changes() {
        match change.tag() {
            ChangeTag::Insert => d.added += 1,
            ChangeTag::Delete => d.removed += 1,
            ChangeTag::Equal => {}
        }
    }
    let a = if old.is_some() {
        format!("a/{old_path}")
    } else {
        "/dev/null".to_string()
    };
    let b = if new.is_some() {
        format!("b/{}", c.path)
    } else {
        "/dev/null".to_string()
    };
    let unified = diff
        .unified_diff()
        .context_radius(3)
        .header(&a, &b)
        .to_string();
    if !unified.is_empty() {
        d.diff = Some(unified);
    }
    Ok(d)
}

fn mode(node: Option<&Node>) -> Option<u32> {
    match node {
        Some(Node::File { mode, .. } | Node::Dir { mode }) => Some(*mode),
        Some(Node::Symlink { .. } | Node::Special { .. }) | None => None,
    }
}

fn kind_word(node: Option<&Node>) -> &'static str {
    match node {
        Some(Node::File { .. }) => "file",
        Some(Node::Symlink { .. }) => "symlink",
        Some(Node::Dir { .. }) => "directory",
        Some(Node::Special { .. }) => "special file",
        None => "nothing",
    }
}
