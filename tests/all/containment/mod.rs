//! Containment: no call reads, writes, links or lists anything outside its
//! workspace, whether it goes through the built-in tools (lexical mapping in
//! the SDK, then WASI) or through the hostile fixture (raw `std::fs` on guest
//! paths, WASI alone). Every refusal is checked for its effect too: the
//! canaries beside the workspace are intact and, where nothing may change,
//! the workspace is byte-for-byte the same.

mod extra_dirs;
mod raw;
mod tools;

use std::collections::BTreeMap;
use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};

use serde_json::{Value, json};
use warden::base::Limits;
use warden::capability::{FsAccess, Grant, WriteMode};
use warden::pipeline::{CallResult, Stage};
use warden::protocol::{ErrorKind, ToolOutcome};
use warden::runtime::CallReport;

use crate::support::*;

/// Text only a read of a canary could produce.
pub(super) const CANARY_TEXT: &str = "must stay unread";

/// Panic if `text`, which a model would see, carries a host path or canary content.
#[track_caller]
pub(super) fn assert_sealed(text: &str, sb: &Sandbox) {
    assert_no_host_paths(text, sb);
    assert!(
        !text.contains(CANARY_TEXT),
        "canary content leaked in {text:?}"
    );
}

/// The message of a built-in call refused as `PermissionDenied`, checked for leaks.
#[track_caller]
pub(super) fn fs_refused(r: &CallResult, sb: &Sandbox) -> String {
    assert_eq!(r.stage, Stage::Executed, "{:?}", r.outcome);
    let message = err(r, ErrorKind::PermissionDenied);
    assert_sealed(&r.outcome.model_text(), sb);
    message
}

/// The input of built-in `tool` aimed at `path`: a write or an edit where the tool changes things.
pub(super) fn input_for(tool: &str, path: &str) -> Value {
    match tool {
        "read_file" | "list_dir" => json!({"path": path}),
        "glob" => json!({"pattern": "**/*", "path": path}),
        "grep" => json!({"pattern": "stay", "path": path}),
        "write_file" => json!({"path": path, "content": "pwned\n"}),
        "edit_file" => json!({"path": path, "old_string": "canary", "new_string": "pwned"}),
        other => panic!("no input for {other}"),
    }
}

pub(super) const FS_TOOLS: [&str; 6] = [
    "read_file",
    "write_file",
    "edit_file",
    "list_dir",
    "glob",
    "grep",
];

/// Run built-in `tool` on `path` with writes allowed, expecting a sandbox refusal.
#[track_caller]
pub(super) fn refused_everywhere(sb: &Sandbox, tools: &[&str], path: &str) {
    for tool in tools {
        let r = call(tool, input_for(tool, path), &sb.ws(), WriteMode::AllowWrite);
        let message = fs_refused(&r, sb);
        assert!(!message.is_empty(), "{tool} {path}");
    }
    sb.assert_canaries_intact();
}

/// One entry of a workspace snapshot.
#[derive(Debug, PartialEq, Eq)]
pub(super) enum Entry {
    File(Vec<u8>),
    Dir,
    Link(PathBuf),
}

/// Every path under `dir` (symlinks not followed) with its content.
pub(super) fn snapshot(dir: &Path) -> BTreeMap<PathBuf, Entry> {
    fn walk(root: &Path, dir: &Path, out: &mut BTreeMap<PathBuf, Entry>) {
        for entry in std::fs::read_dir(dir).unwrap() {
            let path = entry.unwrap().path();
            let rel = path.strip_prefix(root).unwrap().to_path_buf();
            let kind = std::fs::symlink_metadata(&path).unwrap().file_type();
            if kind.is_symlink() {
                out.insert(rel, Entry::Link(std::fs::read_link(&path).unwrap()));
            } else if kind.is_dir() {
                out.insert(rel, Entry::Dir);
                walk(root, &path, out);
            } else {
                out.insert(rel, Entry::File(std::fs::read(&path).unwrap()));
            }
        }
    }
    let mut out = BTreeMap::new();
    walk(dir, dir, &mut out);
    out
}

/// A hostile tool call under `grant`.
pub(super) fn raw(tool: &str, input: Value, grant: &Grant) -> CallReport {
    call_plugin(&hostile(), tool, input, grant, &Limits::default())
}

/// The message of a raw call that failed with `kind` and read no canary.
#[track_caller]
pub(super) fn raw_refused(r: &CallReport, kind: ErrorKind) -> String {
    let message = outcome_err(&r.outcome, kind);
    assert!(
        !message.contains(CANARY_TEXT),
        "canary content in {message:?}"
    );
    message
}

/// A workspace holding a file, a nested file and a subdirectory, for the raw tests.
pub(super) fn populated() -> Sandbox {
    let sb = Sandbox::new();
    sb.write("a.txt", "A\n");
    sb.write("sub/b.txt", "B\n");
    sb
}

pub(super) fn ok_report(r: &CallReport) -> &str {
    match &r.outcome {
        ToolOutcome::Success(out) => &out.text,
        other => panic!("expected success, got {other:?}"),
    }
}
