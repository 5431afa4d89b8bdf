//! Which directories may be a workspace, and the one line a writing run
//! says the first time it works in one.
//!
//! `/`, the home directory itself and the data directory (or a directory
//! inside it) are refused unless `--trust-workspace` says so: a tool there
//! could write anywhere the user keeps anything, or rewrite Warden's own
//! state. Remembered workspaces live in `<data dir>/workspaces`, one
//! canonical path a line.

use std::path::{Path, PathBuf};

use crate::base::{PRIVATE_FILE, Rename, Verbosity, terminal_line, write_atomic};
use crate::home::Home;

/// The file of workspaces a writing run has already been announced in.
const KNOWN_FILE: &str = "workspaces";

/// Refuse `workspace` (canonical) when it is `/`, `$HOME` or in the data
/// directory, unless `trusted`.
pub fn check(workspace: &Path, home: &Home, trusted: bool) -> Result<(), String> {
    if trusted {
        return Ok(());
    }
    let canonical = |p: &Path| std::fs::canonicalize(p).unwrap_or_else(|_| p.to_path_buf());
    let what = if workspace.parent().is_none() {
        Some("the root directory")
    } else if std::env::var_os("HOME")
        .filter(|h| !h.is_empty())
        .is_some_and(|h| canonical(Path::new(&h)) == workspace)
    {
        Some("your home directory")
    } else if workspace.starts_with(canonical(home.root())) {
        Some("Warden's data directory")
    } else {
        None
    };
    match what {
        None => Ok(()),
        Some(what) => Err(format!(
            "the workspace {} is {what}: tools could reach everything in it; \
             use -w with a project directory, or --trust-workspace if you mean it",
            workspace.display()
        )),
    }
}

/// The first time a writing run works in `workspace`, say in one line
/// which directory it may write, and remember that it was said.
pub fn announce_first_write(home: &Home, workspace: &Path, verbosity: Verbosity) {
    if !verbosity.shows_warnings() {
        return;
    }
    let file = home.root().join(KNOWN_FILE);
    let text = std::fs::read_to_string(&file).unwrap_or_default();
    let line = workspace.display().to_string();
    if line.contains('\n') || text.lines().any(|l| l == line) {
        return;
    }
    errln!(
        "warden: first writing run in {}: tools may write inside it, and nowhere else",
        terminal_line(&line)
    );
    let mut known = text;
    known.push_str(&line);
    known.push('\n');
    // Failing to remember only means saying it again next time.
    let _ = write_atomic(&file, known.as_bytes(), PRIVATE_FILE, Rename::MayRevert);
}

/// `workspace` made absolute and canonical, or why it cannot be used.
pub fn canonical_workspace(workspace: &Path) -> Result<PathBuf, String> {
    std::fs::canonicalize(workspace)
        .ok()
        .filter(|w| w.is_dir())
        .ok_or_else(|| format!("workspace {} is not a directory", workspace.display()))
}
