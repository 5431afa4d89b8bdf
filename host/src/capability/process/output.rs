//! Captured output: a cap that keeps the head and the tail of a stream and
//! counts what it cut, and a splitter that hands out lines as they arrive.
//!
//! Invariant: memory per stream is bounded by its cap (plus one line of at
//! most [`MAX_LINE`] bytes), whatever the process writes.

use std::collections::VecDeque;

use super::{MAX_LINE, OutputLine, Stream};

/// One stream's output: its first and last bytes, and how many were cut
/// between them.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct CapturedOutput {
    /// The first bytes of the stream.
    pub head: Vec<u8>,
    /// The last bytes of the stream (empty unless the head filled).
    pub tail: Vec<u8>,
    /// Bytes dropped between head and tail.
    pub cut: u64,
    /// Bytes the process wrote to the stream.
    pub total: u64,
}

impl CapturedOutput {
    /// Head and tail as text, with a marker where bytes were cut.
    pub fn text(&self) -> String {
        let head = String::from_utf8_lossy(&self.head);
        match self.cut {
            0 => format!("{head}{}", String::from_utf8_lossy(&self.tail)),
            cut => format!(
                "{head}\n[... {cut} bytes cut ...]\n{}",
                String::from_utf8_lossy(&self.tail)
            ),
        }
    }
}

/// Accumulates a stream under a cap of `cap` bytes: the first half is
/// kept, then a ring of the last half.
#[derive(Debug)]
pub(super) struct Capture {
    head_cap: usize,
    tail_cap: usize,
    head: Vec<u8>,
    tail: VecDeque<u8>,
    total: u64,
}

impl Capture {
    pub(super) fn new(cap: usize) -> Self {
        let head_cap = cap / 2 + cap % 2;
        Capture {
            head_cap,
            tail_cap: cap / 2,
            head: Vec::new(),
            tail: VecDeque::new(),
            total: 0,
        }
    }

    pub(super) fn push(&mut self, mut bytes: &[u8]) {
        self.total += bytes.len() as u64;
        let room = self.head_cap - self.head.len();
        let take = room.min(bytes.len());
        self.head.extend_from_slice(&bytes[..take]);
        bytes = &bytes[take..];
        if self.tail_cap == 0 || bytes.is_empty() {
            return;
        }
        if bytes.len() >= self.tail_cap {
            self.tail.clear();
            self.tail
                .extend(bytes[bytes.len() - self.tail_cap..].iter().copied());
            return;
        }
        let overflow = (self.tail.len() + bytes.len()).saturating_sub(self.tail_cap);
        self.tail.drain(..overflow);
        self.tail.extend(bytes.iter().copied());
    }

    pub(super) fn finish(self) -> CapturedOutput {
        let kept = (self.head.len() + self.tail.len()) as u64;
        CapturedOutput {
            head: self.head,
            tail: self.tail.into_iter().collect(),
            cut: self.total - kept,
            total: self.total,
        }
    }
}

/// Splits a stream into lines of at most [`MAX_LINE`] bytes.
#[derive(Debug)]
pub(super) struct Lines {
    stream: Stream,
    partial: Vec<u8>,
}

impl Lines {
    pub(super) fn new(stream: Stream) -> Self {
        Lines {
            stream,
            partial: Vec::new(),
        }
    }

    /// Feeds `bytes`, calling `emit` for each complete line.
    pub(super) fn push(&mut self, bytes: &[u8], emit: &mut dyn FnMut(OutputLine)) {
        for &b in bytes {
            if b == b'\n' {
                self.flush(emit);
            } else {
                self.partial.push(b);
                if self.partial.len() >= MAX_LINE {
                    self.flush(emit);
                }
            }
        }
    }

    /// Emits what is left of the last line, if anything.
    pub(super) fn flush(&mut self, emit: &mut dyn FnMut(OutputLine)) {
        let text = String::from_utf8_lossy(&self.partial).into_owned();
        self.partial.clear();
        emit(OutputLine {
            stream: self.stream,
            text,
        });
    }

    pub(super) fn has_partial(&self) -> bool {
        !self.partial.is_empty()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_flood_keeps_its_head_and_tail_and_counts_the_cut() {
        let mut c = Capture::new(10);
        for chunk in [&b"abc"[..], b"defgh", b"ijklmnopqrstuvwxyz"] {
            c.push(chunk);
        }
        let out = c.finish();
        assert_eq!(out.head, b"abcde");
        assert_eq!(out.tail, b"vwxyz");
        assert_eq!(out.cut, 16);
        assert_eq!(out.total, 26);
        assert!(out.text().contains("[... 16 bytes cut ...]"));
    }

    #[test]
    fn small_output_is_kept_whole_in_small_pieces() {
        let mut c = Capture::new(10);
        for b in b"0123456789AB" {
            c.push(&[*b]);
        }
        let out = c.finish();
        assert_eq!(out.head, b"01234");
        assert_eq!(out.tail, b"789AB");
        assert_eq!(out.cut, 2);
        let mut c = Capture::new(10);
        c.push(b"short");
        assert_eq!(c.finish().text(), "short");
    }

    #[test]
    fn a_line_without_end_is_split_at_max_line() {
        let mut lines = Lines::new(Stream::Stdout);
        let mut got = Vec::new();
        lines.push(b"one\ntw", &mut |l| got.push(l.text));
        lines.push(b"o\n", &mut |l| got.push(l.text));
        lines.push(&vec![b'x'; MAX_LINE + 1], &mut |l| got.push(l.text));
        assert_eq!(got.len(), 3);
        assert_eq!(got[..2], ["one".to_string(), "two".to_string()]);
        assert_eq!(got[2].len(), MAX_LINE);
        assert!(lines.has_partial());
    }
}
