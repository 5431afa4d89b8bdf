//! A directory search split across the host's parallel workers.
//!
//! Every worker walks the whole tree (listing directories and reading
//! ignore files is cheap) and numbers the files it would search in walk
//! order; worker `i` of `n` reads and searches only the files numbered
//! `i` modulo `n`. Each returns, in order, the files it skipped as binary
//! or too large and the output of each file that matched.
//!
//! The parent merges those by number into exactly what one walk would
//! have printed. A file's output does not depend on the others, except in
//! two ways: a `--` goes between files when context lines are shown, and
//! the search stops inside the file where the matches reach `max_matches`
//! or the output reaches its cap. The parent adds the `--` itself; the one
//! file where a stop may fall it searches again, against the output merged
//! so far, just as the single walk would have.
//!
//! A worker stops searching once its own matches or output reach those
//! limits: the merged output would have reached them by the same file.
//! Results past the first file where any worker stopped are never used.
//! Every worker still lists the whole tree, and reports how many files it
//! numbered and a hash of their paths in order: if the tree changed while
//! the workers listed it, their numbering disagrees, and the parent
//! searches in one walk instead.

use std::hash::{DefaultHasher, Hasher};
use std::path::Path;

use serde::{Deserialize, Serialize};
use warden_sdk::walk::{Dir, Flow, WalkProgress, read_path};
use warden_sdk::{Output, ToolError, WorkspacePath, serde_json};

use crate::run::{MAX_FILE_SIZE, Sniffed, shown_below, sniff, walk_files};
use crate::searcher::{MAX_OUTPUT, Searcher, Sink};
use crate::summary::Tally;
use crate::{Input, searcher};

/// One worker's share of a search, as its task text carries it.
#[derive(Serialize, Deserialize)]
pub(crate) struct Task {
    /// The call's input, unchanged.
    input: Input,
    /// Which share: files numbered `shard` modulo `shards`.
    shard: usize,
    shards: usize,
}

/// What a worker found in its share, in walk order.
#[derive(Serialize, Deserialize, Default)]
pub(crate) struct Part {
    /// Its files that matched or were skipped, by number.
    files: Vec<FileResult>,
    /// Text files it searched.
    searched: usize,
    /// The last file number it looked at, when it stopped before the end
    /// of the walk: results past it are missing.
    horizon: Option<usize>,
    /// It stopped because the call was cancelled.
    cancelled: bool,
    /// Files the walk numbered, and a hash of their paths in order.
    numbered: usize,
    listing: u64,
}

/// One file of a worker's share.
#[derive(Serialize, Deserialize)]
struct FileResult {
    /// Its number in walk order.
    seq: usize,
    found: Found,
}

/// What a worker found in one file.
#[derive(Serialize, Deserialize)]
enum Found {
    /// Skipped: a NUL in its first 8 KiB.
    Binary,
    /// Skipped: over [`MAX_FILE_SIZE`].
    Large,
    /// Lines printed for it, without a leading `--`.
    Matched {
        /// Its path below the searched directory.
        below: String,
        text: String,
        matches: usize,
        /// The worker stopped inside this file, so `text` may be short.
        cut: bool,
    },
}

/// Why a search was not split: the caller searches in one walk.
#[derive(Debug, PartialEq)]
pub(crate) enum Unsplit {
    /// The host runs one worker at a time for this call.
    OneWorker,
    /// The host ran no workers, or one failed; the text says why.
    Failed(String),
    /// The workers' listings of the tree disagree: it changed meanwhile.
    TreeChanged,
}

/// Search directory `target` in the workers `run` starts with the tasks,
/// and merge their parts.
pub(crate) fn fanned(
    target: &WorkspacePath,
    input: &Input,
    searcher: &Searcher,
    shards: usize,
    run: impl FnOnce(&[String]) -> Result<Vec<Output>, String>,
) -> Result<(Sink, Tally), Unsplit> {
    if shards < 2 {
        return Err(Unsplit::OneWorker);
    }
    let tasks = (0..shards)
        .map(|shard| {
            let task = Task {
                input: input.clone(),
                shard,
                shards,
            };
            serde_json::to_string(&task)
        })
        .collect::<Result<Vec<String>, _>>()
        .map_err(|e| Unsplit::Failed(e.to_string()))?;
    let parts = run(&tasks)
        .map_err(Unsplit::Failed)?
        .into_iter()
        .map(|out| {
            let value = out.structured.ok_or("a worker returned no part")?;
            serde_json::from_value::<Part>(value).map_err(|_| "a worker's part is malformed")
        })
        .collect::<Result<Vec<Part>, &str>>()
        .map_err(|e| Unsplit::Failed(e.into()))?;
    let cancelled = parts.iter().any(|p| p.cancelled);
    let same = parts
        .windows(2)
        .all(|w| (w[0].numbered, w[0].listing) == (w[1].numbered, w[1].listing));
    if !same && !cancelled {
        return Err(Unsplit::TreeChanged);
    }
    Ok(merge(target, searcher, parts))
}

/// How many workers to split a search across.
#[cfg(target_family = "wasm")]
pub(crate) fn shards() -> usize {
    warden_sdk::parallelism() as usize
}

/// Natively (unit tests) there is no host: one walk.
#[cfg(not(target_family = "wasm"))]
pub(crate) fn shards() -> usize {
    1
}

/// Run `tasks` in the host's workers; an error if the host ran none or
/// any failed.
#[cfg(target_family = "wasm")]
pub(crate) fn fan_out(tasks: &[String]) -> Result<Vec<Output>, String> {
    warden_sdk::fan_out(tasks)
        .map_err(|e| e.to_string())?
        .into_iter()
        .collect::<Result<Vec<Output>, ToolError>>()
        .map_err(|e| format!("a worker failed: {}", e.message))
}

/// Natively there is no host to run workers: the search is one walk.
#[cfg(not(target_family = "wasm"))]
pub(crate) fn fan_out(_tasks: &[String]) -> Result<Vec<Output>, String> {
    Err("no host".into())
}

/// A worker's run: parse `task`, search its share of the target that
/// `resolve` maps the input's path to.
pub(crate) fn work(
    task: &str,
    resolve: impl FnOnce(&str) -> Result<WorkspacePath, ToolError>,
) -> Result<Output, ToolError> {
    let task: Task = serde_json::from_str(task)
        .map_err(|e| ToolError::internal(format!("grep: malformed worker task: {e}")))?;
    if task.shards == 0 || task.shard >= task.shards {
        return Err(ToolError::internal("grep: worker task out of range"));
    }
    let target = resolve(&task.input.path)?;
    let part = search_share(&target, &task)?;
    let value = serde_json::to_value(&part)
        .map_err(|e| ToolError::internal(format!("grep: cannot encode a worker's part: {e}")))?;
    Ok(Output::text("").with_structured(value))
}

/// Walk `target` and search the files of `task`'s share.
fn search_share(target: &WorkspacePath, task: &Task) -> Result<Part, ToolError> {
    let searcher = searcher(&task.input)?;
    let shown = target.display();
    // This worker's own output so far: it stops where its own limits fall.
    let mut sink = Sink::default();
    let mut part = Part::default();
    let mut seq = 0usize;
    let mut listing = DefaultHasher::new();
    // The first worker reports for all: the files the walk met, the bytes
    // of its own share.
    let mut progress = (task.shard == 0).then(|| WalkProgress::new("grep", "files"));
    let cancelled = walk_files(target, &task.input, &mut |dir, name, below| {
        let this = seq;
        seq += 1;
        listing.write(below.as_bytes());
        listing.write_u8(0xff);
        // Past its stop the worker only numbers files, for the listing.
        if this % task.shards != task.shard || part.horizon.is_some() {
            if let Some(p) = &mut progress {
                p.entry(0);
            }
            return Flow::Continue;
        }
        let Ok(content) = dir.read(name, MAX_FILE_SIZE) else {
            return Flow::Continue;
        };
        if let Some(p) = &mut progress {
            p.entry(content.bytes_read());
        }
        let found = match sniff(content) {
            Sniffed::Large => Found::Large,
            Sniffed::Binary => Found::Binary,
            Sniffed::Text(bytes) => {
                part.searched += 1;
                let (start, before) = (sink.text.len(), sink.matches);
                searcher.search(&shown_below(shown, below), &bytes, &mut sink);
                if sink.matches == before {
                    return Flow::Continue;
                }
                // The `--` the sink put before this file's first line when
                // it already held output; the merge puts its own.
                let context = searcher.before > 0 || searcher.after > 0;
                let skip = if context && start > 0 {
                    "--\n".len()
                } else {
                    0
                };
                Found::Matched {
                    below: below.to_string(),
                    text: sink.text[start + skip..].to_string(),
                    matches: sink.matches - before,
                    cut: sink.stop.is_some(),
                }
            }
        };
        part.files.push(FileResult { seq: this, found });
        if sink.stop.is_some() {
            part.horizon = Some(this);
        }
        Flow::Continue
    })?;
    if cancelled {
        part.cancelled = true;
        part.horizon = Some(part.horizon.unwrap_or(seq.saturating_sub(1)));
    }
    part.numbered = seq;
    part.listing = listing.finish();
    Ok(part)
}

/// Merge the workers' parts into the output one walk of `target` gives.
fn merge(target: &WorkspacePath, searcher: &Searcher, parts: Vec<Part>) -> (Sink, Tally) {
    let horizon = parts.iter().filter_map(|p| p.horizon).min();
    let mut tally = Tally {
        searched: parts.iter().map(|p| p.searched).sum(),
        cancelled: parts.iter().any(|p| p.cancelled),
        ..Tally::default()
    };
    let mut files: Vec<FileResult> = parts.into_iter().flat_map(|p| p.files).collect();
    files.sort_unstable_by_key(|f| f.seq);
    let context = searcher.before > 0 || searcher.after > 0;
    let mut sink = Sink::default();
    for file in files {
        if horizon.is_some_and(|h| file.seq > h) {
            break;
        }
        match file.found {
            Found::Binary => tally.binary += 1,
            Found::Large => tally.large += 1,
            Found::Matched {
                below,
                text,
                matches,
                cut,
            } => {
                let separator = context && !sink.text.is_empty();
                let length = sink.text.len() + if separator { 3 } else { 0 } + text.len();
                if cut || sink.matches + matches >= searcher.max_matches || length >= MAX_OUTPUT {
                    search_again(target, &below, searcher, &mut sink);
                } else {
                    if separator {
                        sink.text.push_str("--\n");
                    }
                    sink.text.push_str(&text);
                    sink.matches += matches;
                    sink.files += 1;
                }
            }
        }
        if sink.stop.is_some() {
            break;
        }
    }
    (sink, tally)
}

/// Search the file at `below` under `target` again, against the output
/// merged so far: where a stop may fall, only this is exact.
fn search_again(target: &WorkspacePath, below: &str, searcher: &Searcher, sink: &mut Sink) {
    let base = target.guest().trim_end_matches('/');
    let path = format!("{base}/{below}");
    // A file that changed into a binary, or vanished, since the worker read
    // it is skipped: the single walk would have seen it so too.
    if let Ok(content) = read_path(Path::new(&path), MAX_FILE_SIZE)
        && let Sniffed::Text(bytes) = sniff(content)
    {
        searcher.search(&shown_below(target.display(), below), &bytes, sink);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::run::tests::workspace;
    use warden_sdk::serde_json::{Value, json};

    /// `input` searched in one walk, and split `shards` ways with every
    /// worker run in turn: the outputs must be identical.
    fn assert_same(dir: &tempfile::TempDir, input: Value, shards: usize) {
        let input: Input = serde_json::from_value(input).unwrap();
        let root = dir.path().to_str().unwrap();
        let resolve = |p: &str| WorkspacePath::resolve(root, None, p);
        let target = resolve(&input.path).unwrap();
        let single = crate::run::grep(&target, &input).unwrap();
        let searcher = searcher(&input).unwrap();
        let run = |tasks: &[String]| {
            Ok(tasks
                .iter()
                .map(|t| work(t, resolve).unwrap())
                .collect::<Vec<_>>())
        };
        let (sink, tally) = fanned(&target, &input, &searcher, shards, run)
            .unwrap_or_else(|e| panic!("not split: {e:?}"));
        let split = crate::run::finish(sink, &tally, &searcher);
        assert_eq!(
            split.text,
            single.text,
            "{shards} shards, input {:?}",
            serde_json::to_string(&input).unwrap()
        );
        assert_eq!(split.structured, single.structured);
    }

    /// A tree with matches spread over many files, binary files among
    /// them, ignore rules and hidden files.
    fn tree() -> tempfile::TempDir {
        let mut files: Vec<(String, Vec<u8>)> = Vec::new();
        for i in 0..40 {
            let mut text = String::new();
            for line in 0..30 {
                if (i + line) % 7 == 0 {
                    text.push_str(&format!("needle {i} {line}\n"));
                } else {
                    text.push_str(&format!("hay {i} {line}\n"));
                }
            }
            files.push((format!("d{}/f{i:02}.txt", i % 4), text.into_bytes()));
        }
        files.push(("d1/bin.dat".into(), b"needle\0binary".to_vec()));
        files.push(("d2/bin2.dat".into(), b"\0needle".to_vec()));
        files.push((".hidden/h.txt".into(), b"needle hidden\n".to_vec()));
        files.push(("d3/ignored.txt".into(), b"needle ignored\n".to_vec()));
        files.push((".gitignore".into(), b"ignored.txt\n".to_vec()));
        files.push(("top.txt".into(), b"needle top\n".to_vec()));
        // A name that starts like a context separator.
        files.push(("--\nneedle.txt".into(), b"needle odd name\n".to_vec()));
        let refs: Vec<(&str, &[u8])> = files
            .iter()
            .map(|(p, c)| (p.as_str(), c.as_slice()))
            .collect();
        workspace(&refs)
    }

    #[test]
    fn split_search_prints_what_one_walk_prints() {
        let dir = tree();
        let inputs = [
            json!({"pattern": "needle"}),
            json!({"pattern": "needle", "context": 2}),
            json!({"pattern": "needle", "before": 1, "after": 3}),
            json!({"pattern": "needle", "max_matches": 1}),
            json!({"pattern": "needle", "max_matches": 7}),
            json!({"pattern": "needle", "max_matches": 50, "context": 1}),
            json!({"pattern": "needle", "include_hidden": true}),
            json!({"pattern": "needle", "glob": ["*.txt", "!d2/**"]}),
            json!({"pattern": "needle", "path": "d1"}),
            json!({"pattern": "nothing at all"}),
        ];
        for input in inputs {
            for shards in [2, 3, 5] {
                assert_same(&dir, input.clone(), shards);
            }
        }
    }

    #[test]
    fn split_search_stops_at_the_output_cap_where_one_walk_does() {
        // Lines of 400 characters: the 512 KiB cap falls long before
        // max_matches, in the middle of some file.
        let line = format!("needle {}\n", "x".repeat(400));
        let body = line.repeat(60);
        let files: Vec<(String, &[u8])> = (0..80)
            .map(|i| (format!("f{i:02}.txt"), body.as_bytes()))
            .collect();
        let refs: Vec<(&str, &[u8])> = files.iter().map(|(p, c)| (p.as_str(), *c)).collect();
        let dir = workspace(&refs);
        for shards in [2, 3] {
            assert_same(
                &dir,
                json!({"pattern": "needle", "max_matches": 5000}),
                shards,
            );
            assert_same(
                &dir,
                json!({"pattern": "needle", "max_matches": 5000, "context": 1}),
                shards,
            );
        }
    }

    #[test]
    fn a_tree_that_changes_between_workers_is_not_merged() {
        let dir = tree();
        let root = dir.path().to_str().unwrap();
        let resolve = |p: &str| WorkspacePath::resolve(root, None, p);
        let input: Input = serde_json::from_value(json!({"pattern": "needle"})).unwrap();
        let target = resolve(".").unwrap();
        let searcher = searcher(&input).unwrap();
        let run = |tasks: &[String]| {
            let first = work(&tasks[0], resolve).unwrap();
            std::fs::write(dir.path().join("d1/f00a.txt"), "needle new\n").unwrap();
            let second = work(&tasks[1], resolve).unwrap();
            Ok(vec![first, second])
        };
        let result = fanned(&target, &input, &searcher, 2, run);
        assert_eq!(result.err(), Some(Unsplit::TreeChanged));
    }

    #[test]
    fn malformed_tasks_are_refused() {
        let dir = tree();
        let root = dir.path().to_str().unwrap();
        let resolve = |p: &str| WorkspacePath::resolve(root, None, p);
        let err = work("{\"shard\": 1}", resolve).unwrap_err();
        assert!(
            err.message.starts_with("grep: malformed worker task"),
            "{}",
            err.message
        );
        let task = json!({"input": {"pattern": "x"}, "shard": 2, "shards": 2}).to_string();
        let err = work(&task, resolve).unwrap_err();
        assert_eq!(err.message, "grep: worker task out of range");
    }
}
