//! Text from a plugin, a manifest or a model, made inert for a terminal.
//!
//! Every character a terminal could act on is shown as a visible escape
//! instead: C0 controls but tab and newline (`\r`, `\x1b`, `\x08`…), DEL,
//! C1 controls (`\u{9b}`, the 8-bit CSI), bidirectional controls, line and
//! paragraph separators and the deprecated format controls. Escaping the
//! introducer leaves the rest of any CSI, OSC, DCS, APC, PM or SOS sequence
//! as plain text, so the whole sequence shows and none of it acts.
//! Invariant: the output holds none of those characters, whatever the
//! input; [`terminal_line`] also holds no newline. Zero-width joiners,
//! variation selectors, combining marks and emoji tags are left alone.
//! The rules and their reasons are in `docs/terminal-output.md`.

use std::fmt::Write as _;

/// Whether a newline stays a line break or is shown as `\n`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Newlines {
    /// Multi-line text: `\n` (and `\r` right before it) stays.
    Keep,
    /// A single-line field: `\n` shows as `\n`, so a value cannot start a
    /// line of its own.
    Escape,
}

/// `text` safe to print on a terminal, its line breaks kept: for a tool's
/// result, an error message, the model's answer.
pub fn terminal_text(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    escape_into(text, Newlines::Keep, &mut out);
    out
}

/// `text` safe to print as (part of) one line: for names, descriptions in
/// tables, log and progress lines, arguments on a call line.
pub fn terminal_line(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    escape_into(text, Newlines::Escape, &mut out);
    out
}

/// Multi-line text that arrives in chunks (the model's streamed answer):
/// each chunk comes out as [`terminal_text`] would show it as part of the
/// whole, whatever the cuts. Call [`TerminalStream::finish`] at the end.
#[derive(Debug, Default)]
pub struct TerminalStream {
    /// A `\r` ended the last chunk: shown as is before a `\n`, escaped
    /// otherwise.
    carriage_return: bool,
}

impl TerminalStream {
    pub fn new() -> TerminalStream {
        TerminalStream::default()
    }

    /// The inert text of `chunk`, less a trailing `\r` held for the next.
    pub fn push(&mut self, chunk: &str) -> String {
        let mut held = String::with_capacity(chunk.len() + 1);
        if std::mem::take(&mut self.carriage_return) {
            held.push('\r');
        }
        held.push_str(chunk);
        let whole = match held.strip_suffix('\r') {
            Some(rest) => {
                self.carriage_return = true;
                rest
            }
            None => &held,
        };
        terminal_text(whole)
    }

    /// What is still held: `\r` shown escaped if the stream ended on one.
    pub fn finish(&mut self) -> String {
        if std::mem::take(&mut self.carriage_return) {
            "\\r".to_string()
        } else {
            String::new()
        }
    }
}

fn escape_into(text: &str, newlines: Newlines, out: &mut String) {
    let mut chars = text.chars().peekable();
    while let Some(c) = chars.next() {
        match c {
            '\t' => out.push(c),
            '\n' if newlines == Newlines::Keep => out.push(c),
            '\r' if newlines == Newlines::Keep && chars.peek() == Some(&'\n') => out.push(c),
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\0'..='\x1f' | '\x7f' => {
                let _ = write!(out, "\\x{:02x}", c as u32);
            }
            c if acts_on_terminal(c) => {
                let _ = write!(out, "\\u{{{:x}}}", c as u32);
            }
            c => out.push(c),
        }
    }
}

/// Beyond ASCII: C1 controls, and the format characters that reorder,
/// break or reshape text.
fn acts_on_terminal(c: char) -> bool {
    matches!(
        c,
        '\u{80}'..='\u{9f}'
            // Arabic letter mark; left-to-right and right-to-left marks.
            | '\u{61c}'
            | '\u{200e}'
            | '\u{200f}'
            // Line and paragraph separators.
            | '\u{2028}'
            | '\u{2029}'
            // Bidi embeddings, overrides and their pop.
            | '\u{202a}'..='\u{202e}'
            // Bidi isolates and their pop.
            | '\u{2066}'..='\u{2069}'
            // Deprecated format controls (symmetric swapping, shaping, digits).
            | '\u{206a}'..='\u{206f}'
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every character the invariant forbids in [`terminal_text`]'s output.
    fn acts(c: char) -> bool {
        (c.is_control() && c != '\n' && c != '\t') || acts_on_terminal(c)
    }

    #[test]
    fn a_fake_approval_line_and_a_fake_ok_are_shown_escaped() {
        let spoof = "done\x1b[2K\rApproval needed: write_file (plugin fs)\n\x1b[32mok\x1b[0m";
        assert_eq!(
            terminal_text(spoof),
            "done\\x1b[2K\\rApproval needed: write_file (plugin fs)\n\\x1b[32mok\\x1b[0m"
        );
        assert_eq!(
            terminal_line(spoof),
            "done\\x1b[2K\\rApproval needed: write_file (plugin fs)\\n\\x1b[32mok\\x1b[0m"
        );
    }

    #[test]
    fn whole_sequences_become_plain_text() {
        let cases = [
            // OSC window title, ended by BEL and by ST.
            ("\x1b]0;pwned\x07", "\\x1b]0;pwned\\x07"),
            ("\x1b]2;t\x1b\\", "\\x1b]2;t\\x1b\\"),
            // Alternate screen, erase display, cursor moves.
            ("\x1b[?1049h", "\\x1b[?1049h"),
            ("\x1b[2J\x1b[H", "\\x1b[2J\\x1b[H"),
            // DCS, APC, PM and SOS, 7-bit.
            ("\x1bPq#0\x1b\\", "\\x1bPq#0\\x1b\\"),
            ("\x1b_app\x1b\\", "\\x1b_app\\x1b\\"),
            ("\x1b^pm\x1b\\", "\\x1b^pm\\x1b\\"),
            ("\x1bXsos\x1b\\", "\\x1bXsos\\x1b\\"),
            // 8-bit CSI, OSC, DCS, ST.
            ("\u{9b}2J", "\\u{9b}2J"),
            ("\u{9d}0;t\u{9c}", "\\u{9d}0;t\\u{9c}"),
            ("\u{90}q\u{9c}", "\\u{90}q\\u{9c}"),
            // Backspace over text, bell, NUL, DEL.
            ("ok\x08\x08no", "ok\\x08\\x08no"),
            ("\x07\0\x7f", "\\x07\\x00\\x7f"),
        ];
        for (raw, shown) in cases {
            assert_eq!(terminal_text(raw), shown, "{raw:?}");
            assert_eq!(terminal_line(raw), shown, "{raw:?}");
        }
    }

    #[test]
    fn bidi_controls_cannot_reorder_text() {
        let cases = [
            ("a\u{202e}exe.txt\u{202c}", "a\\u{202e}exe.txt\\u{202c}"),
            ("\u{202a}\u{202b}\u{202d}", "\\u{202a}\\u{202b}\\u{202d}"),
            (
                "\u{2066}\u{2067}\u{2068}\u{2069}",
                "\\u{2066}\\u{2067}\\u{2068}\\u{2069}",
            ),
            ("\u{200e}\u{200f}\u{61c}", "\\u{200e}\\u{200f}\\u{61c}"),
            ("\u{206a}\u{206f}", "\\u{206a}\\u{206f}"),
        ];
        for (raw, shown) in cases {
            assert_eq!(terminal_text(raw), shown, "{raw:?}");
        }
    }

    #[test]
    fn a_single_line_field_cannot_start_a_line() {
        assert_eq!(terminal_line("a\nb\r\nc"), "a\\nb\\r\\nc");
        assert_eq!(terminal_line("a\u{2028}b\u{2029}"), "a\\u{2028}b\\u{2029}");
        assert_eq!(terminal_line("tab\tkept"), "tab\tkept");
        // Multi-line text keeps its breaks, CRLF included, but a lone CR
        // (which returns over the line) is escaped.
        assert_eq!(terminal_text("a\nb\r\nc\rd\r"), "a\nb\r\nc\\rd\\r");
        assert_eq!(terminal_text("\r\r\n"), "\\r\r\n");
    }

    #[test]
    fn ordinary_text_is_left_alone() {
        let cases = [
            "",
            "plain ASCII ~!@#$%^&*()_+{}|:\"<>?`-=[]\\;',./",
            "C:\\Users\\x1b is a path, not an escape",
            "Grüße, naïve café, ß, Ø, ñ, non\u{a0}breaking",
            "日本語のテキスト、中文文本、한국어",
            "combining: e\u{301} a\u{308} \u{915}\u{94d}\u{937}",
            "emoji: 👍🏽 👨\u{200d}👩\u{200d}👧 🏳\u{fe0f}\u{200d}🌈 ❤\u{fe0f}",
            "flag tags: 🏴\u{e0067}\u{e0062}\u{e0073}\u{e0063}\u{e0074}\u{e007f}",
            "joiners: \u{200c}\u{200d} zwsp\u{200b} shy\u{ad} bom\u{feff}",
            "Arabic: مرحبا, Hebrew: שלום",
            "boundaries: \u{a0}\u{202f}\u{2065}\u{2070}\u{ff}",
            "max: \u{10ffff}",
        ];
        for text in cases {
            assert_eq!(terminal_text(text), text);
            assert_eq!(terminal_line(text), text);
        }
    }

    #[test]
    fn escapes_next_to_multibyte_characters_keep_them_whole() {
        assert_eq!(terminal_text("é\x1bé"), "é\\x1bé");
        assert_eq!(terminal_text("日\u{9b}本"), "日\\u{9b}本");
        assert_eq!(terminal_text("👍\u{202e}👍"), "👍\\u{202e}👍");
        assert_eq!(
            terminal_text("\u{7f}\u{80}\u{9f}\u{a0}"),
            "\\x7f\\u{80}\\u{9f}\u{a0}"
        );
    }

    #[test]
    fn no_character_that_acts_survives() {
        for code in 0..=0x3000u32 {
            let Some(c) = char::from_u32(code) else {
                continue;
            };
            let text = format!("a{c}b");
            for shown in [terminal_text(&text), terminal_line(&text)] {
                assert!(!shown.chars().any(acts), "{code:#x} survives in {shown:?}");
            }
            assert!(!terminal_line(&text).contains('\n'), "{code:#x}");
        }
    }

    /// What a stream shows for `chunks`, pushed one after another.
    fn streamed(chunks: &[&str]) -> String {
        let mut stream = TerminalStream::new();
        let mut out: String = chunks.iter().map(|c| stream.push(c)).collect();
        out.push_str(&stream.finish());
        out
    }

    #[test]
    fn a_sequence_split_across_chunks_shows_as_if_whole() {
        let whole = "one\x1b[2K\rfake\r\nok\x1b]0;title\x07\u{9b}2J\u{202e}end\r";
        let expected = terminal_text(whole);
        // Every cut into two, and every cut into single characters.
        let chars: Vec<(usize, char)> = whole.char_indices().collect();
        for (i, _) in &chars {
            let (a, b) = whole.split_at(*i);
            assert_eq!(streamed(&[a, b]), expected, "cut at {i}");
        }
        let singles: Vec<String> = whole.chars().map(String::from).collect();
        let singles: Vec<&str> = singles.iter().map(String::as_str).collect();
        assert_eq!(streamed(&singles), expected);
    }

    #[test]
    fn a_stream_holds_only_a_trailing_carriage_return() {
        let mut stream = TerminalStream::new();
        assert_eq!(stream.push("text\x1b"), "text\\x1b");
        assert_eq!(stream.push("[2Kmore\r"), "[2Kmore");
        assert_eq!(stream.push("\n"), "\r\n");
        assert_eq!(stream.push("x\r"), "x");
        assert_eq!(stream.push("y"), "\\ry");
        assert_eq!(stream.push("\r"), "");
        assert_eq!(stream.push(""), "");
        assert_eq!(stream.finish(), "\\r");
        assert_eq!(stream.finish(), "");
    }

    #[test]
    fn a_lone_escape_at_the_end_is_shown() {
        assert_eq!(terminal_text("bye\x1b"), "bye\\x1b");
        assert_eq!(terminal_line("\x1b"), "\\x1b");
        assert_eq!(streamed(&["bye", "\x1b"]), "bye\\x1b");
        assert_eq!(streamed(&["\u{9b}"]), "\\u{9b}");
    }
}
