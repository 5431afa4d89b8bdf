//! `list_dir`: a directory's entries as a sorted, indented tree.
//!
//! Symlinks are shown as links and never followed, so the listing cannot
//! leave the directory it was asked about, and never reveals a link's target.

use std::fs;

use serde::Deserialize;
use warden_sdk::walk::Kind;
use warden_sdk::{
    Annotations, Context, Output, Tool, ToolError, WorkspacePath,
    serde_json::{Value, json},
};

/// The deepest `depth` honoured.
const MAX_DEPTH: usize = 5;
/// Entries shown before the listing is cut.
const MAX_ENTRIES: usize = 1000;

/// Lists a directory.
pub struct ListDir;

/// Input of `list_dir`; see the schema for each field.
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Input {
    #[serde(default = "dot")]
    path: String,
    depth: Option<usize>,
    #[serde(default)]
    include_hidden: bool,
}

fn dot() -> String {
    ".".into()
}

impl Tool for ListDir {
    type Input = Input;
    const NAME: &'static str = "list_dir";
    const DESCRIPTION: &'static str = "List a workspace directory, sorted by name. Directories end with `/`, \
        symlinks are marked `-> (symlink)` and not followed. With `depth` > 1 (max 5), subdirectories are \
        shown as an indented tree (.git is never expanded). Hidden entries (names starting with `.`, including .git) are skipped \
        unless `include_hidden` is true. At most 1000 entries are shown.";
    const ANNOTATIONS: Annotations = Annotations::READ_ONLY;

    fn input_schema(&self) -> Value {
        json!({
            "type": "object",
            "properties": {
                "path": {"type": "string", "description": "Directory, relative to the workspace root. Default \".\"."},
                "depth": {"type": "integer", "minimum": 1, "maximum": MAX_DEPTH, "description": "Levels to show. Default 1."},
                "include_hidden": {"type": "boolean", "description": "Show entries whose names start with `.`. Default false."}
            },
            "additionalProperties": false
        })
    }

    fn call(&self, input: Input, cx: &Context) -> Result<Output, ToolError> {
        let wp = cx.path(&input.path)?;
        let depth = input.depth.unwrap_or(1).clamp(1, MAX_DEPTH);
        list(&wp, depth, input.include_hidden)
    }
}

/// The listing being built.
struct Listing {
    text: String,
    entries: usize,
    truncated: bool,
    include_hidden: bool,
}

/// List `wp` down to `depth` levels.
fn list(wp: &WorkspacePath, depth: usize, include_hidden: bool) -> Result<Output, ToolError> {
    let shown = wp.display();
    let meta = fs::metadata(wp.guest()).map_err(|e| ToolError::from_io(&e, shown))?;
    if !meta.is_dir() {
        return Err(ToolError::invalid_input(format!(
            "{shown}: is a file, not a directory; use read_file to read it"
        )));
    }
    let mut listing = Listing {
        text: String::new(),
        entries: 0,
        truncated: false,
        include_hidden,
    };
    listing
        .walk(wp, 0, depth)
        .map_err(|e| ToolError::from_io(&e, shown))?;
    if listing.entries == 0 {
        // Kept after it: a note of entries that could not be shown.
        let note = std::mem::take(&mut listing.text);
        listing.text = if !note.is_empty() {
            format!("{shown}: no entries that can be shown\n{note}")
        } else if include_hidden {
            format!("{shown}: empty directory\n{note}")
        } else {
            format!(
                "{shown}: no entries (hidden entries skipped; set include_hidden=true to see them)\n{note}"
            )
        };
    }
    if listing.truncated {
        listing.text.push_str(&format!(
            "[truncated at {MAX_ENTRIES} entries; list a subdirectory or use a smaller depth]\n"
        ));
    }
    let structured =
        json!({"path": shown, "entries": listing.entries, "truncated": listing.truncated});
    Ok(Output::text(listing.text).with_structured(structured))
}

impl Listing {
    /// Append the entries of `dir`, indented by `level`, recursing while `level + 1 < depth`.
    ///
    /// Only the top directory's read error is returned; a subdirectory that
    /// cannot be read is noted in the listing.
    fn walk(&mut self, dir: &WorkspacePath, level: usize, depth: usize) -> std::io::Result<()> {
        // A name that is not UTF-8 cannot cross WASI: its entry is left
        // out, the rest of the directory listed, and the listing says so.
        let (listed, unnamed) = warden_sdk::walk::list(dir)?;
        let mut entries: Vec<(String, Kind)> = listed
            .into_iter()
            .filter(|e| self.include_hidden || !e.name.starts_with('.'))
            .map(|e| (e.name, e.kind))
            .collect();
        entries.sort_by(|a, b| a.0.cmp(&b.0));
        let indent = "  ".repeat(level);
        if unnamed > 0 {
            self.text.push_str(&format!(
                "{indent}[{unnamed} not shown: names that are not UTF-8, which WASI cannot name]\n"
            ));
        }
        for (name, kind) in entries {
            if self.entries == MAX_ENTRIES {
                self.truncated = true;
                return Ok(());
            }
            self.entries += 1;
            if kind == Kind::Other && is_symlink(&dir.join(&name)) {
                self.text
                    .push_str(&format!("{indent}{name} -> (symlink)\n"));
            } else if kind == Kind::Dir {
                self.text.push_str(&format!("{indent}{name}/\n"));
                if level + 1 < depth && name != ".git" {
                    let child = dir.join(&name);
                    if let Err(e) = self.walk(&child, level + 1, depth) {
                        let why = ToolError::from_io(&e, child.display()).message;
                        self.text
                            .push_str(&format!("{indent}  [not listed: {why}]\n"));
                    }
                }
            } else {
                self.text.push_str(&format!("{indent}{name}\n"));
            }
            if self.truncated {
                return Ok(());
            }
        }
        Ok(())
    }
}

/// Whether `entry` is a symlink (a listing calls a symlink, a FIFO or a
/// socket alike "other").
fn is_symlink(entry: &WorkspacePath) -> bool {
    fs::symlink_metadata(entry.guest()).is_ok_and(|m| m.file_type().is_symlink())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testutil::{put, workspace};

    fn call(
        cx: &Context,
        path: &str,
        depth: Option<usize>,
        include_hidden: bool,
    ) -> Result<Output, ToolError> {
        ListDir.call(
            Input {
                path: path.into(),
                depth,
                include_hidden,
            },
            cx,
        )
    }

    fn tree() -> (tempfile::TempDir, Context) {
        let (dir, cx) = workspace();
        put(&dir, "b.txt", "");
        put(&dir, "a/x.rs", "");
        put(&dir, "a/deep/y.rs", "");
        put(&dir, ".hidden", "");
        put(&dir, ".git/HEAD", "");
        std::os::unix::fs::symlink("/etc", dir.path().join("link")).unwrap();
        (dir, cx)
    }

    #[test]
    fn lists_sorted_with_markers() {
        let (_dir, cx) = tree();
        let out = call(&cx, ".", None, false).unwrap();
        assert_eq!(out.text, "a/\nb.txt\nlink -> (symlink)\n");
        let out = call(&cx, "a", Some(3), false).unwrap();
        assert_eq!(out.text, "deep/\n  y.rs\nx.rs\n");
        let out = call(&cx, ".", Some(2), true).unwrap();
        assert_eq!(
            out.text,
            ".git/\n.hidden\na/\n  deep/\n  x.rs\nb.txt\nlink -> (symlink)\n"
        );
        assert_eq!(out.structured.unwrap()["entries"], 7);
    }

    #[test]
    fn caps_entries() {
        let (dir, cx) = workspace();
        for i in 0..1005 {
            put(&dir, &format!("f{i:04}"), "");
        }
        let out = call(&cx, ".", None, false).unwrap();
        assert_eq!(out.text.lines().count(), 1001);
        assert!(out.text.ends_with(
            "[truncated at 1000 entries; list a subdirectory or use a smaller depth]\n"
        ));
        assert_eq!(out.structured.unwrap()["truncated"], true);
    }

    #[test]
    fn errors_name_the_relative_path() {
        let (dir, cx) = tree();
        assert_eq!(
            call(&cx, "b.txt", None, false).unwrap_err().message,
            "b.txt: is a file, not a directory; use read_file to read it"
        );
        assert_eq!(
            call(&cx, "nope", None, false).unwrap_err().message,
            "nope: no such file or directory"
        );
        let empty = dir.path().join("e");
        fs::create_dir(&empty).unwrap();
        assert!(
            call(&cx, "e", None, true)
                .unwrap()
                .text
                .starts_with("e: empty directory")
        );
    }
}
