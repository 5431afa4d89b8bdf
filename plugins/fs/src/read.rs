//! `read_file`: a window of a text file, numbered like `cat -n`.
//!
//! The file is streamed, never loaded whole: only the requested lines are
//! kept (each capped in length), the rest is counted. Output never exceeds
//! [`MAX_OUTPUT`], and whenever it stops before the end of the file it says
//! which `offset` continues.

use std::fs::File;
use std::io::{self, BufRead, BufReader, Read};

use serde::Deserialize;
use warden_sdk::{
    Annotations, Context, Output, Tool, ToolError, WorkspacePath,
    serde_json::{Value, json},
};

/// Lines shown when the input gives no `limit`.
const DEFAULT_LIMIT: usize = 2000;
/// The largest `limit` honoured.
const MAX_LIMIT: usize = 10_000;
/// Characters kept of one line.
const MAX_LINE_CHARS: usize = 2000;
/// Bytes of output text, markers excluded.
const MAX_OUTPUT: usize = 256 * 1024;
/// Bytes inspected for a NUL to decide a file is binary.
const SNIFF: u64 = 8 * 1024;

/// Reads a text file with line numbers.
pub struct ReadFile;

/// Input of `read_file`; see the schema for each field.
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Input {
    path: String,
    offset: Option<usize>,
    limit: Option<usize>,
}

impl Tool for ReadFile {
    type Input = Input;
    const NAME: &'static str = "read_file";
    const DESCRIPTION: &'static str = "Read a text file from the workspace. Lines are numbered like `cat -n` \
        (line number, tab, text). Reads up to `limit` lines (default 2000) starting at line `offset` (1-based); \
        when more remains, the output ends with the offset to continue from. Lines over 2000 characters are cut. \
        Binary files are refused.";
    const ANNOTATIONS: Annotations = Annotations::READ_ONLY;

    fn input_schema(&self) -> Value {
        json!({
            "type": "object",
            "properties": {
                "path": {"type": "string", "description": "File path, relative to the workspace root."},
                "offset": {"type": "integer", "minimum": 1, "description": "First line to show, 1-based. Default 1."},
                "limit": {"type": "integer", "minimum": 1, "maximum": MAX_LIMIT, "description": "Number of lines to show. Default 2000."}
            },
            "required": ["path"],
            "additionalProperties": false
        })
    }

    fn call(&self, input: Input, cx: &Context) -> Result<Output, ToolError> {
        let wp = cx.path(&input.path)?;
        let start = input.offset.unwrap_or(1).max(1);
        let limit = input.limit.unwrap_or(DEFAULT_LIMIT).clamp(1, MAX_LIMIT);
        read(&wp, start, limit)
    }
}

/// Show up to `limit` lines of the file at `wp`, from line `start` (1-based).
fn read(wp: &WorkspacePath, start: usize, limit: usize) -> Result<Output, ToolError> {
    let shown = wp.display();
    // Stat before opening: opening a FIFO or a device could block forever.
    let kind = std::fs::metadata(wp.guest()).map_err(|e| open_error(&e, shown))?;
    if !kind.is_file() && !kind.is_dir() {
        return Err(ToolError::invalid_input(format!(
            "{shown}: not a regular file (a FIFO, socket or device); read_file only reads files"
        )));
    }
    let file = File::open(wp.guest()).map_err(|e| open_error(&e, shown))?;
    let meta = file.metadata().map_err(|e| ToolError::from_io(&e, shown))?;
    if meta.is_dir() {
        return Err(ToolError::invalid_input(format!(
            "{shown}: is a directory; use list_dir to see its entries"
        )));
    }
    let size = meta.len();
    let binary = || {
        ToolError::invalid_input(format!(
            "{shown}: binary file ({size} bytes); read_file only shows text"
        ))
    };

    let mut head = Vec::with_capacity(SNIFF as usize);
    (&file)
        .take(SNIFF)
        .read_to_end(&mut head)
        .map_err(|e| ToolError::from_io(&e, shown))?;
    if head.is_empty() {
        let structured = json!({"path": shown, "start_line": 0, "end_line": 0, "total_lines": 0, "truncated": false});
        return Ok(
            Output::text(format!("{shown}: empty file (0 bytes)")).with_structured(structured)
        );
    }
    if head.contains(&0) || matches!(std::str::from_utf8(&head), Err(e) if e.error_len().is_some())
    {
        return Err(binary());
    }

    let mut reader = BufReader::with_capacity(64 * 1024, io::Cursor::new(head).chain(file));
    let mut out = String::new();
    let mut line = Vec::new();
    let mut line_no = 0;
    let mut end = 0;
    let mut cut_by_size = false;
    let last_wanted = (start - 1).saturating_add(limit);
    while end < last_wanted {
        if !read_line_capped(&mut reader, &mut line, 4 * MAX_LINE_CHARS)
            .map_err(|e| ToolError::from_io(&e, shown))?
        {
            break;
        }
        line_no += 1;
        if line_no < start {
            continue;
        }
        let text = decode(&line).ok_or_else(|| {
            ToolError::invalid_input(format!(
                "{shown}: binary file ({size} bytes, invalid UTF-8 at line {line_no}); read_file only shows text"
            ))
        })?;
        let (text, cut) = text;
        let before = out.len();
        push_numbered(&mut out, line_no, text, cut);
        if before > 0 && out.len() > MAX_OUTPUT {
            out.truncate(before);
            cut_by_size = true;
            line_no -= 1;
            break;
        }
        end = line_no;
    }
    let total = line_no
        + count_lines(&mut reader, cut_by_size).map_err(|e| ToolError::from_io(&e, shown))?;
    if start > total {
        return Err(ToolError::invalid_input(format!(
            "{shown}: offset {start} is past the end of the file, which has {}",
            crate::plural(total, "line", "lines")
        )));
    }
    let truncated = end < total;
    if cut_by_size {
        out.push_str(&format!(
            "[truncated at {} KiB: showed lines {start}-{end} of {total}; call read_file with offset={} to continue]\n",
            MAX_OUTPUT / 1024,
            end + 1
        ));
    } else if truncated {
        out.push_str(&format!(
            "[showed lines {start}-{end} of {total}; call read_file with offset={} to continue]\n",
            end + 1
        ));
    }
    let structured = json!({"path": shown, "start_line": start, "end_line": end, "total_lines": total, "truncated": truncated});
    Ok(Output::text(out).with_structured(structured))
}

/// Errors opening the file, with a hint for directories.
fn open_error(err: &io::Error, shown: &str) -> ToolError {
    if err.kind() == io::ErrorKind::IsADirectory {
        return ToolError::invalid_input(format!(
            "{shown}: is a directory; use list_dir to see its entries"
        ));
    }
    ToolError::from_io(err, shown)
}

/// Read one line into `buf` without its terminator, keeping at most `cap`
/// bytes (the rest of a longer line is skipped). False at end of input.
fn read_line_capped(reader: &mut impl BufRead, buf: &mut Vec<u8>, cap: usize) -> io::Result<bool> {
    buf.clear();
    let mut any = false;
    loop {
        let chunk = reader.fill_buf()?;
        if chunk.is_empty() {
            break;
        }
        any = true;
        let (take, done) = match chunk.iter().position(|&b| b == b'\n') {
            Some(i) => (i, true),
            None => (chunk.len(), false),
        };
        let room = cap.saturating_sub(buf.len());
        buf.extend_from_slice(&chunk[..take.min(room)]);
        reader.consume(if done { take + 1 } else { take });
        if done {
            break;
        }
    }
    if buf.last() == Some(&b'\r') {
        buf.pop();
    }
    Ok(any)
}

/// The line as text, cut at [`MAX_LINE_CHARS`] (true when cut); `None` if
/// it is not UTF-8. A multi-byte character split by the byte cap counts as
/// text.
fn decode(line: &[u8]) -> Option<(&str, bool)> {
    let text = match std::str::from_utf8(line) {
        Ok(t) => t,
        Err(e) if e.error_len().is_none() => std::str::from_utf8(&line[..e.valid_up_to()]).ok()?,
        Err(_) => return None,
    };
    // A line of at most MAX_LINE_CHARS bytes has at most as many characters.
    if text.len() <= MAX_LINE_CHARS {
        return Some((text, false));
    }
    match text.char_indices().nth(MAX_LINE_CHARS) {
        Some((cut, _)) => Some((&text[..cut], true)),
        None => Some((text, false)),
    }
}

/// Shown after a line cut at [`MAX_LINE_CHARS`].
const LINE_CUT: &str = "… [line truncated]";
/// Width the line number is right-aligned to, as `cat -n` does.
const NUMBER_WIDTH: usize = 6;

/// Append `line_no` right-aligned, a tab, the text and a newline. Written
/// by hand: this runs for every line shown, and `format!` costs an
/// allocation and the formatting machinery each time.
fn push_numbered(out: &mut String, line_no: usize, text: &str, cut: bool) {
    let mut digits = [0u8; 20];
    let mut at = digits.len();
    let mut n = line_no;
    loop {
        at -= 1;
        digits[at] = b'0' + (n % 10) as u8;
        n /= 10;
        if n == 0 {
            break;
        }
    }
    let digits = &digits[at..];
    for _ in digits.len()..NUMBER_WIDTH {
        out.push(' ');
    }
    // ASCII digits only.
    out.extend(digits.iter().map(|&d| char::from(d)));
    out.push('\t');
    out.push_str(text);
    if cut {
        out.push_str(LINE_CUT);
    }
    out.push('\n');
}

/// Lines left in `reader`; `pending` is true when one line was read but not
/// counted (it did not fit the output).
fn count_lines(reader: &mut impl BufRead, pending: bool) -> io::Result<usize> {
    let mut count = usize::from(pending);
    let mut last = if pending { Some(b'\n') } else { None };
    loop {
        let chunk = reader.fill_buf()?;
        if chunk.is_empty() {
            break;
        }
        count += chunk.iter().filter(|&&b| b == b'\n').count();
        last = chunk.last().copied();
        let n = chunk.len();
        reader.consume(n);
    }
    if matches!(last, Some(b) if b != b'\n') {
        count += 1;
    }
    Ok(count)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testutil::{put, workspace};

    fn call(
        cx: &Context,
        path: &str,
        offset: Option<usize>,
        limit: Option<usize>,
    ) -> Result<Output, ToolError> {
        ReadFile.call(
            Input {
                path: path.into(),
                offset,
                limit,
            },
            cx,
        )
    }

    #[test]
    fn numbers_lines_like_cat() {
        let (dir, cx) = workspace();
        put(&dir, "a.txt", "one\r\ntwo\nthree");
        let out = call(&cx, "a.txt", None, None).unwrap();
        assert_eq!(out.text, "     1\tone\n     2\ttwo\n     3\tthree\n");
        let s = out.structured.unwrap();
        assert_eq!(
            (
                s["start_line"].clone(),
                s["end_line"].clone(),
                s["total_lines"].clone()
            ),
            (1.into(), 3.into(), 3.into())
        );
        assert_eq!(s["truncated"], false);
    }

    #[test]
    fn window_says_how_to_continue() {
        let (dir, cx) = workspace();
        let body: String = (1..=10).map(|i| format!("l{i}\n")).collect();
        put(&dir, "n.txt", &body);
        let out = call(&cx, "n.txt", Some(4), Some(2)).unwrap();
        assert_eq!(
            out.text,
            "     4\tl4\n     5\tl5\n[showed lines 4-5 of 10; call read_file with offset=6 to continue]\n"
        );
        assert_eq!(out.structured.unwrap()["truncated"], true);
        let out = call(&cx, "n.txt", Some(9), None).unwrap();
        assert_eq!(out.text, "     9\tl9\n    10\tl10\n");
        let err = call(&cx, "n.txt", Some(11), None).unwrap_err();
        assert_eq!(
            err.message,
            "n.txt: offset 11 is past the end of the file, which has 10 lines"
        );
    }

    #[test]
    fn caps_long_lines_and_total_output() {
        let (dir, cx) = workspace();
        put(&dir, "long.txt", &format!("{}\nshort\n", "é".repeat(5000)));
        let out = call(&cx, "long.txt", None, None).unwrap();
        assert!(
            out.text
                .starts_with(&format!("     1\t{}… [line truncated]\n", "é".repeat(2000)))
        );
        assert!(out.text.ends_with("     2\tshort\n"));

        let line = "x".repeat(999);
        put(&dir, "big.txt", &format!("{line}\n").repeat(1000));
        let out = call(&cx, "big.txt", None, None).unwrap();
        assert!(out.text.len() <= MAX_OUTPUT + 200);
        assert!(out.text.ends_with("[truncated at 256 KiB: showed lines 1-260 of 1000; call read_file with offset=261 to continue]\n"));
        let s = out.structured.unwrap();
        assert_eq!(
            (s["end_line"].clone(), s["total_lines"].clone()),
            (260.into(), 1000.into())
        );
    }

    #[test]
    fn numbering_matches_cat_past_six_digits() {
        for n in [1, 9, 10, 99_999, 999_999, 1_000_000, 12_345_678, usize::MAX] {
            for (text, cut) in [("x", false), ("", false), ("é", true)] {
                let mut out = String::from("before\n");
                push_numbered(&mut out, n, text, cut);
                let tail = if cut { LINE_CUT } else { "" };
                let want = format!("before\n{n:>6}\t{text}{tail}\n");
                assert_eq!(out, want);
            }
        }
    }

    #[test]
    fn refuses_binary_directories_and_missing() {
        let (dir, cx) = workspace();
        std::fs::write(dir.path().join("bin"), b"ab\0cd").unwrap();
        assert_eq!(
            call(&cx, "bin", None, None).unwrap_err().message,
            "bin: binary file (5 bytes); read_file only shows text"
        );
        std::fs::write(dir.path().join("latin1"), b"caf\xe9 au lait").unwrap();
        assert!(
            call(&cx, "latin1", None, None)
                .unwrap_err()
                .message
                .starts_with("latin1: binary file (12 bytes)")
        );
        put(&dir, "d/x", "");
        assert_eq!(
            call(&cx, "d", None, None).unwrap_err().message,
            "d: is a directory; use list_dir to see its entries"
        );
        assert_eq!(
            call(&cx, "nope.txt", None, None).unwrap_err().message,
            "nope.txt: no such file or directory"
        );
        assert_eq!(
            call(&cx, "d/x", None, None).unwrap().text,
            "d/x: empty file (0 bytes)"
        );
    }
}
