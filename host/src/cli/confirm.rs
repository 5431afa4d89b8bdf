//! A yes/no question on the controlling terminal, as approvals ask: only
//! when the command runs attached to one, never on piped stdin. The
//! question is shown as one line, inert for a terminal.

use std::io::{BufRead, BufReader, IsTerminal, Write};

use crate::base::terminal_line;

/// How a question was answered.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Answer {
    Yes,
    /// Anything but `y`/`yes`, or end of input.
    No,
    /// No terminal to ask on.
    NoTerminal,
}

/// Ask `question` on `/dev/tty`; the default is no.
pub fn ask(question: &str) -> Answer {
    let attached = std::io::stdin().is_terminal()
        || std::io::stdout().is_terminal()
        || std::io::stderr().is_terminal();
    if !attached {
        return Answer::NoTerminal;
    }
    let Ok(tty) = std::fs::OpenOptions::new()
        .read(true)
        .write(true)
        .open("/dev/tty")
    else {
        return Answer::NoTerminal;
    };
    let Ok(mut out) = tty.try_clone() else {
        return Answer::NoTerminal;
    };
    if write!(out, "{} [y/N] ", terminal_line(question))
        .and_then(|()| out.flush())
        .is_err()
    {
        return Answer::NoTerminal;
    }
    let mut line = String::new();
    match BufReader::new(tty).read_line(&mut line) {
        Ok(n) if n > 0 => match line.trim().to_ascii_lowercase().as_str() {
            "y" | "yes" => Answer::Yes,
            _ => Answer::No,
        },
        Ok(_) | Err(_) => Answer::No,
    }
}
