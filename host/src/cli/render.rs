//! Showing a run's events: streamed for a human, as JSON lines, or only
//! the final answer.
//!
//! For a human, assistant text goes to stdout and everything else to
//! stderr: reasoning dimmed (when stderr is a terminal), one line per tool
//! call, its progress (at most one line a second per call) and its result.

use std::collections::HashMap;
use std::io::{IsTerminal, Write};

use super::RunArgs;
use super::redact_events::EventRedactor;
use crate::agent::AgentEvent;
use crate::policy::Verdict;

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
    /// Whether stderr takes ANSI styles.
    styled: bool,
    /// Decisions waiting for their call's result line.
    decisions: HashMap<String, String>,
    /// Each running call's tool, and when its last progress line was shown.
    running: HashMap<String, (String, Option<u64>)>,
    /// Every event passes through it first.
    redactor: EventRedactor,
}

impl Renderer {
    pub(super) fn new(output: Output) -> Renderer {
        Renderer {
            output,
            mid_line: false,
            thinking: false,
            styled: std::io::stderr().is_terminal(),
            decisions: HashMap::new(),
            running: HashMap::new(),
            redactor: EventRedactor::default(),
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
                    let mut out = std::io::stdout().lock();
                    let _ = writeln!(out, "{line}");
                    let _ = out.flush();
                }
            }
            Output::Print => {
                if let AgentEvent::Finished { answer, reason, .. } = ev {
                    match answer {
                        Some(a) => println!("{a}"),
                        None => eprintln!("warden: {reason}"),
                    }
                }
            }
            Output::Human => self.human(ev),
        }
    }

    fn end_line(&mut self) {
        if self.mid_line {
            println!();
            self.mid_line = false;
        }
        self.end_thinking();
    }

    fn end_thinking(&mut self) {
        if self.thinking {
            eprintln!();
            self.thinking = false;
        }
    }

    fn reasoning(&mut self, text: &str) {
        if self.mid_line {
            println!();
            self.mid_line = false;
        }
        let mut err = std::io::stderr().lock();
        let _ = if self.styled {
            write!(err, "\x1b[2m{text}\x1b[0m")
        } else {
            write!(err, "{text}")
        };
        let _ = err.flush();
        self.thinking = !text.ends_with('\n');
    }

    fn human(&mut self, ev: &AgentEvent) {
        match ev {
            AgentEvent::SessionStarted {
                session_id,
                resumed,
                provider,
                model,
                policy,
                workspace,
            } => {
                let verb = if *resumed { "resuming" } else { "session" };
                eprintln!(
                    "warden: {verb} {session_id} · {provider} · model {model} · policy {policy} · {workspace}"
                );
            }
            AgentEvent::TurnStarted { .. } | AgentEvent::TurnCompleted { .. } => {}
            AgentEvent::TextDelta { text } => {
                self.end_thinking();
                print!("{text}");
                let _ = std::io::stdout().flush();
                self.mid_line = !text.ends_with('\n');
            }
            AgentEvent::Reasoning { text } => self.reasoning(text),
            AgentEvent::Retrying {
                attempt,
                delay_ms,
                reason,
            } => {
                self.end_line();
                eprintln!("warden: retry {attempt} in {delay_ms} ms: {reason}");
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
                eprintln!("→ {tool} {args}");
                if let Some(r) = rationale {
                    eprintln!("  why: {r}");
                }
            }
            AgentEvent::ToolDecision {
                call_id,
                verdict,
                by,
                approval,
                ..
            } => {
                let word = match (verdict, approval.as_deref()) {
                    (Verdict::Allow, _) => "allowed",
                    (Verdict::Ask, Some("user_once" | "user_session" | "session_grant")) => {
                        "approved"
                    }
                    (Verdict::Ask, _) => "not approved",
                    (Verdict::Deny, _) => "denied",
                };
                self.decisions
                    .insert(call_id.clone(), format!("{word} by {by}"));
            }
            AgentEvent::ToolProgress {
                call_id,
                message,
                fraction,
                elapsed_ms,
            } => self.progress(call_id, message, *fraction, *elapsed_ms),
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
                    "success" => "✓",
                    "denied" => "⊘",
                    "cancelled" => "⨯",
                    _ => "✗",
                };
                let decision = self
                    .decisions
                    .remove(call_id)
                    .map(|d| format!(" [{d}]"))
                    .unwrap_or_default();
                eprintln!("{mark} {tool}{decision} {summary} ({duration_ms} ms)");
            }
            AgentEvent::Warning { message } => {
                self.end_line();
                eprintln!("warden: warning: {message}");
            }
            AgentEvent::Interrupted => {
                self.end_line();
                eprintln!("warden: interrupting; press Ctrl-C again to exit at once");
            }
            AgentEvent::Compacted {
                tokens_before,
                tokens_after,
                ..
            } => {
                self.end_line();
                eprintln!("warden: context compacted, ~{tokens_before} → ~{tokens_after} tokens");
            }
            AgentEvent::Finished {
                reason,
                turns,
                usage,
                ..
            } => {
                self.end_line();
                eprintln!(
                    "warden: {reason} · {turns} turns · {} tokens in, {} out",
                    usage.input_tokens, usage.output_tokens
                );
            }
        }
    }

    /// `  … grep: 1200 files (40%, 3.2 s)`, at most once a second per call.
    fn progress(&mut self, call_id: &str, message: &str, fraction: Option<f32>, elapsed_ms: u64) {
        let Some((tool, last)) = self.running.get_mut(call_id) else {
            return;
        };
        if last.is_some_and(|at| elapsed_ms.saturating_sub(at) < HUMAN_PROGRESS_MS) {
            return;
        }
        *last = Some(elapsed_ms);
        let tool = tool.clone();
        self.end_line();
        let secs = elapsed_ms as f64 / 1000.0;
        match fraction {
            Some(f) => eprintln!("  … {tool}: {message} ({:.0}%, {secs:.1} s)", f * 100.0),
            None => eprintln!("  … {tool}: {message} ({secs:.1} s)"),
        }
    }
}
