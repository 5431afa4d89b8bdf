//! Raw `std::fs` on whatever guest path the input names: no workspace
//! mapping, no checks. The host's WASI layer alone decides what succeeds.

use std::fs::{self, OpenOptions};
use std::io::Write;

use warden_sdk::serde_json::{Value, json};
use warden_sdk::{Annotations, Context, Output, Tool, ToolError};

use crate::io_error;

#[derive(serde::Deserialize)]
pub struct PathInput {
    path: String,
}

fn path_schema() -> Value {
    json!({
        "type": "object",
        "properties": {"path": {"type": "string"}},
        "required": ["path"]
    })
}

#[derive(serde::Deserialize)]
pub struct FromToInput {
    from: String,
    to: String,
}

fn from_to_schema() -> Value {
    json!({
        "type": "object",
        "properties": {"from": {"type": "string"}, "to": {"type": "string"}},
        "required": ["from", "to"]
    })
}

/// Reads a file as UTF-8 text.
pub struct ReadPath;

impl Tool for ReadPath {
    type Input = PathInput;
    const NAME: &'static str = "read_path";
    const DESCRIPTION: &'static str = "Read the file at a raw guest path and return its text.";
    const ANNOTATIONS: Annotations = Annotations::READ_ONLY;

    fn input_schema(&self) -> Value {
        path_schema()
    }

    fn call(&self, input: PathInput, _cx: &Context) -> Result<Output, ToolError> {
        let text =
            fs::read_to_string(&input.path).map_err(|e| io_error("read", &input.path, &e))?;
        Ok(Output::text(text))
    }
}

/// Creates or overwrites (or appends to) a file.
pub struct WritePath;

#[derive(serde::Deserialize)]
pub struct WritePathInput {
    path: String,
    content: String,
    #[serde(default = "yes")]
    truncate: bool,
    #[serde(default)]
    append: bool,
}

fn yes() -> bool {
    true
}

impl Tool for WritePath {
    type Input = WritePathInput;
    const NAME: &'static str = "write_path";
    const DESCRIPTION: &'static str = "Open a raw guest path with create+write (truncating, or appending when \
         append is true; truncate is ignored when appending) and write content.";
    const ANNOTATIONS: Annotations = Annotations::DESTRUCTIVE;

    fn input_schema(&self) -> Value {
        json!({
            "type": "object",
            "properties": {
                "path": {"type": "string"},
                "content": {"type": "string"},
                "truncate": {"type": "boolean", "default": true},
                "append": {"type": "boolean", "default": false}
            },
            "required": ["path", "content"]
        })
    }

    fn call(&self, input: WritePathInput, _cx: &Context) -> Result<Output, ToolError> {
        let mut file = OpenOptions::new()
            .create(true)
            .write(true)
            .truncate(input.truncate && !input.append)
            .append(input.append)
            .open(&input.path)
            .map_err(|e| io_error("open", &input.path, &e))?;
        file.write_all(input.content.as_bytes())
            .map_err(|e| io_error("write", &input.path, &e))?;
        Ok(Output::text(format!("wrote {} bytes", input.content.len())))
    }
}

/// Opens a file for writing with truncation and writes nothing.
pub struct OpenTruncate;

impl Tool for OpenTruncate {
    type Input = PathInput;
    const NAME: &'static str = "open_truncate";
    const DESCRIPTION: &'static str =
        "Open an existing raw guest path with write+truncate, writing nothing.";
    const ANNOTATIONS: Annotations = Annotations::DESTRUCTIVE;

    fn input_schema(&self) -> Value {
        path_schema()
    }

    fn call(&self, input: PathInput, _cx: &Context) -> Result<Output, ToolError> {
        OpenOptions::new()
            .write(true)
            .truncate(true)
            .open(&input.path)
            .map_err(|e| io_error("open", &input.path, &e))?;
        Ok(Output::text("truncated"))
    }
}

/// Renames `from` to `to`.
pub struct Rename;

impl Tool for Rename {
    type Input = FromToInput;
    const NAME: &'static str = "rename";
    const DESCRIPTION: &'static str = "Rename the raw guest path from to to.";
    const ANNOTATIONS: Annotations = Annotations::DESTRUCTIVE;

    fn input_schema(&self) -> Value {
        from_to_schema()
    }

    fn call(&self, input: FromToInput, _cx: &Context) -> Result<Output, ToolError> {
        let both = format!("{} -> {}", input.from, input.to);
        fs::rename(&input.from, &input.to).map_err(|e| io_error("rename", &both, &e))?;
        Ok(Output::text("renamed"))
    }
}

/// Makes `to` a hard link to the existing file `from`.
pub struct HardLink;

impl Tool for HardLink {
    type Input = FromToInput;
    const NAME: &'static str = "hard_link";
    const DESCRIPTION: &'static str =
        "Create a hard link at to pointing at the existing raw guest path from.";
    const ANNOTATIONS: Annotations = Annotations::DESTRUCTIVE;

    fn input_schema(&self) -> Value {
        from_to_schema()
    }

    fn call(&self, input: FromToInput, _cx: &Context) -> Result<Output, ToolError> {
        let both = format!("{} -> {}", input.from, input.to);
        fs::hard_link(&input.from, &input.to).map_err(|e| io_error("hard_link", &both, &e))?;
        Ok(Output::text("linked"))
    }
}

/// Makes `link` a symbolic link whose contents are `target`, verbatim.
pub struct Symlink;

#[derive(serde::Deserialize)]
pub struct SymlinkInput {
    target: String,
    link: String,
}

impl Tool for Symlink {
    type Input = SymlinkInput;
    const NAME: &'static str = "symlink";
    const DESCRIPTION: &'static str =
        "Create a symbolic link at the raw guest path link whose target is target, verbatim.";
    const ANNOTATIONS: Annotations = Annotations::DESTRUCTIVE;

    fn input_schema(&self) -> Value {
        json!({
            "type": "object",
            "properties": {"target": {"type": "string"}, "link": {"type": "string"}},
            "required": ["target", "link"]
        })
    }

    fn call(&self, input: SymlinkInput, _cx: &Context) -> Result<Output, ToolError> {
        let both = format!("{} -> {}", input.link, input.target);
        crate::wasi_libc::symlink_path(&input.target, &input.link)
            .map_err(|e| io_error("symlink", &both, &e))?;
        Ok(Output::text("symlinked"))
    }
}

/// Removes a file, or a directory and everything under it.
pub struct Remove;

impl Tool for Remove {
    type Input = PathInput;
    const NAME: &'static str = "remove";
    const DESCRIPTION: &'static str =
        "Remove the raw guest path: remove_dir_all for a directory, remove_file otherwise.";
    const ANNOTATIONS: Annotations = Annotations::DESTRUCTIVE;

    fn input_schema(&self) -> Value {
        path_schema()
    }

    fn call(&self, input: PathInput, _cx: &Context) -> Result<Output, ToolError> {
        let is_dir = fs::symlink_metadata(&input.path).is_ok_and(|m| m.is_dir());
        let removed = if is_dir {
            fs::remove_dir_all(&input.path)
        } else {
            fs::remove_file(&input.path)
        };
        removed.map_err(|e| io_error("remove", &input.path, &e))?;
        Ok(Output::text("removed"))
    }
}

/// Sets a file's length, truncating or extending it.
pub struct SetLen;

#[derive(serde::Deserialize)]
pub struct SetLenInput {
    path: String,
    len: u64,
}

impl Tool for SetLen {
    type Input = SetLenInput;
    const NAME: &'static str = "set_len";
    const DESCRIPTION: &'static str =
        "Open the raw guest path for writing and set its length to len bytes.";
    const ANNOTATIONS: Annotations = Annotations::DESTRUCTIVE;

    fn input_schema(&self) -> Value {
        json!({
            "type": "object",
            "properties": {"path": {"type": "string"}, "len": {"type": "integer", "minimum": 0}},
            "required": ["path", "len"]
        })
    }

    fn call(&self, input: SetLenInput, _cx: &Context) -> Result<Output, ToolError> {
        let file = OpenOptions::new()
            .write(true)
            .open(&input.path)
            .map_err(|e| io_error("open", &input.path, &e))?;
        file.set_len(input.len)
            .map_err(|e| io_error("set_len", &input.path, &e))?;
        Ok(Output::text(format!("length set to {}", input.len)))
    }
}

/// Sets a file's modification time through a descriptor opened read-only.
pub struct SetMtime;

impl Tool for SetMtime {
    type Input = PathInput;
    const NAME: &'static str = "set_mtime";
    const DESCRIPTION: &'static str =
        "Open the raw guest path read-only and set its modification time to 1970-01-01T00:00:01Z.";
    const ANNOTATIONS: Annotations = Annotations::DESTRUCTIVE;

    fn input_schema(&self) -> Value {
        path_schema()
    }

    fn call(&self, input: PathInput, _cx: &Context) -> Result<Output, ToolError> {
        let file = fs::File::open(&input.path).map_err(|e| io_error("open", &input.path, &e))?;
        let when = std::time::UNIX_EPOCH + std::time::Duration::from_secs(1);
        file.set_modified(when)
            .map_err(|e| io_error("set_modified", &input.path, &e))?;
        Ok(Output::text("mtime set"))
    }
}

/// Sets a workspace path's times with `set-times-at`, following symlinks,
/// without opening it (std has no such call, so this goes to WASI itself).
pub struct TouchAt;

impl Tool for TouchAt {
    type Input = PathInput;
    const NAME: &'static str = "touch_at";
    const DESCRIPTION: &'static str = "Set the times of a path relative to /workspace to now with set-times-at, following symlinks.";
    const ANNOTATIONS: Annotations = Annotations::DESTRUCTIVE;

    fn input_schema(&self) -> Value {
        path_schema()
    }

    fn call(&self, input: PathInput, _cx: &Context) -> Result<Output, ToolError> {
        use wasip2::filesystem::types::{NewTimestamp, PathFlags};
        let dir = crate::workspace_preopen()?;
        let follow = PathFlags::SYMLINK_FOLLOW;
        dir.set_times_at(follow, &input.path, NewTimestamp::Now, NewTimestamp::Now)
            .map_err(|e| ToolError::io(format!("set-times-at {}: {e:?}", input.path)))?;
        Ok(Output::text("times set"))
    }
}

/// Lists one directory descriptor twice with `read-directory` itself: the
/// `/workspace` preopen when the path is empty, else the directory the path
/// names below it, opened once.
pub struct ListTwice;

impl Tool for ListTwice {
    type Input = PathInput;
    const NAME: &'static str = "list_twice";
    const DESCRIPTION: &'static str = "List a directory relative to /workspace (the preopen itself when the path is empty) twice through one descriptor: the two sorted listings, separated by a line `--`.";
    const ANNOTATIONS: Annotations = Annotations::READ_ONLY;

    fn input_schema(&self) -> Value {
        path_schema()
    }

    fn call(&self, input: PathInput, _cx: &Context) -> Result<Output, ToolError> {
        use wasip2::filesystem::types::{DescriptorFlags, OpenFlags, PathFlags};
        let root = crate::workspace_preopen()?;
        let err = |op: &str, e: wasip2::filesystem::types::ErrorCode| {
            ToolError::io(format!("{op} {}: {e:?}", input.path))
        };
        let opened;
        let dir = if input.path.is_empty() {
            &root
        } else {
            opened = root
                .open_at(
                    PathFlags::empty(),
                    &input.path,
                    OpenFlags::DIRECTORY,
                    DescriptorFlags::READ,
                )
                .map_err(|e| err("open", e))?;
            &opened
        };
        let mut listings = Vec::new();
        for _ in 0..2 {
            let stream = dir.read_directory().map_err(|e| err("list", e))?;
            let mut names = Vec::new();
            while let Some(entry) = stream.read_directory_entry().map_err(|e| err("list", e))? {
                names.push(entry.name);
            }
            names.sort();
            listings.push(names.join("\n"));
        }
        Ok(Output::text(listings.join("\n--\n")))
    }
}

/// Creates one directory.
pub struct Mkdir;

impl Tool for Mkdir {
    type Input = PathInput;
    const NAME: &'static str = "mkdir";
    const DESCRIPTION: &'static str =
        "Create a directory at the raw guest path (parent must exist).";
    const ANNOTATIONS: Annotations = Annotations::DESTRUCTIVE;

    fn input_schema(&self) -> Value {
        path_schema()
    }

    fn call(&self, input: PathInput, _cx: &Context) -> Result<Output, ToolError> {
        fs::create_dir(&input.path).map_err(|e| io_error("mkdir", &input.path, &e))?;
        Ok(Output::text("created"))
    }
}

/// Lists a directory's entry names.
pub struct List;

impl Tool for List {
    type Input = PathInput;
    const NAME: &'static str = "list";
    const DESCRIPTION: &'static str =
        "List the entry names of the directory at a raw guest path, sorted, one per line.";
    const ANNOTATIONS: Annotations = Annotations::READ_ONLY;

    fn input_schema(&self) -> Value {
        path_schema()
    }

    fn call(&self, input: PathInput, _cx: &Context) -> Result<Output, ToolError> {
        let entries = fs::read_dir(&input.path).map_err(|e| io_error("list", &input.path, &e))?;
        let mut names = Vec::new();
        for entry in entries {
            let entry = entry.map_err(|e| io_error("list", &input.path, &e))?;
            names.push(entry.file_name().to_string_lossy().into_owned());
        }
        names.sort();
        Ok(Output::text(names.join("\n")))
    }
}
