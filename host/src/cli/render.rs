//! Showing a run's events: streamed for a human, as JSON lines, or only
//! the final answer.
//!
//! For a human, assistant text goes to stdout and everything else to
//! stderr: reasoning dimmed (when stderr takes styles, see `colour`), one
//! line per tool call, its progress (a spinner on a terminal, see
//! `progress`; nothing in a pipe) and its result.
//! Everything a model, a plugin or a provider supplied is made inert for a
//! terminal first: streamed text through a [`TerminalStream`] each, every
//! other field as one line. JSON lines are serde's, never altered.

use std::collections::HashMap;
use std::time::{Duration, Instant};

use super::RunArgs;
use super::colour::{Style, paint};
use super::progress::{self, ProgressDisplay};
use super::redact_events::EventRedactor;
use crate::agent::AgentEvent;
use crate::approval::Approval;
use crate::base::{ProgressEvent, TerminalStream, Verbosity, terminal_line, terminal_text};
use crate::policy::{DecidedBy, Verdict};
use crate::protocol::{StepStatus, plan_lines};

/// The shortest time between two progress lines of one call, for a human.
const HUMAN_PROGRESS_MS: u64 = 1000;

/// How events are shown.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Output {
    /// Streaming text on stdout, tool lines and status on stderr.
    Human,
    /// One JSON event per line on stdout.
    Json,
    /// Only the final answer, on stdout.
    Print,
}

impl Output {
    pub(super) fn of(args: &RunArgs) -> Output {
        if args.json {
            Output::Json
        } else if args.print {
            Output::Print
        } else {
            Output::Human
        }
    }
}

pub(super) struct Renderer {
    output: Output,
    /// Assistant text was printed without a final newline.
    mid_line: bool,
    /// Reasoning was printed (on stderr) without a final newline.
    thinking: bool,
    /// The assistant's text, as it streams.
    text: TerminalStream,
    /// The reasoning, as it streams.
    reasoning: TerminalStream,
    /// Decisions waiting for their call's result line.
    decisions: HashMap<String, String>,
    /// Each running call's tool, and when its last progress line was shown.
    running: HashMap<String, (String, Option<u64>)>,
    /// Every event passes through it first.
    redactor: EventRedactor,
    /// `Quiet` shows a human only the answer and a failure.
    verbosity: Verbosity,
    /// How a human sees a call's progress.
    display: ProgressDisplay,
}

impl Renderer {
    pub(super) fn new(output: Output, verbosity: Verbosity) -> Renderer {
        Renderer {
            output,
            mid_line: false,
            thinking: false,
            text: TerminalStream::new(),
            reasoning: TerminalStream::new(),
            decisions: HashMap::new(),
            running: HashMap::new(),
            redactor: EventRedactor::default(),
            verbosity,
            display: match output {
                Output::Human => progress::display(false),
                Output::Json | Output::Print => ProgressDisplay::Off,
            },
        }
    }

    /// Show `ev`, every secret this process resolved redacted.
    pub(super) fn show(&mut self, ev: &AgentEvent) {
        for ev in self.redactor.pass(ev) {
            self.show_redacted(&ev);
        }
    }

    fn show_redacted(&mut self, ev: &AgentEvent) {
        match self.output {
            Output::Json => {
                if let Ok(line) = serde_json::to_string(ev) {
                    outln!("{line}");
                }
            }
            Output::Print => {
                if let AgentEvent::Finished { answer, reason, .. } = ev {
                    match answer {
                        Some(a) => outln!("{}", terminal_text(a)),
                        None => errln!("warden: {}", terminal_text(&reason.to_string())),
                    }
                }
            }
            Output::Human => self.human(ev),
        }
    }

    fn end_line(&mut self) {
        self.end_text();
        self.end_thinking();
    }

    /// End the assistant's text, and its line.
    fn end_text(&mut self) {
        let held = self.text.finish();
        if !held.is_empty() {
            out!("{held}");
            self.mid_line = true;
        }
        if self.mid_line {
            outln!();
            self.mid_line = false;
        }
    }

    fn end_thinking(&mut self) {
        let held = self.reasoning.finish();
        if !held.is_empty() {
            self.write_reasoning(&held);
        }
        if self.thinking {
            errln!();
            self.thinking = false;
        }
    }

    fn reasoning(&mut self, text: &str) {
        self.end_text();
        let text = self.reasoning.push(text);
        if !text.is_empty() {
            self.write_reasoning(&text);
        }
    }

    /// Reasoning already made inert, dimmed when stderr takes styles.
    fn write_reasoning(&mut self, text: &str) {
        errw!("{}", paint(Style::Dim, text));
        self.thinking = !text.ends_with('\n');
    }

    fn human(&mut self, ev: &AgentEvent) {
        if self.verbosity == Verbosity::Quiet {
            return self.quiet(ev);
        }
        match ev {
            AgentEvent::ToolProgress {
                call_id,
                message,
                fraction,
                elapsed_ms,
            } => self.progress(call_id, message, *fraction, *elapsed_ms),
            AgentEvent::ToolResult { call_id, .. } => {
                progress::end(call_id);
                self.human_line(ev);
            }
            _ => progress::suspend(|| self.human_line(ev)),
        }
    }

    /// Everything but progress, for a human.
    fn human_line(&mut self, ev: &AgentEvent) {
        match ev {
            AgentEvent::SessionStarted {
                session_id,
                resumed,
                provider,
                model,
                policy,
                workspace,
                instructions,
                overlay,
            } => {
                let verb = if *resumed { "resuming" } else { "session" };
                let mut line = format!(
                    "{verb} {session_id} · {provider} · model {model} · policy {policy} · {workspace}"
                );
                if let Some(id) = overlay {
                    line.push_str(&format!(" · review overlay {id}"));
                }
                errln!("warden: {}", terminal_line(&line));
                if !instructions.is_empty() {
                    errln!(
                        "warden: project instructions: {}",
                        terminal_line(&instructions.join(", "))
                    );
                }
            }
            AgentEvent::TurnStarted { .. } | AgentEvent::TurnCompleted { .. } => {}
            AgentEvent::TextDelta { text } => {
                self.end_thinking();
                let text = self.text.push(text);
                if !text.is_empty() {
                    out!("{text}");
                    self.mid_line = !text.ends_with('\n');
                }
            }
            AgentEvent::Reasoning { text } => self.reasoning(text),
            AgentEvent::Retrying {
                attempt,
                delay_ms,
                reason,
            } => {
                self.end_line();
                errln!(
                    "warden: retry {attempt} in {delay_ms} ms: {}",
                    terminal_line(reason)
                );
            }
            AgentEvent::ToolCall {
                call_id,
                tool,
                arguments,
                rationale,
            } => {
                self.end_line();
                self.running.insert(call_id.clone(), (tool.clone(), None));
                let mut args = arguments.to_string();
                if args.len() > 160 {
                    let cut = (0..=157)
                        .rev()
                        .find(|i| args.is_char_boundary(*i))
                        .unwrap_or(0);
                    args.truncate(cut);
                    args.push('…');
                }
                errln!("→ {} {}", terminal_line(tool), terminal_line(&args));
                if let Some(r) = rationale {
                    errln!("  why: {}", terminal_line(r));
                }
            }
            AgentEvent::ToolDecision {
                call_id,
                verdict,
                by,
                approval,
                ..
            } => {
                let policy = match by {
                    DecidedBy::Rule { name, .. } => format!("rule {name}"),
                    DecidedBy::Mode(mode) => format!("{mode} mode"),
                };
                // Who really decided: after an ask, the user or their grant.
                let label = match (verdict, approval) {
                    (Verdict::Allow, _) => format!("allowed by {policy}"),
                    (Verdict::Ask, Some(Approval::UserOnce | Approval::UserSession { .. })) => {
                        "approved by you".into()
                    }
                    (Verdict::Ask, Some(Approval::SessionGrant { .. })) => {
                        "approved by a grant you gave this session".into()
                    }
                    (Verdict::Ask, Some(Approval::UserDenied { .. })) => "refused by you".into(),
                    (Verdict::Ask, Some(Approval::Policy | Approval::Unanswered { .. }) | None) => {
                        format!("not approved ({policy} asks)")
                    }
                    (Verdict::Deny, _) => format!("denied by {policy}"),
                };
                self.decisions.insert(call_id.clone(), label);
            }
            AgentEvent::ToolProgress { .. } => {}
            AgentEvent::ToolResult {
                call_id,
                tool,
                outcome,
                summary,
                duration_ms,
            } => {
                self.end_line();
                self.running.remove(call_id);
                let summary = summary.trim();
                let mark = match outcome.as_str() {
                    "success" => paint(Style::Green, "✓"),
                    "denied" => paint(Style::Yellow, "⊘"),
                    "cancelled" => paint(Style::Yellow, "⨯"),
                    _ => paint(Style::Red, "✗"),
                };
                let decision = self
                    .decisions
                    .remove(call_id)
                    .map(|d| format!(" [{d}]"))
                    .unwrap_or_default();
                let line = format!("{tool}{decision} {summary}");
                errln!("{mark} {} ({duration_ms} ms)", terminal_line(&line));
            }
            AgentEvent::Warning { message } => {
                self.end_line();
                errln!(
                    "warden: {} {}",
                    paint(Style::Yellow, "warning:"),
                    terminal_line(message)
                );
            }
            AgentEvent::Interrupted => {
                self.end_line();
                errln!("warden: interrupting; press Ctrl-C again to exit at once");
            }
            // In `--json` alone: the notes are the plugin's, for the model.
            AgentEvent::GuidanceAdded { .. } => {}
            AgentEvent::InstructionsAdded { file, .. } => {
                self.end_line();
                errln!("warden: project instructions: {}", terminal_line(file));
            }
            AgentEvent::PlanUpdated { call_id, steps } => {
                self.end_line();
                let done = steps
                    .iter()
                    .filter(|s| s.status == StepStatus::Done)
                    .count();
                let restored = if call_id.is_none() { ", restored" } else { "" };
                errln!("plan ({done}/{} done{restored}):", steps.len());
                for line in plan_lines(steps) {
                    errln!("  {}", terminal_line(&line));
                }
            }
            AgentEvent::Compacted {
                tokens_before,
                tokens_after,
                ..
            } => {
                self.end_line();
                errln!("warden: context compacted, ~{tokens_before} → ~{tokens_after} tokens");
            }
            AgentEvent::Finished {
                reason,
                turns,
                usage,
                ..
            } => {
                self.end_line();
                errln!(
                    "warden: {} · {turns} turns · {} tokens in, {} out",
                    terminal_line(&reason.to_string()),
                    usage.input_tokens,
                    usage.output_tokens
                );
            }
        }
    }

    /// With `-q`: the answer's text, and how the run ended unless it succeeded.
    fn quiet(&mut self, ev: &AgentEvent) {
        match ev {
            AgentEvent::TextDelta { text } => {
                let text = self.text.push(text);
                if !text.is_empty() {
                    out!("{text}");
                    self.mid_line = !text.ends_with('\n');
                }
            }
            // The text before a call ends its line, as it does unquieted.
            AgentEvent::ToolCall { .. } => self.end_text(),
            AgentEvent::Finished { reason, .. } => {
                self.end_text();
                if !reason.is_success() {
                    errln!("warden: {}", terminal_line(&reason.to_string()));
                }
            }
            AgentEvent::SessionStarted { .. }
            | AgentEvent::TurnStarted { .. }
            | AgentEvent::TurnCompleted { .. }
            | AgentEvent::Reasoning { .. }
            | AgentEvent::Retrying { .. }
            | AgentEvent::ToolDecision { .. }
            | AgentEvent::ToolProgress { .. }
            | AgentEvent::ToolResult { .. }
            | AgentEvent::Warning { .. }
            | AgentEvent::Interrupted
            | AgentEvent::InstructionsAdded { .. }
            | AgentEvent::GuidanceAdded { .. }
            | AgentEvent::PlanUpdated { .. }
            | AgentEvent::Compacted { .. } => {}
        }
    }

    /// A spinner on a terminal; where it cannot redraw its line,
    /// `  … grep: 1200 files (40%, 3.2 s)` at most once a second per call.
    fn progress(&mut self, call_id: &str, message: &str, fraction: Option<f32>, elapsed_ms: u64) {
        let Some((tool, last)) = self.running.get_mut(call_id) else {
            return;
        };
        match self.display {
            ProgressDisplay::Off => return,
            ProgressDisplay::Spinner => {
                let elapsed = Duration::from_millis(elapsed_ms);
                if elapsed >= progress::SHOW_AFTER {
                    let report = ProgressEvent {
                        message: message.to_string(),
                        fraction,
                    };
                    let started = Instant::now()
                        .checked_sub(elapsed)
                        .unwrap_or_else(Instant::now);
                    progress::show(call_id, &progress::call_line(tool, &report), started);
                }
                return;
            }
            ProgressDisplay::Lines => {}
        }
        if last.is_some_and(|at| elapsed_ms.saturating_sub(at) < HUMAN_PROGRESS_MS) {
            return;
        }
        *last = Some(elapsed_ms);
        let tool = terminal_line(tool);
        let message = terminal_line(message);
        self.end_line();
        let secs = elapsed_ms as f64 / 1000.0;
        match fraction {
            Some(f) => errln!("  … {tool}: {message} ({:.0}%, {secs:.1} s)", f * 100.0),
            None => errln!("  … {tool}: {message} ({secs:.1} s)"),
        }
    }
}
