//! Protected paths as the filesystem layer sees them: workspace-relative
//! globs compiled once, on first use, shared by every call that uses them.
//!
//! Invariant: a path is matched in its lexically normalised form (`./a/../.git`
//! is `.git`), case-insensitively, and a glob ending in `/**` also protects
//! the directory itself. If the globs cannot be compiled, every path counts
//! as protected (fail closed).
//!
//! Each glob is checked when the guard is made; the set is compiled only
//! when a path is first matched. Compiling it costs about 0.3 ms, and most
//! one-shot calls never match a path: a read-only tool under readable
//! protected paths is not checked at all.

use std::borrow::Cow;
use std::fmt;
use std::sync::{Arc, OnceLock};

use globset::{Glob, GlobBuilder, GlobSet, GlobSetBuilder};

/// The paths protected unless a policy replaces them.
pub const DEFAULT_PROTECTED: &[&str] = &[
    ".git/**",
    ".warden/**",
    ".env*",
    "**/.env*",
    "**/*.pem",
    "**/id_*",
];

/// Whether protected paths may be read.
#[derive(
    Debug, Clone, Copy, Default, PartialEq, Eq, Hash, serde::Serialize, serde::Deserialize,
)]
#[serde(rename_all = "kebab-case")]
pub enum ProtectedReads {
    /// Reading is allowed; only changes are refused.
    #[default]
    Allowed,
    /// Reading is refused too.
    Refused,
}

/// What an operation does to a path.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PathUse {
    /// Reads content: opening for reading, listing, reading a link.
    Read,
    /// Changes it: writing, creating, truncating, renaming, linking,
    /// deleting, setting size or times.
    Change,
}

/// A glob that does not compile.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("bad protected path `{pattern}`: {message}")]
pub struct GlobError {
    pub pattern: String,
    pub message: String,
}

/// A set of protected paths, compiled on first use. Cheap to clone: clones
/// share the compiled set.
#[derive(Clone)]
pub struct PathGuard(Arc<Compiled>);

struct Compiled {
    globs: Vec<String>,
    reads: ProtectedReads,
    /// Compiled on first use; `None` when `globs` did not compile:
    /// everything is protected.
    set: OnceLock<Option<GlobSet>>,
    /// The literal leading directories of the globs (`a/b` for `a/b/*.key`),
    /// lowercased; globs that start with a wildcard have none.
    roots: Vec<String>,
}

impl PathGuard {
    /// Protect `globs` (workspace-relative; `*` stays within a component,
    /// `**` crosses them), failing on the first one that does not parse.
    pub fn new(globs: Vec<String>, reads: ProtectedReads) -> Result<PathGuard, GlobError> {
        for g in &globs {
            check_glob(g)?;
        }
        Ok(PathGuard::from_parts(globs, reads))
    }

    /// [`DEFAULT_PROTECTED`], readable.
    pub fn defaults() -> PathGuard {
        static DEFAULTS: OnceLock<PathGuard> = OnceLock::new();
        DEFAULTS
            .get_or_init(|| {
                let globs: Vec<String> = DEFAULT_PROTECTED.iter().map(|g| g.to_string()).collect();
                PathGuard::from_parts(globs, ProtectedReads::Allowed)
            })
            .clone()
    }

    fn from_parts(globs: Vec<String>, reads: ProtectedReads) -> PathGuard {
        let roots = globs.iter().filter_map(|g| literal_root(g)).collect();
        PathGuard(Arc::new(Compiled {
            globs,
            reads,
            set: OnceLock::new(),
            roots,
        }))
    }

    /// The compiled set, compiling it on first use; `None` if it does not
    /// compile.
    fn set(&self) -> Option<&GlobSet> {
        self.0.set.get_or_init(|| compile(&self.0.globs)).as_ref()
    }

    /// The globs, as given.
    pub fn globs(&self) -> &[String] {
        &self.0.globs
    }

    /// Whether protected paths may be read.
    pub fn reads(&self) -> ProtectedReads {
        self.0.reads
    }

    /// Whether protected paths may not even be read.
    pub fn refuses_reads(&self) -> bool {
        self.0.reads == ProtectedReads::Refused
    }

    /// Whether `rel_path` (workspace-relative, `/`-separated) is protected.
    pub fn is_protected(&self, rel_path: &str) -> bool {
        let path = normalized(rel_path);
        self.set().is_none_or(|set| set.is_match(&*path))
    }

    /// Whether `how` is refused on `rel_path`.
    pub fn refuses(&self, rel_path: &str, how: PathUse) -> bool {
        let applies = match how {
            PathUse::Change => true,
            PathUse::Read => self.refuses_reads(),
        };
        applies && self.is_protected(rel_path)
    }

    /// Whether some glob's literal directory lies at or below `rel_dir`:
    /// moving `rel_dir` would move protected paths, or moving something to
    /// `rel_dir` would put content under them (`config` for
    /// `config/secrets/**`). Globs that start with a wildcard match by name
    /// wherever a path is, so moves never change what they protect.
    pub fn guards_below(&self, rel_dir: &str) -> bool {
        if self.set().is_none() {
            return true;
        }
        let dir = normalized(rel_dir).to_lowercase();
        self.0.roots.iter().any(|root| {
            root.strip_prefix(dir.as_str())
                .is_some_and(|rest| rest.is_empty() || rest.starts_with('/'))
        })
    }
}

impl fmt::Debug for PathGuard {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("PathGuard")
            .field("globs", &self.0.globs)
            .field("reads", &self.0.reads)
            .finish()
    }
}

impl PartialEq for PathGuard {
    fn eq(&self, other: &Self) -> bool {
        self.0.globs == other.0.globs && self.0.reads == other.0.reads
    }
}

impl Eq for PathGuard {}

/// How a [`PathGuard`] is written out: its globs and whether they are readable.
#[derive(serde::Serialize, serde::Deserialize)]
struct PathGuardSpec {
    paths: Vec<String>,
    reads: ProtectedReads,
}

impl serde::Serialize for PathGuard {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        PathGuardSpec {
            paths: self.0.globs.clone(),
            reads: self.0.reads,
        }
        .serialize(s)
    }
}

impl<'de> serde::Deserialize<'de> for PathGuard {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let spec = PathGuardSpec::deserialize(d)?;
        PathGuard::new(spec.paths, spec.reads).map_err(serde::de::Error::custom)
    }
}

/// `globs` compiled into one set, or `None` if any fails.
fn compile(globs: &[String]) -> Option<GlobSet> {
    let mut builder = GlobSetBuilder::new();
    for g in globs {
        for glob in parse(g).ok()? {
            builder.add(glob);
        }
    }
    builder.build().ok()
}

/// Whether `glob` is a valid protected-path glob, without compiling a set:
/// a policy checks each of its own globs with this (to point at the bad
/// one); the set is compiled once, when first used.
pub fn check_glob(glob: &str) -> Result<(), GlobError> {
    parse(glob).map(drop)
}

/// `glob` parsed as a protected path matches: the pattern, and for one
/// ending in `/**` the directory itself too.
fn parse(glob: &str) -> Result<Vec<Glob>, GlobError> {
    let pattern = trim_dot_slash(glob);
    let one = |pat: &str| {
        GlobBuilder::new(pat)
            .literal_separator(true)
            .case_insensitive(true)
            .build()
            .map_err(|e| GlobError {
                pattern: glob.to_string(),
                message: e.kind().to_string(),
            })
    };
    let mut parsed = vec![one(pattern)?];
    if let Some(dir) = pattern.strip_suffix("/**").filter(|d| !d.is_empty()) {
        parsed.push(one(dir)?);
    }
    Ok(parsed)
}

/// The components of `glob` before its first wildcard, lowercased.
fn literal_root(glob: &str) -> Option<String> {
    let literal: Vec<&str> = trim_dot_slash(glob)
        .split('/')
        .take_while(|c| !c.contains(['*', '?', '[', '{', '\\']))
        .filter(|c| !c.is_empty() && *c != ".")
        .collect();
    (!literal.is_empty()).then(|| literal.join("/").to_lowercase())
}

/// Lexical normalisation of a `/`-separated path: drops `.` components and
/// empty ones (`a//b`, a trailing `/`), and folds `a/../b` into `b`. An
/// absolute path stays absolute (`/..` is `/`); a relative path that climbs
/// above its start keeps its leading `..` components; the empty path is `.`.
pub fn normalize_path(path: &str) -> String {
    normalized(path).into_owned()
}

/// [`normalize_path`], borrowing `path` when it is already normal.
pub(crate) fn normalized(path: &str) -> Cow<'_, str> {
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
pub(crate) fn trim_dot_slash(mut pattern: &str) -> &str {
    while let Some(rest) = pattern.strip_prefix("./") {
        pattern = rest.trim_start_matches('/');
    }
    pattern
}

#[cfg(test)]
mod tests {
    use super::*;

    fn guard(globs: &[&str], reads: ProtectedReads) -> PathGuard {
        PathGuard::new(globs.iter().map(|g| g.to_string()).collect(), reads).unwrap()
    }

    #[test]
    fn changes_are_always_refused_reads_only_when_asked() {
        let open = PathGuard::defaults();
        assert!(open.refuses(".git/config", PathUse::Change));
        assert!(!open.refuses(".git/config", PathUse::Read));
        assert!(!open.refuses("src/a.rs", PathUse::Change));
        let closed = guard(DEFAULT_PROTECTED, ProtectedReads::Refused);
        assert!(closed.refuses(".git/config", PathUse::Read));
        assert!(closed.refuses(".git", PathUse::Read));
        assert!(!closed.refuses("src/a.rs", PathUse::Read));
    }

    #[test]
    fn roots_find_protected_trees_below_a_directory() {
        let g = guard(
            &["config/secrets/**", "**/*.pem", ".env*"],
            ProtectedReads::Allowed,
        );
        assert!(g.guards_below("config"));
        assert!(g.guards_below("config/secrets"));
        assert!(g.guards_below("CONFIG"));
        assert!(!g.guards_below("conf"));
        assert!(!g.guards_below("src"));
        assert!(!PathGuard::defaults().guards_below("src"));
        assert!(PathGuard::defaults().guards_below(".git"));
    }

    #[test]
    fn a_guard_round_trips_through_serde() {
        let g = guard(&["secrets/**"], ProtectedReads::Refused);
        let text = serde_json::to_string(&g).unwrap();
        assert_eq!(text, r#"{"paths":["secrets/**"],"reads":"refused"}"#);
        let back: PathGuard = serde_json::from_str(&text).unwrap();
        assert_eq!(back, g);
        assert!(back.is_protected("secrets/x"));
        assert!(
            serde_json::from_str::<PathGuard>(r#"{"paths":["a["],"reads":"allowed"}"#).is_err()
        );
    }
}
