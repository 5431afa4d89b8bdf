//! Recorded paths as workspace globs: one file is its path, several in one
//! directory are `dir/*` (`dir/*.ext` when they share an extension), files
//! spread over a subtree are `dir/**` (`dir/**/*.ext`).
//!
//! Invariant: a glob is never wider than the subtree the files share below
//! the workspace root, and only paths that are plain, relative and inside
//! the workspace become globs: `..`, absolute paths and glob metacharacters
//! are refused, never escaped into something wider.

use std::collections::{BTreeMap, BTreeSet};

use crate::capability::path_guard::normalized;

/// Characters a path may not contain to become a glob.
const GLOB_META: &[char] = &['*', '?', '[', ']', '{', '}', '\\'];

/// Why a recorded path cannot become a glob.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum PathRefusal {
    /// An absolute path.
    #[error("`{0}` is absolute; a suggested policy allows workspace paths only")]
    Absolute(String),
    /// A path that climbs out of the workspace.
    #[error("`{0}` leads outside the workspace")]
    Outside(String),
    /// A path with glob metacharacters, which would match more than itself.
    #[error("`{0}` contains glob metacharacters, which a suggested glob will not widen")]
    GlobMeta(String),
    /// A path with control characters.
    #[error("`{0}` contains control characters")]
    Control(String),
}

/// `raw` normalised (`./a/../b` is `b`), if it is a plain workspace path.
pub fn workspace_path(raw: &str) -> Result<String, PathRefusal> {
    let path = normalized(raw);
    let shown = || raw.escape_debug().to_string();
    if path.starts_with('/') {
        return Err(PathRefusal::Absolute(shown()));
    }
    if path == ".." || path.starts_with("../") {
        return Err(PathRefusal::Outside(shown()));
    }
    if path.contains(GLOB_META) {
        return Err(PathRefusal::GlobMeta(shown()));
    }
    if path.contains(char::is_control) {
        return Err(PathRefusal::Control(shown()));
    }
    Ok(path.into_owned())
}

/// The narrowest globs covering `paths` (each from [`workspace_path`]).
pub fn generalise(paths: &BTreeSet<String>) -> Vec<String> {
    let mut by_dir: BTreeMap<&str, Vec<&str>> = BTreeMap::new();
    for p in paths {
        let (dir, _) = split(p);
        by_dir.entry(dir).or_default().push(p);
    }
    // Directories grouped by their top-level directory; files at the root
    // stand alone (a subtree glob there would be the whole workspace).
    let mut by_top: BTreeMap<&str, Vec<&str>> = BTreeMap::new();
    for dir in by_dir.keys() {
        let top = dir.split('/').next().unwrap_or_default();
        by_top.entry(top).or_default().push(dir);
    }
    let mut globs = Vec::new();
    for (top, dirs) in by_top {
        let files: Vec<&str> = dirs
            .iter()
            .flat_map(|d| by_dir.get(d).into_iter().flatten().copied())
            .collect();
        if top.is_empty() || dirs.len() == 1 {
            let dir = dirs.first().copied().unwrap_or_default();
            globs.push(match files.as_slice() {
                [one] => (*one).to_string(),
                _ => join(dir, &format!("*{}", shared_ext(&files))),
            });
        } else {
            let root = common_ancestor(&dirs);
            globs.push(match shared_ext(&files) {
                ext if ext.is_empty() => format!("{root}/**"),
                ext => format!("{root}/**/*{ext}"),
            });
        }
    }
    globs
}

/// `(directory, file name)`; the directory of a top-level file is `""`.
fn split(path: &str) -> (&str, &str) {
    path.rsplit_once('/').unwrap_or(("", path))
}

fn join(dir: &str, name: &str) -> String {
    if dir.is_empty() {
        name.to_string()
    } else {
        format!("{dir}/{name}")
    }
}

/// `.ext` when every file has that extension, else `""`.
fn shared_ext(files: &[&str]) -> String {
    let ext = |f: &str| {
        let (_, name) = split(f);
        match name.rsplit_once('.') {
            Some((stem, ext)) if !stem.is_empty() && !ext.is_empty() => Some(ext.to_string()),
            Some(_) | None => None,
        }
    };
    let mut exts = files.iter().map(|f| ext(f));
    match exts.next().flatten() {
        Some(first) if exts.all(|e| e.as_deref() == Some(first.as_str())) => format!(".{first}"),
        Some(_) | None => String::new(),
    }
}

/// The deepest directory containing every one of `dirs` (which share
/// their first component).
fn common_ancestor(dirs: &[&str]) -> String {
    let mut common: Vec<&str> = dirs
        .first()
        .map(|d| d.split('/').collect())
        .unwrap_or_default();
    for d in dirs.iter().skip(1) {
        let same = common
            .iter()
            .zip(d.split('/'))
            .take_while(|(a, b)| *a == b)
            .count();
        common.truncate(same);
    }
    common.join("/")
}
