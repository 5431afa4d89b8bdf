//! `warden:tool/interaction` (0.2.1): a guest's plan, question and memory
//! notes, passed to whoever runs the call and recorded on its report.
//!
//! Invariant: linked only for a call whose grant includes interaction;
//! plans and questions are checked before anyone sees them, and memory is
//! refused (naming the policy key) unless the grant includes it.

use super::bindings::v0_2::interaction as wit;
use super::interaction_call::{AskRecord, MAX_QUESTIONS};
use super::state::CallState;
use crate::capability::MemoryError;
use crate::protocol::{
    AskAnswer, MAX_CHOICES, MAX_QUESTION_BYTES, MAX_STEP_BYTES, PlanStep, Question, StepStatus,
    validate_plan,
};

/// Why a worker (or a stale instance) cannot interact.
const NOT_HERE: &str = "this call has no one to interact with (workers cannot interact)";

impl wit::Host for CallState {
    fn update_plan(&mut self, steps: Vec<wit::PlanStep>) -> Result<(), wit::InteractionError> {
        let Some(state) = &mut self.interaction else {
            return Err(wit::InteractionError::Denied(NOT_HERE.into()));
        };
        let steps: Vec<PlanStep> = steps
            .into_iter()
            .map(|s| PlanStep {
                step: s.step,
                status: match s.status {
                    wit::StepStatus::Pending => StepStatus::Pending,
                    wit::StepStatus::InProgress => StepStatus::InProgress,
                    wit::StepStatus::Done => StepStatus::Done,
                },
            })
            .collect();
        validate_plan(&steps).map_err(|e| wit::InteractionError::Invalid(e.to_string()))?;
        state.setup.user.plan_updated(&state.call_id, &steps);
        state.report.plan = Some(steps);
        Ok(())
    }

    fn ask(&mut self, question: wit::Question) -> wit::Answer {
        let Some(state) = &mut self.interaction else {
            return wit::Answer::Unanswered(NOT_HERE.into());
        };
        let question = Question {
            text: question.text,
            choices: question.choices,
        };
        let answer = match question_problem(&question) {
            Some(problem) => AskAnswer::Unanswered {
                reason: format!("the question was not asked: {problem}"),
            },
            None if state.report.asked.len() >= MAX_QUESTIONS => AskAnswer::Unanswered {
                reason: format!("one call asks at most {MAX_QUESTIONS} questions"),
            },
            None => state.setup.user.ask(&state.call_id, &question),
        };
        state.report.asked.push(AskRecord {
            question,
            answer: answer.clone(),
        });
        match answer {
            AskAnswer::Answered { answer } => wit::Answer::Answered(answer),
            AskAnswer::Unanswered { reason } => wit::Answer::Unanswered(reason),
        }
    }

    fn memory_read(&mut self) -> Result<String, wit::InteractionError> {
        let Some(state) = &mut self.interaction else {
            return Err(wit::InteractionError::Denied(NOT_HERE.into()));
        };
        let notes = state.setup.notes.as_ref().ok_or_else(memory_denied)?;
        let text = notes.read().map_err(memory_error)?;
        state.report.memory_read = true;
        Ok(text)
    }

    fn memory_write(&mut self, text: String) -> Result<String, wit::InteractionError> {
        let Some(state) = &mut self.interaction else {
            return Err(wit::InteractionError::Denied(NOT_HERE.into()));
        };
        let notes = state.setup.notes.as_ref().ok_or_else(memory_denied)?;
        let stored = notes.write(&text).map_err(memory_error)?;
        state.report.memory_written_bytes = Some(stored.len() as u64);
        Ok(stored)
    }
}

fn memory_denied() -> wit::InteractionError {
    wit::InteractionError::Denied(
        "memory is not granted to this call (a policy sets `memory = false`, or Warden has no \
         data directory here)"
            .into(),
    )
}

fn memory_error(e: MemoryError) -> wit::InteractionError {
    let message = e.to_string();
    match e {
        MemoryError::TooLarge { .. } => wit::InteractionError::LimitExceeded(message),
        MemoryError::NotText { .. } | MemoryError::Io { .. } => wit::InteractionError::Io(message),
    }
}

/// What is wrong with `q`, if anything.
fn question_problem(q: &Question) -> Option<String> {
    if q.text.trim().is_empty() {
        return Some("it is empty".into());
    }
    if q.text.len() > MAX_QUESTION_BYTES {
        return Some(format!(
            "it is {} bytes; at most {MAX_QUESTION_BYTES} are allowed",
            q.text.len()
        ));
    }
    if q.choices.len() > MAX_CHOICES {
        return Some(format!(
            "it offers {} choices; at most {MAX_CHOICES} are allowed",
            q.choices.len()
        ));
    }
    if let Some(c) = q.choices.iter().find(|c| c.len() > MAX_STEP_BYTES) {
        return Some(format!(
            "a choice is {} bytes; at most {MAX_STEP_BYTES} are allowed",
            c.len()
        ));
    }
    None
}
