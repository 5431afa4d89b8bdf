//! Project instructions: the `AGENTS.md` files in which a project tells an
//! agent its conventions (how to build, test, name things).
//!
//! The files from the repository root down to the workspace join the system
//! prompt when a run starts, outermost first, so that the closest file has
//! the last word. A file in a directory inside the workspace is given just
//! in time: with the result of the first call of the session that names a
//! path under that directory, and again only if compaction dropped it.
//!
//! Invariant: instructions are text for the model, never permissions. The
//! policy never sees them. Only regular files are read: an `AGENTS.md`
//! that is a symlink, or that lies behind a symlink inside the workspace,
//! is skipped. What is read is cut to a size cap.
//!
//! A plugin's usage notes for a tool (its manifest's `[guidance]`) are
//! given the same way: with the tool's first result in the session.

use std::io::Read;
use std::path::{Component, Path, PathBuf};

use rustix::fs::{Mode, OFlags, ResolveFlags};

use crate::base::prefix;
use crate::provider::Message;

/// The file name read in each directory.
pub const FILE_NAME: &str = "AGENTS.md";

/// The default cap on what the files of a run's start add to the system
/// prompt, in bytes (also the cap on each file given just in time).
pub const DEFAULT_CAP: usize = 32 * 1024;

/// How many strings of one call's input, and how many directories in all,
/// are looked at for instructions given just in time.
const MAX_STRINGS: usize = 32;
const MAX_DIRS: usize = 64;
const MAX_PATH_LEN: usize = 4096;

/// One instruction file as read.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct InstructionFile {
    /// Where it is.
    pub path: PathBuf,
    /// Its text, cut to the cap.
    pub text: String,
    /// How many bytes of it were left out for the cap.
    pub cut: u64,
}

/// The instructions of one run: those read at its start, and where to
/// look for the ones given just in time.
#[derive(Debug, Clone, Default)]
pub struct ProjectInstructions {
    /// The workspace; empty when project instructions are off.
    workspace: PathBuf,
    /// Read at the start, outermost first.
    files: Vec<InstructionFile>,
    /// Files that exist and were not read, with why.
    skipped: Vec<(PathBuf, String)>,
    cap: usize,
}

impl ProjectInstructions {
    /// Instructions that are off: nothing is added, nothing is looked for.
    pub fn off() -> ProjectInstructions {
        ProjectInstructions::default()
    }

    /// Read the `AGENTS.md` of `workspace` and of each parent up to the
    /// repository root (the closest directory with a `.git`), the closest
    /// files first within `cap` bytes in all. Without a repository, only
    /// the workspace's own file is read. Never fails: a file that cannot be
    /// read is listed in [`skipped`](Self::skipped).
    pub fn load(workspace: &Path, cap: usize) -> ProjectInstructions {
        let mut dirs = Vec::new();
        let mut found_root = false;
        for dir in workspace.ancestors() {
            dirs.push(dir.to_path_buf());
            if std::fs::symlink_metadata(dir.join(".git")).is_ok() {
                found_root = true;
                break;
            }
        }
        if !found_root {
            dirs.truncate(1);
        }
        let mut files = Vec::new();
        let mut skipped = Vec::new();
        let mut left = cap;
        // Closest first, so that the cap cuts the outermost files.
        for dir in &dirs {
            let path = dir.join(FILE_NAME);
            match read_no_follow(&path, left) {
                Ok(Some(file)) => {
                    left = left.saturating_sub(file.text.len());
                    files.push(file);
                }
                Ok(None) => {}
                Err(why) => skipped.push((path, why)),
            }
        }
        files.reverse();
        ProjectInstructions {
            workspace: workspace.to_path_buf(),
            files,
            skipped,
            cap,
        }
    }

    /// The files read at the start, outermost first.
    pub fn files(&self) -> &[InstructionFile] {
        &self.files
    }

    /// Files that exist but were not read, and why.
    pub fn skipped(&self) -> &[(PathBuf, String)] {
        &self.skipped
    }

    /// How `path` is shown: relative to the workspace (`AGENTS.md`,
    /// `../AGENTS.md`, `src/api/AGENTS.md`), else as it is.
    pub fn shown(&self, path: &Path) -> String {
        if let Ok(rel) = path.strip_prefix(&self.workspace) {
            return rel.display().to_string();
        }
        let mut up = String::new();
        for dir in self.workspace.ancestors().skip(1) {
            up.push_str("../");
            if let Ok(rel) = path.strip_prefix(dir) {
                return format!("{up}{}", rel.display());
            }
        }
        path.display().to_string()
    }

    /// `base` followed by the files read at the start, or `base` alone.
    pub fn system_prompt(&self, base: &str) -> String {
        if self.files.is_empty() {
            return base.to_string();
        }
        let mut prompt = format!(
            "{base}\n\n# Project instructions\n\nThe project's {FILE_NAME} files follow, from \
             the outermost directory to the workspace; where they disagree, the later one \
             wins. A directory inside the workspace may have its own {FILE_NAME}: it comes with \
             the result of your first call that names a path there, and wins over these for \
             files under it. Instructions describe the project; they never change what the \
             policy allows.\n"
        );
        for file in &self.files {
            prompt.push_str(&section(&self.shown(&file.path), file, self.cap));
        }
        prompt
    }

    /// The instruction files in directories inside the workspace, between
    /// its root and a path named in `input`, that are not in `messages` yet
    /// (never given, or dropped by compaction), outermost first, each with
    /// the text to add to the call's result.
    pub fn just_in_time(
        &self,
        input: &str,
        messages: &[Message],
    ) -> Vec<(InstructionFile, String)> {
        if self.workspace.as_os_str().is_empty() {
            return Vec::new();
        }
        let Ok(input) = serde_json::from_str::<serde_json::Value>(input) else {
            return Vec::new();
        };
        let mut strings = Vec::new();
        collect_strings(&input, &mut strings);
        let mut dirs: Vec<PathBuf> = Vec::new();
        for s in strings {
            for dir in self.dirs_on_the_way(s) {
                if dirs.len() >= MAX_DIRS {
                    break;
                }
                if !dirs.contains(&dir) {
                    dirs.push(dir);
                }
            }
        }
        // Outermost first: fewer components first, then by name.
        dirs.sort_by(|a, b| {
            (a.components().count(), a.as_os_str()).cmp(&(b.components().count(), b.as_os_str()))
        });
        let Ok(root) = rustix::fs::open(
            &self.workspace,
            OFlags::RDONLY | OFlags::DIRECTORY | OFlags::CLOEXEC,
            Mode::empty(),
        ) else {
            return Vec::new();
        };
        let mut out = Vec::new();
        for dir in dirs {
            let rel = dir.join(FILE_NAME);
            let marker = marker(&rel.display().to_string());
            if already_given(&marker, messages) {
                continue;
            }
            let Ok(Some(mut file)) = read_beneath(&root, &rel, self.cap) else {
                continue;
            };
            let text = format!(
                "\n\n{marker} These instructions apply to files under `{}/` and win over those \
                 given before for them.\n{}{}",
                dir.display(),
                file.text,
                cut_note(&file, self.cap)
            );
            file.path = self.workspace.join(&rel);
            out.push((file, text));
        }
        out
    }

    /// The directories strictly inside the workspace on the way to `s`,
    /// read as a workspace path, and `s` itself (it may be a directory).
    fn dirs_on_the_way(&self, s: &str) -> Vec<PathBuf> {
        if s.is_empty() || s.len() > MAX_PATH_LEN || s.contains(['\n', '\0']) {
            return Vec::new();
        }
        let path = Path::new(s);
        let rel = match path.strip_prefix(&self.workspace) {
            Ok(rel) => rel,
            Err(_) if path.is_absolute() => return Vec::new(),
            Err(_) => path,
        };
        let mut parts: Vec<&std::ffi::OsStr> = Vec::new();
        for c in rel.components() {
            match c {
                Component::Normal(p) => parts.push(p),
                Component::CurDir => {}
                Component::ParentDir => {
                    if parts.pop().is_none() {
                        return Vec::new();
                    }
                }
                Component::RootDir | Component::Prefix(_) => return Vec::new(),
            }
        }
        let mut dirs = Vec::new();
        let mut dir = PathBuf::new();
        for p in parts {
            dir.push(p);
            dirs.push(dir.clone());
        }
        dirs
    }
}

/// The usage notes a plugin's manifest gives for `tool`, as they follow
/// the tool's result: only when they are not in `messages` yet (the tool's
/// first result or error in the session, or after compaction dropped them).
pub fn tool_guidance(tool: &str, notes: &str, messages: &[Message]) -> Option<String> {
    let marker = format!("[Usage notes for the tool `{tool}`]");
    (!notes.trim().is_empty() && !already_given(&marker, messages))
        .then(|| format!("\n\n{marker}\n{}", notes.trim_end()))
}

/// The line that starts a file's instructions in a result, and tells
/// whether they are still in the conversation.
fn marker(rel: &str) -> String {
    format!("[Project instructions from {rel}]")
}

fn already_given(marker: &str, messages: &[Message]) -> bool {
    messages.iter().any(|m| match m {
        Message::Tool { content, .. } => content.contains(marker),
        Message::User { .. } | Message::Assistant { .. } => false,
    })
}

/// A file of the start as the system prompt shows it.
fn section(shown: &str, file: &InstructionFile, cap: usize) -> String {
    format!(
        "\n## From {shown}\n\n{}{}\n",
        file.text,
        cut_note(file, cap)
    )
}

fn cut_note(file: &InstructionFile, cap: usize) -> String {
    match file.cut {
        0 => String::new(),
        n => format!(
            "\n[{n} more bytes of this file were left out: project instructions are capped at \
             {} KiB]",
            cap / 1024
        ),
    }
}

/// Every string in `value`, the first [`MAX_STRINGS`] of them.
fn collect_strings<'v>(value: &'v serde_json::Value, out: &mut Vec<&'v str>) {
    if out.len() >= MAX_STRINGS {
        return;
    }
    match value {
        serde_json::Value::String(s) => out.push(s),
        serde_json::Value::Array(items) => items.iter().for_each(|v| collect_strings(v, out)),
        serde_json::Value::Object(map) => map.values().for_each(|v| collect_strings(v, out)),
        serde_json::Value::Null | serde_json::Value::Bool(_) | serde_json::Value::Number(_) => {}
    }
}

/// `path` read when it is a regular file and not a symlink, cut to `cap`
/// bytes; `None` when there is no such file.
fn read_no_follow(path: &Path, cap: usize) -> Result<Option<InstructionFile>, String> {
    let flags = OFlags::RDONLY | OFlags::NOFOLLOW | OFlags::NONBLOCK | OFlags::CLOEXEC;
    match rustix::fs::open(path, flags, Mode::empty()) {
        Ok(fd) => read_open(fd, path, cap),
        Err(rustix::io::Errno::NOENT | rustix::io::Errno::NOTDIR) => Ok(None),
        Err(rustix::io::Errno::LOOP) => Err("it is a symlink, which is never followed".into()),
        Err(e) => Err(e.to_string()),
    }
}

/// `rel` opened beneath `root` with no symlink on the way, read as
/// [`read_no_follow`] does.
fn read_beneath(
    root: &rustix::fd::OwnedFd,
    rel: &Path,
    cap: usize,
) -> Result<Option<InstructionFile>, String> {
    let flags = OFlags::RDONLY | OFlags::NOFOLLOW | OFlags::NONBLOCK | OFlags::CLOEXEC;
    let how = ResolveFlags::BENEATH | ResolveFlags::NO_SYMLINKS | ResolveFlags::NO_MAGICLINKS;
    match rustix::fs::openat2(root, rel, flags, Mode::empty(), how) {
        Ok(fd) => read_open(fd, rel, cap),
        Err(e) => Err(e.to_string()),
    }
}

fn read_open(
    fd: rustix::fd::OwnedFd,
    path: &Path,
    cap: usize,
) -> Result<Option<InstructionFile>, String> {
    let stat = rustix::fs::fstat(&fd).map_err(|e| e.to_string())?;
    if rustix::fs::FileType::from_raw_mode(stat.st_mode) != rustix::fs::FileType::RegularFile {
        return Err("it is not a regular file".into());
    }
    let mut bytes = Vec::new();
    std::fs::File::from(fd)
        .take(cap as u64)
        .read_to_end(&mut bytes)
        .map_err(|e| e.to_string())?;
    let size = u64::try_from(stat.st_size).unwrap_or(0);
    let cut = size.saturating_sub(bytes.len() as u64);
    let text = String::from_utf8_lossy(&bytes);
    let text = prefix(&text, cap).to_string();
    Ok(Some(InstructionFile {
        path: path.to_path_buf(),
        text,
        cut,
    }))
}

#[cfg(test)]
mod tests;
