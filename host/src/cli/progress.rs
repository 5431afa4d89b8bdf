//! A spinner on stderr for work that takes a while: a tool call that
//! reports progress, a plugin compiled on first use, an install.
//!
//! Invariant: a spinner is drawn only when stderr is a terminal whose
//! `TERM` is not `dumb`, never with `-q` or `--json`, and never while the
//! approval prompt has the terminal ([`Pausing`]). One is shown at a time;
//! its line is cleared when the work ends. Its text is made inert by the
//! caller. A pipe gets nothing of it.

use std::io::IsTerminal;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, PoisonError};
use std::time::{Duration, Instant};

use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};

use crate::approval::{ApprovalRequest, ApprovalResponse, Approver};
use crate::base::{ProgressEvent, Verbosity, terminal_line};
use crate::protocol::{AskAnswer, Interaction, PlanStep, Question};
use crate::runtime::{CompileEvent, CompileObserver};

/// A call's progress shows once the call has run this long, so a quick
/// call never flashes a spinner.
pub(super) const SHOW_AFTER: Duration = Duration::from_millis(400);

const TICK: Duration = Duration::from_millis(100);
const TEMPLATE: &str = "{spinner} {msg} · {elapsed}";

static ALLOWED: AtomicBool = AtomicBool::new(false);
static SHOWN: Mutex<Shown> = Mutex::new(Shown {
    current: None,
    paused: 0,
});

/// The work a spinner stands for.
struct Work {
    /// Who owns it: a call, or a compile.
    key: String,
    message: String,
    started: Instant,
    /// Drawn, unless the prompt has the terminal.
    bar: Option<ProgressBar>,
}

struct Shown {
    current: Option<Work>,
    /// Prompts holding the terminal.
    paused: usize,
}

/// How progress reaches a human: a spinner, a line now and then (a
/// terminal that cannot redraw a line), or not at all (a pipe, `-q`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum ProgressDisplay {
    Spinner,
    Lines,
    Off,
}

/// Let spinners show unless `verbosity` is quiet; once, at start.
pub(super) fn allow(verbosity: Verbosity) {
    ALLOWED.store(verbosity.shows_warnings(), Ordering::Relaxed);
}

/// How progress is shown for a command with (or without) `--json`.
pub(super) fn display(json: bool) -> ProgressDisplay {
    let dumb = std::env::var_os("TERM").is_some_and(|t| t == "dumb");
    choose(
        json,
        ALLOWED.load(Ordering::Relaxed),
        std::io::stderr().is_terminal(),
        dumb,
    )
}

fn choose(json: bool, allowed: bool, terminal: bool, dumb: bool) -> ProgressDisplay {
    match (json || !allowed || !terminal, dumb) {
        (true, _) => ProgressDisplay::Off,
        (false, true) => ProgressDisplay::Lines,
        (false, false) => ProgressDisplay::Spinner,
    }
}

fn shown() -> std::sync::MutexGuard<'static, Shown> {
    SHOWN.lock().unwrap_or_else(PoisonError::into_inner)
}

fn draw(message: &str, started: Instant) -> ProgressBar {
    let bar = ProgressBar::with_draw_target(None, ProgressDrawTarget::stderr())
        .with_elapsed(started.elapsed());
    if let Ok(style) = ProgressStyle::with_template(TEMPLATE) {
        bar.set_style(style);
    }
    bar.set_message(message.to_string());
    bar.enable_steady_tick(TICK);
    bar
}

/// Show `message` for the work `key` started at `started`, in place of
/// whatever showed before.
pub(super) fn show(key: &str, message: &str, started: Instant) {
    let mut s = shown();
    let paused = s.paused > 0;
    match &mut s.current {
        Some(work) if work.key == key => {
            work.message = message.to_string();
            if let Some(bar) = &work.bar {
                bar.set_message(message.to_string());
            }
        }
        current => {
            if let Some(bar) = current.take().and_then(|w| w.bar) {
                bar.finish_and_clear();
            }
            *current = Some(Work {
                key: key.to_string(),
                message: message.to_string(),
                started,
                bar: (!paused).then(|| draw(message, started)),
            });
        }
    }
}

/// The work `key` ended: clear its line.
pub(super) fn end(key: &str) {
    let mut s = shown();
    if s.current.as_ref().is_some_and(|w| w.key == key)
        && let Some(bar) = s.current.take().and_then(|w| w.bar)
    {
        bar.finish_and_clear();
    }
}

/// Run `print` with the spinner's line out of the way, then redraw it.
pub(super) fn suspend<R>(print: impl FnOnce() -> R) -> R {
    let bar = shown().current.as_ref().and_then(|w| w.bar.clone());
    match bar {
        Some(bar) => bar.suspend(print),
        None => print(),
    }
}

/// An approver that takes the spinner off the terminal while it asks.
pub(super) struct Pausing(pub Arc<dyn Approver>);

impl Approver for Pausing {
    fn approve(&self, req: &ApprovalRequest) -> ApprovalResponse {
        paused(|| self.0.approve(req))
    }
}

/// An asker of the user's questions that takes the spinner off the
/// terminal while it asks.
pub(super) struct PausingAsk(pub Arc<dyn Interaction>);

impl Interaction for PausingAsk {
    fn plan_updated(&self, call_id: &str, steps: &[PlanStep]) {
        self.0.plan_updated(call_id, steps)
    }

    fn ask(&self, call_id: &str, question: &Question) -> AskAnswer {
        paused(|| self.0.ask(call_id, question))
    }
}

/// Run `ask` with the spinner off the terminal, then redraw it.
fn paused<R>(ask: impl FnOnce() -> R) -> R {
    {
        let mut s = shown();
        s.paused += 1;
        if let Some(bar) = s.current.as_mut().and_then(|w| w.bar.take()) {
            bar.finish_and_clear();
        }
    }
    let answer = ask();
    let mut s = shown();
    s.paused = s.paused.saturating_sub(1);
    if s.paused == 0
        && let Some(work) = s.current.as_mut()
        && work.bar.is_none()
    {
        work.bar = Some(draw(&work.message, work.started));
    }
    answer
}

/// A spinner for each component compiled while a command runs: `what`
/// says why (`first use`); `None` when spinners are off.
pub(super) fn compile_observer(json: bool, what: &'static str) -> Option<CompileObserver> {
    if display(json) != ProgressDisplay::Spinner {
        return None;
    }
    Some(Arc::new(move |event: CompileEvent<'_>| match event {
        CompileEvent::Started { plugin } => {
            let message = format!("compiling plugin {} ({what}) …", terminal_line(plugin));
            show("compile", &message, Instant::now());
        }
        CompileEvent::Finished { .. } => end("compile"),
    }))
}

/// A tool's progress as one line: `grep: 12,345 files seen, 96.5 MiB
/// read (40%)`, inert, the tool named once; the time the guest counted
/// is left out, the spinner shows its own.
pub(super) fn call_line(tool: &str, p: &ProgressEvent) -> String {
    let message = without_elapsed(&p.message);
    let tool = terminal_line(tool);
    let message = terminal_line(message);
    let mut line = if message.starts_with(&format!("{tool}:")) {
        message
    } else {
        format!("{tool}: {message}")
    };
    if let Some(f) = p.fraction {
        line.push_str(&format!(" ({:.0}%)", f * 100.0));
    }
    line
}

/// `message` without a trailing `, 1.5 s` (the SDK's walk progress).
fn without_elapsed(message: &str) -> &str {
    let Some((head, tail)) = message.rsplit_once(", ") else {
        return message;
    };
    let is_secs = tail
        .strip_suffix(" s")
        .is_some_and(|n| !n.is_empty() && n.chars().all(|c| c.is_ascii_digit() || c == '.'));
    if is_secs { head } else { message }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::base::Limits;
    use crate::capability::Grant;
    use crate::policy::{DecidedBy, Decision, Mode, Verdict};

    /// Answers once, noting whether a spinner was drawn while it asked.
    struct Watching(Mutex<Option<bool>>);

    impl Approver for Watching {
        fn approve(&self, _: &ApprovalRequest) -> ApprovalResponse {
            let drawn = shown().current.as_ref().is_some_and(|w| w.bar.is_some());
            *self.0.lock().unwrap() = Some(drawn);
            ApprovalResponse::AllowOnce
        }
    }

    #[test]
    fn the_spinner_steps_aside_while_the_prompt_asks_and_returns_after() {
        show("call 0", "grep: 10 files seen", Instant::now());
        let watching = Arc::new(Watching(Mutex::new(None)));
        let req = ApprovalRequest {
            call_id: "c".into(),
            tool: "write_file".into(),
            plugin: "fs".into(),
            input: serde_json::json!({}),
            policy: "p".into(),
            decision: Decision {
                verdict: Verdict::Ask,
                by: DecidedBy::Mode(Mode::Ask),
                reason: None,
                parts: Vec::new(),
            },
            grant: Grant::none(),
            limits: Limits::default(),
            rationale: None,
            network: Vec::new(),
        };
        let answer = Pausing(watching.clone()).approve(&req);
        assert!(matches!(answer, ApprovalResponse::AllowOnce));
        assert_eq!(
            *watching.0.lock().unwrap(),
            Some(false),
            "hidden while asking"
        );
        assert!(
            shown().current.as_ref().is_some_and(|w| w.bar.is_some()),
            "drawn again after"
        );
        end("call 0");
        assert!(shown().current.is_none());
    }

    #[test]
    fn only_an_able_terminal_gets_a_spinner() {
        use ProgressDisplay::*;
        assert_eq!(choose(false, true, true, false), Spinner);
        assert_eq!(choose(false, true, true, true), Lines);
        assert_eq!(choose(true, true, true, false), Off);
        assert_eq!(choose(false, false, true, false), Off);
        assert_eq!(choose(false, true, false, false), Off);
        assert_eq!(choose(false, true, false, true), Off);
    }

    #[test]
    fn a_call_line_names_the_tool_once_and_drops_the_guests_clock() {
        let p = |message: &str, fraction| ProgressEvent {
            message: message.into(),
            fraction,
        };
        assert_eq!(
            call_line(
                "grep",
                &p("grep: 12,345 files seen, 3.0 MiB read, 1.5 s", None)
            ),
            "grep: 12,345 files seen, 3.0 MiB read"
        );
        assert_eq!(
            call_line("progress", &p("step 1 of 4", Some(0.25))),
            "progress: step 1 of 4 (25%)"
        );
        assert_eq!(
            call_line("shell", &p("built 3 crates, done s", None)),
            "shell: built 3 crates, done s"
        );
        assert_eq!(
            call_line("x", &p("\x1b[2K\rspoof", None)),
            "x: \\x1b[2K\\rspoof"
        );
    }
}
