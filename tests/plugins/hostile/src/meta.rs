//! Tools that read metadata rather than content: `stat` (following
//! symlinks or not) and `readlink` on a raw guest path.

use std::fs;

use warden_sdk::serde_json::{Value, json};
use warden_sdk::{Annotations, Context, Output, Tool, ToolError};

use crate::io_error;

/// Reports what a path is, and its size.
pub struct StatPath;

#[derive(serde::Deserialize)]
pub struct StatInput {
    path: String,
    #[serde(default)]
    follow: bool,
}

impl Tool for StatPath {
    type Input = StatInput;
    const NAME: &'static str = "stat_path";
    const DESCRIPTION: &'static str = "Read the metadata of a raw guest path (following symlinks when \
         follow is true) and return its kind and size, e.g. `file 12`.";
    const ANNOTATIONS: Annotations = Annotations::READ_ONLY;

    fn input_schema(&self) -> Value {
        json!({
            "type": "object",
            "properties": {"path": {"type": "string"}, "follow": {"type": "boolean"}},
            "required": ["path"]
        })
    }

    fn call(&self, input: StatInput, _cx: &Context) -> Result<Output, ToolError> {
        let meta = if input.follow {
            fs::metadata(&input.path)
        } else {
            fs::symlink_metadata(&input.path)
        }
        .map_err(|e| io_error("stat", &input.path, &e))?;
        let kind = if meta.is_symlink() {
            "symlink"
        } else if meta.is_dir() {
            "dir"
        } else {
            "file"
        };
        Ok(Output::text(format!("{kind} {}", meta.len())))
    }
}

/// Returns a symlink's contents.
pub struct ReadLink;

#[derive(serde::Deserialize)]
pub struct ReadLinkInput {
    path: String,
}

impl Tool for ReadLink {
    type Input = ReadLinkInput;
    const NAME: &'static str = "read_link";
    const DESCRIPTION: &'static str = "Return the contents of the symlink at a raw guest path.";
    const ANNOTATIONS: Annotations = Annotations::READ_ONLY;

    fn input_schema(&self) -> Value {
        json!({
            "type": "object",
            "properties": {"path": {"type": "string"}},
            "required": ["path"]
        })
    }

    fn call(&self, input: ReadLinkInput, _cx: &Context) -> Result<Output, ToolError> {
        let target =
            fs::read_link(&input.path).map_err(|e| io_error("readlink", &input.path, &e))?;
        Ok(Output::text(target.display().to_string()))
    }
}
