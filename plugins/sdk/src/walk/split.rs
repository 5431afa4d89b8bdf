//! One walk cut into pieces that workers walk on their own.
//!
//! The caller lists the top of the tree once ([`plan`]) and hands the
//! pieces out in groups; a worker walks its group with [`Walker::walk_piece`]
//! after [`start_piece`](super::start_piece) on the piece's directory.
//! Invariant: the pieces, walked one after another in order, visit exactly
//! the entries one [`Walker::walk_all`] of the start visits, in the same
//! order, each once; nothing below the top is listed twice.

use serde::{Deserialize, Serialize};

use super::{Dir, Flow, Kind, Walker};

/// The most levels [`plan`] lists to find enough subtrees.
const MAX_PLAN_DEPTH: u32 = 4;

/// A part of a walk, named below the walk's start (`""` for the start).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub enum Piece {
    /// Everything under the directory `dir`, not the directory itself
    /// (an earlier [`Piece::Entries`] visits it).
    Tree(String),
    /// Entries of directory `dir`, visited in this order; a directory
    /// among them is visited, not entered.
    Entries {
        /// The directory holding them.
        dir: String,
        /// Their names and kinds as listed.
        entries: Vec<(String, Kind)>,
    },
}

impl Piece {
    /// The directory a worker opens for this piece, below the start.
    pub fn dir(&self) -> &str {
        match self {
            Piece::Tree(dir) | Piece::Entries { dir, .. } => dir,
        }
    }

    /// A rough cost, to balance groups: a subtree counts as 64 entries.
    pub fn weight(&self) -> usize {
        match self {
            Piece::Tree(_) => 64,
            Piece::Entries { entries, .. } => entries.len(),
        }
    }
}

/// The walk of `dir` (at guest path `path`, the walk's start) cut into
/// pieces: directories are listed down to the depth that gives at least
/// `subtrees` [`Piece::Tree`]s, or [`MAX_PLAN_DEPTH`].
pub fn plan<D: Dir>(walker: &mut Walker, dir: &D, path: &str, subtrees: usize) -> Vec<Piece> {
    let mut pieces = Vec::new();
    for depth in 1..=MAX_PLAN_DEPTH {
        pieces.clear();
        walker.pieces(dir, path, "", depth, &mut pieces);
        let trees = pieces
            .iter()
            .filter(|p| matches!(p, Piece::Tree(_)))
            .count();
        if trees == 0 || trees >= subtrees {
            break;
        }
    }
    pieces
}

/// `pieces` in at most `groups` runs of consecutive pieces, of about equal
/// weight; none empty. A run of entries heavier than a group's share is
/// cut in order first.
pub fn group(pieces: Vec<Piece>, groups: usize) -> Vec<Vec<Piece>> {
    group_tapering(pieces, groups, 0)
}

/// How many groups each of the last shares becomes in [`group_tapering`].
pub const TAIL_SPLIT: usize = 3;

/// [`group`], with the pieces of the last `tail` shares of weight cut into
/// [`TAIL_SPLIT`] times as many groups: workers that take groups in order
/// as each finishes then end together, even where the weights misjudge a
/// group near the end, at the cost of a few more, smaller tasks. At most
/// `groups + tail × (TAIL_SPLIT − 1)` groups (`tail` at most `groups`).
pub fn group_tapering(pieces: Vec<Piece>, groups: usize, tail: usize) -> Vec<Vec<Piece>> {
    let groups = groups.max(1);
    let tail = tail.min(groups);
    let total: usize = pieces.iter().map(Piece::weight).sum();
    let share = total.div_ceil(groups).max(1);
    let fine = share.div_ceil(TAIL_SPLIT).max(1);
    let fine_after = total.saturating_sub(tail.saturating_mul(share));
    let most = groups.saturating_add(tail.saturating_mul(TAIL_SPLIT - 1));
    // Runs of entries are cut at the finer size once anything is tapered,
    // so a long run near the end is cut too; before the tail the groups
    // gather the cuts back up to a share.
    let cut_at = if tail > 0 { fine } else { share };
    let cut = pieces.into_iter().flat_map(|piece| match piece {
        Piece::Entries { dir, entries } if entries.len() > cut_at => entries
            .chunks(cut_at)
            .map(|chunk| Piece::Entries {
                dir: dir.clone(),
                entries: chunk.to_vec(),
            })
            .collect(),
        other => vec![other],
    });
    let mut out: Vec<Vec<Piece>> = Vec::new();
    let mut current = Vec::new();
    let (mut weight, mut seen) = (0, 0);
    for piece in cut {
        weight += piece.weight();
        seen += piece.weight();
        current.push(piece);
        let limit = if seen > fine_after { fine } else { share };
        if weight >= limit && out.len() + 1 < most {
            out.push(std::mem::take(&mut current));
            weight = 0;
        }
    }
    if !current.is_empty() {
        out.push(current);
    }
    out
}

impl Walker<'_> {
    /// Append the pieces of the walk of `dir` (guest path `path`, `below`
    /// the start) to `out`, listing `depth` levels.
    fn pieces<D: Dir>(
        &mut self,
        dir: &D,
        path: &str,
        below: &str,
        depth: u32,
        out: &mut Vec<Piece>,
    ) {
        let Some(entries) = self.enter(dir, path) else {
            return;
        };
        let mut run = Vec::new();
        for entry in entries {
            let child = format!("{path}/{}", entry.name);
            let is_dir = entry.kind == Kind::Dir;
            if self.skipped(&child, &entry.name, is_dir) {
                continue;
            }
            let name = entry.name;
            run.push((name.clone(), entry.kind));
            if !is_dir {
                continue;
            }
            let sub_below = if below.is_empty() {
                name.clone()
            } else {
                format!("{below}/{name}")
            };
            out.push(Piece::Entries {
                dir: below.to_string(),
                entries: std::mem::take(&mut run),
            });
            if depth > 1 {
                if let Ok(sub) = dir.open_dir(&name) {
                    self.pieces(&sub, &child, &sub_below, depth - 1, out);
                }
            } else {
                out.push(Piece::Tree(sub_below));
            }
        }
        if !run.is_empty() {
            out.push(Piece::Entries {
                dir: below.to_string(),
                entries: run,
            });
        }
        self.levels.pop();
    }

    /// Walk `piece`, whose directory `dir` (at guest path `path`) was
    /// opened by [`start_piece`](super::start_piece), calling `visit` as
    /// [`Walker::walk_all`] does.
    pub fn walk_piece<D: Dir>(
        &mut self,
        dir: &D,
        path: &str,
        piece: &Piece,
        visit: &mut impl FnMut(&D, &str, &str, Kind) -> Flow,
    ) -> Flow {
        match piece {
            Piece::Tree(_) => self.walk_all(dir, path, visit),
            Piece::Entries { entries, .. } => {
                for (name, kind) in entries {
                    if visit(dir, name, &format!("{path}/{name}"), *kind) == Flow::Stop {
                        return Flow::Stop;
                    }
                }
                Flow::Continue
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use std::path::Path;

    use ignore::overrides::Override;

    use super::*;
    use crate::WorkspacePath;
    use crate::walk::{start, start_piece};

    fn tree(files: &[(&str, &str)]) -> tempfile::TempDir {
        let dir = tempfile::tempdir().unwrap();
        for (rel, content) in files {
            let p = dir.path().join(rel);
            std::fs::create_dir_all(p.parent().unwrap()).unwrap();
            std::fs::write(p, content).unwrap();
        }
        dir
    }

    /// What one walk of `sub` visits: (path, kind).
    fn whole(root: &Path, sub: &str, hidden: bool) -> Vec<(String, Kind)> {
        let none = Override::empty();
        let mut walker = Walker::new(!hidden, &none);
        let target = WorkspacePath::resolve(root.to_str().unwrap(), None, sub).unwrap();
        let dir = start(&target, &mut walker).unwrap();
        let mut seen = Vec::new();
        let base = target.guest().trim_end_matches('/').to_string();
        walker.walk_all(&dir, &base, &mut |_, _, path, kind| {
            seen.push((path.to_string(), kind));
            Flow::Continue
        });
        seen
    }

    /// What the pieces of `sub`, planned for `subtrees` and walked in
    /// order by `workers` walkers (each reused across its group), visit.
    fn pieced(
        root: &Path,
        sub: &str,
        hidden: bool,
        subtrees: usize,
        groups: usize,
    ) -> Vec<(String, Kind)> {
        let none = Override::empty();
        let target = WorkspacePath::resolve(root.to_str().unwrap(), None, sub).unwrap();
        let mut planner = Walker::new(!hidden, &none);
        let dir = start(&target, &mut planner).unwrap();
        let base = target.guest().trim_end_matches('/').to_string();
        let pieces = plan(&mut planner, &dir, &base, subtrees);
        let mut seen = Vec::new();
        for group in group(pieces, groups) {
            let mut walker = Walker::new(!hidden, &none);
            for piece in &group {
                let at = if piece.dir().is_empty() {
                    target.clone()
                } else {
                    target.join(piece.dir())
                };
                let dir = start_piece(&at, piece, &mut walker).unwrap();
                let path = at.guest().trim_end_matches('/').to_string();
                walker.walk_piece(&dir, &path, piece, &mut |_, _, path, kind| {
                    seen.push((path.to_string(), kind));
                    Flow::Continue
                });
            }
        }
        seen
    }

    #[test]
    fn pieces_in_order_visit_what_one_walk_visits() {
        let dir = tree(&[
            (".gitignore", "*.log\n/build/\n"),
            ("a.log", "x"),
            ("top.txt", "x"),
            ("build/out.txt", "x"),
            ("src/build/inner.txt", "x"),
            ("src/main.rs", "x"),
            ("src/.gitignore", "gen_*\n"),
            ("src/gen_a.rs", "x"),
            ("src/deep/gen_b.rs", "x"),
            ("src/deep/c.rs", "x"),
            ("src/deep/er/d.rs", "x"),
            ("src/deep/er/still/e.rs", "x"),
            (".hidden/h.txt", "x"),
            ("nested/.git/info/exclude", "excluded.txt\n"),
            ("nested/excluded.txt", "x"),
            ("nested/sub/.gitignore", "*.rs\n"),
            ("nested/sub/d.rs", "x"),
            ("nested/sub/e.txt", "x"),
            ("zz/Z.txt", "x"),
            ("zz/a.txt", "x"),
            ("zz/y/b.txt", "x"),
            // Visible only if `src`'s rules are forgotten past `src`.
            ("zz/y/gen_c.rs", "x"),
            ("nested/sub/gen_x.txt", "x"),
        ]);
        std::os::unix::fs::symlink(dir.path().join("src"), dir.path().join("link")).unwrap();
        let root = dir.path();
        for (sub, hidden) in [("", false), ("", true), ("src", false), ("nested", false)] {
            let expected = whole(root, sub, hidden);
            assert!(expected.len() >= 2, "{sub:?}");
            for subtrees in [1, 3, 4, 100] {
                for groups in [1, 2, 3, 7] {
                    assert_eq!(
                        pieced(root, sub, hidden, subtrees, groups),
                        expected,
                        "{sub:?} hidden {hidden}, {subtrees} subtrees, {groups} groups"
                    );
                }
            }
        }
    }

    #[test]
    fn groups_keep_the_order_and_leave_none_empty() {
        let pieces: Vec<Piece> = (0..10).map(|i| Piece::Tree(format!("d{i}"))).collect();
        for groups in 1..=12 {
            let grouped = group(pieces.clone(), groups);
            assert!(grouped.len() <= groups && grouped.iter().all(|g| !g.is_empty()));
            assert_eq!(grouped.concat(), pieces, "{groups} groups");
        }
        assert!(group(Vec::new(), 3).is_empty());
        let entries: Vec<(String, Kind)> = (0..10).map(|i| (format!("f{i}"), Kind::File)).collect();
        let one = Piece::Entries {
            dir: "d".into(),
            entries: entries.clone(),
        };
        let grouped = group(vec![one], 3);
        assert_eq!(grouped.len(), 3, "one long run of files is cut");
        let flat: Vec<(String, Kind)> = grouped
            .concat()
            .into_iter()
            .flat_map(|p| match p {
                Piece::Entries { dir, entries } if dir == "d" => entries,
                other => panic!("{other:?}"),
            })
            .collect();
        assert_eq!(flat, entries);
    }

    #[test]
    fn tapering_cuts_the_last_shares_finer_and_keeps_the_order() {
        let pieces: Vec<Piece> = (0..96).map(|i| Piece::Tree(format!("d{i}"))).collect();
        // Eight shares of twelve subtrees; the last two become six groups
        // of four.
        let grouped = group_tapering(pieces.clone(), 8, 2);
        let sizes: Vec<usize> = grouped.iter().map(Vec::len).collect();
        assert_eq!(sizes, [12, 12, 12, 12, 12, 12, 4, 4, 4, 4, 4, 4]);
        assert_eq!(grouped.concat(), pieces);
        assert_eq!(
            group_tapering(pieces.clone(), 8, 0),
            group(pieces.clone(), 8)
        );
        for (groups, tail) in [(1, 1), (3, 5), (12, 2), (200, 2), (8, 8)] {
            let grouped = group_tapering(pieces.clone(), groups, tail);
            let most = groups - tail.min(groups) + tail.min(groups) * TAIL_SPLIT;
            assert!(grouped.len() <= most && grouped.iter().all(|g| !g.is_empty()));
            assert_eq!(grouped.concat(), pieces, "{groups} groups, {tail} tapered");
        }
        assert!(group_tapering(Vec::new(), 8, 2).is_empty());
        // A long run of files at the end is cut into the finer groups too.
        let mut with_run = pieces[..48].to_vec();
        with_run.push(Piece::Entries {
            dir: "d".into(),
            entries: (0..64 * 48)
                .map(|i| (format!("f{i}"), Kind::File))
                .collect(),
        });
        let grouped = group_tapering(with_run.clone(), 8, 2);
        assert_eq!(
            grouped.len(),
            12,
            "{:?}",
            grouped.iter().map(Vec::len).collect::<Vec<_>>()
        );
        let weights: Vec<usize> = grouped
            .iter()
            .map(|g| g.iter().map(Piece::weight).sum())
            .collect();
        assert_eq!(weights[11], 64 * 4, "{weights:?}");
        assert_eq!(weights[6..].iter().sum::<usize>(), 64 * 24, "{weights:?}");
    }
}
