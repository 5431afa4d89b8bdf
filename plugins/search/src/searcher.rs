//! Searching one file's bytes and printing matches the way ripgrep does.
//!
//! The regex runs over the whole buffer, never line by line; line numbers
//! and line bounds are computed only around matches, by counting newlines
//! forward from the previous match. A line matches when the regex matches
//! within that line alone: a match that runs across a newline is re-checked
//! against its first line, so results never depend on neighbouring lines.

use std::fmt::Write as _;

use memchr::{memchr, memchr_iter, memrchr};
use regex::bytes::Regex;
use warden_sdk::walk::Filter;

/// Characters of a line shown; the rest is cut with a marker.
const MAX_LINE_CHARS: usize = 500;
/// Bytes of output after which the search stops.
pub const MAX_OUTPUT: usize = 512 * 1024;

/// Why a search stopped before the end.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Stop {
    /// `max_matches` matching lines were found.
    MaxMatches,
    /// The output reached [`MAX_OUTPUT`].
    OutputFull,
}

/// What to search for and how much context to print.
pub struct Searcher {
    /// Compiled in multi-line, CRLF-aware mode so `^` and `$` mean line bounds.
    pub regex: Regex,
    /// Context lines printed before each match.
    pub before: usize,
    /// Context lines printed after each match.
    pub after: usize,
    /// Stop after this many matching lines, across all files.
    pub max_matches: usize,
    /// Literals one of which every match contains, for the host to look
    /// for before a file is read into the guest.
    pub filter: Option<Filter>,
}

/// Output and counts accumulated across files.
#[derive(Debug, Default)]
pub struct Sink {
    /// Lines for the model: `path:N:text` for matches, `path-N-text` for context.
    pub text: String,
    /// Matching lines printed.
    pub matches: usize,
    /// Files with at least one matching line.
    pub files: usize,
    /// Set once the search must end.
    pub stop: Option<Stop>,
}

/// A file's bytes and what has been printed of it.
struct Printer<'a> {
    path: &'a str,
    buf: &'a [u8],
    /// Number and offset of the line after the last one printed.
    cursor: Option<(usize, usize)>,
    /// Context lines still owed after the last match.
    after_left: usize,
}

impl Searcher {
    /// Search `buf`, the content of the file shown as `path`, appending to `sink`.
    pub fn search(&self, path: &str, buf: &[u8], sink: &mut Sink) {
        let len = buf.len();
        let mut printer = Printer {
            path,
            buf,
            cursor: None,
            after_left: 0,
        };
        // A line start and its 1-based number, advanced from match to match.
        let (mut counted_at, mut counted_line) = (0, 1);
        let mut pos = 0;
        while sink.stop.is_none() && pos <= len {
            let Some(m) = self.regex.find_at(buf, pos) else {
                break;
            };
            let start = m.start();
            if start == len && (len == 0 || buf[len - 1] == b'\n') {
                break;
            }
            let line_start = memrchr(b'\n', &buf[pos..start]).map_or(pos, |i| pos + i + 1);
            let line_end = memchr(b'\n', &buf[start..]).map_or(len, |i| start + i);
            pos = line_end + 1;
            if m.end() > line_end && !self.regex.is_match(&buf[line_start..line_end]) {
                continue;
            }
            counted_line += memchr_iter(b'\n', &buf[counted_at..line_start]).count();
            counted_at = line_start;
            if printer.cursor.is_none() {
                sink.files += 1;
            }
            printer.print_match(self, sink, counted_line, line_start, line_end);
        }
        printer.drain_after(sink, usize::MAX);
    }
}

impl Printer<'_> {
    /// Print the matching line `no` (bytes `start..end`) with its context.
    fn print_match(&mut self, s: &Searcher, sink: &mut Sink, no: usize, start: usize, end: usize) {
        self.drain_after(sink, no);
        let first_allowed = self.cursor.map_or(1, |(next, _)| next);
        let first = no.saturating_sub(s.before).max(first_allowed);
        let context = s.before > 0 || s.after > 0;
        if context && !sink.text.is_empty() && self.cursor.is_none_or(|(next, _)| first > next) {
            sink.text.push_str("--\n");
        }
        let mut starts = Vec::with_capacity(no - first);
        let mut at = start;
        for _ in first..no {
            at = memrchr(b'\n', &self.buf[..at - 1]).map_or(0, |i| i + 1);
            starts.push(at);
        }
        for (i, &line_start) in starts.iter().rev().enumerate() {
            let line_end =
                memchr(b'\n', &self.buf[line_start..]).map_or(self.buf.len(), |j| line_start + j);
            push_line(
                &mut sink.text,
                self.path,
                first + i,
                '-',
                &self.buf[line_start..line_end],
            );
        }
        push_line(&mut sink.text, self.path, no, ':', &self.buf[start..end]);
        self.cursor = Some((no + 1, end + 1));
        self.after_left = s.after;
        sink.matches += 1;
        if sink.matches >= s.max_matches {
            sink.stop = Some(Stop::MaxMatches);
        } else if sink.text.len() >= MAX_OUTPUT {
            sink.stop = Some(Stop::OutputFull);
        }
    }

    /// Print owed context lines after the last match, up to (not including) line `until`.
    fn drain_after(&mut self, sink: &mut Sink, until: usize) {
        let Some((mut no, mut at)) = self.cursor else {
            return;
        };
        while self.after_left > 0 && no < until && at < self.buf.len() {
            let end = memchr(b'\n', &self.buf[at..]).map_or(self.buf.len(), |j| at + j);
            push_line(&mut sink.text, self.path, no, '-', &self.buf[at..end]);
            no += 1;
            at = end + 1;
            self.after_left -= 1;
        }
        self.cursor = Some((no, at));
    }
}

/// Append `path{sep}no{sep}text`, without the line's `\r`, cut at [`MAX_LINE_CHARS`].
fn push_line(out: &mut String, path: &str, no: usize, sep: char, line: &[u8]) {
    let line = line.strip_suffix(b"\r").unwrap_or(line);
    let raw = &line[..line.len().min(4 * MAX_LINE_CHARS)];
    let text = String::from_utf8_lossy(raw);
    let _ = write!(out, "{path}{sep}{no}{sep}");
    match text.char_indices().nth(MAX_LINE_CHARS) {
        Some((cut, _)) => {
            out.push_str(&text[..cut]);
            out.push_str("… [line truncated]");
        }
        None => out.push_str(&text),
    }
    out.push('\n');
}

#[cfg(test)]
mod tests {
    use super::*;
    use regex::bytes::RegexBuilder;

    fn run(pattern: &str, context: usize, max: usize, text: &str) -> Sink {
        let regex = RegexBuilder::new(pattern)
            .multi_line(true)
            .crlf(true)
            .build()
            .unwrap();
        let s = Searcher {
            regex,
            before: context,
            after: context,
            max_matches: max,
            filter: None,
        };
        let mut sink = Sink::default();
        s.search("f", text.as_bytes(), &mut sink);
        sink
    }

    #[test]
    fn prints_matching_lines_once() {
        let sink = run("foo", 0, 100, "a\nfoo foo\nb\nfoo bar");
        assert_eq!(sink.text, "f:2:foo foo\nf:4:foo bar\n");
        assert_eq!((sink.matches, sink.files, sink.stop), (2, 1, None));
    }

    #[test]
    fn context_groups_and_separators() {
        let text: String = (1..=10).map(|i| format!("l{i}\n")).collect();
        let sink = run("^l(3|5|9)$", 1, 100, &text);
        assert_eq!(
            sink.text,
            "f-2-l2\nf:3:l3\nf-4-l4\nf:5:l5\nf-6-l6\n--\nf-8-l8\nf:9:l9\nf-10-l10\n"
        );
        let sink = run("l1$", 2, 100, &text);
        assert_eq!(sink.text, "f:1:l1\nf-2-l2\nf-3-l3\n");
    }

    #[test]
    fn matches_never_span_lines() {
        assert_eq!(run(r"a\s+b", 0, 100, "a\nb\na b\n").text, "f:3:a b\n");
        assert_eq!(run(r"x[^y]*z", 0, 100, "x\nz\n").text, "");
        assert_eq!(run(r"b\s*", 0, 100, "ab\nc\n").text, "f:1:ab\n");
    }

    #[test]
    fn anchors_are_line_anchors() {
        assert_eq!(run("^$", 0, 100, "a\n\nb\n").text, "f:2:\n");
        assert_eq!(run("b$", 0, 100, "a\nb").text, "f:2:b\n");
        assert_eq!(run("^", 0, 100, "a\nb\n").text, "f:1:a\nf:2:b\n");
        assert_eq!(run("^", 0, 100, "").text, "");
        assert_eq!(run("foo$", 0, 100, "foo\r\nbar\r\n").text, "f:1:foo\n");
    }

    #[test]
    fn stops_at_max_and_finishes_context() {
        let sink = run("x", 1, 2, "x\nx\nx\ny\n");
        assert_eq!(sink.text, "f:1:x\nf:2:x\nf-3-x\n");
        assert_eq!((sink.matches, sink.stop), (2, Some(Stop::MaxMatches)));
    }

    #[test]
    fn cuts_long_lines() {
        let line = format!("{}needle{}", "é".repeat(600), "z".repeat(3000));
        let sink = run("needle", 0, 100, &line);
        assert_eq!(
            sink.text,
            format!("f:1:{}… [line truncated]\n", "é".repeat(500))
        );
    }

    #[test]
    fn line_numbers_far_apart() {
        let mut text = "\n".repeat(100_000);
        text.push_str("hit\n");
        text.push_str(&"\n".repeat(5));
        text.push_str("hit\n");
        assert_eq!(
            run("hit", 0, 100, &text).text,
            "f:100001:hit\nf:100007:hit\n"
        );
    }
}
