//! A directory search split across the host's parallel workers.
//!
//! The parent lists the top of the tree once and cuts the walk into pieces
//! (`warden_sdk::walk::plan`): whole subtrees, and runs of the entries
//! above them. Consecutive pieces make a task, several tasks per worker, so
//! that the host's workers share them out as each finishes, and the tasks
//! of the last shares are a third the size, so that a heavy one near the
//! end does not leave one worker searching alone (a subtree's cost is not
//! known before it is walked: on `~/.cargo/registry/src` the last of eight
//! equal tasks took 93 of the call's 183 ms, 57 of them alone); a worker walks
//! and searches only its task's pieces. Each task returns, in walk order, the
//! output of each file that matched and, between them, how many files it
//! skipped as binary or too large. A task that runs past its budget hands
//! back the rest of its pieces for a later round (see [`fanned`]); a long
//! directory in a rest is named by its last entry walked, and listed again.
//!
//! The parent merges those, task by task, into exactly what one walk would
//! have printed. A file's output does not depend on the others, except in
//! two ways: a `--` goes between files when context lines are shown, and
//! the search stops inside the file where the matches reach `max_matches`
//! or the output reaches its cap. The parent adds the `--` itself; the one
//! file where a stop may fall it searches again, against the output merged
//! so far, just as the single walk would have. A task stops once its own
//! matches or output reach those limits: the merged output would have
//! reached them by the same file.

use std::path::Path;

use serde::{Deserialize, Serialize};
use warden_sdk::walk::{
    Flow, Kind, Piece, TAIL_SPLIT, WalkProgress, Walked, Walker, group, group_tapering, open_piece,
    plan, read_path, start, start_piece, unreadable,
};
use warden_sdk::{Output, ToolError, WorkspacePath, serde_json};

use crate::run::{MAX_FILE_SIZE, Sniffed, is_cancelled, overrides, read_file, shown_below, sniff};
use crate::searcher::{MAX_OUTPUT, Searcher, Sink};
use crate::summary::Tally;
use crate::{Input, searcher};

/// Tasks per worker: enough that a worker that finishes early takes
/// another, few enough that starting their instances costs little.
const TASKS_PER_WORKER: usize = 4;
/// The most tasks the host takes in one fan-out.
const MAX_TASKS: usize = 64;
/// Subtrees the plan looks for per task before it stops listing deeper.
const SUBTREES_PER_TASK: usize = 4;
/// The rounds a split search makes: a task of the first round that runs
/// well past a share of a balanced tree (about an eighth of it, as planned)
/// hands back its rest; later rounds, which only walk such rests, cut
/// them again sooner; the last round walks to the end.
pub(crate) const ROUNDS: Rounds = Rounds {
    first: Budget {
        after_ms: 80,
        every: 16,
    },
    later: Budget {
        after_ms: 25,
        every: 16,
    },
    most: 16,
};

/// How a split search's tasks are budgeted, round by round.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Rounds {
    /// The first round's budget.
    pub(crate) first: Budget,
    /// Every later round's but the last.
    pub(crate) later: Budget,
    /// Rounds at most.
    pub(crate) most: usize,
}

/// When a task stops for now and hands back the rest of its pieces.
#[derive(Serialize, Deserialize, Clone, Copy, Debug)]
pub(crate) struct Budget {
    /// After walking this long, in milliseconds.
    pub(crate) after_ms: u64,
    /// Files between looks at the clock (at least one file is searched).
    pub(crate) every: usize,
}

/// One task of a split search, as its text carries it.
#[derive(Serialize, Deserialize)]
pub(crate) struct Task {
    /// The call's input, unchanged.
    input: Input,
    /// The pieces of the walk to search, in walk order.
    pieces: Vec<Piece>,
    /// When to stop and hand back the rest; `None`: walk them all.
    #[serde(default)]
    budget: Option<Budget>,
}

/// What a task found in its pieces, in walk order.
#[derive(Serialize, Deserialize, Default)]
pub(crate) struct Part {
    /// Its files that matched or were skipped, by number within the task.
    files: Vec<FileResult>,
    /// Text files it searched.
    searched: usize,
    /// The last file number it looked at, when it stopped before the end
    /// of its pieces: results past it are missing.
    horizon: Option<usize>,
    /// It stopped because the call was cancelled.
    cancelled: bool,
    /// Files it numbered.
    numbered: usize,
    /// Files it could not read and directories it could not list.
    #[serde(default)]
    unreadable: usize,
    /// What it left of its pieces when its budget ran out, in walk order:
    /// a later round walks it, and its results follow this part's.
    #[serde(default)]
    rest: Vec<Piece>,
}

/// One file of a task.
#[derive(Serialize, Deserialize)]
struct FileResult {
    /// Its number in the task's walk order.
    seq: usize,
    found: Found,
}

/// What a task found in one file, or in a run of files it skipped.
#[derive(Serialize, Deserialize)]
enum Found {
    /// Files skipped since the task's last match, up to and including
    /// this one: counted, not listed, so that a part stays small however
    /// many binary files a tree holds (a part goes through the host's
    /// output cap).
    Skipped {
        /// With a NUL in their first 8 KiB.
        binary: usize,
        /// Over [`MAX_FILE_SIZE`].
        large: usize,
    },
    /// Lines printed for it, without a leading `--`.
    Matched {
        /// Its path below the searched directory.
        below: String,
        text: String,
        matches: usize,
        /// The task stopped inside this file, so `text` may be short.
        cut: bool,
    },
}

/// Why a search was not split: the caller searches in one walk.
#[derive(Debug, PartialEq)]
pub(crate) enum Unsplit {
    /// The host runs one worker at a time for this call.
    OneWorker,
    /// The tree is too small to cut into more than one task.
    OnePiece,
    /// The target cannot be opened for the plan; the one walk says why.
    Unopened,
    /// The host ran no workers, or one failed; the text says why.
    Failed(String),
}

/// Search directory `target` in the workers `run` starts with the tasks,
/// and merge their parts.
///
/// A subtree's cost is not known before it is walked, and one can hold
/// most of a tree (a flat directory of 17,000 manual pages, a vendored SDK):
/// so a task walks for a budget (`rounds`) and hands back what it has
/// left, and the next round cuts those rests into tasks for every worker
/// again; the last round's tasks walk to the end. A rest's tasks keep to their own part's
/// rest, so their results go right after that part's.
pub(crate) fn fanned(
    target: &WorkspacePath,
    input: &Input,
    searcher: &Searcher,
    shards: usize,
    rounds: Rounds,
    mut run: impl FnMut(&[String]) -> Result<Vec<Output>, String>,
) -> Result<(Sink, Tally), Unsplit> {
    if shards < 2 {
        return Err(Unsplit::OneWorker);
    }
    let tasks = (shards * TASKS_PER_WORKER).min(MAX_TASKS);
    let base = target.guest().trim_end_matches('/');
    let overrides =
        overrides(Path::new(base), input.glob.as_ref()).map_err(|_| Unsplit::Unopened)?;
    let mut walker = Walker::new(!input.include_hidden, &overrides);
    let dir = start(target, &mut walker).map_err(|_| Unsplit::Unopened)?;
    let pieces = plan(&mut walker, &dir, base, tasks * SUBTREES_PER_TASK);
    // Said by the planner only when the split goes ahead: a search that
    // falls back to one walk counts them again.
    let unnamed = std::mem::take(&mut walker.unnamed);
    // The last share per worker is cut finer: about 0.5 ms of fixed cost
    // per extra task, against tens of milliseconds of a lone tail. The
    // extra tasks stay within the host's limit.
    let tail = shards.min(MAX_TASKS.saturating_sub(tasks) / (TAIL_SPLIT - 1));
    let groups = group_tapering(pieces, tasks, tail);
    if groups.len() < 2 {
        return Err(Unsplit::OnePiece);
    }
    let mut parts = round(&mut run, input, groups, Some(rounds.first))?;
    for n in 2..=rounds.most {
        if parts.iter().all(|p| p.rest.is_empty()) || parts.iter().any(|p| p.cancelled) {
            break;
        }
        let (origins, groups) = cut_rests(&mut parts, tasks, target, &mut walker);
        if groups.is_empty() {
            // The rests named nothing left to walk (all of it ignored).
            break;
        }
        let budget = (n < rounds.most).then_some(rounds.later);
        // A later round the host does not run (its workers taken by other
        // calls) keeps the rounds before it: this instance walks the rests
        // itself, to their end.
        let more = match round(&mut run, input, groups.clone(), budget) {
            Ok(more) => more,
            Err(_) => groups
                .into_iter()
                .map(|pieces| {
                    let task = Task {
                        input: input.clone(),
                        pieces,
                        budget: None,
                    };
                    search_pieces(target, &task).map_err(|e| Unsplit::Failed(e.message))
                })
                .collect::<Result<Vec<Part>, Unsplit>>()?,
        };
        let mut more = origins.into_iter().zip(more).peekable();
        let mut spliced = Vec::with_capacity(parts.len() + more.len());
        for (i, part) in parts.into_iter().enumerate() {
            spliced.push(part);
            while let Some((_, next)) = more.next_if(|(origin, _)| *origin == i) {
                spliced.push(next);
            }
        }
        parts = spliced;
    }
    for part in &mut parts {
        // A rest left unwalked (the call was cancelled): nothing past it counts.
        if !std::mem::take(&mut part.rest).is_empty() {
            part.cancelled = true;
            part.horizon = Some(part.horizon.unwrap_or(part.numbered.saturating_sub(1)));
        }
    }
    walker.unnamed = unnamed;
    Ok(merge(target, searcher, parts, walker.unreadable))
}

/// Run one round of `groups` as tasks in the workers `run` starts.
fn round(
    run: &mut impl FnMut(&[String]) -> Result<Vec<Output>, String>,
    input: &Input,
    groups: Vec<Vec<Piece>>,
    budget: Option<Budget>,
) -> Result<Vec<Part>, Unsplit> {
    let tasks = groups
        .into_iter()
        .map(|pieces| {
            serde_json::to_string(&Task {
                input: input.clone(),
                pieces,
                budget,
            })
        })
        .collect::<Result<Vec<String>, _>>()
        .map_err(|e| Unsplit::Failed(e.to_string()))?;
    let outputs = run(&tasks).map_err(Unsplit::Failed)?;
    if outputs.len() != tasks.len() {
        return Err(Unsplit::Failed("the workers returned too few parts".into()));
    }
    outputs
        .into_iter()
        .map(|out| {
            let value = out.structured.ok_or("a worker returned no part")?;
            serde_json::from_value::<Part>(value).map_err(|_| "a worker's part is malformed")
        })
        .collect::<Result<Vec<Part>, &str>>()
        .map_err(|e| Unsplit::Failed(e.into()))
}

/// Take the parts' rests and cut each into groups, about `tasks` in all by
/// weight and at most [`MAX_TASKS`]: the groups, and for each the index of
/// the part whose rest it is. What a rest left of a long directory (a
/// [`Piece::After`]) is listed here first, with `walker`, so that its
/// entries can be shared out.
fn cut_rests(
    parts: &mut [Part],
    tasks: usize,
    target: &WorkspacePath,
    walker: &mut Walker,
) -> (Vec<usize>, Vec<Vec<Piece>>) {
    for part in parts.iter_mut() {
        if part.rest.iter().any(|p| matches!(p, Piece::After { .. })) {
            let rest = std::mem::take(&mut part.rest);
            part.rest = rest
                .into_iter()
                .flat_map(|piece| name_after(piece, target, walker))
                .collect();
        }
    }
    let weight = |rest: &[Piece]| rest.iter().map(Piece::weight).sum::<usize>();
    let rests = parts.iter().filter(|p| !p.rest.is_empty()).count();
    let total: usize = parts.iter().map(|p| weight(&p.rest)).sum();
    // Every rest has a group of its own; what is left of the tasks goes to
    // the heavier ones.
    let spare = tasks.min(MAX_TASKS).saturating_sub(rests);
    let (mut origins, mut groups) = (Vec::new(), Vec::new());
    for (i, part) in parts.iter_mut().enumerate() {
        let rest = std::mem::take(&mut part.rest);
        if rest.is_empty() {
            continue;
        }
        let extra = (spare * weight(&rest)) / total.max(1);
        for g in group(rest, 1 + extra) {
            origins.push(i);
            groups.push(g);
        }
    }
    (origins, groups)
}

/// `piece` with a [`Piece::After`] named entry by entry; as it is if it
/// is not one, or its directory cannot be listed (its worker skips it).
fn name_after(piece: Piece, target: &WorkspacePath, walker: &mut Walker) -> Vec<Piece> {
    let Piece::After { dir, after } = &piece else {
        return vec![piece];
    };
    let at = piece.under(target);
    let named = start_piece(&at, &piece, walker).ok().and_then(|opened| {
        walker.name_after(&opened, at.guest().trim_end_matches('/'), dir, after)
    });
    named.unwrap_or_else(|| vec![piece])
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

/// A worker's run: parse `task`, search its pieces of the target that
/// `resolve` maps the input's path to.
pub(crate) fn work(
    task: &str,
    resolve: impl FnOnce(&str) -> Result<WorkspacePath, ToolError>,
) -> Result<Output, ToolError> {
    let task: Task = serde_json::from_str(task)
        .map_err(|e| ToolError::internal(format!("grep: malformed worker task: {e}")))?;
    if task.pieces.iter().any(|p| !below_only(p.dir())) {
        return Err(ToolError::internal(
            "grep: worker task names a path outside its target",
        ));
    }
    let target = resolve(&task.input.path)?;
    let part = search_pieces(&target, &task)?;
    let value = serde_json::to_value(&part)
        .map_err(|e| ToolError::internal(format!("grep: cannot encode a worker's part: {e}")))?;
    Ok(Output::text("").with_structured(value))
}

/// Whether `dir` names a directory below the target: relative, no `.` or
/// `..` component (the sandbox holds any path inside the grant; this keeps
/// a task inside its own target).
fn below_only(dir: &str) -> bool {
    dir.is_empty()
        || (!dir.starts_with('/') && dir.split('/').all(|c| !matches!(c, "" | "." | "..")))
}

/// Walk and search the pieces of `task` under `target`.
fn search_pieces(target: &WorkspacePath, task: &Task) -> Result<Part, ToolError> {
    let searcher = searcher(&task.input)?;
    let shown = target.display();
    let base = target.guest().trim_end_matches('/');
    let overrides = overrides(Path::new(base), task.input.glob.as_ref())?;
    let mut walker = Walker::new(!task.input.include_hidden, &overrides);
    // This task's own output so far: it stops where its own limits fall.
    let mut sink = Sink::default();
    let mut part = Part::default();
    let mut seq = 0usize;
    // The files skipped since the last match, and the last of them.
    let mut skipped: Option<FileResult> = None;
    let searched = std::cell::Cell::new(0usize);
    let mut progress = WalkProgress::new("grep", "files");
    let mut visit = |dir: &warden_sdk::walk::WalkDir, name: &str, path: &str, kind: Kind| {
        if kind != Kind::File {
            return Flow::Continue;
        }
        if (seq + 1).is_multiple_of(64) && is_cancelled() {
            part.cancelled = true;
            return Flow::Stop;
        }
        let this = seq;
        seq += 1;
        searched.set(seq);
        let content = match read_file(dir, name, &searcher) {
            Ok(content) => content,
            Err(e) => {
                progress.entry(0);
                part.unreadable += unreadable(&e);
                return Flow::Continue;
            }
        };
        progress.entry(content.bytes_read());
        let below = path.get(base.len() + 1..).unwrap_or(name);
        let found = match sniff(content) {
            sniffed @ (Sniffed::Large | Sniffed::Binary) => {
                let (binary, large) = match skipped.take() {
                    Some(FileResult {
                        found: Found::Skipped { binary, large },
                        ..
                    }) => (binary, large),
                    _ => (0, 0),
                };
                let is_large = matches!(sniffed, Sniffed::Large);
                skipped = Some(FileResult {
                    seq: this,
                    found: Found::Skipped {
                        binary: binary + usize::from(!is_large),
                        large: large + usize::from(is_large),
                    },
                });
                return Flow::Continue;
            }
            Sniffed::Unmatched => {
                part.searched += 1;
                return Flow::Continue;
            }
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
        part.files.extend(skipped.take());
        part.files.push(FileResult { seq: this, found });
        if sink.stop.is_some() {
            part.horizon = Some(this);
            return Flow::Stop;
        }
        Flow::Continue
    };
    // Past its budget, the task stops before its next entry, at the
    // first look at the clock after a whole `every` files.
    let started = std::time::Instant::now();
    let mut looked = 0;
    let mut defer = || {
        let Some(budget) = task.budget else {
            return false;
        };
        let files = searched.get();
        if files < looked + budget.every.max(1) {
            return false;
        }
        looked = files;
        started.elapsed().as_millis() >= u128::from(budget.after_ms)
    };
    let mut rest = Vec::new();
    for (k, piece) in task.pieces.iter().enumerate() {
        let Some((dir, path)) = open_piece(target, piece, &mut walker) else {
            continue;
        };
        match walker.walk_piece_deferring(&dir, &path, piece, &mut visit, &mut defer, &mut rest) {
            Walked::Done(Flow::Continue) => {}
            Walked::Done(Flow::Stop) => break,
            Walked::Deferred => {
                rest.extend(task.pieces[k + 1..].iter().cloned());
                break;
            }
        }
    }
    part.files.extend(skipped);
    part.rest = rest;
    part.unreadable += walker.unreadable;
    if part.cancelled {
        part.horizon = Some(part.horizon.unwrap_or(seq.saturating_sub(1)));
    }
    part.numbered = seq;
    Ok(part)
}

/// Merge the workers' parts into the output one walk of `target` gives.
/// `unreadable`: what the plan could not open or list.
fn merge(
    target: &WorkspacePath,
    searcher: &Searcher,
    parts: Vec<Part>,
    unreadable: usize,
) -> (Sink, Tally) {
    let mut tally = Tally {
        searched: parts.iter().map(|p| p.searched).sum(),
        unreadable: unreadable + parts.iter().map(|p| p.unreadable).sum::<usize>(),
        cancelled: parts.iter().any(|p| p.cancelled),
        ..Tally::default()
    };
    // Number the files across tasks: a task's files follow the earlier
    // tasks' (a task that stopped numbered at least up to its horizon).
    let mut horizon: Option<usize> = None;
    let mut files: Vec<FileResult> = Vec::new();
    let mut offset = 0;
    for part in parts {
        if let Some(h) = part.horizon {
            horizon = Some(horizon.map_or(offset + h, |k| k.min(offset + h)));
        }
        files.extend(part.files.into_iter().map(|f| FileResult {
            seq: f.seq + offset,
            found: f.found,
        }));
        offset += part.numbered;
    }
    let context = searcher.before > 0 || searcher.after > 0;
    let mut sink = Sink::default();
    for file in files {
        if horizon.is_some_and(|h| file.seq > h) {
            break;
        }
        match file.found {
            Found::Skipped { binary, large } => {
                tally.binary += binary;
                tally.large += large;
            }
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
        // The rounds a search makes, and budgets that run out after every
        // file or every third: each task hands back a rest, and so do the
        // rounds after it until the last.
        let tiny = |every| Rounds {
            first: Budget { after_ms: 0, every },
            later: Budget { after_ms: 0, every },
            most: 3,
        };
        let budgets = [ROUNDS, tiny(1), tiny(3)];
        for budget in budgets {
            let mut rounds = 0;
            let run = |tasks: &[String]| {
                assert!(tasks.len() <= MAX_TASKS, "{} tasks", tasks.len());
                rounds += 1;
                Ok(tasks
                    .iter()
                    .map(|t| work(t, resolve).unwrap())
                    .collect::<Vec<_>>())
            };
            let (sink, tally) = fanned(&target, &input, &searcher, shards, budget, run)
                .unwrap_or_else(|e| panic!("not split: {e:?}"));
            let split = crate::run::finish(sink, &tally, &searcher);
            assert_eq!(
                split.text,
                single.text,
                "{shards} shards, {budget:?}, input {:?}",
                serde_json::to_string(&input).unwrap()
            );
            assert_eq!(split.structured, single.structured);
            // A task of more than one file (few shards) hands back a rest,
            // unless its own limits stop it first.
            if budget.first.every == 1 && shards == 2 && input.max_matches.is_none() {
                assert!(rounds >= 2, "{shards} shards: no rest was handed back");
            }
        }
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
        // A directory longer than a rest names entry by entry, with binary
        // files, matches and a subdirectory among its entries.
        for i in 0..warden_sdk::walk::NAMED_REST * 2 {
            let (name, content) = match i % 40 {
                3 => (format!("flat/b{i:03}.bin"), b"needle\0".to_vec()),
                5 => (
                    format!("flat/m{i:03}.txt"),
                    format!("needle flat {i}\n").into_bytes(),
                ),
                7 => (format!("flat/s{i:03}/in.txt"), b"needle below\n".to_vec()),
                _ => (format!("flat/f{i:03}.txt"), b"hay\n".to_vec()),
            };
            files.push((name, content));
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
            for shards in [2, 3, 5, 8, 16] {
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

    /// A later round the host refuses (its workers busy) does not undo
    /// the rounds before it: the parent walks the rests itself, and the
    /// output is still exactly one walk's.
    #[test]
    fn a_later_round_the_host_refuses_is_walked_by_the_parent() {
        let dir = tree();
        let root = dir.path().to_str().unwrap();
        let resolve = |p: &str| WorkspacePath::resolve(root, None, p);
        let target = resolve(".").unwrap();
        for input in [
            json!({"pattern": "needle"}),
            json!({"pattern": "needle", "context": 1}),
        ] {
            let input: Input = serde_json::from_value(input).unwrap();
            let searcher = searcher(&input).unwrap();
            let mut calls = 0;
            let run = |tasks: &[String]| {
                calls += 1;
                if calls > 1 {
                    return Err("no workers free".to_string());
                }
                Ok(tasks
                    .iter()
                    .map(|t| work(t, resolve).unwrap())
                    .collect::<Vec<_>>())
            };
            let budget = Budget {
                after_ms: 0,
                every: 1,
            };
            let rounds = Rounds {
                first: budget,
                later: budget,
                most: 4,
            };
            let (sink, tally) = fanned(&target, &input, &searcher, 2, rounds, run).unwrap();
            assert_eq!(calls, 2, "a second round was asked for");
            let split = crate::run::finish(sink, &tally, &searcher);
            let single = crate::run::grep(&target, &input).unwrap();
            assert_eq!(split.text, single.text);
        }
    }

    #[test]
    fn a_directory_gone_before_its_task_runs_is_skipped_as_one_walk_skips_it() {
        let dir = tree();
        let root = dir.path().to_str().unwrap();
        let resolve = |p: &str| WorkspacePath::resolve(root, None, p);
        let input: Input = serde_json::from_value(json!({"pattern": "needle"})).unwrap();
        let target = resolve(".").unwrap();
        let searcher = searcher(&input).unwrap();
        let run = |tasks: &[String]| {
            let _ = std::fs::remove_dir_all(dir.path().join("d2"));
            Ok(tasks
                .iter()
                .map(|t| work(t, resolve).unwrap())
                .collect::<Vec<_>>())
        };
        let (sink, tally) = fanned(&target, &input, &searcher, 2, ROUNDS, run).unwrap();
        let split = crate::run::finish(sink, &tally, &searcher);
        let single = crate::run::grep(&target, &input).unwrap();
        assert!(!split.text.contains("d2/"), "{}", split.text);
        assert_eq!(split.text, single.text);
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
        for outside in ["..", "d1/../..", "/etc", "d1//x", "./d1"] {
            let task =
                json!({"input": {"pattern": "x"}, "pieces": [{"Tree": outside}]}).to_string();
            let err = work(&task, resolve).unwrap_err();
            assert_eq!(
                err.message, "grep: worker task names a path outside its target",
                "{outside}"
            );
        }
    }
}
