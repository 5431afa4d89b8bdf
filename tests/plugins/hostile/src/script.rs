//! A scripted sequence of file operations, each on a workspace-relative
//! path, so tests can compare what the host recorded with what was done.

use std::fs;
use std::io::Write;

use warden_sdk::serde_json::{Value, json};
use warden_sdk::{Annotations, Context, Output, Tool, ToolError};

use crate::io_error;

/// Where the workspace is in the guest.
const WORKSPACE: &str = "/workspace";

#[derive(serde::Deserialize)]
pub struct ScriptInput {
    steps: Vec<Step>,
}

/// One operation; paths are relative to the workspace.
#[derive(serde::Deserialize)]
#[serde(tag = "op", rename_all = "snake_case")]
enum Step {
    /// Read a file's bytes.
    Read { path: String },
    /// `std::fs::write`: create or truncate, then write.
    Write { path: String, content: String },
    /// Create a file that must not exist yet, and write to it.
    Create { path: String, content: String },
    /// Delete a file.
    Delete { path: String },
    /// Move a file or directory.
    Rename { from: String, to: String },
    /// Create a directory.
    Mkdir { path: String },
    /// Delete an empty directory.
    Rmdir { path: String },
    /// List a directory.
    List { path: String },
    /// Set a file's modification time.
    Touch { path: String },
}

fn at(path: &str) -> String {
    format!("{WORKSPACE}/{path}")
}

fn run(step: &Step) -> Result<(), ToolError> {
    let io = |op: &str, path: &str| {
        let path = path.to_string();
        let op = op.to_string();
        move |e: std::io::Error| io_error(&op, &path, &e)
    };
    match step {
        Step::Read { path } => fs::read(at(path)).map(drop).map_err(io("read", path)),
        Step::Write { path, content } => fs::write(at(path), content).map_err(io("write", path)),
        Step::Create { path, content } => fs::File::create_new(at(path))
            .and_then(|mut f| f.write_all(content.as_bytes()))
            .map_err(io("create", path)),
        Step::Delete { path } => fs::remove_file(at(path)).map_err(io("delete", path)),
        Step::Rename { from, to } => fs::rename(at(from), at(to)).map_err(io("rename", from)),
        Step::Mkdir { path } => fs::create_dir(at(path)).map_err(io("mkdir", path)),
        Step::Rmdir { path } => fs::remove_dir(at(path)).map_err(io("rmdir", path)),
        Step::List { path } => fs::read_dir(at(path))
            .map(|entries| entries.for_each(drop))
            .map_err(io("list", path)),
        Step::Touch { path } => {
            let when = std::time::UNIX_EPOCH + std::time::Duration::from_secs(1);
            fs::File::open(at(path))
                .and_then(|f| f.set_modified(when))
                .map_err(io("touch", path))
        }
    }
}

/// Runs the steps in order, stopping at the first that fails.
pub struct FsScript;

impl Tool for FsScript {
    type Input = ScriptInput;
    const NAME: &'static str = "fs_script";
    const DESCRIPTION: &'static str = "Run a sequence of file operations on workspace-relative paths: \
         read, write, create, delete, rename, mkdir, rmdir, list, touch.";
    const ANNOTATIONS: Annotations = Annotations::DESTRUCTIVE;

    fn input_schema(&self) -> Value {
        json!({
            "type": "object",
            "properties": {"steps": {"type": "array", "items": {"type": "object"}}},
            "required": ["steps"]
        })
    }

    fn call(&self, input: ScriptInput, _cx: &Context) -> Result<Output, ToolError> {
        for step in &input.steps {
            run(step)?;
        }
        Ok(Output::text(format!("{} steps done", input.steps.len())))
    }
}
