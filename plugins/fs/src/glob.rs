//! `glob`: find workspace paths by glob pattern.
//!
//! The walk is `grep`'s ([`warden_sdk::walk`]): it honours `.gitignore`
//! and `.ignore` files (with or without a git repository), skips hidden
//! entries unless asked, and never follows symlinks, so it lists only what
//! lies under the directory it was given. It goes through directory
//! handles, one `wasi:filesystem` call per listing and none per entry.

use std::path::Path;

use globset::{GlobBuilder, GlobMatcher};
use ignore::overrides::Override;
use serde::{Deserialize, Serialize};
use warden_sdk::walk::{Flow, Kind, Piece, WalkDir, WalkProgress, Walker, open_piece, start};

use crate::glob_split;
use warden_sdk::{
    Annotations, Context, Output, Tool, ToolError, WorkspacePath,
    serde_json::{Value, json},
};

/// Paths shown before the list is cut.
/// Paths listed at most.
pub(crate) const MAX_RESULTS: usize = 1000;

/// Finds paths matching a glob.
pub struct Glob;

/// Input of `glob`; see the schema for each field.
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Input {
    pattern: String,
    #[serde(default = "dot")]
    path: String,
    #[serde(default)]
    include_hidden: bool,
}

fn dot() -> String {
    ".".into()
}

impl Tool for Glob {
    type Input = Input;
    const NAME: &'static str = "glob";
    const DESCRIPTION: &'static str = "Find files by glob pattern, e.g. `**/*.rs` or `src/**/mod.rs`. The \
        pattern is matched against paths relative to `path` (default the workspace root); `*` does not cross \
        `/`, `**` matches any number of directories, `{a,b}` and `[abc]` work. Files ignored by .gitignore \
        or .ignore and hidden paths are skipped. Returns sorted workspace-relative paths (directories end \
        with `/`), at most 1000.";
    const ANNOTATIONS: Annotations = Annotations::READ_ONLY;

    fn input_schema(&self) -> Value {
        json!({
            "type": "object",
            "properties": {
                "pattern": {"type": "string", "description": "Glob pattern, e.g. \"**/*.rs\"."},
                "path": {"type": "string", "description": "Directory to search, relative to the workspace root. Default \".\"."},
                "include_hidden": {"type": "boolean", "description": "Also match paths with a component starting with `.`. Default false."}
            },
            "required": ["pattern"],
            "additionalProperties": false
        })
    }

    fn call(&self, input: Input, cx: &Context) -> Result<Output, ToolError> {
        let (root, base) = crate::resolve(cx, &input.path)?;
        glob(&root, &base, &input.pattern, input.include_hidden)
    }

    fn work(&self, task: &str, cx: &Context) -> Result<Output, ToolError> {
        glob_split::work(task, cx)
    }
}

/// Compile `pattern`; `*` does not cross `/`.
pub(crate) fn matcher(pattern: &str) -> Result<GlobMatcher, ToolError> {
    let trimmed = pattern.strip_prefix("./").unwrap_or(pattern);
    GlobBuilder::new(trimmed)
        .literal_separator(true)
        .build()
        .map(|g| g.compile_matcher())
        .map_err(|e| {
            ToolError::invalid_input(format!("invalid glob pattern `{pattern}`: {}", e.kind()))
        })
}

/// Paths under `base` matching `pattern`, shown relative to `root`.
fn glob(
    root: &WorkspacePath,
    base: &WorkspacePath,
    pattern: &str,
    hidden: bool,
) -> Result<Output, ToolError> {
    let shown = base.display();
    let matcher = matcher(pattern)?;
    let meta = std::fs::metadata(base.guest()).map_err(|e| ToolError::from_io(&e, shown))?;
    if !meta.is_dir() {
        return Err(ToolError::invalid_input(format!(
            "{shown}: not a directory; give the directory to search in"
        )));
    }
    let Found {
        found,
        total,
        cancelled,
        unreadable,
    } = match glob_split::fanned(base, pattern, hidden) {
        Some(found) => found,
        None => one_walk(root, base, &matcher, hidden, None)
            .map_err(|e| ToolError::from_io(&e, shown))?,
    };
    let truncated = total > MAX_RESULTS || cancelled;
    let mut text = found.join("\n");
    if total == 0 {
        text = format!("no files match `{pattern}` under {shown}");
        if !hidden {
            text.push_str(
                " (ignored and hidden files skipped; set include_hidden=true for hidden ones)",
            );
        }
    } else {
        text.push('\n');
    }
    if total > MAX_RESULTS {
        text.push_str(&format!(
            "[showing {MAX_RESULTS} of {total} matches; narrow the pattern or path]\n"
        ));
    }
    if unreadable > 0 && !cancelled {
        let what = if unreadable == 1 {
            "directory"
        } else {
            "directories"
        };
        text.push_str(&format!(
            "[could not read {unreadable} {what} (permissions or the sandbox)]\n"
        ));
    }
    if cancelled {
        text.push_str("[stopped early: the call was cancelled]\n");
    }
    let structured = json!({"path": shown, "matches": total, "truncated": truncated});
    Ok(Output::text(text).with_structured(structured))
}

/// The paths a walk matched: the first [`MAX_RESULTS`] in order, and how
/// many there were.
#[derive(Debug, Default, Serialize, Deserialize)]
pub(crate) struct Found {
    /// Workspace-relative, sorted, directories ending in `/`.
    pub found: Vec<String>,
    /// Every path that matched.
    pub total: usize,
    /// The walk stopped because the call was cancelled.
    pub cancelled: bool,
    /// Directories the walk could not open or list.
    #[serde(default)]
    pub unreadable: usize,
}

impl Found {
    /// Keep the first [`MAX_RESULTS`] paths in order.
    pub(crate) fn settle(&mut self) {
        self.found.sort_unstable();
        self.found.truncate(MAX_RESULTS);
    }
}

/// Match the walk of directory `base` against `matcher`: the whole walk, or
/// only `pieces` of it (a worker's task).
pub(crate) fn one_walk(
    root: &WorkspacePath,
    base: &WorkspacePath,
    matcher: &GlobMatcher,
    hidden: bool,
    pieces: Option<&[Piece]>,
) -> std::io::Result<Found> {
    let base_path = base.guest().trim_end_matches('/');
    let no_overrides = Override::empty();
    let mut walker = Walker::new(!hidden, &no_overrides);
    let mut out = Found::default();
    let mut progress = WalkProgress::new("glob", "entries");
    let mut visit = |_: &WalkDir, _: &str, path: &str, kind: Kind| {
        progress.entry(0);
        if progress.seen.is_multiple_of(256) && crate::cancelled() {
            out.cancelled = true;
            return Flow::Stop;
        }
        let under_base = path.get(base_path.len() + 1..).unwrap_or_default();
        if matcher.is_match(under_base) {
            out.total += 1;
            let mut rel = crate::relative_to(root, Path::new(path));
            if kind == Kind::Dir {
                rel.push('/');
            }
            out.found.push(rel);
            // Bounded memory: only the first paths in order are kept.
            if out.found.len() >= 4 * MAX_RESULTS {
                out.settle();
            }
        }
        Flow::Continue
    };
    match pieces {
        None => {
            let start = start(base, &mut walker)?;
            walker.walk_all(&start, base_path, &mut visit);
        }
        Some(pieces) => {
            for piece in pieces {
                let Some((dir, path)) = open_piece(base, piece, &mut walker) else {
                    continue;
                };
                if walker.walk_piece(&dir, &path, piece, &mut visit) == Flow::Stop {
                    break;
                }
            }
        }
    }
    out.settle();
    out.unreadable = walker.unreadable;
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testutil::{put, workspace};

    fn call(
        cx: &Context,
        pattern: &str,
        path: &str,
        include_hidden: bool,
    ) -> Result<Output, ToolError> {
        Glob.call(
            Input {
                pattern: pattern.into(),
                path: path.into(),
                include_hidden,
            },
            cx,
        )
    }

    fn tree() -> (tempfile::TempDir, Context) {
        let (dir, cx) = workspace();
        put(&dir, "src/lib.rs", "");
        put(&dir, "src/a/mod.rs", "");
        put(&dir, "top.rs", "");
        put(&dir, "target/out.rs", "");
        put(&dir, ".gitignore", "target/\n");
        put(&dir, ".cfg/x.rs", "");
        (dir, cx)
    }

    #[test]
    fn matches_relative_to_path_and_reports_workspace_paths() {
        let (_dir, cx) = tree();
        assert_eq!(
            call(&cx, "**/*.rs", ".", false).unwrap().text,
            "src/a/mod.rs\nsrc/lib.rs\ntop.rs\n"
        );
        assert_eq!(call(&cx, "*.rs", ".", false).unwrap().text, "top.rs\n");
        assert_eq!(
            call(&cx, "*.rs", "src", false).unwrap().text,
            "src/lib.rs\n"
        );
        assert_eq!(
            call(&cx, "./src/*", ".", false).unwrap().text,
            "src/a/\nsrc/lib.rs\n"
        );
        assert_eq!(
            call(&cx, "**/*.rs", ".", true).unwrap().text,
            ".cfg/x.rs\nsrc/a/mod.rs\nsrc/lib.rs\ntop.rs\n"
        );
    }

    #[test]
    fn empty_and_invalid() {
        let (_dir, cx) = tree();
        let out = call(&cx, "**/*.py", ".", false).unwrap();
        assert!(
            out.text.starts_with("no files match `**/*.py` under ."),
            "{}",
            out.text
        );
        let err = call(&cx, "src/[a", ".", false).unwrap_err();
        assert!(
            err.message.starts_with("invalid glob pattern `src/[a`:"),
            "{}",
            err.message
        );
        assert_eq!(
            call(&cx, "*", "top.rs", false).unwrap_err().message,
            "top.rs: not a directory; give the directory to search in"
        );
    }

    #[test]
    fn caps_results() {
        let (dir, cx) = workspace();
        for i in 0..1003 {
            put(&dir, &format!("f{i:04}.txt"), "");
        }
        let out = call(&cx, "*.txt", ".", false).unwrap();
        assert!(
            out.text
                .ends_with("[showing 1000 of 1003 matches; narrow the pattern or path]\n")
        );
        assert_eq!(out.structured.unwrap()["truncated"], true);
    }
}
