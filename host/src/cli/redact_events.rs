//! Keeping the secrets this process resolved out of the events a run
//! shows, on the terminal and as `--json` lines.
//!
//! Invariant: every event reaches the renderer only through
//! [`EventRedactor::pass`]; streamed text and reasoning go through a
//! [`StreamRedactor`] each (a key split across two deltas is still
//! caught), everything else through [`secrets::redact_json`].

use crate::agent::AgentEvent;
use crate::base::secrets::{self, StreamRedactor};

/// Redacts a run's events, in order.
#[derive(Debug, Default)]
pub(super) struct EventRedactor {
    text: StreamRedactor,
    reasoning: StreamRedactor,
}

impl EventRedactor {
    /// The events to show for `ev`: streamed text may be held back (and
    /// come out with a later event), every other event comes out whole.
    pub(super) fn pass(&mut self, ev: &AgentEvent) -> Vec<AgentEvent> {
        match ev {
            AgentEvent::TextDelta { text } => {
                delta(self.text.push(text), |text| AgentEvent::TextDelta { text })
            }
            AgentEvent::Reasoning { text } => delta(self.reasoning.push(text), |text| {
                AgentEvent::Reasoning { text }
            }),
            AgentEvent::SessionStarted { .. }
            | AgentEvent::TurnStarted { .. }
            | AgentEvent::Retrying { .. }
            | AgentEvent::ToolCall { .. }
            | AgentEvent::ToolDecision { .. }
            | AgentEvent::ToolProgress { .. }
            | AgentEvent::ToolResult { .. }
            | AgentEvent::InstructionsAdded { .. }
            | AgentEvent::GuidanceAdded { .. }
            | AgentEvent::Compacted { .. }
            | AgentEvent::PlanUpdated { .. }
            | AgentEvent::TurnCompleted { .. }
            | AgentEvent::Warning { .. }
            | AgentEvent::Interrupted
            | AgentEvent::Finished { .. } => {
                let mut out = delta(self.reasoning.finish(), |text| AgentEvent::Reasoning {
                    text,
                });
                out.extend(delta(self.text.finish(), |text| AgentEvent::TextDelta {
                    text,
                }));
                out.push(redacted(ev));
                out
            }
        }
    }
}

fn delta(text: String, make: impl FnOnce(String) -> AgentEvent) -> Vec<AgentEvent> {
    match text.is_empty() {
        true => Vec::new(),
        false => vec![make(text)],
    }
}

/// `ev` with every registered secret replaced in its strings.
fn redacted(ev: &AgentEvent) -> AgentEvent {
    if !secrets::any() {
        return ev.clone();
    }
    serde_json::to_vec(ev)
        .ok()
        .and_then(|line| secrets::redact_json(&line))
        .and_then(|clean| serde_json::from_slice(&clean).ok())
        .unwrap_or_else(|| ev.clone())
}
