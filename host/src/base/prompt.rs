//! The one terminal prompt: every question Warden asks the user (an
//! approval, a plugin's new capabilities) goes through it.
//!
//! On a terminal, a choice is one key press, no Enter needed: the terminal
//! is put in non-canonical mode without echo for that one read, and
//! restored before anything else happens (on every path, errors included).
//! Typeahead, whatever was typed before the question showed, is discarded
//! as the terminal's modes are set, so it never answers the question.
//! Signals are off while it waits, so Ctrl-C arrives as a key: the terminal
//! is restored first, then the process gets its SIGINT as usual. Whatever
//! arrives with the key (a newline from habit, a script writing `y\n`, the
//! rest of a word) is dropped with it, so it cannot answer the next prompt.
//! Free text (a pattern, a message) is always read as a line.

use std::fs::{File, OpenOptions};
use std::io::{self, BufRead, BufReader, IsTerminal, Write};

use rustix::termios::{
    LocalModes, OptionalActions, SpecialCodeIndex, Termios, tcgetattr, tcsetattr,
};

/// Ctrl-C and Ctrl-D, as they arrive with signals and line editing off.
const INTERRUPT: u8 = 0x03;
const END_OF_INPUT: u8 = 0x04;

/// A prompt's input and output: the terminal, or lines for tests and
/// other front ends.
pub struct TtyIo {
    input: Box<dyn BufRead + Send>,
    output: Box<dyn Write + Send>,
    /// The terminal the input reads, when it is one: choices are then single keys.
    keys: Option<File>,
}

/// A choice the user made.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Key(pub char);

impl TtyIo {
    /// Answers read as lines from `input`.
    pub fn lines(
        input: impl BufRead + Send + 'static,
        output: impl Write + Send + 'static,
    ) -> TtyIo {
        TtyIo {
            input: Box::new(input),
            output: Box::new(output),
            keys: None,
        }
    }

    /// Questions and answers on the controlling terminal (`/dev/tty`), not
    /// stdin and stdout. Fails when the process has none.
    pub fn open() -> io::Result<TtyIo> {
        let tty: File = OpenOptions::new().read(true).write(true).open("/dev/tty")?;
        let output = tty.try_clone()?;
        let modes = tty.try_clone()?;
        Ok(TtyIo::terminal(modes, BufReader::new(tty), output))
    }

    /// Answers read from `input`, which reads the terminal `tty`: choices
    /// are single keys if the terminal's modes can be set, lines otherwise.
    fn terminal(
        tty: File,
        input: impl BufRead + Send + 'static,
        output: impl Write + Send + 'static,
    ) -> TtyIo {
        let keys = tcgetattr(&tty).is_ok().then_some(tty);
        TtyIo {
            input: Box::new(input),
            output: Box::new(output),
            keys,
        }
    }

    /// Show `text` as it is.
    pub fn say(&mut self, text: &str) -> io::Result<()> {
        self.output.write_all(text.as_bytes())?;
        self.output.flush()
    }

    /// Ask and read one line, trimmed. End of input is an error.
    pub fn question(&mut self, prompt: &str) -> io::Result<String> {
        self.say(prompt)?;
        let mut line = String::new();
        if self.input.read_line(&mut line)? == 0 {
            return Err(closed());
        }
        Ok(line.trim().to_string())
    }

    /// Ask until the answer is one of `valid` (lowercase letters): one key
    /// on a terminal, else a line holding the letter (or `yes` / `no`).
    /// `other`, when given, is what any other key means (for `[y/N]`);
    /// without it, the user is told `retry` and asked again.
    pub fn choice(
        &mut self,
        prompt: &str,
        valid: &str,
        other: Option<char>,
        retry: &str,
    ) -> io::Result<Key> {
        loop {
            let answer = match self.keys.is_some() {
                true => self.key(prompt, other.is_none())?,
                false => line_answer(&self.question(prompt)?),
            };
            match (answer, other) {
                (Some(c), _) if valid.contains(c) => return Ok(Key(c)),
                (_, Some(default)) => return Ok(Key(default)),
                (_, None) => self.say(retry)?,
            }
        }
    }

    /// Read one key with the terminal in non-canonical mode and echo it.
    /// Stray newlines are skipped when `skip_blank`.
    fn key(&mut self, prompt: &str, skip_blank: bool) -> io::Result<Option<char>> {
        let key = {
            // Modes first, so a key pressed the moment the prompt shows is
            // neither echoed by the terminal nor held for a line.
            let Some(tty) = &self.keys else {
                return Err(closed());
            };
            let _raw = RawMode::enter(tty)?;
            self.output.write_all(prompt.as_bytes())?;
            self.output.flush()?;
            read_key(&mut *self.input, skip_blank)?
        };
        match key {
            INTERRUPT => {
                self.say("^C\n")?;
                let _ = rustix::process::kill_process(
                    rustix::process::getpid(),
                    rustix::process::Signal::INT,
                );
                Err(io::Error::new(
                    io::ErrorKind::Interrupted,
                    "interrupted at the prompt",
                ))
            }
            END_OF_INPUT => Err(closed()),
            byte => {
                let c = char::from(byte).to_ascii_lowercase();
                let shown = if c.is_ascii_graphic() { c } else { '?' };
                self.say(&format!("{shown}\n"))?;
                Ok(Some(c))
            }
        }
    }
}

/// How a yes/no question was answered.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Answer {
    /// `y`, or a line `y`/`yes`.
    Yes,
    /// Any key but `y` (a line but `y`/`yes`), or end of input.
    No,
    /// No terminal to ask on.
    NoTerminal,
}

/// Ask `question` on the controlling terminal, with `[y/N]` after it; the
/// default is no. Only when the command runs attached to a terminal, never
/// on piped stdin. The question is shown as one line, inert for a terminal.
pub fn ask_yes_no(question: &str) -> Answer {
    let attached =
        io::stdin().is_terminal() || io::stdout().is_terminal() || io::stderr().is_terminal();
    if !attached {
        return Answer::NoTerminal;
    }
    let Ok(mut io) = TtyIo::open() else {
        return Answer::NoTerminal;
    };
    let prompt = format!("{} [y/N] ", super::terminal_line(question));
    match io.choice(&prompt, "y", Some('n'), "") {
        Ok(Key('y')) => Answer::Yes,
        Ok(_) | Err(_) => Answer::No,
    }
}

/// The next key press. Everything typed with it, in the same burst, is
/// dropped (so `yes` answers `y` and leaves no `s` for the next prompt);
/// blank keys alone in a burst are skipped when `skip_blank`.
fn read_key(input: &mut dyn BufRead, skip_blank: bool) -> io::Result<u8> {
    loop {
        let buf = input.fill_buf()?;
        if buf.is_empty() {
            return Err(closed());
        }
        let burst = buf.len();
        let key = match skip_blank {
            true => buf
                .iter()
                .copied()
                .find(|b| !matches!(b, b'\n' | b'\r' | b' ')),
            false => Some(buf[0]),
        };
        input.consume(burst);
        if let Some(key) = key {
            return Ok(key);
        }
    }
}

/// A line's answer: its one letter, or `yes` / `no` spelt out.
fn line_answer(line: &str) -> Option<char> {
    match line.to_ascii_lowercase().as_str() {
        "yes" => Some('y'),
        "no" => Some('n'),
        one if one.chars().count() == 1 => one.chars().next(),
        _ => None,
    }
}

fn closed() -> io::Error {
    io::Error::new(io::ErrorKind::UnexpectedEof, "the terminal closed")
}

/// The terminal in non-canonical mode, no echo, no signals, reads of one
/// byte at least; the saved modes come back when dropped.
struct RawMode<'a> {
    tty: &'a File,
    saved: Termios,
}

impl<'a> RawMode<'a> {
    fn enter(tty: &'a File) -> io::Result<RawMode<'a>> {
        let saved = tcgetattr(tty)?;
        let mut raw = saved.clone();
        raw.local_modes
            .remove(LocalModes::ICANON | LocalModes::ECHO | LocalModes::ISIG);
        raw.special_codes[SpecialCodeIndex::VMIN] = 1;
        raw.special_codes[SpecialCodeIndex::VTIME] = 0;
        // `Flush` discards typeahead: a key typed before the question showed
        // does not answer it.
        tcsetattr(tty, OptionalActions::Flush, &raw)?;
        Ok(RawMode { tty, saved })
    }
}

impl Drop for RawMode<'_> {
    fn drop(&mut self) {
        // Nothing more can be done if the terminal refuses its own modes back.
        let _ = tcsetattr(self.tty, OptionalActions::Now, &self.saved);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_key_drops_what_came_with_it() {
        let mut input = io::Cursor::new(b"yes\n".to_vec());
        assert_eq!(read_key(&mut input, true).unwrap(), b'y');
        assert!(read_key(&mut input, true).is_err(), "the rest went with it");
        let mut blank = io::BufReader::with_capacity(1, io::Cursor::new(b"\n\r s".to_vec()));
        assert_eq!(read_key(&mut blank, true).unwrap(), b's');
        let mut enter = io::Cursor::new(b"\nx".to_vec());
        assert_eq!(read_key(&mut enter, false).unwrap(), b'\n');
    }

    #[test]
    fn lines_answer_with_a_letter_or_a_word() {
        assert_eq!(line_answer("Y"), Some('y'));
        assert_eq!(line_answer("no"), Some('n'));
        assert_eq!(line_answer("what"), None);
        assert_eq!(line_answer(""), None);
    }
}
