//! Running a search: the gitignore-aware walk and reading files.
//!
//! Files are read whole into one reused buffer; binary files (a NUL in the
//! first 8 KiB) and files over [`MAX_FILE_SIZE`] are counted and skipped.
//! Symlinks are never followed, so the walk stays under the searched path.

use std::fs::File;
use std::io::{self, Read};
use std::path::Path;

use ignore::WalkBuilder;
use ignore::overrides::{Override, OverrideBuilder};
use warden_sdk::{Output, ToolError, WorkspacePath, serde_json::json};

use crate::searcher::{Searcher, Sink};
use crate::summary::{Tally, summary};
use crate::{Globs, Input, searcher};

/// Files larger than this are skipped rather than read whole.
pub(crate) const MAX_FILE_SIZE: u64 = 64 * 1024 * 1024;
/// Bytes inspected for a NUL to decide a file is binary.
const SNIFF: usize = 8 * 1024;

/// The `glob` input as walk overrides rooted at `base`.
fn overrides(base: &Path, globs: Option<&Globs>) -> Result<Override, ToolError> {
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

/// Run the search of `target` (a directory or a file), showing paths relative to `root`.
pub(crate) fn grep(
    root: &WorkspacePath,
    target: &WorkspacePath,
    input: &Input,
) -> Result<Output, ToolError> {
    let searcher = searcher(input)?;
    let shown = target.display();
    let meta = std::fs::metadata(target.guest()).map_err(|e| ToolError::from_io(&e, shown))?;
    let mut sink = Sink::default();
    let mut tally = Tally::default();
    let mut buf = Vec::new();
    if !meta.is_dir() && !meta.is_file() {
        return Err(ToolError::invalid_input(format!(
            "{shown}: not a regular file (a FIFO, socket or device); grep searches files and directories"
        )));
    }
    if !meta.is_dir() {
        search_file(
            &searcher,
            Path::new(target.guest()),
            shown,
            &mut buf,
            &mut sink,
            &mut tally,
        )
        .map_err(|e| ToolError::from_io(&e, shown))?;
    } else {
        let base = Path::new(target.guest());
        let walk = WalkBuilder::new(base)
            .hidden(!input.include_hidden)
            .require_git(false)
            .git_global(false)
            .follow_links(false)
            .current_dir(root.guest())
            .overrides(overrides(base, input.glob.as_ref())?)
            .sort_by_file_name(|a, b| a.cmp(b))
            .build();
        for (i, entry) in walk.enumerate() {
            if i % 64 == 63 && cancelled() {
                tally.cancelled = true;
                break;
            }
            let Ok(entry) = entry else { continue };
            if !entry.file_type().is_some_and(|t| t.is_file()) {
                continue;
            }
            let rel = relative_to(root, entry.path());
            // A file that vanished or cannot be read is skipped, as ripgrep does.
            let _ = search_file(
                &searcher,
                entry.path(),
                &rel,
                &mut buf,
                &mut sink,
                &mut tally,
            );
            if sink.stop.is_some() {
                break;
            }
        }
    }
    let summary = summary(&sink, &tally, searcher.max_matches);
    sink.text.push_str(&summary);
    sink.text.push('\n');
    let truncated = sink.stop.is_some() || tally.cancelled;
    let structured = json!({"matches": sink.matches, "files": sink.files, "truncated": truncated});
    Ok(Output::text(sink.text).with_structured(structured))
}

/// Read the file at `path` into `buf` and search it, unless it is binary or too large.
fn search_file(
    s: &Searcher,
    path: &Path,
    shown: &str,
    buf: &mut Vec<u8>,
    sink: &mut Sink,
    tally: &mut Tally,
) -> io::Result<()> {
    let mut file = File::open(path)?;
    let size = file.metadata()?.len();
    if size > MAX_FILE_SIZE {
        tally.large += 1;
        return Ok(());
    }
    let content = read_sized(&mut file, size as usize, buf)?;
    if memchr::memchr(0, &content[..content.len().min(SNIFF)]).is_some() {
        tally.binary += 1;
        return Ok(());
    }
    tally.searched += 1;
    s.search(shown, content, sink);
    Ok(())
}

/// Read up to `size` bytes of `file` into `buf`, which only ever grows, and
/// return the part read. Each host call costs in the sandbox, so this makes
/// no size probe, seek or end-of-file read beyond the bytes `stat` promised;
/// bytes appended since are left out, as if read a moment earlier.
fn read_sized<'b>(file: &mut File, size: usize, buf: &'b mut Vec<u8>) -> io::Result<&'b [u8]> {
    if buf.len() < size {
        buf.resize(size, 0);
    }
    let mut filled = 0;
    while filled < size {
        match file.read(&mut buf[filled..size]) {
            Ok(0) => break,
            Ok(n) => filled += n,
            Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
            Err(e) => return Err(e),
        }
    }
    Ok(&buf[..filled])
}

/// The workspace-relative form of `path`, found by walking under the guest root.
fn relative_to(root: &WorkspacePath, path: &Path) -> String {
    match path.strip_prefix(root.guest()) {
        Ok(rel) => rel.to_string_lossy().into_owned(),
        Err(_) => path.to_string_lossy().into_owned(),
    }
}

/// True once the user has cancelled the call; always false in native tests,
/// where the host import does not exist.
fn cancelled() -> bool {
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
mod tests {
    use super::*;
    use warden_sdk::serde_json::{self, Value};

    fn workspace(files: &[(&str, &[u8])]) -> tempfile::TempDir {
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
        grep(&ws("."), &ws(&input.path), &input)
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
