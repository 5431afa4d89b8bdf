//! Paths from tool input, mapped into the directories the call was granted.
//!
//! This is lexical only and exists for clear errors: the host's WASI layer
//! is what keeps every open inside a granted directory, symlinks included.

use crate::ToolError;

/// A path inside the workspace or an extra directory the call was granted,
/// lexically normalised.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct WorkspacePath {
    /// Relative to its root, `/`-separated; empty for the root.
    rel: String,
    /// The same path inside the guest's preopen.
    guest: String,
    /// How messages name it: workspace-relative in the workspace, the
    /// absolute path (as the user granted it) in an extra directory.
    shown: String,
    /// The guest path of its root.
    root: String,
    /// Whether the root is an extra directory rather than the workspace.
    extra: bool,
}

/// Which granted directory a path lies in.
enum Root<'a> {
    /// The workspace, preopened at this guest path.
    Workspace(&'a str),
    /// An extra directory, preopened (and named) at this absolute path.
    Extra(&'a str),
}

impl WorkspacePath {
    /// Resolve `input` against the workspace preopened at `root`.
    ///
    /// `display` is the workspace's path as the user knows it; absolute input
    /// paths under it (or under `root`) are accepted, others are refused.
    pub fn resolve(root: &str, display: Option<&str>, input: &str) -> Result<Self, ToolError> {
        Self::resolve_among(root, display, &[], input)
    }

    /// [`Self::resolve`], also accepting absolute paths inside any of
    /// `extra`, the guest paths of extra directories (preopened under the
    /// names the user gave them). The longest matching directory wins.
    pub fn resolve_among(
        root: &str,
        display: Option<&str>,
        extra: &[String],
        input: &str,
    ) -> Result<Self, ToolError> {
        if input.contains('\0') {
            return Err(ToolError::invalid_input("path contains a NUL byte"));
        }
        if !input.starts_with('/') {
            return Self::under(Root::Workspace(root), input, input);
        }
        let workspace = [display, Some(root)]
            .into_iter()
            .flatten()
            .filter_map(|dir| {
                strip_dir_prefix(input, dir).map(|rest| (dir.len(), Root::Workspace(root), rest))
            });
        let extras = extra.iter().filter_map(|dir| {
            strip_dir_prefix(input, dir).map(|rest| (dir.len(), Root::Extra(dir), rest))
        });
        match workspace.chain(extras).max_by_key(|(len, _, _)| *len) {
            Some((_, at, rest)) => Self::under(at, rest, input),
            None if extra.is_empty() => Err(ToolError::permission_denied(
                "absolute path outside the workspace; use a path relative to the workspace root",
            )),
            None => Err(ToolError::permission_denied(format!(
                "absolute path outside the workspace and the directories granted to this call ({}); \
                 use a path relative to the workspace root or inside one of them",
                extra.join(", ")
            ))),
        }
    }

    /// `relative` (from `input`) normalised under `at`.
    fn under(at: Root<'_>, relative: &str, input: &str) -> Result<Self, ToolError> {
        let mut parts: Vec<&str> = Vec::new();
        for part in relative.split('/') {
            match part {
                "" | "." => {}
                ".." => {
                    if parts.pop().is_none() {
                        let from = match at {
                            Root::Workspace(_) => "the workspace".to_string(),
                            Root::Extra(dir) => dir.to_string(),
                        };
                        return Err(ToolError::permission_denied(format!(
                            "{input}: path escapes {from}"
                        )));
                    }
                }
                p => parts.push(p),
            }
        }
        let rel = parts.join("/");
        let root = match at {
            Root::Workspace(root) | Root::Extra(root) => root,
        };
        // Keep a trailing slash: it makes the OS require a directory, which
        // the sandbox then checks like any other component.
        let trailing = if relative.ends_with('/') && !rel.is_empty() {
            "/"
        } else {
            ""
        };
        let guest = join(root, &rel, trailing);
        let (shown, extra) = match at {
            Root::Workspace(_) if rel.is_empty() => (".".to_string(), false),
            Root::Workspace(_) => (rel.clone(), false),
            Root::Extra(dir) => (join(dir, &rel, ""), true),
        };
        Ok(WorkspacePath {
            rel,
            guest,
            shown,
            root: root.to_string(),
            extra,
        })
    }

    /// How messages name the path: workspace-relative (`.` for the root),
    /// or absolute inside an extra directory.
    pub fn display(&self) -> &str {
        &self.shown
    }

    /// The path relative to its root (the workspace or an extra
    /// directory); empty for the root.
    pub fn relative(&self) -> &str {
        &self.rel
    }

    /// The path to open inside the guest.
    pub fn guest(&self) -> &str {
        &self.guest
    }

    /// Whether the path lies in an extra directory rather than the workspace.
    pub fn is_extra(&self) -> bool {
        self.extra
    }

    /// The directory holding this path, in the same root; `None` for a root.
    pub fn parent(&self) -> Option<WorkspacePath> {
        if self.rel.is_empty() {
            return None;
        }
        let parent_rel = self.rel.rsplit_once('/').map_or("", |(p, _)| p);
        let at = if self.extra {
            Root::Extra(&self.root)
        } else {
            Root::Workspace(&self.root)
        };
        Self::under(at, parent_rel, parent_rel).ok()
    }

    /// Join a relative child name (as found by listing a directory).
    pub fn join(&self, name: &str) -> WorkspacePath {
        let rel = if self.rel.is_empty() {
            name.to_string()
        } else {
            format!("{}/{name}", self.rel)
        };
        let guest = format!("{}/{name}", self.guest.trim_end_matches('/'));
        let shown = if self.extra {
            format!("{}/{name}", self.shown.trim_end_matches('/'))
        } else {
            rel.clone()
        };
        WorkspacePath {
            rel,
            guest,
            shown,
            root: self.root.clone(),
            extra: self.extra,
        }
    }
}

/// `rel` (plus `trailing`) under the directory `root`.
fn join(root: &str, rel: &str, trailing: &str) -> String {
    match (rel.is_empty(), root.trim_end_matches('/')) {
        (true, _) => root.to_string(),
        (false, base) => format!("{base}/{rel}{trailing}"),
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

    fn extra(input: &str) -> Result<WorkspacePath, String> {
        let extra = ["/data".to_string(), "/home/u".to_string(), "/".to_string()];
        WorkspacePath::resolve_among("/workspace", Some("/home/u/proj"), &extra[..2], input)
            .map_err(|e| e.message)
            .and_then(|p| {
                // A grant of `/` covers everything else, and changes no answer above.
                let all =
                    WorkspacePath::resolve_among("/workspace", Some("/home/u/proj"), &extra, input)
                        .map_err(|e| e.message)?;
                assert_eq!(all, p, "{input}");
                Ok(p)
            })
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

    #[test]
    fn absolute_paths_inside_an_extra_directory_map_to_it() {
        let p = extra("/data/sub/../a.txt").unwrap();
        assert_eq!(
            (p.guest(), p.display(), p.relative(), p.is_extra()),
            ("/data/a.txt", "/data/a.txt", "a.txt", true)
        );
        let root = extra("/data").unwrap();
        assert_eq!(
            (root.guest(), root.display(), root.relative()),
            ("/data", "/data", "")
        );
        assert_eq!(root.join("x").display(), "/data/x");
        assert_eq!(
            extra("/data/a/b").unwrap().parent().unwrap().display(),
            "/data/a"
        );
        assert_eq!(
            extra("/data/a").unwrap().parent().unwrap().display(),
            "/data"
        );
        assert_eq!(extra("a/b").unwrap().parent().unwrap().display(), "a");
        assert_eq!(extra("a").unwrap().parent().unwrap().display(), ".");
        // The workspace lies inside `/home/u`: the longer match wins.
        let ws = extra("/home/u/proj/src").unwrap();
        assert_eq!(
            (ws.guest(), ws.display(), ws.is_extra()),
            ("/workspace/src", "src", false)
        );
        assert_eq!(extra("/home/u/notes").unwrap().guest(), "/home/u/notes");
    }

    #[test]
    fn outside_every_granted_directory_is_refused() {
        let e = WorkspacePath::resolve_among("/workspace", None, &["/data".into()], "/etc/passwd")
            .unwrap_err()
            .message;
        assert!(
            e.contains("outside the workspace and the directories granted to this call (/data)"),
            "{e}"
        );
        assert!(extra("/data/../etc").unwrap_err().contains("escapes /data"));
        assert!(
            extra("/database/x")
                .unwrap_err()
                .contains("outside the workspace")
        );
    }
}
