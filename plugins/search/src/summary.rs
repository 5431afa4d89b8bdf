//! The last line of `grep` output: what was found and why the search stopped.
//!
//! Whenever results are incomplete the summary says so and what to change,
//! so a model never mistakes a cut list for the whole answer.

use crate::MAX_MATCHES;
use crate::run::MAX_FILE_SIZE;
use crate::searcher::{MAX_OUTPUT, Sink, Stop};

/// Files searched and not searched, for the summary.
#[derive(Debug, Default)]
pub struct Tally {
    /// Text files searched.
    pub searched: usize,
    /// Files skipped for a NUL byte in their first 8 KiB.
    pub binary: usize,
    /// Files skipped for being over [`MAX_FILE_SIZE`].
    pub large: usize,
    /// Files that could not be read and directories that could not be
    /// listed (a permission, the sandbox, an I/O error).
    pub unreadable: usize,
    /// The user cancelled the call before the walk ended.
    pub cancelled: bool,
}

/// The summary line for a search that found `sink` and stopped at `max_matches`.
pub fn summary(sink: &Sink, tally: &Tally, max_matches: usize) -> String {
    let found = format!(
        "{} in {}",
        plural(sink.matches, "match", "matches"),
        plural(sink.files, "file", "files")
    );
    let mut text = match sink.stop {
        Some(Stop::MaxMatches) => format!(
            "stopped at max_matches={max_matches} ({found}); narrow the search with path, glob or a more \
             specific pattern, or raise max_matches (up to {MAX_MATCHES})"
        ),
        Some(Stop::OutputFull) => format!(
            "stopped: output reached {} KiB ({found}); narrow the search with path, glob or a more specific \
             pattern, or use less context",
            MAX_OUTPUT / 1024
        ),
        None if sink.matches == 0 => format!(
            "no matches ({} searched)",
            plural(tally.searched, "file", "files")
        ),
        None => found,
    };
    if tally.binary > 0 {
        text.push_str(&format!(
            "; skipped {}",
            plural(tally.binary, "binary file", "binary files")
        ));
    }
    if tally.large > 0 {
        text.push_str(&format!(
            "; skipped {} over {} MiB",
            plural(tally.large, "file", "files"),
            MAX_FILE_SIZE >> 20
        ));
    }
    // Counted over the whole walk, so said only of a search that went to
    // its end (one that stopped says so already).
    if tally.unreadable > 0 && sink.stop.is_none() && !tally.cancelled {
        text.push_str(&format!(
            "; could not read {} (permissions or the sandbox)",
            plural(
                tally.unreadable,
                "file or directory",
                "files or directories"
            )
        ));
    }
    if tally.cancelled {
        text.push_str("; stopped early: the call was cancelled");
    }
    text
}

/// `n` followed by `one` or `many`, e.g. `1 match`, `3 matches`.
fn plural(n: usize, one: &str, many: &str) -> String {
    if n == 1 {
        format!("{n} {one}")
    } else {
        format!("{n} {many}")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn says_why_results_are_incomplete() {
        let sink = Sink {
            matches: 3,
            files: 1,
            stop: Some(Stop::OutputFull),
            ..Sink::default()
        };
        let tally = Tally {
            searched: 9,
            binary: 0,
            large: 2,
            unreadable: 4,
            cancelled: true,
        };
        assert_eq!(
            summary(&sink, &tally, 200),
            "stopped: output reached 512 KiB (3 matches in 1 file); narrow the search with path, glob or a \
             more specific pattern, or use less context; skipped 2 files over 64 MiB; stopped early: the call \
             was cancelled"
        );
        let none = summary(
            &Sink::default(),
            &Tally {
                searched: 1,
                ..Tally::default()
            },
            200,
        );
        assert_eq!(none, "no matches (1 file searched)");
        let locked = summary(
            &Sink::default(),
            &Tally {
                searched: 2,
                unreadable: 1,
                ..Tally::default()
            },
            200,
        );
        assert_eq!(
            locked,
            "no matches (2 files searched); could not read 1 file or directory (permissions or the sandbox)"
        );
    }
}
