//! `ask_user` at the terminal: the question shown (through
//! [`terminal_line`], so no escape or extra line a model wrote reaches the
//! screen), the answer read as a line from the controlling terminal, with
//! the spinner off while it asks; without a terminal, or under
//! `--non-interactive`, no one can answer and the model is told why.

use std::io::{self, IsTerminal};
use std::sync::{Arc, Mutex, PoisonError};

use crate::base::prompt::TtyIo;
use crate::base::terminal_line;
use crate::protocol::{AskAnswer, Interaction, NoOneToAsk, PlanStep, Question};

/// Asks the user's questions on a terminal.
pub struct TerminalAsker {
    io: Mutex<TtyIo>,
}

impl TerminalAsker {
    /// Prompt on `io` (the terminal, or lines for tests).
    pub fn with_io(io: TtyIo) -> TerminalAsker {
        TerminalAsker { io: Mutex::new(io) }
    }
}

impl Interaction for TerminalAsker {
    fn plan_updated(&self, _call_id: &str, _steps: &[PlanStep]) {}

    fn ask(&self, _call_id: &str, question: &Question) -> AskAnswer {
        let mut io = self.io.lock().unwrap_or_else(PoisonError::into_inner);
        match ask(&mut io, question) {
            Ok(answer) if answer.is_empty() => AskAnswer::Unanswered {
                reason: "the user gave no answer".into(),
            },
            Ok(answer) => AskAnswer::Answered { answer },
            Err(e) => AskAnswer::Unanswered {
                reason: format!("no answer came from the terminal ({e})"),
            },
        }
    }
}

/// Show `q` and read the answer: a choice's number picks that choice.
fn ask(io: &mut TtyIo, q: &Question) -> io::Result<String> {
    let mut text = format!("\nThe agent asks: {}\n", terminal_line(&q.text));
    for (i, choice) in q.choices.iter().enumerate() {
        text.push_str(&format!("  [{}] {}\n", i + 1, terminal_line(choice)));
    }
    io.say(&text)?;
    let prompt = match q.choices.is_empty() {
        true => "Your answer: ",
        false => "Your answer (a number or your own words): ",
    };
    let line = io.question(prompt)?;
    let picked = line
        .parse::<usize>()
        .ok()
        .and_then(|n| n.checked_sub(1))
        .and_then(|i| q.choices.get(i));
    Ok(picked.cloned().unwrap_or(line))
}

/// Who answers the agent's questions for this process: the terminal,
/// unless `non_interactive` or there is none.
pub(super) fn asker(non_interactive: bool) -> Arc<dyn Interaction> {
    if non_interactive {
        return Arc::new(NoOneToAsk(
            "this run is non-interactive (--non-interactive), so no one can answer".into(),
        ));
    }
    let attached = std::io::stdin().is_terminal()
        || std::io::stdout().is_terminal()
        || std::io::stderr().is_terminal();
    match attached.then(TtyIo::open) {
        Some(Ok(io)) => Arc::new(super::progress::PausingAsk(Arc::new(
            TerminalAsker::with_io(io),
        ))),
        Some(Err(_)) | None => Arc::new(NoOneToAsk(
            "there is no terminal to ask on, so no one can answer".into(),
        )),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_choice_number_picks_the_choice_and_escapes_never_reach_the_screen() {
        let out = Arc::new(Mutex::new(Vec::new()));
        struct Shared(Arc<Mutex<Vec<u8>>>);
        impl io::Write for Shared {
            fn write(&mut self, b: &[u8]) -> io::Result<usize> {
                self.0.lock().unwrap().extend_from_slice(b);
                Ok(b.len())
            }
            fn flush(&mut self) -> io::Result<()> {
                Ok(())
            }
        }
        let asker = TerminalAsker::with_io(TtyIo::lines(
            io::Cursor::new(b"2\nmy own\n\n".to_vec()),
            Shared(out.clone()),
        ));
        let q = Question {
            text: "Which \x1b[31mdatabase\x1b[0m?".into(),
            choices: vec!["sqlite".into(), "postgres".into()],
        };
        let answered = |a: &str| AskAnswer::Answered { answer: a.into() };
        assert_eq!(asker.ask("c", &q), answered("postgres"));
        assert_eq!(asker.ask("c", &q), answered("my own"));
        assert!(matches!(asker.ask("c", &q), AskAnswer::Unanswered { .. }));
        assert!(matches!(asker.ask("c", &q), AskAnswer::Unanswered { .. }));
        let shown = String::from_utf8(out.lock().unwrap().clone()).unwrap();
        assert!(
            shown.contains("[2] postgres") && !shown.contains('\x1b'),
            "{shown}"
        );
    }
}
