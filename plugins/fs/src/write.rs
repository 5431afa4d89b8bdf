//! `write_file`: create a file or replace its whole content.
//!
//! Parent directories are created only when the input allows it, and the
//! result says whether the file was created or overwritten, so a model
//! notices when it replaced something it had not read.

use std::fs;
use std::io;
use std::path::Path;

use serde::Deserialize;
use warden_sdk::{
    Annotations, Context, Output, Tool, ToolError, WorkspacePath,
    serde_json::{Value, json},
};

/// Writes a whole file.
pub struct WriteFile;

/// Input of `write_file`; see the schema for each field.
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Input {
    path: String,
    content: String,
    #[serde(default = "yes")]
    create_dirs: bool,
}

fn yes() -> bool {
    true
}

impl Tool for WriteFile {
    type Input = Input;
    const NAME: &'static str = "write_file";
    const DESCRIPTION: &'static str = "Write `content` to a file in the workspace, creating it or replacing \
        everything it held. Missing parent directories are created unless `create_dirs` is false. \
        To change part of an existing file, prefer edit_file.";
    const ANNOTATIONS: Annotations = Annotations::DESTRUCTIVE;

    fn input_schema(&self) -> Value {
        json!({
            "type": "object",
            "properties": {
                "path": {"type": "string", "description": "File path, relative to the workspace root."},
                "content": {"type": "string", "description": "The complete new content of the file."},
                "create_dirs": {"type": "boolean", "description": "Create missing parent directories. Default true."}
            },
            "required": ["path", "content"],
            "additionalProperties": false
        })
    }

    fn call(&self, input: Input, cx: &Context) -> Result<Output, ToolError> {
        let wp = cx.path(&input.path)?;
        write(&wp, &input.content, input.create_dirs)
    }
}

/// Write `content` to `wp`, creating parents when `create_dirs`.
fn write(wp: &WorkspacePath, content: &str, create_dirs: bool) -> Result<Output, ToolError> {
    let shown = wp.display();
    if wp.relative().is_empty() {
        return Err(ToolError::invalid_input(if wp.is_extra() {
            format!("{shown} is a granted directory itself; give a file path")
        } else {
            "path names the workspace root; give a file path".to_string()
        }));
    }
    let created = match fs::metadata(wp.guest()) {
        Ok(meta) if meta.is_dir() => {
            return Err(ToolError::invalid_input(format!(
                "{shown}: is a directory; give a file path"
            )));
        }
        Ok(_) => false,
        Err(e) if e.kind() == io::ErrorKind::NotFound => true,
        Err(e) => return Err(ToolError::from_io(&e, shown)),
    };
    let parent = wp.parent();
    let parent_shown = parent.as_ref().map_or(".", |p| p.display());
    if created
        && create_dirs
        && let Some(parent) = Path::new(wp.guest()).parent()
        && !parent.is_dir()
    {
        fs::create_dir_all(parent).map_err(|e| crate::write_error(&e, parent_shown))?;
    }
    fs::write(wp.guest(), content).map_err(|e| {
        if created && !create_dirs && e.kind() == io::ErrorKind::NotFound {
            ToolError::not_found(format!(
                "{shown}: parent directory {parent_shown} does not exist; set create_dirs=true to create it"
            ))
        } else {
            crate::write_error(&e, shown)
        }
    })?;
    let verb = if created { "created" } else { "overwrote" };
    let bytes = content.len();
    Ok(Output::text(format!(
        "{verb} {shown} ({})",
        crate::plural(bytes, "byte", "bytes")
    ))
    .with_structured(json!({"path": shown, "bytes": bytes, "created": created})))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testutil::{put, workspace};

    fn call(
        cx: &Context,
        path: &str,
        content: &str,
        create_dirs: bool,
    ) -> Result<Output, ToolError> {
        WriteFile.call(
            Input {
                path: path.into(),
                content: content.into(),
                create_dirs,
            },
            cx,
        )
    }

    #[test]
    fn creates_then_overwrites() {
        let (dir, cx) = workspace();
        let out = call(&cx, "a/b/new.txt", "hello", true).unwrap();
        assert_eq!(out.text, "created a/b/new.txt (5 bytes)");
        assert_eq!(out.structured.unwrap()["created"], true);
        let out = call(&cx, "a/b/new.txt", "hi", true).unwrap();
        assert_eq!(out.text, "overwrote a/b/new.txt (2 bytes)");
        assert_eq!(
            fs::read_to_string(dir.path().join("a/b/new.txt")).unwrap(),
            "hi"
        );
    }

    #[test]
    fn missing_parent_without_create_dirs() {
        let (_dir, cx) = workspace();
        let err = call(&cx, "nope/x.txt", "x", false).unwrap_err();
        assert_eq!(
            err.message,
            "nope/x.txt: parent directory nope does not exist; set create_dirs=true to create it"
        );
    }

    #[test]
    fn refuses_directories_and_root() {
        let (dir, cx) = workspace();
        put(&dir, "d/f", "");
        assert_eq!(
            call(&cx, "d", "x", true).unwrap_err().message,
            "d: is a directory; give a file path"
        );
        assert!(
            call(&cx, ".", "x", true)
                .unwrap_err()
                .message
                .contains("workspace root")
        );
        let root = dir.path().to_str().unwrap();
        assert!(
            !call(&cx, "../x", "x", true)
                .unwrap_err()
                .message
                .contains(root)
        );
    }
}
