//! One walk cut into pieces that workers walk on their own.
//!
//! The caller lists the top of the tree once ([`plan`]) and hands the
//! pieces out in groups; a worker walks its group with [`Walker::walk_piece`]
//! after [`start_piece`](super::start_piece) on the piece's directory.
//! Invariant: the pieces, walked one after another in order, visit exactly
//! the entries one [`Walker::walk_all`] of the start visits, in the same
//! order, each once. Nothing below the top is listed twice, except a
//! directory a deferred walk leaves as a [`Piece::After`]: that one is
//! listed again by whoever walks or names the rest of it.

use serde::{Deserialize, Serialize};

use super::{Dir, Entry, Flow, Kind, Walker};
use crate::WorkspacePath;

/// The most levels [`plan`] lists to find enough subtrees.
const MAX_PLAN_DEPTH: u32 = 4;
/// The most entries a deferred walk's rest names one by one for a
/// directory; more become one [`Piece::After`], which keeps a rest small
/// whatever the directory's size.
pub const NAMED_REST: usize = 128;

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
    /// The entries of the directory `dir` that come after `after` in name
    /// order, and the subtrees of those that are directories: what a
    /// deferred walk left of a directory too long to name entry by entry.
    After {
        /// The directory, below the start.
        dir: String,
        /// The last name before them.
        after: String,
    },
}

impl Piece {
    /// The directory a worker opens for this piece, below the start.
    pub fn dir(&self) -> &str {
        match self {
            Piece::Tree(dir) | Piece::Entries { dir, .. } | Piece::After { dir, .. } => dir,
        }
    }

    /// Where this piece's directory is: `target`, the walk's start, or a
    /// directory below it.
    pub fn under(&self, target: &WorkspacePath) -> WorkspacePath {
        if self.dir().is_empty() {
            target.clone()
        } else {
            target.join(self.dir())
        }
    }

    /// A rough cost, to balance groups: a subtree, or what is after a name
    /// in a directory, counts as 64 entries.
    pub fn weight(&self) -> usize {
        match self {
            Piece::Tree(_) | Piece::After { .. } => 64,
            Piece::Entries { entries, .. } => entries.len(),
        }
    }
}

/// The walk of `dir` (at guest path `path`, the walk's start) cut into
/// pieces: directories are listed down to the depth that gives at least
/// `subtrees` [`Piece::Tree`]s, or [`MAX_PLAN_DEPTH`].
pub fn plan<D: Dir>(walker: &mut Walker, dir: &D, path: &str, subtrees: usize) -> Vec<Piece> {
    let mut pieces = Vec::new();
    let (unreadable, unnamed) = (walker.unreadable, walker.unnamed.clone());
    for depth in 1..=MAX_PLAN_DEPTH {
        // Each depth lists the levels above it again: count once.
        pieces.clear();
        walker.unreadable = unreadable;
        walker.unnamed = unnamed.clone();
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
            self.unreadable += 1;
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
            let sub_below = join(below, &name);
            out.push(Piece::Entries {
                dir: below.to_string(),
                entries: std::mem::take(&mut run),
            });
            if depth > 1 {
                match dir.open_dir(&name) {
                    Ok(sub) => self.pieces(&sub, &child, &sub_below, depth - 1, out),
                    Err(e) => {
                        self.unreadable += super::unreadable(&e);
                    }
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
            Piece::After { dir: below, after } => {
                let never = &mut || false;
                match self.walk_deferring(
                    dir,
                    path,
                    below,
                    Some(after),
                    visit,
                    never,
                    &mut Vec::new(),
                ) {
                    Walked::Done(flow) => flow,
                    Walked::Deferred => Flow::Continue,
                }
            }
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

    /// [`Walker::walk_piece`], asking `defer()` before each entry whether
    /// to stop for now. When it says so, that entry and everything after
    /// it in the piece are appended to `rest` as pieces, in walk order (the
    /// rest of the deepest directory first, then of each one above it), and
    /// the walk returns [`Walked::Deferred`]: walking `rest` afterwards
    /// visits exactly what this walk left, listing again only a directory
    /// left as a [`Piece::After`].
    pub fn walk_piece_deferring<D: Dir>(
        &mut self,
        dir: &D,
        path: &str,
        piece: &Piece,
        visit: &mut impl FnMut(&D, &str, &str, Kind) -> Flow,
        defer: &mut impl FnMut() -> bool,
        rest: &mut Vec<Piece>,
    ) -> Walked {
        match piece {
            Piece::Tree(below) => self.walk_deferring(dir, path, below, None, visit, defer, rest),
            Piece::After { dir: below, after } => {
                self.walk_deferring(dir, path, below, Some(after), visit, defer, rest)
            }
            Piece::Entries {
                dir: below,
                entries,
            } => {
                for (i, (name, kind)) in entries.iter().enumerate() {
                    if defer() {
                        rest.push(Piece::Entries {
                            dir: below.clone(),
                            entries: entries[i..].to_vec(),
                        });
                        return Walked::Deferred;
                    }
                    if visit(dir, name, &format!("{path}/{name}"), *kind) == Flow::Stop {
                        return Walked::Done(Flow::Stop);
                    }
                }
                Walked::Done(Flow::Continue)
            }
        }
    }

    /// [`Walker::walk_all`] of `dir` (at guest path `path`, `below` the
    /// start), from the first entry after `after` when one is given,
    /// deferring as [`Walker::walk_piece_deferring`] does.
    #[allow(clippy::too_many_arguments)]
    fn walk_deferring<D: Dir>(
        &mut self,
        dir: &D,
        path: &str,
        below: &str,
        after: Option<&str>,
        visit: &mut impl FnMut(&D, &str, &str, Kind) -> Flow,
        defer: &mut impl FnMut() -> bool,
        rest: &mut Vec<Piece>,
    ) -> Walked {
        // A directory walked from after a name was listed, and its unnamed
        // entries counted, by the walk that left the rest.
        let counted = after.map(|_| self.unnamed.clone());
        let entries = self.enter(dir, path);
        if let Some(counted) = counted {
            self.unnamed = counted;
        }
        let Some(entries) = entries else {
            self.unreadable += 1;
            return Walked::Done(Flow::Continue);
        };
        let first = after.map_or(0, |after| {
            entries.partition_point(|e| e.name.as_str() <= after)
        });
        let mut walked = Walked::Done(Flow::Continue);
        for (i, entry) in entries.iter().enumerate().skip(first) {
            let child = format!("{path}/{}", entry.name);
            let is_dir = entry.kind == Kind::Dir;
            if self.skipped(&child, &entry.name, is_dir) {
                continue;
            }
            if defer() {
                self.rest_of(&entries, i, path, below, rest);
                walked = Walked::Deferred;
                break;
            }
            if visit(dir, &entry.name, &child, entry.kind) == Flow::Stop {
                walked = Walked::Done(Flow::Stop);
                break;
            }
            if !is_dir {
                continue;
            }
            let sub = match dir.open_dir(&entry.name) {
                Ok(sub) => sub,
                Err(e) => {
                    self.unreadable += super::unreadable(&e);
                    continue;
                }
            };
            let sub_below = join(below, &entry.name);
            match self.walk_deferring(&sub, &child, &sub_below, None, visit, defer, rest) {
                Walked::Done(Flow::Continue) => {}
                Walked::Done(Flow::Stop) => {
                    walked = Walked::Done(Flow::Stop);
                    break;
                }
                Walked::Deferred => {
                    self.rest_of(&entries, i + 1, path, below, rest);
                    walked = Walked::Deferred;
                    break;
                }
            }
        }
        self.levels.pop();
        walked
    }

    /// Append the entries of a directory (at guest path `path`, `below` the
    /// start) from `entries[from]` on to `rest`: as one [`Piece::After`]
    /// when more than [`NAMED_REST`] are left, else those not filtered out
    /// as runs of entries, each directory's subtree after the run that
    /// visits it.
    fn rest_of(
        &self,
        entries: &[Entry],
        from: usize,
        path: &str,
        below: &str,
        rest: &mut Vec<Piece>,
    ) {
        let left = entries.len().saturating_sub(from);
        if left > NAMED_REST {
            rest.push(match from.checked_sub(1) {
                Some(last) => Piece::After {
                    dir: below.to_string(),
                    after: entries[last].name.clone(),
                },
                None => Piece::Tree(below.to_string()),
            });
            return;
        }
        self.named(entries.get(from..).unwrap_or_default(), path, below, rest);
    }

    /// Append `entries` (of the directory at guest path `path`, `below` the
    /// start), those not filtered out, to `out` as runs of entries, each
    /// directory's subtree after the run that visits it.
    fn named(&self, entries: &[Entry], path: &str, below: &str, out: &mut Vec<Piece>) {
        let mut run = Vec::new();
        for entry in entries {
            let is_dir = entry.kind == Kind::Dir;
            if self.skipped(&format!("{path}/{}", entry.name), &entry.name, is_dir) {
                continue;
            }
            run.push((entry.name.clone(), entry.kind));
            if is_dir {
                out.push(Piece::Entries {
                    dir: below.to_string(),
                    entries: std::mem::take(&mut run),
                });
                out.push(Piece::Tree(join(below, &entry.name)));
            }
        }
        if !run.is_empty() {
            out.push(Piece::Entries {
                dir: below.to_string(),
                entries: run,
            });
        }
    }

    /// A [`Piece::After`] of `dir` (at guest path `path`, `below` the
    /// start, opened by [`start_piece`](super::start_piece)) named entry by
    /// entry, to cut it among workers; `None` if `dir` cannot be listed.
    pub fn name_after<D: Dir>(
        &mut self,
        dir: &D,
        path: &str,
        below: &str,
        after: &str,
    ) -> Option<Vec<Piece>> {
        // The walk that left this rest listed the directory and counted
        // its unnamed entries already.
        let unnamed = self.unnamed.clone();
        let entries = self.enter(dir, path);
        self.unnamed = unnamed;
        let entries = entries?;
        let first = entries.partition_point(|e| e.name.as_str() <= after);
        let mut out = Vec::new();
        self.named(&entries[first..], path, below, &mut out);
        self.levels.pop();
        Some(out)
    }
}

/// How a deferring walk ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Walked {
    /// It walked everything, or a visit stopped it.
    Done(Flow),
    /// It stopped for now; what it left is in its rest.
    Deferred,
}

/// `name` below `below` (`""` for the start).
fn join(below: &str, name: &str) -> String {
    if below.is_empty() {
        name.to_string()
    } else {
        format!("{below}/{name}")
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

    /// A name that is not UTF-8 is counted once by the walker that lists
    /// its directory: not again at each depth the plan lists it, and not
    /// by another walker.
    #[test]
    fn a_name_that_is_not_utf8_is_counted_once() {
        use std::os::unix::ffi::OsStrExt;
        let files: Vec<(String, &str)> = (0..3)
            .flat_map(|i| (0..4).map(move |j| (format!("d{i}/e{j}/f/x.txt"), "x")))
            .collect();
        let files: Vec<(&str, &str)> = files.iter().map(|(p, c)| (p.as_str(), *c)).collect();
        let root = tree(&files);
        for odd in [&b"odd\xff"[..], b"d1/e2/f/odd\xfe"] {
            let path = root.path().join(std::ffi::OsStr::from_bytes(odd));
            std::fs::write(path, "odd").unwrap();
        }
        let none = Override::empty();
        let target = WorkspacePath::resolve(root.path().to_str().unwrap(), None, ".").unwrap();
        let mut planner = Walker::new(true, &none);
        let dir = start(&target, &mut planner).unwrap();
        let base = target.guest().trim_end_matches('/').to_string();
        let pieces = plan(&mut planner, &dir, &base, 8);
        assert!(
            pieces
                .iter()
                .any(|p| matches!(p, Piece::Tree(t) if t == "d1/e2")),
            "the plan went two levels deep, listing the start twice: {pieces:?}"
        );
        assert_eq!(planner.unnamed.0, 1, "the start, listed at each depth");
        assert_eq!(planner.unnamed.1.as_deref(), Some(base.as_str()));
        let mut counted = planner.unnamed.0;
        for group in group(pieces, 3) {
            let mut walker = Walker::new(true, &none);
            for piece in &group {
                let at = piece.under(&target);
                let dir = start_piece(&at, piece, &mut walker).unwrap();
                let path = at.guest().trim_end_matches('/').to_string();
                walker.walk_piece(&dir, &path, piece, &mut |_, _, _, _| Flow::Continue);
            }
            counted += walker.unnamed.0;
        }
        assert_eq!(counted, 2);
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
                let at = piece.under(&target);
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

    /// What `group` of pieces of `target` visits when its walk defers
    /// once it has visited `every` entries and its rest, with the group's
    /// pieces not yet begun after it, is walked the same way next; with
    /// `name`, a [`Piece::After`] in a rest is named entry by entry first,
    /// as a parent cutting rests among workers does.
    fn deferring(
        target: &WorkspacePath,
        hidden: bool,
        group: &[Piece],
        every: usize,
        name: bool,
    ) -> Vec<(String, Kind)> {
        let none = Override::empty();
        let mut walker = Walker::new(!hidden, &none);
        let mut seen = Vec::new();
        let mut rest = Vec::new();
        let group: Vec<Piece> = group
            .iter()
            .flat_map(|piece| match piece {
                Piece::After { dir, after } if name => {
                    let at = piece.under(target);
                    let opened = start_piece(&at, piece, &mut walker).unwrap();
                    let path = at.guest().trim_end_matches('/').to_string();
                    walker.name_after(&opened, &path, dir, after).unwrap()
                }
                other => vec![other.clone()],
            })
            .collect();
        let visited = std::cell::Cell::new(0);
        for (k, piece) in group.iter().enumerate() {
            let at = piece.under(target);
            let dir = start_piece(&at, piece, &mut walker).unwrap();
            let path = at.guest().trim_end_matches('/').to_string();
            let walked = walker.walk_piece_deferring(
                &dir,
                &path,
                piece,
                &mut |_, _, path, kind| {
                    visited.set(visited.get() + 1);
                    seen.push((path.to_string(), kind));
                    Flow::Continue
                },
                &mut || visited.get() >= every,
                &mut rest,
            );
            if walked == Walked::Deferred {
                rest.extend(group[k + 1..].iter().cloned());
                break;
            }
        }
        if !rest.is_empty() {
            seen.extend(deferring(target, hidden, &rest, every, name));
        }
        seen
    }

    #[test]
    fn a_deferred_walk_and_its_rest_visit_what_one_walk_visits() {
        let dir = tree(&[
            (".gitignore", "*.log\n/build/\n"),
            ("a.log", "x"),
            ("top.txt", "x"),
            ("build/out.txt", "x"),
            ("src/main.rs", "x"),
            ("src/.gitignore", "gen_*\n"),
            ("src/gen_a.rs", "x"),
            ("src/deep/gen_b.rs", "x"),
            ("src/deep/c.rs", "x"),
            ("src/deep/er/d.rs", "x"),
            ("src/deep/er/still/e.rs", "x"),
            ("src/deep/er/still/f.rs", "x"),
            ("src/deep/z.rs", "x"),
            ("src/z.rs", "x"),
            (".hidden/h.txt", "x"),
            ("nested/sub/.gitignore", "*.rs\n"),
            ("nested/sub/d.rs", "x"),
            ("nested/sub/e.txt", "x"),
            ("zz/y/gen_c.rs", "x"),
            ("zz/y/b.txt", "x"),
        ]);
        // A directory too long for a rest to name entry by entry, with
        // ignored files and subdirectories among its entries.
        let flat = dir.path().join("src/flat");
        for i in 0..NAMED_REST * 2 + 7 {
            let name = match i % 50 {
                7 => format!("gen_{i:03}.rs"),
                9 => format!("d{i:03}/inner.txt"),
                _ => format!("f{i:03}.txt"),
            };
            let path = flat.join(name);
            std::fs::create_dir_all(path.parent().unwrap()).unwrap();
            std::fs::write(path, "x").unwrap();
        }
        let root = dir.path();
        let none = Override::empty();
        // From `src/flat` the long directory is the start itself.
        for (sub, hidden) in [("", false), ("", true), ("src", false), ("src/flat", false)] {
            let expected = whole(root, sub, hidden);
            let target = WorkspacePath::resolve(root.to_str().unwrap(), None, sub).unwrap();
            for (every, name) in [
                (1, false),
                (2, true),
                (3, false),
                (5, true),
                (40, false),
                (100, true),
            ] {
                let tree = [Piece::Tree(String::new())];
                assert_eq!(
                    deferring(&target, hidden, &tree, every, name),
                    expected,
                    "{sub:?} hidden {hidden}, the whole tree deferred every {every}"
                );
                let mut planner = Walker::new(!hidden, &none);
                let start_dir = start(&target, &mut planner).unwrap();
                let base = target.guest().trim_end_matches('/').to_string();
                let pieces = plan(&mut planner, &start_dir, &base, 2);
                let mut seen = Vec::new();
                for group in group(pieces, 3) {
                    seen.extend(deferring(&target, hidden, &group, every, name));
                }
                assert_eq!(
                    seen, expected,
                    "{sub:?} hidden {hidden}, planned pieces deferred every {every}"
                );
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
