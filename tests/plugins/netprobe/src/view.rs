//! What the guest can see, and a file leaked through every channel.

use std::io::Write as _;

use warden_sdk::serde_json::{Value, json};
use warden_sdk::{Annotations, Context, LogLevel, Output, Tool, ToolError};

/// Input of `see_all`.
#[derive(serde::Deserialize)]
pub struct SeeInput {}

/// Reports the environment, arguments, stdin, the call context and every
/// file under the workspace with its content.
pub struct SeeAll;

impl Tool for SeeAll {
    type Input = SeeInput;
    const NAME: &'static str = "see_all";
    const DESCRIPTION: &'static str = "Return, as JSON, everything the guest can see: environment, \
         arguments, stdin, call context, and every workspace file with its content.";
    const ANNOTATIONS: Annotations = Annotations::READ_ONLY;

    fn input_schema(&self) -> Value {
        json!({"type": "object", "properties": {}})
    }

    fn call(&self, _input: SeeInput, cx: &Context) -> Result<Output, ToolError> {
        let vars: Vec<(String, String)> = std::env::vars().collect();
        let args: Vec<String> = std::env::args().collect();
        let mut stdin = String::new();
        let _ = std::io::Read::read_to_string(&mut std::io::stdin(), &mut stdin);
        let mut files = Vec::new();
        let root = cx.path(".").ok().map(|p| p.guest().to_string());
        if let Some(root) = &root {
            walk(std::path::Path::new(root), &mut files);
        }
        let view = json!({
            "env": vars,
            "args": args,
            "stdin": stdin,
            "call_id": cx.call_id,
            "deadline_ms": cx.deadline_ms,
            "workspace": root,
            "files": files,
        });
        Ok(Output::text(view.to_string()))
    }
}

fn walk(dir: &std::path::Path, out: &mut Vec<(String, String)>) {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    for e in entries.flatten() {
        let p = e.path();
        if p.is_dir() {
            walk(&p, out);
        } else {
            let content = std::fs::read(&p).map(|b| String::from_utf8_lossy(&b).into_owned());
            out.push((
                p.display().to_string(),
                content.unwrap_or_else(|e| format!("error: {e}")),
            ));
        }
    }
}

/// Input of `leak_file`.
#[derive(serde::Deserialize)]
pub struct LeakInput {
    /// Workspace-relative file to leak.
    path: String,
    /// Leak through an error instead of the output.
    #[serde(default)]
    as_error: bool,
}

/// Puts a workspace file's content in the output (text and structured),
/// the logs, progress, stdout and stderr — or in an error.
pub struct LeakFile;

impl Tool for LeakFile {
    type Input = LeakInput;
    const NAME: &'static str = "leak_file";
    const DESCRIPTION: &'static str =
        "Read a workspace file and repeat its content through every channel.";
    const ANNOTATIONS: Annotations = Annotations::READ_ONLY;

    fn input_schema(&self) -> Value {
        json!({
            "type": "object",
            "properties": {"path": {"type": "string"}, "as_error": {"type": "boolean"}},
            "required": ["path"]
        })
    }

    fn call(&self, input: LeakInput, cx: &Context) -> Result<Output, ToolError> {
        let path = cx.path(&input.path)?;
        let text = std::fs::read_to_string(path.guest())
            .map_err(|e| ToolError::io(format!("read {}: {e}", input.path)))?;
        warden_sdk::log(LogLevel::Info, &format!("log: {text}"));
        warden_sdk::progress(&format!("progress: {text}"), None);
        let _ = writeln!(std::io::stdout(), "stdout: {text}");
        let _ = writeln!(std::io::stderr(), "stderr: {text}");
        if input.as_error {
            return Err(ToolError::io(format!("error: {text}")));
        }
        Ok(Output::text(format!("text: {text}")).with_structured(json!({"leak": text})))
    }
}
