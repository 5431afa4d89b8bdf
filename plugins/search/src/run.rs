//! Running a search: walking the target, reading files and searching them.
//!
//! Each file is read whole with the size `stat` gave; binary files (a NUL
//! in the first 8 KiB, known from the first read, so the rest of such a
//! file is never read) and files over [`MAX_FILE_SIZE`] are counted and
//! skipped. Symlinks below the target are never followed, so the walk
//! stays under the searched path.

use std::path::Path;

use ignore::overrides::{Override, OverrideBuilder};
use warden_sdk::walk::{Contents, Dir, Flow, WalkDir, WalkProgress, Walker, read_path, start};
use warden_sdk::{LogLevel, Output, ToolError, WorkspacePath, serde_json::json};

use crate::searcher::{Searcher, Sink};
use crate::summary::{Tally, summary};
use crate::{Globs, Input, searcher, shard};

/// Files larger than this are skipped rather than read whole.
pub(crate) const MAX_FILE_SIZE: u64 = 64 * 1024 * 1024;
/// Bytes inspected for a NUL to decide a file is binary.
pub(crate) const SNIFF: usize = 8 * 1024;

/// The `glob` input as walk overrides rooted at `base`.
pub(crate) fn overrides(base: &Path, globs: Option<&Globs>) -> Result<Override, ToolError> {
    let globs: &[String] = match globs {
        None => &[],
        Some(Globs::One(g)) => std::slice::from_ref(g),
        Some(Globs::Many(gs)) => gs,
    };
    let mut builder = OverrideBuilder::new(base);
    for g in globs {
        builder
            .add(g)
            .map_err(|e| ToolError::invalid_input(format!("invalid glob `{g}`: {e}")))?;
    }
    builder
        .build()
        .map_err(|e| ToolError::invalid_input(format!("invalid glob: {e}")))
}

/// Run the search of `target` (a directory or a file), showing paths as
/// the target's own display path extended below it. A directory is split
/// across parallel workers when the host runs them (see [`crate::shard`]).
pub(crate) fn grep(target: &WorkspacePath, input: &Input) -> Result<Output, ToolError> {
    let searcher = searcher(input)?;
    let shown = target.display();
    let meta = std::fs::metadata(target.guest()).map_err(|e| ToolError::from_io(&e, shown))?;
    if !meta.is_dir() && !meta.is_file() {
        return Err(ToolError::invalid_input(format!(
            "{shown}: not a regular file (a FIFO, socket or device); grep searches files and directories"
        )));
    }
    let mut sink = Sink::default();
    let mut tally = Tally::default();
    if !meta.is_dir() {
        let content = read_path(Path::new(target.guest()), MAX_FILE_SIZE)
            .map_err(|e| ToolError::from_io(&e, shown))?;
        search_contents(&searcher, shown, content, &mut sink, &mut tally);
    } else if let Some((merged, merged_tally)) = split(target, input, &searcher) {
        (sink, tally) = (merged, merged_tally);
    } else {
        let mut progress = WalkProgress::new("grep", "files");
        let mut unreadable = 0;
        let walked = walk_files(target, input, &mut |dir, name, below| {
            // A file that vanished or cannot be read is skipped, as ripgrep
            // does; one that cannot be read is counted.
            match read_file(dir, name, &searcher) {
                Ok(content) => {
                    progress.entry(content.bytes_read());
                    let shown = shown_below(shown, below);
                    search_contents(&searcher, &shown, content, &mut sink, &mut tally);
                }
                Err(e) => {
                    progress.entry(0);
                    unreadable += warden_sdk::walk::unreadable(&e);
                }
            }
            if sink.stop.is_some() {
                Flow::Stop
            } else {
                Flow::Continue
            }
        })?;
        tally.cancelled = walked.cancelled;
        tally.unreadable = unreadable + walked.unreadable;
    }
    Ok(finish(sink, &tally, &searcher))
}

/// The search of directory `target` split across the host's workers, if
/// it runs them; the call's log says whether it was and, if not, why.
fn split(target: &WorkspacePath, input: &Input, searcher: &Searcher) -> Option<(Sink, Tally)> {
    let shards = shard::shards();
    let mut rounds: Vec<usize> = Vec::new();
    let run = |t: &[String]| {
        let ran = shard::fan_out(t);
        if ran.is_ok() {
            rounds.push(t.len());
        }
        ran
    };
    match shard::fanned(target, input, searcher, shards, shard::ROUNDS, run) {
        Ok(found) => {
            // Each task runs in a worker of its own.
            let tasks: Vec<String> = rounds.iter().map(usize::to_string).collect();
            note(
                LogLevel::Debug,
                &format!("grep: searched in {} workers", tasks.join(" + ")),
            );
            Some(found)
        }
        Err(shard::Unsplit::OneWorker | shard::Unsplit::Unopened) => None,
        Err(shard::Unsplit::OnePiece) => {
            note(
                LogLevel::Debug,
                "grep: searched in one walk: too small a tree to split",
            );
            None
        }
        Err(why) => {
            note(
                LogLevel::Warn,
                &format!("grep: searched in one walk, not split: {why:?}"),
            );
            None
        }
    }
}

/// Log `message` to the host; natively (unit tests) there is none.
fn note(level: LogLevel, message: &str) {
    #[cfg(target_family = "wasm")]
    warden_sdk::log(level, message);
    #[cfg(not(target_family = "wasm"))]
    let _ = (level, message);
}

/// The output of a search that found `sink`: the matches, then the summary.
pub(crate) fn finish(mut sink: Sink, tally: &Tally, searcher: &Searcher) -> Output {
    let summary = summary(&sink, tally, searcher.max_matches);
    sink.text.push_str(&summary);
    sink.text.push('\n');
    let truncated = sink.stop.is_some() || tally.cancelled;
    let structured = json!({"matches": sink.matches, "files": sink.files, "truncated": truncated});
    Output::text(sink.text).with_structured(structured)
}

/// How a walk of files ended.
pub(crate) struct Walked {
    /// It stopped because the call was cancelled.
    pub(crate) cancelled: bool,
    /// Directories it could not open or list.
    pub(crate) unreadable: usize,
}

/// The directory `target` walked in order, calling `visit(dir, name,
/// below)` for each file to search, `below` being its path under the
/// target.
pub(crate) fn walk_files<F>(
    target: &WorkspacePath,
    input: &Input,
    visit: &mut F,
) -> Result<Walked, ToolError>
where
    F: FnMut(&WalkDir, &str, &str) -> Flow,
{
    let shown = target.display();
    let base = target.guest().trim_end_matches('/');
    let overrides = overrides(Path::new(base), input.glob.as_ref())?;
    let mut walker = Walker::new(!input.include_hidden, &overrides);
    let start = start(target, &mut walker).map_err(|e| ToolError::from_io(&e, shown))?;
    let mut files = 0usize;
    let mut cancelled = false;
    walker.walk(&start, base, &mut |dir, name, path| {
        files += 1;
        if files.is_multiple_of(64) && is_cancelled() {
            cancelled = true;
            return Flow::Stop;
        }
        let below = path.get(base.len() + 1..).unwrap_or(name);
        visit(dir, name, below)
    });
    Ok(Walked {
        cancelled,
        unreadable: walker.unreadable,
    })
}

/// How a file at `below` under the target shown as `shown` is shown.
pub(crate) fn shown_below(shown: &str, below: &str) -> String {
    if shown == "." {
        below.to_string()
    } else {
        format!("{}/{below}", shown.trim_end_matches('/'))
    }
}

/// Read the file `name` in `dir` for `searcher`: through the host's
/// prefilter when the pattern requires literals.
pub(crate) fn read_file(
    dir: &WalkDir,
    name: &str,
    searcher: &Searcher,
) -> std::io::Result<Contents> {
    match &searcher.filter {
        Some(filter) => dir.read_filtered(name, MAX_FILE_SIZE, filter),
        None => dir.read_text(name, MAX_FILE_SIZE, SNIFF as u32),
    }
}

/// A file's bytes sorted for the search.
pub(crate) enum Sniffed {
    /// Over [`MAX_FILE_SIZE`]: not read.
    Large,
    /// A NUL in the first 8 KiB.
    Binary,
    /// Text holding none of the literals a match requires: searched, by
    /// the host's prefilter, without a match.
    Unmatched,
    /// Searched.
    Text(Vec<u8>),
}

/// Whether `content` is searched: not when it was too large to read or is
/// binary (a NUL in its first 8 KiB).
pub(crate) fn sniff(content: Contents) -> Sniffed {
    match content {
        Contents::TooLarge => Sniffed::Large,
        Contents::Binary { .. } => Sniffed::Binary,
        Contents::Absent { .. } => Sniffed::Unmatched,
        Contents::Bytes(bytes) if memchr::memchr(0, &bytes[..bytes.len().min(SNIFF)]).is_some() => {
            Sniffed::Binary
        }
        Contents::Bytes(bytes) => Sniffed::Text(bytes),
    }
}

/// Search a file's contents, unless it is binary or was too large to read.
pub(crate) fn search_contents(
    s: &Searcher,
    shown: &str,
    content: Contents,
    sink: &mut Sink,
    tally: &mut Tally,
) {
    match sniff(content) {
        Sniffed::Large => tally.large += 1,
        Sniffed::Binary => tally.binary += 1,
        Sniffed::Unmatched => tally.searched += 1,
        Sniffed::Text(bytes) => {
            tally.searched += 1;
            s.search(shown, &bytes, sink);
        }
    }
}

/// True once the user has cancelled the call; always false in native tests,
/// where the host import does not exist.
pub(crate) fn is_cancelled() -> bool {
    #[cfg(target_family = "wasm")]
    {
        warden_sdk::is_cancelled()
    }
    #[cfg(not(target_family = "wasm"))]
    {
        false
    }
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;
    use warden_sdk::serde_json::{self, Value};

    /// A temporary directory holding `files` (relative path, contents).
    pub(crate) fn workspace(files: &[(&str, &[u8])]) -> tempfile::TempDir {
        let dir = tempfile::tempdir().unwrap();
        for (rel, content) in files {
            let p = dir.path().join(rel);
            std::fs::create_dir_all(p.parent().unwrap()).unwrap();
            std::fs::write(p, content).unwrap();
        }
        dir
    }

    fn call(dir: &tempfile::TempDir, input: Value) -> Result<Output, ToolError> {
        let input: Input = serde_json::from_value(input).unwrap();
        let root = dir.path().to_str().unwrap();
        let ws = |p: &str| WorkspacePath::resolve(root, None, p).unwrap();
        grep(&ws(&input.path), &input)
    }

    fn sample() -> tempfile::TempDir {
        workspace(&[
            ("src/lib.rs", b"fn main() {}\n// TODO: x\n"),
            ("src/a.txt", b"todo later\nTODO now\n"),
            ("target/gen.rs", b"TODO generated\n"),
            (".gitignore", b"target/\n"),
            (".hidden/h.rs", b"TODO hidden\n"),
            ("bin.dat", b"TODO\0binary"),
        ])
    }

    #[test]
    fn respects_ignore_hidden_and_binary() {
        let dir = sample();
        let out = call(&dir, json!({"pattern": "TODO"})).unwrap();
        assert_eq!(
            out.text,
            "src/a.txt:2:TODO now\nsrc/lib.rs:2:// TODO: x\n2 matches in 2 files; skipped 1 binary file\n"
        );
        assert_eq!(
            out.structured.unwrap(),
            json!({"matches": 2, "files": 2, "truncated": false})
        );
        let out = call(
            &dir,
            json!({"pattern": "todo", "case_insensitive": true, "include_hidden": true}),
        )
        .unwrap();
        assert!(
            out.text
                .starts_with(".hidden/h.rs:1:TODO hidden\nsrc/a.txt:1:todo later\n"),
            "{}",
            out.text
        );
    }

    #[test]
    fn globs_filter_files() {
        let dir = sample();
        let out = call(&dir, json!({"pattern": "TODO", "glob": "*.rs"})).unwrap();
        assert_eq!(out.text, "src/lib.rs:2:// TODO: x\n1 match in 1 file\n");
        let out = call(&dir, json!({"pattern": "TODO", "glob": ["!*.rs"]})).unwrap();
        assert!(
            out.text
                .starts_with("src/a.txt:2:TODO now\n1 match in 1 file"),
            "{}",
            out.text
        );
        let err = call(&dir, json!({"pattern": "x", "glob": "a[b"})).unwrap_err();
        assert!(
            err.message.starts_with("invalid glob `a[b`"),
            "{}",
            err.message
        );
    }

    #[test]
    fn single_file_and_fixed_strings() {
        let dir = sample();
        let out = call(&dir, json!({"pattern": "TODO", "path": "target/gen.rs"})).unwrap();
        assert_eq!(
            out.text,
            "target/gen.rs:1:TODO generated\n1 match in 1 file\n"
        );
        let out = call(
            &dir,
            json!({"pattern": "main()", "fixed_strings": true, "path": "src"}),
        )
        .unwrap();
        assert_eq!(out.text, "src/lib.rs:1:fn main() {}\n1 match in 1 file\n");
    }

    #[test]
    fn context_separates_files() {
        let dir = sample();
        let out = call(
            &dir,
            json!({"pattern": "TODO", "context": 1, "path": "src"}),
        )
        .unwrap();
        assert_eq!(
            out.text,
            "src/a.txt-1-todo later\nsrc/a.txt:2:TODO now\n--\nsrc/lib.rs-1-fn main() {}\nsrc/lib.rs:2:// TODO: x\n\
             2 matches in 2 files\n"
        );
    }

    #[test]
    fn reports_nothing_found_and_errors() {
        let dir = sample();
        let out = call(&dir, json!({"pattern": "nothing here"})).unwrap();
        assert_eq!(
            out.text,
            "no matches (2 files searched); skipped 1 binary file\n"
        );
        let err = call(&dir, json!({"pattern": "a(b"})).unwrap_err();
        assert!(
            err.message.starts_with("invalid regex: "),
            "{}",
            err.message
        );
        let err = call(&dir, json!({"pattern": "x", "path": "missing"})).unwrap_err();
        assert_eq!(err.message, "missing: no such file or directory");
        assert!(!err.message.contains(dir.path().to_str().unwrap()));
    }

    #[test]
    fn stops_at_max_matches() {
        let dir = workspace(&[("a", b"x\nx\n"), ("b", b"x\n")]);
        let out = call(&dir, json!({"pattern": "x", "max_matches": 2})).unwrap();
        assert!(
            out.text
                .starts_with("a:1:x\na:2:x\nstopped at max_matches=2 (2 matches in 1 file);"),
            "{}",
            out.text
        );
        assert_eq!(out.structured.unwrap()["truncated"], true);
    }
}
