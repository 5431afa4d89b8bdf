//! The gitignore-aware walk for `grep` and `glob`, over directory handles.
//!
//! Directories are listed and files opened relative to the handle of the
//! directory that holds them, never by a path from the root. In the
//! sandbox that is one `wasi:filesystem` call per listing, open, stat and
//! read: the libc route costs an extra `stat` by name for every directory
//! entry (its `d_ino`) and more per file open. The filtering is the
//! `ignore` crate's as `grep` configures it (no git repository required,
//! no global gitignore), in its order: `glob` overrides first, then
//! `.ignore` over `.gitignore` over `.git/info/exclude`, each from the
//! deepest directory up, then hidden names unless a rule whitelisted them.
//! A `.git` file (a worktree's pointer) has no exclude file read. Symlinks
//! are never followed.

use std::fs::File;
use std::io::{self, Read};
use std::path::Path;

use ignore::Match;
use ignore::gitignore::{Gitignore, GitignoreBuilder};
use ignore::overrides::Override;

use crate::WorkspacePath;

mod progress;
mod split;
pub use progress::WalkProgress;
pub use split::{NAMED_REST, Piece, TAIL_SPLIT, Walked, group, group_tapering, plan};

/// The directory handle a walk uses: `wasi:filesystem` descriptors in the
/// guest.
#[cfg(target_family = "wasm")]
pub type WalkDir = wasi::WasiDir;
/// The directory handle a walk uses: host paths, in native unit tests.
#[cfg(not(target_family = "wasm"))]
pub type WalkDir = native::NativeDir;

/// What a directory entry is, as listed (symlinks are not resolved).
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub enum Kind {
    /// A regular file.
    File,
    /// A directory.
    Dir,
    /// A symlink, FIFO, socket, device or unknown: never searched.
    Other,
}

/// One entry of a directory listing.
#[derive(Debug)]
pub struct Entry {
    /// The entry's name within its directory.
    pub name: String,
    /// What the listing says it is.
    pub kind: Kind,
}

/// A file's bytes, or why they were not read.
pub enum Contents {
    /// The whole file.
    Bytes(Vec<u8>),
    /// Larger than the limit asked for; not read.
    TooLarge,
    /// Read by the host, which found none of a [`Filter`]'s needles in it.
    Absent {
        /// The file's length.
        size: u64,
    },
    /// A NUL among its first bytes (as many as the read was told to sniff):
    /// binary, and not read past its first read.
    Binary {
        /// Bytes read before it was known to be binary.
        read: u64,
    },
}

impl Contents {
    /// Bytes read: none for a file that was too large.
    pub fn bytes_read(&self) -> u64 {
        match self {
            Contents::Bytes(bytes) => bytes.len() as u64,
            Contents::TooLarge => 0,
            Contents::Absent { size } => *size,
            Contents::Binary { read } => *read,
        }
    }

    /// `Binary` for whole `bytes` with a NUL among their first `sniff`.
    fn sniffed(bytes: Vec<u8>, sniff: u32) -> Contents {
        if has_nul(&bytes, sniff) {
            Contents::Binary {
                read: bytes.len() as u64,
            }
        } else {
            Contents::Bytes(bytes)
        }
    }
}

/// Whether a NUL is among the first `sniff` of `bytes`.
fn has_nul(bytes: &[u8], sniff: u32) -> bool {
    let head = usize::try_from(sniff).unwrap_or(usize::MAX);
    bytes[..bytes.len().min(head)].contains(&0)
}

/// Literals one of which every match contains: a file without any of
/// them is not handed over ([`Contents::Absent`]).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Filter {
    /// 1 to 64 needles, each 1 to 256 bytes (the host refuses others).
    pub needles: Vec<Vec<u8>>,
    /// Bytes at the head of a file checked for a NUL: a file with one
    /// there comes back [`Contents::Binary`], needle or not.
    pub sniff: u32,
}

impl Filter {
    /// Whether `bytes` holds one of the needles.
    pub fn matches(&self, bytes: &[u8]) -> bool {
        self.needles
            .iter()
            .any(|n| bytes.windows(n.len()).any(|w| w == n.as_slice()))
    }

    /// What a file's whole `bytes` come to under this filter: binary
    /// first, then absent when no needle is in them.
    pub fn sort(&self, bytes: Vec<u8>) -> Contents {
        if has_nul(&bytes, self.sniff) {
            return Contents::Binary {
                read: bytes.len() as u64,
            };
        }
        if self.matches(&bytes) {
            return Contents::Bytes(bytes);
        }
        Contents::Absent {
            size: bytes.len() as u64,
        }
    }
}

/// An open directory: list it, open a subdirectory, read a file in it.
pub trait Dir: Sized {
    /// Every entry but `.` and `..`, in no particular order.
    fn entries(&self) -> io::Result<Vec<Entry>>;
    /// [`Dir::entries`], and how many entries were left out because their
    /// names are not UTF-8 (none, unless the directory says otherwise).
    fn entries_counted(&self) -> io::Result<(Vec<Entry>, usize)> {
        Ok((self.entries()?, 0))
    }
    /// Open the subdirectory `name`, not following a symlink.
    fn open_dir(&self, name: &str) -> io::Result<Self>;
    /// Read the regular file `name` whole, unless it is over `max` bytes.
    fn read(&self, name: &str, max: u64) -> io::Result<Contents>;
    /// [`Dir::read`] for a search: a file with a NUL among its first
    /// `sniff` bytes comes back [`Contents::Binary`], read no further than
    /// its first read (as ripgrep stops at a binary file's first buffer).
    fn read_text(&self, name: &str, max: u64, sniff: u32) -> io::Result<Contents> {
        Ok(match self.read(name, max)? {
            Contents::Bytes(bytes) => Contents::sniffed(bytes, sniff),
            other => other,
        })
    }
    /// [`Dir::read_text`] with `filter.sniff`, but a text file holding none
    /// of `filter`'s needles may come back [`Contents::Absent`] instead of
    /// its bytes.
    fn read_filtered(&self, name: &str, max: u64, filter: &Filter) -> io::Result<Contents>;
}

/// Whether the walk goes on.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Flow {
    /// Visit the next file.
    Continue,
    /// Stop the whole walk.
    Stop,
}

/// The ignore rules of one directory on the way down.
struct Level {
    /// `.ignore`.
    ignore: Gitignore,
    /// `.gitignore`.
    git_ignore: Gitignore,
    /// `.git/info/exclude`, when the directory holds a `.git` directory.
    git_exclude: Gitignore,
}

/// 1 when `err` says an entry is there but could not be opened or read (a
/// permission, the sandbox, an I/O error), 0 when it is gone: a walk skips
/// both, as ripgrep does, and counts only the first.
pub fn unreadable(err: &io::Error) -> usize {
    usize::from(err.kind() != io::ErrorKind::NotFound)
}

/// Walks a tree in file-name order, yielding the files a search should read.
pub struct Walker<'a> {
    /// Directories the walk or the plan could not open or list (a
    /// permission, the sandbox, an I/O error): their contents were skipped.
    pub unreadable: usize,
    /// Entries left out because their names are not UTF-8, and the guest
    /// path of the first directory that had one: said once, in the call's
    /// log, when the walker is dropped.
    pub unnamed: (usize, Option<String>),
    /// Skip hidden names (not whitelisted by a rule).
    skip_hidden: bool,
    /// The `glob` input, matched before any ignore file.
    overrides: &'a Override,
    /// Rules from the root down to the directory being listed.
    levels: Vec<Level>,
    /// Guest paths of the ancestors of the walk's start whose rules are
    /// the first of `levels`: kept from one [`start`] to the next.
    ancestors: Vec<String>,
}

impl<'a> Walker<'a> {
    /// A walker with no ignore files read yet.
    pub fn new(skip_hidden: bool, overrides: &'a Override) -> Self {
        Walker {
            unreadable: 0,
            unnamed: (0, None),
            skip_hidden,
            overrides,
            levels: Vec::new(),
            ancestors: Vec::new(),
        }
    }

    /// Take the ignore files of `dir` (at guest path `path`), an ancestor
    /// of the walk's start, into account; `None` for one that cannot be
    /// opened (no rules). Its ignore files are opened by name, not looked
    /// up in a listing: only regular files are read either way.
    pub fn enter_ancestor<D: Dir>(&mut self, dir: Option<&D>, path: &str) {
        let level = dir.map_or_else(Level::empty, |dir| Level::probe(dir, path));
        self.levels.push(level);
        self.ancestors.push(path.to_string());
    }

    /// Keep the ancestors already entered that begin `chain` (guest
    /// paths from the root down), forget the rest; how many were kept.
    fn keep_ancestors(&mut self, chain: &[&str]) -> usize {
        let kept = self
            .ancestors
            .iter()
            .zip(chain)
            .take_while(|(a, b)| a == *b)
            .count();
        self.ancestors.truncate(kept);
        self.levels.truncate(kept);
        kept
    }

    /// List `dir` (at guest path `path`) in name order and take its
    /// ignore files into account; `None` if it cannot be listed.
    fn enter<D: Dir>(&mut self, dir: &D, path: &str) -> Option<Vec<Entry>> {
        let (mut entries, unnamed) = dir.entries_counted().ok()?;
        if unnamed > 0 {
            self.unnamed.0 += unnamed;
            self.unnamed.1.get_or_insert_with(|| path.to_string());
        }
        entries.sort_unstable_by(|a, b| a.name.cmp(&b.name));
        self.levels.push(Level::load(dir, path, &entries));
        Some(entries)
    }

    /// Walk `dir`, at guest path `path`, calling `visit(dir, name, path)`
    /// for each file to search, in order.
    pub fn walk<D: Dir>(
        &mut self,
        dir: &D,
        path: &str,
        visit: &mut impl FnMut(&D, &str, &str) -> Flow,
    ) -> Flow {
        self.walk_all(dir, path, &mut |dir, name, path, kind| match kind {
            Kind::File => visit(dir, name, path),
            Kind::Dir | Kind::Other => Flow::Continue,
        })
    }

    /// Walk `dir` as [`Walker::walk`] does, calling `visit(dir, name, path,
    /// kind)` for every entry not filtered out, files, directories (before
    /// their contents) and the rest (symlinks and special files) alike.
    pub fn walk_all<D: Dir>(
        &mut self,
        dir: &D,
        path: &str,
        visit: &mut impl FnMut(&D, &str, &str, Kind) -> Flow,
    ) -> Flow {
        // A directory that cannot be listed is skipped, as ripgrep does,
        // and counted.
        let Some(entries) = self.enter(dir, path) else {
            self.unreadable += 1;
            return Flow::Continue;
        };
        let mut flow = Flow::Continue;
        for entry in &entries {
            let child = format!("{path}/{}", entry.name);
            let is_dir = entry.kind == Kind::Dir;
            if self.skipped(&child, &entry.name, is_dir) {
                continue;
            }
            flow = visit(dir, &entry.name, &child, entry.kind);
            if flow == Flow::Continue && is_dir {
                flow = match dir.open_dir(&entry.name) {
                    Ok(sub) => self.walk_all(&sub, &child, visit),
                    Err(e) => {
                        self.unreadable += unreadable(&e);
                        Flow::Continue
                    }
                };
            }
            if flow == Flow::Stop {
                break;
            }
        }
        self.levels.pop();
        flow
    }

    /// True when the entry at `path` (named `name`) is filtered out.
    fn skipped(&self, path: &str, name: &str, is_dir: bool) -> bool {
        let by_glob = self.overrides.matched(path, is_dir);
        if !by_glob.is_none() {
            return by_glob.is_ignore();
        }
        let by_rules = self.matched_rules(path, is_dir);
        if !by_rules.is_none() {
            return by_rules.is_ignore();
        }
        self.skip_hidden && name.starts_with('.')
    }

    /// The ignore files' verdict: `.ignore` first, then `.gitignore`, then
    /// the git exclude file, each from the deepest directory up.
    fn matched_rules(&self, path: &str, is_dir: bool) -> Match<()> {
        let (mut ignore, mut git_ignore, mut git_exclude) = (Match::None, Match::None, Match::None);
        for level in self.levels.iter().rev() {
            if ignore.is_none() {
                ignore = level.ignore.matched(path, is_dir).map(|_| ());
            }
            if git_ignore.is_none() {
                git_ignore = level.git_ignore.matched(path, is_dir).map(|_| ());
            }
            if git_exclude.is_none() {
                git_exclude = level.git_exclude.matched(path, is_dir).map(|_| ());
            }
        }
        ignore.or(git_ignore).or(git_exclude)
    }
}

impl Level {
    /// No rules.
    fn empty() -> Level {
        Level {
            ignore: Gitignore::empty(),
            git_ignore: Gitignore::empty(),
            git_exclude: Gitignore::empty(),
        }
    }

    /// The rules in `dir` (at guest path `path`), its ignore files opened
    /// by name.
    fn probe<D: Dir>(dir: &D, path: &str) -> Level {
        let rules = |text: Option<Vec<u8>>| text.map_or_else(Gitignore::empty, |t| parse(path, &t));
        let exclude = || {
            small(
                &dir.open_dir(".git").ok()?.open_dir("info").ok()?,
                "exclude",
            )
        };
        Level {
            ignore: rules(small(dir, ".ignore")),
            git_ignore: rules(small(dir, ".gitignore")),
            git_exclude: rules(exclude()),
        }
    }

    /// The rules in `dir` (at guest path `path`, listed as `entries`).
    fn load<D: Dir>(dir: &D, path: &str, entries: &[Entry]) -> Level {
        let kind = |name: &str| entries.iter().find(|e| e.name == name).map(|e| e.kind);
        let file = |name: &str| {
            (kind(name) == Some(Kind::File))
                .then(|| small(dir, name))
                .flatten()
        };
        let exclude = || {
            let git = (kind(".git") == Some(Kind::Dir)).then(|| dir.open_dir(".git").ok())??;
            small(&git.open_dir("info").ok()?, "exclude")
        };
        let rules = |text: Option<Vec<u8>>| text.map_or_else(Gitignore::empty, |t| parse(path, &t));
        Level {
            ignore: rules(file(".ignore")),
            git_ignore: rules(file(".gitignore")),
            git_exclude: rules(exclude()),
        }
    }
}

/// An ignore file's contents, when it is readable and not absurdly large.
fn small<D: Dir>(dir: &D, name: &str) -> Option<Vec<u8>> {
    match dir.read(name, 1024 * 1024) {
        Ok(Contents::Bytes(bytes)) => Some(bytes),
        Ok(Contents::TooLarge | Contents::Absent { .. } | Contents::Binary { .. }) | Err(_) => None,
    }
}

/// Read the file at `path` (following symlinks) whole, unless it is over
/// `max` bytes: the single-file search, and every read in native tests.
pub fn read_path(path: &Path, max: u64) -> io::Result<Contents> {
    let mut file = File::open(path)?;
    if file.metadata()?.len() > max {
        return Ok(Contents::TooLarge);
    }
    let mut bytes = Vec::new();
    file.read_to_end(&mut bytes)?;
    Ok(Contents::Bytes(bytes))
}

/// Gitignore rules from `text`, rooted at `dir`; lines that do not parse are skipped.
fn parse(dir: &str, text: &[u8]) -> Gitignore {
    let mut builder = GitignoreBuilder::new(dir);
    for line in String::from_utf8_lossy(text).lines() {
        let _ = builder.add_line(None, line);
    }
    builder.build().unwrap_or_else(|_| Gitignore::empty())
}

#[cfg(target_family = "wasm")]
impl Drop for Walker<'_> {
    /// Say once what the walk left out for names that are not UTF-8.
    fn drop(&mut self) {
        let (count, Some(first)) = &self.unnamed else {
            return;
        };
        let what = if *count == 1 { "entry" } else { "entries" };
        crate::log(
            crate::LogLevel::Warn,
            &format!(
                "skipped {count} {what} whose names are not UTF-8 (WASI names files in UTF-8 \
                 only), the first in {first}; the rest of each directory was walked"
            ),
        );
    }
}

/// Directories on the host, for native tests.
#[cfg(not(target_family = "wasm"))]
pub mod native {
    use std::io;
    use std::path::PathBuf;

    use super::{Contents, Dir, Entry, Filter, Kind};

    /// A host directory by path.
    pub struct NativeDir(pub PathBuf);

    impl Dir for NativeDir {
        fn entries(&self) -> io::Result<Vec<Entry>> {
            Ok(self.entries_counted()?.0)
        }

        /// As through WASI, a name that is not UTF-8 is left out and counted.
        fn entries_counted(&self) -> io::Result<(Vec<Entry>, usize)> {
            let mut out = Vec::new();
            let mut unnamed = 0;
            for entry in std::fs::read_dir(&self.0)? {
                let entry = entry?;
                let Ok(name) = entry.file_name().into_string() else {
                    unnamed += 1;
                    continue;
                };
                let t = entry.file_type()?;
                let kind = if t.is_file() {
                    Kind::File
                } else if t.is_dir() {
                    Kind::Dir
                } else {
                    Kind::Other
                };
                out.push(Entry { name, kind });
            }
            Ok((out, unnamed))
        }

        fn open_dir(&self, name: &str) -> io::Result<Self> {
            let path = self.0.join(name);
            if !std::fs::symlink_metadata(&path)?.is_dir() {
                return Err(io::Error::from(io::ErrorKind::NotADirectory));
            }
            Ok(NativeDir(path))
        }

        fn read(&self, name: &str, max: u64) -> io::Result<Contents> {
            // As through a handle: a symlink is not followed.
            let path = self.0.join(name);
            if !std::fs::symlink_metadata(&path)?.is_file() {
                return Err(io::Error::from(io::ErrorKind::InvalidInput));
            }
            super::read_path(&path, max)
        }

        fn read_filtered(&self, name: &str, max: u64, filter: &Filter) -> io::Result<Contents> {
            Ok(match self.read(name, max)? {
                Contents::Bytes(bytes) => filter.sort(bytes),
                other => other,
            })
        }
    }
}

/// Directories through `wasi:filesystem` handles.
#[cfg(target_family = "wasm")]
pub mod wasi {
    use std::io;

    use wasip2::filesystem::types::{
        Descriptor, DescriptorFlags, DescriptorType, ErrorCode, OpenFlags, PathFlags,
    };

    use super::{Contents, Dir, Entry, Filter, Kind, has_nul};
    use crate::bindings::prefilter::{self, Found, PrefilterError};

    /// Bytes asked for by a file's first read.
    const FIRST_READ: u64 = 256 * 1024;
    /// Bytes asked for by each filtered read: the most one host read
    /// returns, so that the host sees all of most files at once.
    const FILTERED_READ: u64 = 4 * 1024 * 1024;

    /// An open directory handle.
    pub struct WasiDir(pub Descriptor);

    impl WasiDir {
        /// Open `path` (relative, `.` for itself) under `base`, following symlinks.
        pub fn open(base: &Descriptor, path: &str) -> io::Result<WasiDir> {
            base.open_at(
                PathFlags::SYMLINK_FOLLOW,
                path,
                OpenFlags::DIRECTORY,
                DescriptorFlags::READ,
            )
            .map(WasiDir)
            .map_err(error)
        }
    }

    impl Dir for WasiDir {
        fn entries(&self) -> io::Result<Vec<Entry>> {
            Ok(self.entries_counted()?.0)
        }

        /// A name that is not UTF-8 cannot cross WASI, nor be opened
        /// through it: that entry is skipped, counted, and the rest of the
        /// directory listed.
        fn entries_counted(&self) -> io::Result<(Vec<Entry>, usize)> {
            let stream = self.0.read_directory().map_err(error)?;
            let mut out = Vec::new();
            let mut unnamed = 0usize;
            loop {
                let entry = match stream.read_directory_entry() {
                    Ok(Some(entry)) => entry,
                    Ok(None) => break,
                    Err(ErrorCode::IllegalByteSequence) => {
                        unnamed += 1;
                        continue;
                    }
                    Err(code) => return Err(error(code)),
                };
                let kind = match entry.type_ {
                    DescriptorType::RegularFile => Kind::File,
                    DescriptorType::Directory => Kind::Dir,
                    DescriptorType::Unknown
                    | DescriptorType::BlockDevice
                    | DescriptorType::CharacterDevice
                    | DescriptorType::Fifo
                    | DescriptorType::SymbolicLink
                    | DescriptorType::Socket => Kind::Other,
                };
                out.push(Entry {
                    name: entry.name,
                    kind,
                });
            }
            Ok((out, unnamed))
        }

        fn open_dir(&self, name: &str) -> io::Result<Self> {
            self.0
                .open_at(
                    PathFlags::empty(),
                    name,
                    OpenFlags::DIRECTORY,
                    DescriptorFlags::READ,
                )
                .map(WasiDir)
                .map_err(error)
        }

        fn read(&self, name: &str, max: u64) -> io::Result<Contents> {
            read_all(&self.open_file(name)?, max, None)
        }

        fn read_text(&self, name: &str, max: u64, sniff: u32) -> io::Result<Contents> {
            read_all(&self.open_file(name)?, max, Some(sniff))
        }

        fn read_filtered(&self, name: &str, max: u64, filter: &Filter) -> io::Result<Contents> {
            read_filtered(&self.open_file(name)?, max, filter)
        }
    }

    /// [`Dir::read_filtered`] of the open `file`. The host reads the file a
    /// chunk at a time and hands one over only when it holds a needle.
    /// Chunks overlap by a needle's length less one, so no needle is missed
    /// across their ends. The first chunk is small, so a binary file is
    /// read no further.
    fn read_filtered(file: &Descriptor, max: u64, filter: &Filter) -> io::Result<Contents> {
        let longest = filter.needles.iter().map(Vec::len).max().unwrap_or(1);
        let overlap = longest.saturating_sub(1) as u64;
        let mut offset = 0u64;
        loop {
            let chunk = if offset == 0 {
                FIRST_READ
            } else {
                FILTERED_READ
            };
            let len = chunk.min(max.saturating_add(1).saturating_sub(offset));
            let found =
                prefilter::read_if_contains(file, len, offset, &filter.needles, filter.sniff);
            match found {
                Ok(Found::Bytes((bytes, end))) if offset == 0 => {
                    if has_nul(&bytes, filter.sniff) {
                        let read = bytes.len() as u64;
                        return Ok(Contents::Binary { read });
                    }
                    return read_rest(file, bytes, end, max);
                }
                // A needle past the first chunk: the file is searched whole.
                Ok(Found::Bytes(_)) | Err(PrefilterError::BadNeedles) => break,
                Ok(Found::Absent(a)) => {
                    if offset == 0 && a.nul_in_head {
                        return Ok(Contents::Binary { read: a.size });
                    }
                    let size = offset + a.size;
                    if size > max {
                        return Ok(Contents::TooLarge);
                    }
                    if a.end {
                        return Ok(Contents::Absent { size });
                    }
                    if a.size <= overlap {
                        break;
                    }
                    offset = size - overlap;
                }
                Err(PrefilterError::Read(code)) => return Err(error(code)),
            }
        }
        read_all(file, max, Some(filter.sniff))
    }

    /// `file` read whole from its start, unless it is over `max` bytes or,
    /// with `sniff`, a NUL is among its first `sniff` bytes (then only the
    /// first read is made). Most files end within the first read, which
    /// says so: no `stat` for them. A longer one is measured before the rest.
    fn read_all(file: &Descriptor, max: u64, sniff: Option<u32>) -> io::Result<Contents> {
        let (bytes, end) = file
            .read(FIRST_READ.min(max.saturating_add(1)), 0)
            .map_err(error)?;
        if let Some(sniff) = sniff
            && has_nul(&bytes, sniff)
        {
            let read = bytes.len() as u64;
            return Ok(Contents::Binary { read });
        }
        read_rest(file, bytes, end, max)
    }

    impl WasiDir {
        /// Open the regular file `name` for reading, not following a symlink.
        fn open_file(&self, name: &str) -> io::Result<Descriptor> {
            self.0
                .open_at(
                    PathFlags::empty(),
                    name,
                    OpenFlags::empty(),
                    DescriptorFlags::READ,
                )
                .map_err(error)
        }
    }

    /// The rest of `file` after a first read of `bytes` from its start
    /// (`end` when that reached the end), unless it is over `max` bytes.
    fn read_rest(
        file: &Descriptor,
        mut bytes: Vec<u8>,
        mut end: bool,
        max: u64,
    ) -> io::Result<Contents> {
        if end {
            return Ok(if bytes.len() as u64 > max {
                Contents::TooLarge
            } else {
                Contents::Bytes(bytes)
            });
        }
        let size = file.stat().map_err(error)?.size;
        if size > max {
            return Ok(Contents::TooLarge);
        }
        // Bytes appended after the stat are left out, as if read a
        // moment earlier; a host may hand out less than asked per read.
        // Room for the rest up front: growing by doubling would copy the
        // bytes again and take fresh pages for each larger buffer.
        bytes.reserve_exact(
            usize::try_from(size)
                .unwrap_or(usize::MAX)
                .saturating_sub(bytes.len()),
        );
        while !end && (bytes.len() as u64) < size {
            let (more, eof) = file
                .read(size - bytes.len() as u64, bytes.len() as u64)
                .map_err(error)?;
            end = eof || more.is_empty();
            bytes.extend_from_slice(&more);
        }
        Ok(Contents::Bytes(bytes))
    }

    /// A `wasi:filesystem` error as an I/O error of the matching kind.
    pub fn error(code: ErrorCode) -> io::Error {
        let kind = match code {
            ErrorCode::NoEntry => io::ErrorKind::NotFound,
            ErrorCode::Access | ErrorCode::NotPermitted => io::ErrorKind::PermissionDenied,
            ErrorCode::NotDirectory => io::ErrorKind::NotADirectory,
            ErrorCode::IsDirectory => io::ErrorKind::IsADirectory,
            _ => io::ErrorKind::Other,
        };
        io::Error::new(kind, code.message())
    }
}

/// The directories from `target`'s root down to `target`, as (relative
/// path, guest path) pairs: the root as `.`, then each ancestor, then
/// `target` itself last.
fn descent(target: &WorkspacePath) -> Vec<(String, String)> {
    let mut chain = vec![(
        target.relative().to_string(),
        target.guest().trim_end_matches('/').to_string(),
    )];
    let mut at = target.clone();
    while let Some(parent) = at.parent() {
        chain.push((
            parent.relative().to_string(),
            parent.guest().trim_end_matches('/').to_string(),
        ));
        at = parent;
    }
    chain.reverse();
    for (rel, _) in &mut chain {
        if rel.is_empty() {
            *rel = ".".into();
        }
    }
    chain
}

/// Open `target` for the walk after reading its ancestors' ignore files,
/// through the handle of the granted directory it lies in.
#[cfg(target_family = "wasm")]
pub fn start(target: &WorkspacePath, walker: &mut Walker) -> io::Result<WalkDir> {
    let chain = descent(target);
    let base = granted(&chain[0].1)?;
    let (last, ancestors) = chain.split_last().ok_or(io::ErrorKind::NotFound)?;
    let guests: Vec<&str> = ancestors.iter().map(|(_, g)| g.as_str()).collect();
    let kept = walker.keep_ancestors(&guests);
    for (rel, guest) in &ancestors[kept..] {
        walker.enter_ancestor(WalkDir::open(&base, rel).ok().as_ref(), guest);
    }
    WalkDir::open(&base, &last.0)
}

/// The entries of the directory `target` (but `.` and `..`, in no
/// particular order), and how many were left out because their names are
/// not UTF-8.
pub fn list(target: &WorkspacePath) -> io::Result<(Vec<Entry>, usize)> {
    open_alone(target)?.entries_counted()
}

/// Open `target` alone, leaving `walker` as it is.
#[cfg(target_family = "wasm")]
fn open_alone(target: &WorkspacePath) -> io::Result<WalkDir> {
    let chain = descent(target);
    let base = granted(&chain[0].1)?;
    let (last, _) = chain.split_last().ok_or(io::ErrorKind::NotFound)?;
    WalkDir::open(&base, &last.0)
}

/// The handle of the granted directory at guest path `root`.
#[cfg(target_family = "wasm")]
fn granted(root: &str) -> io::Result<wasip2::filesystem::types::Descriptor> {
    wasip2::filesystem::preopens::get_directories()
        .into_iter()
        .find(|(_, name)| name.trim_end_matches('/') == root)
        .map(|(dir, _)| dir)
        .ok_or_else(|| io::Error::from(io::ErrorKind::NotFound))
}

/// Natively (unit tests) the guest paths are host paths.
#[cfg(not(target_family = "wasm"))]
pub fn start(target: &WorkspacePath, walker: &mut Walker) -> io::Result<WalkDir> {
    let chain = descent(target);
    let (last, ancestors) = chain.split_last().ok_or(io::ErrorKind::NotFound)?;
    let guests: Vec<&str> = ancestors.iter().map(|(_, g)| g.as_str()).collect();
    let kept = walker.keep_ancestors(&guests);
    for (_, guest) in &ancestors[kept..] {
        walker.enter_ancestor(Some(&native::NativeDir(guest.into())), guest);
    }
    Ok(native::NativeDir(last.1.clone().into()))
}

/// Natively (unit tests) the guest path is the host path.
#[cfg(not(target_family = "wasm"))]
fn open_alone(target: &WorkspacePath) -> io::Result<WalkDir> {
    Ok(native::NativeDir(
        target.guest().trim_end_matches('/').into(),
    ))
}

/// Open the directory of `piece` (at `target`) to walk it with
/// [`Walker::walk_piece`]. A subtree, or what is after a name in a
/// directory, is [`start`]ed: the walk below it needs its ancestors' ignore
/// rules. A run of entries is only opened: the plan
/// already left out what those rules ignore, and its directories are
/// visited, not entered. Starting it too dropped the ancestor it lies in
/// from `walker`, and each next subtree under that directory read its
/// ignore files again.
pub fn start_piece(
    target: &WorkspacePath,
    piece: &Piece,
    walker: &mut Walker,
) -> io::Result<WalkDir> {
    match piece {
        Piece::Tree(_) | Piece::After { .. } => start(target, walker),
        Piece::Entries { .. } => open_alone(target),
    }
}

/// [`start_piece`] of `piece` under `base` (the walk's target), and the
/// guest path to walk it at; `None` when it cannot be opened: a directory
/// gone since the plan is skipped, as one walk would skip it, and one that
/// cannot be opened is counted in `walker`'s [`Walker::unreadable`].
pub fn open_piece(
    base: &WorkspacePath,
    piece: &Piece,
    walker: &mut Walker,
) -> Option<(WalkDir, String)> {
    let at = piece.under(base);
    match start_piece(&at, piece, walker) {
        Ok(dir) => Some((dir, at.guest().trim_end_matches('/').to_string())),
        Err(e) => {
            walker.unreadable += unreadable(&e);
            None
        }
    }
}

#[cfg(test)]
mod tests {
    use ignore::WalkBuilder;
    use ignore::overrides::OverrideBuilder;

    use super::native::NativeDir;
    use super::*;

    fn tree(files: &[(&str, &str)]) -> tempfile::TempDir {
        let dir = tempfile::tempdir().unwrap();
        for (rel, content) in files {
            let p = dir.path().join(rel);
            std::fs::create_dir_all(p.parent().unwrap()).unwrap();
            std::fs::write(p, content).unwrap();
        }
        dir
    }

    fn overrides(base: &Path, globs: &[&str]) -> Override {
        let mut b = OverrideBuilder::new(base);
        for g in globs {
            b.add(g).unwrap();
        }
        b.build().unwrap()
    }

    /// Files under `root/sub` this walker visits, relative to `root`.
    fn ours(root: &Path, sub: &str, hidden: bool, globs: &[&str]) -> Vec<String> {
        let base = root.join(sub);
        let o = overrides(&base, globs);
        let mut walker = Walker::new(!hidden, &o);
        let mut at = root.to_path_buf();
        for comp in Path::new(sub).components() {
            walker.enter_ancestor(Some(&NativeDir(at.clone())), at.to_str().unwrap());
            at.push(comp);
        }
        let mut found = Vec::new();
        let base = base.to_str().unwrap().trim_end_matches('/').to_string();
        walker.walk(&NativeDir(base.clone().into()), &base, &mut |_, _, path| {
            found.push(path.strip_prefix(root.to_str().unwrap()).unwrap()[1..].to_string());
            Flow::Continue
        });
        found
    }

    /// The same walk made by the `ignore` crate's own walker.
    fn theirs(root: &Path, sub: &str, hidden: bool, globs: &[&str]) -> Vec<String> {
        let base = root.join(sub);
        WalkBuilder::new(&base)
            .hidden(!hidden)
            .require_git(false)
            .git_global(false)
            .follow_links(false)
            .overrides(overrides(&base, globs))
            .sort_by_file_name(|a, b| a.cmp(b))
            .build()
            .filter_map(Result::ok)
            .filter(|e| e.file_type().is_some_and(|t| t.is_file()))
            .map(|e| {
                e.path()
                    .strip_prefix(root)
                    .unwrap()
                    .to_str()
                    .unwrap()
                    .to_string()
            })
            .collect()
    }

    #[test]
    fn visits_what_the_ignore_crate_walker_visits() {
        let dir = tree(&[
            (".gitignore", "*.log\n/build/\n!keep.log\n"),
            (".ignore", "!important.log\nscratch/\n"),
            ("a.log", "x"),
            ("keep.log", "x"),
            ("important.log", "x"),
            ("build/out.txt", "x"),
            ("src/build/inner.txt", "x"),
            ("src/main.rs", "x"),
            ("src/.gitignore", "gen_*\n"),
            ("src/gen_a.rs", "x"),
            ("src/deep/gen_b.rs", "x"),
            ("src/deep/c.rs", "x"),
            ("scratch/s.txt", "x"),
            (".hidden/h.txt", "x"),
            (".env", "x"),
            ("nested/.git/info/exclude", "excluded.txt\n"),
            ("nested/excluded.txt", "x"),
            ("nested/b.log", "x"),
            ("nested/sub/.gitignore", "*.rs\n"),
            ("nested/sub/d.rs", "x"),
            ("nested/sub/e.txt", "x"),
            ("zz/Z.txt", "x"),
            ("zz/a.txt", "x"),
        ]);
        std::os::unix::fs::symlink(dir.path().join("src"), dir.path().join("link")).unwrap();
        let root = dir.path();
        let cases: &[(&str, bool, &[&str])] = &[
            ("", false, &[]),
            ("", true, &[]),
            ("", false, &["*.rs"]),
            ("", false, &["!*.txt"]),
            ("", false, &[".env", "*.log"]),
            ("src", false, &[]),
            ("src/deep", false, &[]),
            ("nested", false, &[]),
            ("nested/sub", true, &[]),
        ];
        for &(sub, hidden, globs) in cases {
            let expected = theirs(root, sub, hidden, globs);
            assert!(!expected.is_empty(), "{sub:?} {hidden} {globs:?}");
            assert_eq!(
                ours(root, sub, hidden, globs),
                expected,
                "{sub:?} {hidden} {globs:?}"
            );
        }
    }
}
