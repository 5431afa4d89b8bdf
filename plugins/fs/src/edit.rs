//! `edit_file`: replace an exact string in a text file and show the diff.
//!
//! The edit applies only when `old_string` matches exactly once, or
//! `replace_all` is set: an ambiguous or stale edit is refused with a message
//! saying how to fix it, never guessed at. The file is rewritten in place, so
//! its permissions (an executable bit, say), hard links and symlinks survive:
//! WASI can neither read nor set modes, so a replace-by-rename would lose them.

use std::fs;
use std::io;
use std::time::Duration;

use serde::Deserialize;
use similar::TextDiff;
use warden_sdk::{
    Annotations, Context, Output, Tool, ToolError, WorkspacePath,
    serde_json::{Value, json},
};

/// Bytes of diff shown; the edit itself is never limited.
const MAX_DIFF: usize = 256 * 1024;

/// Replaces exact text in a file.
pub struct EditFile;

/// Input of `edit_file`; see the schema for each field.
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Input {
    path: String,
    old_string: String,
    new_string: String,
    #[serde(default)]
    replace_all: bool,
}

impl Tool for EditFile {
    type Input = Input;
    const NAME: &'static str = "edit_file";
    const DESCRIPTION: &'static str = "Replace exact text in a file: `old_string` must match the file exactly, \
        whitespace and indentation included, and exactly once unless `replace_all` is true (include enough \
        surrounding lines to make it unique). Returns a unified diff of the change. Read the file first.";
    const ANNOTATIONS: Annotations = Annotations::DESTRUCTIVE;

    fn input_schema(&self) -> Value {
        json!({
            "type": "object",
            "properties": {
                "path": {"type": "string", "description": "File path, relative to the workspace root."},
                "old_string": {"type": "string", "description": "The exact text to replace."},
                "new_string": {"type": "string", "description": "The text to put in its place."},
                "replace_all": {"type": "boolean", "description": "Replace every occurrence. Default false."}
            },
            "required": ["path", "old_string", "new_string"],
            "additionalProperties": false
        })
    }

    fn call(&self, input: Input, cx: &Context) -> Result<Output, ToolError> {
        let wp = cx.path(&input.path)?;
        edit(&wp, &input.old_string, &input.new_string, input.replace_all)
    }
}

/// Apply the replacement to the file at `wp`.
fn edit(wp: &WorkspacePath, old: &str, new: &str, replace_all: bool) -> Result<Output, ToolError> {
    let shown = wp.display();
    if old.is_empty() {
        return Err(ToolError::invalid_input(
            "old_string is empty; give the exact text to replace (to write a whole file, use write_file)",
        ));
    }
    if old == new {
        return Err(ToolError::invalid_input(
            "old_string and new_string are identical; there is nothing to change",
        ));
    }
    let before = fs::read_to_string(wp.guest()).map_err(|e| match e.kind() {
        io::ErrorKind::InvalidData => ToolError::invalid_input(format!(
            "{shown}: not UTF-8 text; edit_file only edits text files"
        )),
        _ => ToolError::from_io(&e, shown),
    })?;
    let count = before.matches(old).count();
    if count == 0 {
        let hint = if before.contains("\r\n")
            && !old.contains("\r\n")
            && before.contains(&old.replace('\n', "\r\n"))
        {
            " The file uses CRLF line endings: write \\r\\n in old_string."
        } else {
            ""
        };
        return Err(ToolError::invalid_input(format!(
            "{shown}: old_string not found. It must match the file exactly, whitespace and indentation \
             included; read the file again with read_file and copy the text from it.{hint}"
        )));
    }
    if count > 1 && !replace_all {
        return Err(ToolError::invalid_input(format!(
            "{shown}: old_string matches {count} times; add surrounding lines to old_string so it matches \
             exactly once, or set replace_all=true to replace every occurrence"
        )));
    }
    let after = if replace_all {
        before.replace(old, new)
    } else {
        before.replacen(old, new, 1)
    };
    write_replacing(wp, &after)?;

    let mut text = format!(
        "{shown}: replaced {}\n",
        crate::plural(count, "occurrence", "occurrences")
    );
    text.push_str(&diff(shown, &before, &after));
    Ok(Output::text(text).with_structured(json!({"path": shown, "replacements": count})))
}

/// Rewrite `wp` in place with `content` (through a symlink, if it is one).
fn write_replacing(wp: &WorkspacePath, content: &str) -> Result<(), ToolError> {
    fs::write(wp.guest(), content).map_err(|e| crate::write_error(&e, wp.display()))
}

/// A unified diff of the change, with three lines of context, capped at [`MAX_DIFF`].
fn diff(shown: &str, before: &str, after: &str) -> String {
    let diff = TextDiff::configure()
        .timeout(Duration::from_secs(2))
        .diff_lines(before, after);
    let mut text = diff
        .unified_diff()
        .context_radius(3)
        .header(&format!("a/{shown}"), &format!("b/{shown}"))
        .to_string();
    if text.len() > MAX_DIFF {
        let mut cut = MAX_DIFF;
        while !text.is_char_boundary(cut) {
            cut -= 1;
        }
        text.truncate(cut);
        text.push_str("\n[diff truncated; read the file to see the rest of the change]\n");
    }
    text
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testutil::{put, workspace};

    fn call(cx: &Context, old: &str, new: &str, replace_all: bool) -> Result<Output, ToolError> {
        let input = Input {
            path: "f.txt".into(),
            old_string: old.into(),
            new_string: new.into(),
            replace_all,
        };
        EditFile.call(input, cx)
    }

    #[test]
    fn replaces_once_and_shows_a_diff() {
        let (dir, cx) = workspace();
        put(&dir, "f.txt", "a\nb\nc\n");
        let out = call(&cx, "b\n", "B\n", false).unwrap();
        assert_eq!(
            out.text,
            "f.txt: replaced 1 occurrence\n--- a/f.txt\n+++ b/f.txt\n@@ -1,3 +1,3 @@\n a\n-b\n+B\n c\n"
        );
        assert_eq!(out.structured.unwrap()["replacements"], 1);
        assert_eq!(
            fs::read_to_string(dir.path().join("f.txt")).unwrap(),
            "a\nB\nc\n"
        );
    }

    #[test]
    fn ambiguity_needs_replace_all() {
        let (dir, cx) = workspace();
        put(&dir, "f.txt", "x x x\n");
        let err = call(&cx, "x", "y", false).unwrap_err();
        assert!(
            err.message
                .starts_with("f.txt: old_string matches 3 times;"),
            "{}",
            err.message
        );
        assert!(err.message.contains("replace_all=true"));
        let out = call(&cx, "x", "y", true).unwrap();
        assert_eq!(out.structured.unwrap()["replacements"], 3);
        assert_eq!(
            fs::read_to_string(dir.path().join("f.txt")).unwrap(),
            "y y y\n"
        );
    }

    #[test]
    fn refuses_bad_edits() {
        let (dir, cx) = workspace();
        put(&dir, "f.txt", "one\r\ntwo\r\n");
        assert!(
            call(&cx, "", "x", false)
                .unwrap_err()
                .message
                .starts_with("old_string is empty")
        );
        assert!(
            call(&cx, "one", "one", false)
                .unwrap_err()
                .message
                .contains("identical")
        );
        let err = call(&cx, "one\ntwo", "z", false).unwrap_err();
        assert!(
            err.message.starts_with("f.txt: old_string not found."),
            "{}",
            err.message
        );
        assert!(err.message.contains("read_file"));
        assert!(err.message.contains("CRLF"));
        assert!(
            !call(&cx, "three", "z", false)
                .unwrap_err()
                .message
                .contains("CRLF")
        );
        std::fs::write(dir.path().join("f.txt"), b"\xff\xfe").unwrap();
        assert!(
            call(&cx, "a", "b", false)
                .unwrap_err()
                .message
                .contains("not UTF-8")
        );
    }

    #[test]
    fn edits_through_a_symlink() {
        let (dir, cx) = workspace();
        put(&dir, "real.txt", "hello\n");
        std::os::unix::fs::symlink("real.txt", dir.path().join("f.txt")).unwrap();
        call(&cx, "hello", "bye", false).unwrap();
        assert!(
            fs::symlink_metadata(dir.path().join("f.txt"))
                .unwrap()
                .file_type()
                .is_symlink()
        );
        assert_eq!(
            fs::read_to_string(dir.path().join("real.txt")).unwrap(),
            "bye\n"
        );
    }
}
