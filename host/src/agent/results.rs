//! What a turn leaves behind: each finished call becomes a tool message,
//! events and session records (its output cut to fit the context, the
//! full text saved beside the session; the plan it published and the
//! questions it asked), and the turn is closed.
//!
//! Invariant: every finished call yields exactly one tool message, in the
//! order the calls were issued.

use crate::protocol::ToolOutcome;
use crate::provider::{Message, Usage};

use super::context;
use super::scheduler::{self, FinishedCall};
use super::session::{CallRecord, Record, SessionWriter};
use super::stop::Alarm;
use super::turn::RunState;
use super::{Agent, AgentEvent, SessionError, StopReason};

impl Agent {
    /// Turn finished calls into tool messages, events and records.
    pub(super) fn results(
        &self,
        session: &mut SessionWriter,
        messages: &mut Vec<Message>,
        finished: Vec<FinishedCall>,
        run: &mut RunState,
    ) -> Result<(), SessionError> {
        let failed = finished.iter().filter(|f| scheduler::failed(f)).count();
        if let Some(Alarm::Errors(count)) = run.watchdog.turn(finished.len(), failed)
            && run.stop.is_none()
        {
            run.stop = Some(StopReason::RepeatedErrors { count });
        }
        for f in finished {
            let id = f.prepared.call.id.clone();
            let decision = f.result.as_ref().and_then(|r| r.decision.clone());
            let approval = f.result.as_ref().and_then(|r| r.approval.clone());
            if let Some(d) = &decision {
                (self.events)(AgentEvent::ToolDecision {
                    call_id: id.clone(),
                    verdict: d.verdict,
                    by: d.by.clone(),
                    reason: d.reason.clone(),
                    approval,
                });
            }
            let full = f.outcome.model_text();
            let max = self.config.context.tool_output_bytes;
            let (mut content, full_output) = if full.len() > max {
                let path = session.save_output(&id, &full)?;
                let shown = format!(
                    "{}\n[output cut to fit the context: {} bytes in all; the full text is in {}]",
                    context::cut_text(&full, max),
                    full.len(),
                    path.display()
                );
                (shown, Some(path.display().to_string()))
            } else {
                (full, None)
            };
            let instructions = &self.config.instructions;
            for (file, text) in instructions.just_in_time(&f.prepared.input, messages) {
                content.push_str(&text);
                (self.events)(AgentEvent::InstructionsAdded {
                    call_id: id.clone(),
                    file: instructions.shown(&file.path),
                });
            }
            let notes = (self.catalog.find_tool(&f.prepared.call.name))
                .and_then(|(entry, _)| entry.meta.manifest.guidance.get(&f.prepared.call.name));
            if let Some(text) =
                notes.and_then(|n| super::tool_guidance(&f.prepared.call.name, n, messages))
            {
                content.push_str(&text);
                (self.events)(AgentEvent::GuidanceAdded {
                    call_id: id.clone(),
                    tool: f.prepared.call.name.clone(),
                });
            }
            let done = f.result.as_ref().and_then(|r| r.report.as_ref());
            if let Some(steps) = done.and_then(|r| r.interaction.plan.as_ref()) {
                (self.events)(AgentEvent::PlanUpdated {
                    call_id: Some(id.clone()),
                    steps: steps.clone(),
                });
            }
            (self.events)(AgentEvent::ToolResult {
                call_id: id.clone(),
                tool: f.prepared.call.name.clone(),
                outcome: f.outcome.label().to_string(),
                summary: content
                    .lines()
                    .next()
                    .unwrap_or("")
                    .chars()
                    .take(200)
                    .collect(),
                duration_ms: f.duration_ms,
            });
            let is_error = match &f.outcome {
                ToolOutcome::Success(_) => false,
                ToolOutcome::Error(_) | ToolOutcome::Cancelled | ToolOutcome::Denied { .. } => true,
            };
            session.append(&Record::Call(CallRecord {
                call_id: id.clone(),
                tool: f.prepared.call.name.clone(),
                arguments: f.prepared.call.arguments.clone(),
                rationale: f.prepared.rationale.clone(),
                decision,
                outcome: f.outcome.clone(),
                duration_ms: f.duration_ms,
                full_output,
            }))?;
            if let Some(report) = f.result.as_ref().and_then(|r| r.report.as_ref()) {
                let done = &report.interaction;
                if let Some(steps) = &done.plan {
                    session.append(&Record::Plan {
                        call_id: id.clone(),
                        steps: steps.clone(),
                    })?;
                }
                for asked in &done.asked {
                    session.append(&Record::Asked {
                        call_id: id.clone(),
                        question: asked.question.clone(),
                        answer: asked.answer.clone(),
                    })?;
                }
            }
            let message = Message::Tool {
                call_id: id,
                name: f.prepared.call.name,
                content,
                is_error,
            };
            session.append(&Record::Message {
                message: message.clone(),
            })?;
            messages.push(message);
        }
        Ok(())
    }

    pub(super) fn end_turn(
        &self,
        session: &mut SessionWriter,
        run: &RunState,
        usage: Option<Usage>,
    ) -> Result<(), SessionError> {
        session.append(&Record::TurnEnd {
            turn: run.turn,
            usage,
        })?;
        session.sync_soon()?;
        (self.events)(AgentEvent::TurnCompleted {
            turn: run.turn,
            usage,
        });
        Ok(())
    }
}
