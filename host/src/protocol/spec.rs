//! What a tool is: its name, description, input schema and behaviour hints.

use serde::{Deserialize, Serialize};

/// A validated tool name: `^[a-zA-Z0-9_-]{1,64}$`, valid for OpenAI,
/// Anthropic and MCP alike.
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(try_from = "String", into = "String")]
pub struct ToolName(String);

/// A tool name that does not match `^[a-zA-Z0-9_-]{1,64}$`.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("invalid tool name {0:?}: names must match ^[a-zA-Z0-9_-]{{1,64}}$")]
pub struct ToolNameError(pub String);

impl ToolName {
    /// Validate `name`.
    pub fn new(name: impl Into<String>) -> Result<Self, ToolNameError> {
        let name = name.into();
        let valid = (1..=64).contains(&name.len())
            && name
                .bytes()
                .all(|b| b.is_ascii_alphanumeric() || b == b'_' || b == b'-');
        if valid {
            Ok(ToolName(name))
        } else {
            Err(ToolNameError(name))
        }
    }

    pub fn as_str(&self) -> &str {
        &self.0
    }
}

impl TryFrom<String> for ToolName {
    type Error = ToolNameError;
    fn try_from(value: String) -> Result<Self, Self::Error> {
        ToolName::new(value)
    }
}

impl From<ToolName> for String {
    fn from(value: ToolName) -> Self {
        value.0
    }
}

impl std::fmt::Display for ToolName {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

/// Behaviour hints declared by the plugin author. Used for scheduling and
/// for what approval prompts show; never trusted for security.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Annotations {
    /// The tool does not modify its environment.
    pub read_only: bool,
    /// The tool may destroy data.
    pub destructive: bool,
    /// A repeated identical call has no further effect.
    pub idempotent: bool,
    /// The tool reaches an open world (the network).
    pub open_world: bool,
}

/// A tool as a plugin describes it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ToolSpec {
    pub name: ToolName,
    /// What the tool does, written for the model.
    pub description: String,
    /// JSON Schema of the input object.
    pub input_schema: serde_json::Value,
    pub annotations: Annotations,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tool_names() {
        for ok in ["read_file", "a", "A-9_z", &"x".repeat(64)] {
            assert!(ToolName::new(ok).is_ok(), "{ok}");
        }
        for bad in ["", "has space", "dot.name", "ünï", &"x".repeat(65), "a/b"] {
            assert!(ToolName::new(bad).is_err(), "{bad}");
        }
    }
}
