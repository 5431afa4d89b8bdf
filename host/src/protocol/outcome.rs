//! How a tool call ends.

use serde::{Deserialize, Serialize};

/// The one way every tool call ends.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum ToolOutcome {
    /// The tool ran and produced a result.
    Success(ToolOutput),
    /// The tool, or the sandbox around it, failed.
    Error(ToolError),
    /// The user cancelled the call before it finished.
    Cancelled,
    /// The call was not allowed to run.
    Denied {
        /// Why, in words the model can act on.
        reason: String,
    },
}

impl ToolOutcome {
    /// A short word for the outcome, for tables and logs.
    pub fn label(&self) -> &'static str {
        match self {
            ToolOutcome::Success(_) => "success",
            ToolOutcome::Error(_) => "error",
            ToolOutcome::Cancelled => "cancelled",
            ToolOutcome::Denied { .. } => "denied",
        }
    }

    /// The outcome with each of `paths` replaced by `<workspace>` in error
    /// and denial text, so what a model reads carries no host paths.
    /// Longer paths are replaced first; `/` and empty paths are ignored.
    pub fn hide_paths(self, paths: &[String]) -> ToolOutcome {
        let hide = |text: String| hide_paths_in(text, paths);
        match self {
            ToolOutcome::Error(e) => ToolOutcome::Error(ToolError::new(e.kind, hide(e.message))),
            ToolOutcome::Denied { reason } => ToolOutcome::Denied {
                reason: hide(reason),
            },
            o @ (ToolOutcome::Success(_) | ToolOutcome::Cancelled) => o,
        }
    }

    /// The text a model reads for this outcome.
    pub fn model_text(&self) -> String {
        match self {
            ToolOutcome::Success(out) => out.text.clone(),
            ToolOutcome::Error(e) => format!("error ({}): {}", e.kind.as_str(), e.message),
            ToolOutcome::Cancelled => "cancelled by the user".to_string(),
            ToolOutcome::Denied { reason } => format!("denied: {reason}"),
        }
    }
}

/// `text` with each of `paths` replaced by `<workspace>`, longer paths
/// first; `/` and empty paths are ignored.
pub fn hide_paths_in(mut text: String, paths: &[String]) -> String {
    let mut paths: Vec<&str> = paths
        .iter()
        .map(String::as_str)
        .filter(|p| p.len() > 1)
        .collect();
    paths.sort_by_key(|p| std::cmp::Reverse(p.len()));
    for p in &paths {
        text = text.replace(p, "<workspace>");
    }
    text
}

/// A successful result.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ToolOutput {
    /// What the model reads.
    pub text: String,
    /// Optional machine-readable result.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub structured: Option<serde_json::Value>,
    /// True when the host cut `text` at the output cap.
    #[serde(skip_serializing_if = "std::ops::Not::not", default)]
    pub truncated: bool,
}

/// A failed call: a kind and a message saying what to do next.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, thiserror::Error)]
#[error("{kind}: {message}")]
pub struct ToolError {
    pub kind: ErrorKind,
    pub message: String,
}

impl ToolError {
    pub fn new(kind: ErrorKind, message: impl Into<String>) -> Self {
        ToolError {
            kind,
            message: message.into(),
        }
    }
}

/// Why a call failed. Plugins report the first seven kinds and
/// `limit-exceeded` through WIT (0.1 plugins the first six); the host
/// decides the rest.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ErrorKind {
    /// Malformed input or a schema violation.
    InvalidInput,
    /// A named file or entity does not exist.
    NotFound,
    /// The sandbox or the system refused the operation.
    PermissionDenied,
    /// Any other I/O failure.
    Io,
    /// The call ran past its deadline and was interrupted.
    Timeout,
    /// A bug in the plugin, as the plugin reports it.
    Internal,
    /// The operation is not supported here (for example a special file);
    /// reported by 0.2 plugins.
    Unsupported,
    /// The plugin tried to grow its memory past the call's cap.
    MemoryLimit,
    /// The plugin hit another per-call limit: host-call fuel, open handles,
    /// random bytes or the write quota.
    LimitExceeded,
    /// The plugin trapped (a panic, an out-of-bounds access, ...).
    Crashed,
    /// No tool of that name is installed.
    UnknownTool,
    /// The host could not load or run the plugin at all.
    Host,
}

impl ErrorKind {
    /// The kebab-case name shown to users and models.
    pub fn as_str(self) -> &'static str {
        match self {
            ErrorKind::InvalidInput => "invalid-input",
            ErrorKind::NotFound => "not-found",
            ErrorKind::PermissionDenied => "permission-denied",
            ErrorKind::Io => "io",
            ErrorKind::Timeout => "timeout",
            ErrorKind::Internal => "internal",
            ErrorKind::Unsupported => "unsupported",
            ErrorKind::MemoryLimit => "memory-limit",
            ErrorKind::LimitExceeded => "limit-exceeded",
            ErrorKind::Crashed => "crashed",
            ErrorKind::UnknownTool => "unknown-tool",
            ErrorKind::Host => "host",
        }
    }
}

impl std::fmt::Display for ErrorKind {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hide_paths_covers_errors_and_denials_longest_first() {
        let paths = vec![
            "/tmp/ws".to_string(),
            "/tmp/ws/real".to_string(),
            "/".to_string(),
        ];
        let e = ToolOutcome::Error(ToolError::new(
            ErrorKind::Host,
            "cannot open /tmp/ws/real/a and /tmp/ws/b",
        ));
        assert_eq!(
            e.hide_paths(&paths),
            ToolOutcome::Error(ToolError::new(
                ErrorKind::Host,
                "cannot open <workspace>/a and <workspace>/b"
            ))
        );
        let d = ToolOutcome::Denied {
            reason: "no /tmp/ws here".into(),
        };
        assert_eq!(
            d.hide_paths(&paths),
            ToolOutcome::Denied {
                reason: "no <workspace> here".into()
            }
        );
        let ok = ToolOutcome::Success(ToolOutput {
            text: "/tmp/ws".into(),
            structured: None,
            truncated: false,
        });
        assert_eq!(
            ok.clone().hide_paths(&paths),
            ok,
            "results are the user's data and stay as they are"
        );
    }
}
