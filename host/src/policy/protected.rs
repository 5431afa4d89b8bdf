//! Protected paths: never writable by a tool, optionally not even readable.
//!
//! Invariant: a call that is not read-only, and names a protected path in
//! any string of its input, is denied before any rule is consulted. This is
//! the argument-level check. The same compiled set ([`Protected::guard`])
//! travels with the call's grant into the sandbox, where the filesystem
//! layer ([`crate::capability::GuardedFs`]) refuses every change to a
//! protected path (and, when not readable, every read), whatever the plugin
//! does.

use crate::capability::{PathGuard, ProtectedReads};

pub(super) use crate::capability::path_guard::{normalized, trim_dot_slash};
pub use crate::capability::{DEFAULT_PROTECTED, normalize_path};

/// Longest string treated as a path: longer strings cannot name a file.
const MAX_PATH_LEN: usize = 4096;

/// Globs of workspace paths that tools may never write.
#[derive(Debug, Clone)]
pub struct Protected {
    /// Workspace-relative globs (`*` stays within one component, `**`
    /// crosses them, matched case-insensitively). A glob ending in `/**`
    /// also protects the directory itself. Checked when the policy is
    /// parsed and compiled when first matched, from the guard's own copy:
    /// changing this list afterwards has no effect.
    pub paths: Vec<String>,
    /// Whether read-only tools may read protected paths. Default true.
    pub readable: bool,
    /// `paths` compiled: what the argument check matches and what the
    /// filesystem layer of every call under the policy enforces.
    guard: PathGuard,
}

impl Default for Protected {
    fn default() -> Self {
        let guard = PathGuard::defaults();
        Protected {
            paths: guard.globs().to_vec(),
            readable: true,
            guard,
        }
    }
}

impl Protected {
    /// Protect `paths`, failing on the first glob that does not compile
    /// (returned as the pattern and globset's message).
    pub(super) fn new(paths: Vec<String>, readable: bool) -> Result<Protected, (String, String)> {
        let reads = if readable {
            ProtectedReads::Allowed
        } else {
            ProtectedReads::Refused
        };
        let guard = PathGuard::new(paths.clone(), reads).map_err(|e| (e.pattern, e.message))?;
        Ok(Protected {
            paths,
            readable,
            guard,
        })
    }

    /// The compiled set, as the filesystem layer enforces it.
    pub fn guard(&self) -> &PathGuard {
        &self.guard
    }

    /// Whether `rel_path` (workspace-relative, `/`-separated) is protected.
    /// The path is normalised lexically first, so `./a/../.git/config` is
    /// `.git/config`, and `.git` itself is protected along with its contents.
    pub fn is_protected(&self, rel_path: &str) -> bool {
        self.matches(&normalized(rel_path))
    }

    fn matches(&self, normalized: &str) -> bool {
        self.guard.is_protected(normalized)
    }

    /// Whether `arg`, a string from a tool's input, could name a protected
    /// path. Paths that are absolute or climb out with `..` are unknown
    /// relative to the workspace, so each of their tails is checked:
    /// `/home/u/proj/.git/config` is caught by `.git/**`.
    pub(super) fn names_protected(&self, arg: &str) -> bool {
        if arg.is_empty() || arg.len() > MAX_PATH_LEN {
            return false;
        }
        let path = normalized(arg);
        if self.matches(&path) {
            return true;
        }
        if !(path.starts_with('/') || path.starts_with("..")) {
            return false;
        }
        let mut rest: &str = &path;
        while let Some(i) = rest.find('/') {
            rest = &rest[i + 1..];
            if !rest.is_empty() && rest != ".." && self.matches(rest) {
                return true;
            }
        }
        false
    }

    /// The first string anywhere in `input` that names a protected path.
    pub(super) fn first_in<'v>(&self, input: &'v serde_json::Value) -> Option<&'v str> {
        match input {
            serde_json::Value::String(s) => self.names_protected(s).then_some(s.as_str()),
            serde_json::Value::Array(items) => items.iter().find_map(|v| self.first_in(v)),
            serde_json::Value::Object(map) => map.values().find_map(|v| self.first_in(v)),
            serde_json::Value::Null | serde_json::Value::Bool(_) | serde_json::Value::Number(_) => {
                None
            }
        }
    }
}
