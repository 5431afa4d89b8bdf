//! Warden's built-in `grep`: a gitignore-aware regex search of the workspace.
//!
//! The walk honours `.gitignore` and `.ignore` files (with or without a git
//! repository), skips hidden and binary files unless told otherwise and never
//! follows symlinks. Every path shown is workspace-relative: neither the
//! guest preopen nor a host path appears in output or errors.

mod literals;
mod run;
mod searcher;
mod shard;
mod summary;

use regex::bytes::RegexBuilder;
use serde::{Deserialize, Serialize};
use warden_sdk::{
    Annotations, Context, Output, Tool, ToolError, register,
    serde_json::{Value, json},
};

use searcher::Searcher;
use warden_sdk::walk::Filter;

/// Matching lines shown when the input gives no `max_matches`.
const DEFAULT_MAX_MATCHES: usize = 200;
/// The largest `max_matches` honoured.
pub(crate) const MAX_MATCHES: usize = 5000;
/// The most context lines on either side of a match.
const MAX_CONTEXT: usize = 10;

register!(Grep);

/// Searches file contents with a regular expression.
struct Grep;

/// One glob or several.
#[derive(Deserialize, Serialize, Clone)]
#[serde(untagged)]
pub(crate) enum Globs {
    /// A single glob.
    One(String),
    /// Several globs, applied together.
    Many(Vec<String>),
}

/// Input of `grep`; see the schema for each field.
#[derive(Deserialize, Serialize, Clone)]
#[serde(deny_unknown_fields)]
pub(crate) struct Input {
    pattern: String,
    #[serde(default = "dot")]
    path: String,
    glob: Option<Globs>,
    #[serde(default)]
    case_insensitive: bool,
    #[serde(default)]
    fixed_strings: bool,
    context: Option<usize>,
    before: Option<usize>,
    after: Option<usize>,
    max_matches: Option<usize>,
    #[serde(default)]
    include_hidden: bool,
}

fn dot() -> String {
    ".".into()
}

impl Tool for Grep {
    type Input = Input;
    const NAME: &'static str = "grep";
    const DESCRIPTION: &'static str = "Search file contents with a regular expression (Rust regex syntax), like \
        ripgrep. Prints `path:LINE:text` for matching lines and `path-LINE-text` for context lines, with `--` \
        between separate groups, then a summary. Files ignored by .gitignore or .ignore, hidden files and \
        binary files are skipped. `^` and `$` match at line boundaries; a match never spans lines. Narrow \
        the search with `path` (a directory or a single file) and `glob`.";
    const ANNOTATIONS: Annotations = Annotations::READ_ONLY;

    fn input_schema(&self) -> Value {
        let lines = |what: &str| json!({"type": "integer", "minimum": 0, "maximum": MAX_CONTEXT, "description": what});
        json!({
            "type": "object",
            "properties": {
                "pattern": {"type": "string", "description": "Regular expression (Rust regex syntax), or a literal with fixed_strings."},
                "path": {"type": "string", "description": "Directory or file to search, relative to the workspace root. Default \".\"."},
                "glob": {
                    "description": "Only search files matching these globs, e.g. \"*.rs\"; prefix with ! to exclude, e.g. \"!target/**\".",
                    "oneOf": [{"type": "string"}, {"type": "array", "items": {"type": "string"}}]
                },
                "case_insensitive": {"type": "boolean", "description": "Ignore case. Default false."},
                "fixed_strings": {"type": "boolean", "description": "Treat pattern as a literal string, not a regex. Default false."},
                "context": lines("Lines of context before and after each match. Default 0."),
                "before": lines("Lines of context before each match; overrides context."),
                "after": lines("Lines of context after each match; overrides context."),
                "max_matches": {"type": "integer", "minimum": 1, "maximum": MAX_MATCHES, "description": "Stop after this many matching lines. Default 200."},
                "include_hidden": {"type": "boolean", "description": "Also search hidden files and directories. Default false."}
            },
            "required": ["pattern"],
            "additionalProperties": false
        })
    }

    fn call(&self, input: Input, cx: &Context) -> Result<Output, ToolError> {
        let target = cx.path(&input.path)?;
        run::grep(&target, &input)
    }

    fn work(&self, task: &str, cx: &Context) -> Result<Output, ToolError> {
        shard::work(task, |path| cx.path(path))
    }
}

/// Compile the search from the input.
pub(crate) fn searcher(input: &Input) -> Result<Searcher, ToolError> {
    let pattern = if input.fixed_strings {
        regex::escape(&input.pattern)
    } else {
        input.pattern.clone()
    };
    let regex = RegexBuilder::new(&pattern)
        .case_insensitive(input.case_insensitive)
        .multi_line(true)
        .crlf(true)
        .build()
        .map_err(|e| ToolError::invalid_input(format!("invalid regex: {e}")))?;
    let context = input.context.unwrap_or(0);
    let filter = literals::required(&pattern, input.case_insensitive).map(|needles| Filter {
        needles,
        sniff: run::SNIFF as u32,
    });
    Ok(Searcher {
        regex,
        before: input.before.unwrap_or(context).min(MAX_CONTEXT),
        after: input.after.unwrap_or(context).min(MAX_CONTEXT),
        max_matches: input
            .max_matches
            .unwrap_or(DEFAULT_MAX_MATCHES)
            .clamp(1, MAX_MATCHES),
        filter,
    })
}
