//! Protected paths: never writable by a tool, optionally not even readable.
//!
//! Invariant: a call that is not read-only, and names a protected path in
//! any string of its input, is denied before any rule is consulted. This is
//! the argument-level check; the WASI layer enforces the same set on every
//! open, whatever the plugin does.

use std::borrow::Cow;

use globset::{GlobBuilder, GlobSet, GlobSetBuilder};

/// The paths every policy protects unless it sets `replace_defaults = true`.
pub const DEFAULT_PROTECTED: &[&str] = &[
    ".git/**",
    ".warden/**",
    ".env*",
    "**/.env*",
    "**/*.pem",
    "**/id_*",
];

/// Longest string treated as a path: longer strings cannot name a file.
const MAX_PATH_LEN: usize = 4096;

/// Globs of workspace paths that tools may never write.
#[derive(Debug, Clone)]
pub struct Protected {
    /// Workspace-relative globs (`*` stays within one component, `**`
    /// crosses them, matched case-insensitively). A glob ending in `/**`
    /// also protects the directory itself. Compiled when the policy is
    /// parsed: changing this list afterwards has no effect.
    pub paths: Vec<String>,
    /// Whether read-only tools may read protected paths. Default true.
    pub readable: bool,
    /// `paths` compiled; `None` if they failed to compile, and then every
    /// path counts as protected.
    set: Option<GlobSet>,
}

impl Default for Protected {
    fn default() -> Self {
        let paths: Vec<String> = DEFAULT_PROTECTED.iter().map(|p| p.to_string()).collect();
        let set = compile(&paths).ok();
        Protected {
            paths,
            readable: true,
            set,
        }
    }
}

impl Protected {
    /// Protect `paths`, failing on the first glob that does not compile
    /// (returned as the pattern and globset's message).
    pub(super) fn new(paths: Vec<String>, readable: bool) -> Result<Protected, (String, String)> {
        let set = compile(&paths)?;
        Ok(Protected {
            paths,
            readable,
            set: Some(set),
        })
    }

    /// Whether `rel_path` (workspace-relative, `/`-separated) is protected.
    /// The path is normalised lexically first, so `./a/../.git/config` is
    /// `.git/config`, and `.git` itself is protected along with its contents.
    pub fn is_protected(&self, rel_path: &str) -> bool {
        self.matches(&normalized(rel_path))
    }

    fn matches(&self, normalized: &str) -> bool {
        self.set.as_ref().is_none_or(|set| set.is_match(normalized))
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

fn compile(paths: &[String]) -> Result<GlobSet, (String, String)> {
    let mut builder = GlobSetBuilder::new();
    for p in paths {
        let pattern = trim_dot_slash(p);
        let mut add = |pat: &str| -> Result<(), (String, String)> {
            let glob = GlobBuilder::new(pat)
                .literal_separator(true)
                .case_insensitive(true)
                .build()
                .map_err(|e| (p.clone(), e.kind().to_string()))?;
            builder.add(glob);
            Ok(())
        };
        add(pattern)?;
        if let Some(dir) = pattern.strip_suffix("/**").filter(|d| !d.is_empty()) {
            add(dir)?;
        }
    }
    builder
        .build()
        .map_err(|e| (paths.join(", "), e.to_string()))
}

/// Lexical normalisation of a `/`-separated path: drops `.` components and
/// empty ones (`a//b`, a trailing `/`), and folds `a/../b` into `b`. An
/// absolute path stays absolute (`/..` is `/`); a relative path that climbs
/// above its start keeps its leading `..` components.
pub fn normalize_path(path: &str) -> String {
    normalized(path).into_owned()
}

/// [`normalize_path`], borrowing `path` when it is already normal.
pub(super) fn normalized(path: &str) -> Cow<'_, str> {
    let body = path.strip_prefix('/').unwrap_or(path);
    if body.split('/').all(|c| !matches!(c, "" | "." | "..")) {
        return Cow::Borrowed(path);
    }
    let absolute = path.starts_with('/');
    let mut parts: Vec<&str> = Vec::new();
    for part in path.split('/') {
        match part {
            "" | "." => {}
            ".." => {
                if parts.last().is_some_and(|last| *last != "..") {
                    parts.pop();
                } else if !absolute {
                    parts.push("..");
                }
            }
            other => parts.push(other),
        }
    }
    let joined = parts.join("/");
    Cow::Owned(match (absolute, joined.is_empty()) {
        (true, _) => format!("/{joined}"),
        (false, true) => ".".to_string(),
        (false, false) => joined,
    })
}

/// `pattern` without leading `./` components, which never appear in a
/// normalised path.
pub(super) fn trim_dot_slash(mut pattern: &str) -> &str {
    while let Some(rest) = pattern.strip_prefix("./") {
        pattern = rest.trim_start_matches('/');
    }
    pattern
}
