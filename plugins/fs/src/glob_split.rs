//! A `glob` walk split across the host's parallel workers.
//!
//! As `grep` does: the parent lists the top of the tree once and cuts the
//! walk into pieces (`warden_sdk::walk::plan`), consecutive pieces make a
//! task, a few tasks per worker, and each worker walks only its task's
//! pieces, so no directory below the top is listed twice. Each task returns
//! the first paths it matched in order and how many it matched; the parent
//! sorts their union and keeps the first, which is what one walk lists.

use ignore::overrides::Override;
use serde::{Deserialize, Serialize};
use warden_sdk::walk::{Piece, Walker, group, plan, start};
use warden_sdk::{Context, Output, ToolError, WorkspacePath, serde_json};

use crate::glob::{Found, matcher, one_walk};

/// Tasks per worker: enough to balance, few enough that starting their
/// instances costs little.
const TASKS_PER_WORKER: usize = 2;
/// The most tasks the host takes in one fan-out.
const MAX_TASKS: usize = 64;
/// Subtrees the plan looks for per task before it stops listing deeper.
const SUBTREES_PER_TASK: usize = 8;
/// The smallest plan worth splitting (in [`Piece::weight`]s): below it,
/// starting workers costs more than the walk they share.
const MIN_SPLIT_WEIGHT: usize = 1024;

/// One task of a split `glob`, as its text carries it.
#[derive(Serialize, Deserialize)]
struct Task {
    pattern: String,
    path: String,
    include_hidden: bool,
    /// The pieces of the walk to match, in walk order.
    pieces: Vec<Piece>,
}

/// The matches of the walk of `base` split across the host's workers;
/// `None` when it was not split (one worker, a small tree, no host), and
/// the caller walks it whole.
pub(crate) fn fanned(base: &WorkspacePath, pattern: &str, hidden: bool) -> Option<Found> {
    let workers = parallelism();
    if workers < 2 {
        return None;
    }
    let tasks = (workers * TASKS_PER_WORKER).min(MAX_TASKS);
    let no_overrides = Override::empty();
    let mut walker = Walker::new(!hidden, &no_overrides);
    let dir = start(base, &mut walker).ok()?;
    let base_path = base.guest().trim_end_matches('/');
    let pieces = plan(&mut walker, &dir, base_path, tasks * SUBTREES_PER_TASK);
    // Said by the planner only when the split goes ahead: a glob that falls
    // back to one walk counts them again.
    let unnamed = std::mem::take(&mut walker.unnamed);
    if pieces.iter().map(Piece::weight).sum::<usize>() < MIN_SPLIT_WEIGHT {
        return None;
    }
    let groups = group(pieces, tasks);
    if groups.len() < 2 {
        return None;
    }
    let path = base.relative();
    let tasks = groups
        .into_iter()
        .map(|pieces| {
            serde_json::to_string(&Task {
                pattern: pattern.to_string(),
                path: if path.is_empty() { "." } else { path }.to_string(),
                include_hidden: hidden,
                pieces,
            })
        })
        .collect::<Result<Vec<String>, _>>()
        .ok()?;
    let mut all = Found {
        unreadable: walker.unreadable,
        ..Found::default()
    };
    for out in fan_out(&tasks)? {
        let part: Found = serde_json::from_value(out.structured?).ok()?;
        all.found.extend(part.found);
        all.total += part.total;
        all.cancelled |= part.cancelled;
        all.unreadable += part.unreadable;
    }
    all.settle();
    walker.unnamed = unnamed;
    Some(all)
}

/// A worker's run: match the pieces of `task`.
pub(crate) fn work(task: &str, cx: &Context) -> Result<Output, ToolError> {
    let task: Task = serde_json::from_str(task)
        .map_err(|e| ToolError::internal(format!("glob: malformed worker task: {e}")))?;
    if task.pieces.iter().any(|p| !below_only(p.dir())) {
        return Err(ToolError::internal(
            "glob: worker task names a path outside its target",
        ));
    }
    let (root, base) = crate::resolve(cx, &task.path)?;
    let matcher = matcher(&task.pattern)?;
    let found = one_walk(
        &root,
        &base,
        &matcher,
        task.include_hidden,
        Some(&task.pieces),
    )
    .map_err(|e| ToolError::from_io(&e, base.display()))?;
    let value = serde_json::to_value(&found)
        .map_err(|e| ToolError::internal(format!("glob: cannot encode a worker's part: {e}")))?;
    Ok(Output::text("").with_structured(value))
}

/// Whether `dir` names a directory below the base: relative, no `.` or
/// `..` component (the sandbox holds any path inside the grant; this keeps
/// a task inside its own base).
fn below_only(dir: &str) -> bool {
    dir.is_empty()
        || (!dir.starts_with('/') && dir.split('/').all(|c| !matches!(c, "" | "." | "..")))
}

/// How many workers the host runs at once for this call.
#[cfg(target_family = "wasm")]
fn parallelism() -> usize {
    warden_sdk::parallelism() as usize
}

/// Natively (unit tests) there is no host: one walk.
#[cfg(not(target_family = "wasm"))]
fn parallelism() -> usize {
    1
}

/// Run `tasks` in the host's workers; `None` if it ran none or any failed.
#[cfg(target_family = "wasm")]
fn fan_out(tasks: &[String]) -> Option<Vec<Output>> {
    warden_sdk::fan_out(tasks)
        .ok()?
        .into_iter()
        .collect::<Result<Vec<Output>, ToolError>>()
        .ok()
}

/// Natively there is no host to run workers.
#[cfg(not(target_family = "wasm"))]
fn fan_out(_tasks: &[String]) -> Option<Vec<Output>> {
    None
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testutil::{put, workspace};

    #[test]
    fn tasks_match_what_one_walk_matches() {
        let (dir, cx) = workspace();
        for i in 0..30 {
            put(&dir, &format!("p{}/src/m{i:02}.rs", i % 4), "");
            put(&dir, &format!("p{}/src/deep/n{i:02}/mod.rs", i % 3), "");
        }
        put(&dir, "p1/.gitignore", "m*1.rs\n");
        put(&dir, "top.rs", "");
        let root = cx.path(".").unwrap();
        for (pattern, path) in [
            ("**/*.rs", "."),
            ("**/mod.rs", "."),
            ("src/**", "p2"),
            ("*", "."),
        ] {
            let base = cx.path(path).unwrap();
            let matcher = matcher(pattern).unwrap();
            let whole = one_walk(&root, &base, &matcher, false, None).unwrap();
            assert!(whole.total > 0, "{pattern}");
            let no_overrides = Override::empty();
            let mut walker = Walker::new(true, &no_overrides);
            let start_dir = start(&base, &mut walker).unwrap();
            let base_path = base.guest().trim_end_matches('/').to_string();
            for groups in [2, 5] {
                let pieces = plan(&mut walker, &start_dir, &base_path, 4);
                let mut all = Found::default();
                for pieces in group(pieces, groups) {
                    let task = serde_json::to_string(&Task {
                        pattern: pattern.into(),
                        path: path.into(),
                        include_hidden: false,
                        pieces,
                    })
                    .unwrap();
                    let part: Found =
                        serde_json::from_value(work(&task, &cx).unwrap().structured.unwrap())
                            .unwrap();
                    all.found.extend(part.found);
                    all.total += part.total;
                }
                all.settle();
                assert_eq!(
                    all.found, whole.found,
                    "{pattern} in {path}, {groups} groups"
                );
                assert_eq!(all.total, whole.total);
            }
        }
    }

    #[test]
    fn tasks_outside_the_base_are_refused() {
        let (_dir, cx) = workspace();
        for outside in ["..", "a/../..", "/etc"] {
            let task = serde_json::json!({"pattern": "*", "path": ".", "include_hidden": false,
                "pieces": [{"Tree": outside}]})
            .to_string();
            let err = work(&task, &cx).unwrap_err();
            assert_eq!(
                err.message,
                "glob: worker task names a path outside its target"
            );
        }
    }
}
