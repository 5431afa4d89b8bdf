//! `warden memory show|edit|clear`: the memory notes the agent keeps for a
//! workspace, in Warden's data directory.
//!
//! Invariant: an edit is stored exactly as a `memory_write` is, redacted
//! and held to the size cap; an edit over the cap changes nothing.

use std::path::{Path, PathBuf};
use std::process::Command;

use clap::Subcommand;
use serde_json::json;

use super::{Exit, fail};
use crate::base::terminal_text;
use crate::capability::{MAX_MEMORY_BYTES, MemoryNotes};
use crate::home::Home;

#[derive(Debug, Subcommand)]
pub enum MemoryCommand {
    /// Print the workspace's memory notes.
    Show {
        /// The workspace [default: the current directory].
        #[arg(long, short = 'w', value_name = "DIR")]
        workspace: Option<PathBuf>,
        #[arg(long)]
        json: bool,
    },
    /// Edit the notes in $VISUAL (else $EDITOR, else vi); what is saved is
    /// redacted and must fit the 16 KiB cap.
    Edit {
        #[arg(long, short = 'w', value_name = "DIR")]
        workspace: Option<PathBuf>,
    },
    /// Delete the workspace's memory notes.
    Clear {
        #[arg(long, short = 'w', value_name = "DIR")]
        workspace: Option<PathBuf>,
    },
}

pub fn run(cmd: MemoryCommand) -> Exit {
    let (workspace, json) = match &cmd {
        MemoryCommand::Show { workspace, json } => (workspace, *json),
        MemoryCommand::Edit { workspace } | MemoryCommand::Clear { workspace } => {
            (workspace, false)
        }
    };
    let notes = match notes_of(workspace.as_deref()) {
        Ok(n) => n,
        Err((code, msg)) => return fail(json, code, &msg),
    };
    match cmd {
        MemoryCommand::Show { .. } => match notes.read() {
            Ok(text) if json => {
                outln!(
                    "{}",
                    json!({"file": notes.file(), "bytes": text.len(), "max_bytes": MAX_MEMORY_BYTES, "notes": text})
                );
                Exit::Success
            }
            Ok(text) if text.is_empty() => {
                errln!("warden: no memory notes for this workspace");
                Exit::Success
            }
            Ok(text) => {
                outln!("{}", terminal_text(text.trim_end()));
                Exit::Success
            }
            Err(e) => fail(json, Exit::Failure, &e.to_string()),
        },
        MemoryCommand::Edit { .. } => edit(&notes),
        MemoryCommand::Clear { .. } => match notes.clear() {
            Ok(true) => {
                outln!("cleared the memory notes");
                Exit::Success
            }
            Ok(false) => {
                outln!("there were no memory notes");
                Exit::Success
            }
            Err(e) => fail(false, Exit::Failure, &e.to_string()),
        },
    }
}

fn notes_of(workspace: Option<&Path>) -> Result<MemoryNotes, (Exit, String)> {
    let home = Home::from_env().map_err(|e| (Exit::Failure, e.to_string()))?;
    let dir = match workspace {
        Some(w) => w.to_path_buf(),
        None => std::env::current_dir().map_err(|e| {
            (
                Exit::Usage,
                format!("cannot read the current directory: {e}"),
            )
        })?,
    };
    let dir = super::workspace_trust::canonical_workspace(&dir).map_err(|m| (Exit::Usage, m))?;
    Ok(MemoryNotes::for_workspace(&home, &dir))
}

/// Open the notes in the user's editor, then store what was saved.
fn edit(notes: &MemoryNotes) -> Exit {
    let current = match notes.read() {
        Ok(t) => t,
        Err(e) => return fail(false, Exit::Failure, &e.to_string()),
    };
    let draft = match tempfile::Builder::new()
        .prefix("warden-memory-")
        .suffix(".md")
        .tempfile()
    {
        Ok(f) => f,
        Err(e) => return fail(false, Exit::Failure, &format!("cannot make a draft: {e}")),
    };
    if let Err(e) = std::fs::write(draft.path(), &current) {
        return fail(
            false,
            Exit::Failure,
            &format!("cannot write the draft: {e}"),
        );
    }
    let editor = ["VISUAL", "EDITOR"]
        .iter()
        .find_map(|v| std::env::var(v).ok().filter(|e| !e.trim().is_empty()))
        .unwrap_or_else(|| "vi".to_string());
    // As git does: the editor is a command line, the file its last argument.
    let status = Command::new("sh")
        .arg("-c")
        .arg(format!("{editor} \"$1\""))
        .arg("editor")
        .arg(draft.path())
        .status();
    match status {
        Ok(s) if s.success() => {}
        Ok(s) => {
            let msg = format!("the editor ({editor}) failed ({s}); the notes are unchanged");
            return fail(false, Exit::Failure, &msg);
        }
        Err(e) => {
            let msg = format!("cannot start the editor ({editor}): {e}");
            return fail(false, Exit::Failure, &msg);
        }
    }
    let edited = match std::fs::read(draft.path()).map(String::from_utf8) {
        Ok(Ok(t)) => t,
        Ok(Err(_)) => {
            return fail(
                false,
                Exit::Usage,
                "the edited notes are not UTF-8 text; the notes are unchanged",
            );
        }
        Err(e) => return fail(false, Exit::Failure, &format!("cannot read the draft: {e}")),
    };
    if edited == current {
        outln!("the memory notes are unchanged");
        return Exit::Success;
    }
    match notes.write(&edited) {
        Ok(stored) => {
            let redacted = if stored != edited {
                " (secrets redacted)"
            } else {
                ""
            };
            outln!("saved {} bytes of memory notes{redacted}", stored.len());
            Exit::Success
        }
        Err(e) => fail(false, Exit::Usage, &format!("{e}; the notes are unchanged")),
    }
}
