//! Workspace-relative paths from tool input.
//!
//! This is lexical only and exists for clear errors: the host's WASI layer
//! is what keeps every open inside the workspace, symlinks included.

use crate::ToolError;

/// A path inside the workspace, lexically normalised.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct WorkspacePath {
    /// Relative to the workspace root, `/`-separated; empty for the root.
    rel: String,
    /// The same path inside the guest's preopen.
    guest: String,
}

impl WorkspacePath {
    /// Resolve `input` against the workspace preopened at `root`.
    ///
    /// `display` is the workspace's path as the user knows it; absolute input
    /// paths under it (or under `root`) are accepted, others are refused.
    pub fn resolve(root: &str, display: Option<&str>, input: &str) -> Result<Self, ToolError> {
        if input.contains('\0') {
            return Err(ToolError::invalid_input("path contains a NUL byte"));
        }
        let relative = if input.starts_with('/') {
            display
                .and_then(|d| strip_dir_prefix(input, d))
                .or_else(|| strip_dir_prefix(input, root))
                .ok_or_else(|| {
                    ToolError::permission_denied(
                        "absolute path outside the workspace; use a path relative to the workspace root",
                    )
                })?
        } else {
            input
        };
        let mut parts: Vec<&str> = Vec::new();
        for part in relative.split('/') {
            match part {
                "" | "." => {}
                ".." => {
                    if parts.pop().is_none() {
                        return Err(ToolError::permission_denied(format!(
                            "{input}: path escapes the workspace"
                        )));
                    }
                }
                p => parts.push(p),
            }
        }
        let rel = parts.join("/");
        // Keep a trailing slash: it makes the OS require a directory, which
        // the sandbox then checks like any other component.
        let trailing = if relative.ends_with('/') && !rel.is_empty() {
            "/"
        } else {
            ""
        };
        let guest = if rel.is_empty() {
            root.to_string()
        } else {
            format!("{}/{rel}{trailing}", root.trim_end_matches('/'))
        };
        Ok(WorkspacePath { rel, guest })
    }

    /// The path relative to the workspace root (`.` for the root itself), for messages.
    pub fn display(&self) -> &str {
        if self.rel.is_empty() { "." } else { &self.rel }
    }

    /// The path relative to the root; empty for the root.
    pub fn relative(&self) -> &str {
        &self.rel
    }

    /// The path to open inside the guest.
    pub fn guest(&self) -> &str {
        &self.guest
    }

    /// Join a relative child name (as found by listing a directory).
    pub fn join(&self, name: &str) -> WorkspacePath {
        let rel = if self.rel.is_empty() {
            name.to_string()
        } else {
            format!("{}/{name}", self.rel)
        };
        let guest = format!("{}/{name}", self.guest.trim_end_matches('/'));
        WorkspacePath { rel, guest }
    }
}

/// `path` with directory `dir` removed from its front, matching whole components.
fn strip_dir_prefix<'a>(path: &'a str, dir: &str) -> Option<&'a str> {
    let dir = dir.trim_end_matches('/');
    let rest = path.strip_prefix(dir)?;
    if rest.is_empty() || rest.starts_with('/') {
        Some(rest)
    } else {
        None
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn r(input: &str) -> Result<String, String> {
        WorkspacePath::resolve("/workspace", Some("/home/u/proj"), input)
            .map(|p| p.guest().to_string())
            .map_err(|e| e.message)
    }

    #[test]
    fn relative_and_absolute_inside() {
        assert_eq!(r("src/main.rs").unwrap(), "/workspace/src/main.rs");
        assert_eq!(r("./a/../b").unwrap(), "/workspace/b");
        assert_eq!(r("/home/u/proj/a").unwrap(), "/workspace/a");
        assert_eq!(r("/home/u/proj").unwrap(), "/workspace");
        assert_eq!(r("").unwrap(), "/workspace");
        assert_eq!(r("dir/").unwrap(), "/workspace/dir/");
    }

    #[test]
    fn outside_is_refused() {
        assert!(r("../x").unwrap_err().contains("escapes"));
        assert!(r("a/../../x").unwrap_err().contains("escapes"));
        assert!(
            r("/etc/passwd")
                .unwrap_err()
                .contains("outside the workspace")
        );
        assert!(
            r("/home/u/proj-evil/x")
                .unwrap_err()
                .contains("outside the workspace")
        );
        assert!(r("a\0b").unwrap_err().contains("NUL"));
    }
}
