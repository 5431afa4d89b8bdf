//! What a tool's `warden:tool/interaction` calls carry to whoever runs the
//! agent (a plan, a question) and what comes back (an answer), and the
//! trait the caller implements to receive them.
//!
//! Invariant: a plan holds at most [`MAX_PLAN_STEPS`] steps, each at most
//! [`MAX_STEP_BYTES`] bytes, and at most one step in progress
//! ([`validate_plan`]); nothing here can change a policy or a grant.

use serde::{Deserialize, Serialize};

/// The most steps one plan holds.
pub const MAX_PLAN_STEPS: usize = 50;
/// The longest step, in bytes.
pub const MAX_STEP_BYTES: usize = 500;
/// The longest question, in bytes; each choice is held to [`MAX_STEP_BYTES`].
pub const MAX_QUESTION_BYTES: usize = 2000;
/// The most choices one question offers.
pub const MAX_CHOICES: usize = 10;

/// Where one step of a plan stands.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum StepStatus {
    /// Not started.
    Pending,
    /// Being worked on; at most one step at a time.
    InProgress,
    /// Finished.
    Done,
}

/// One step of a plan.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct PlanStep {
    /// What the step does, in one line.
    pub step: String,
    pub status: StepStatus,
}

/// A question for the user.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Question {
    pub text: String,
    /// Suggested answers; the user may answer something else.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub choices: Vec<String>,
}

/// What came of a question.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum AskAnswer {
    /// The user's answer.
    Answered { answer: String },
    /// No one can answer here, and why.
    Unanswered { reason: String },
}

/// Whoever runs the calls: the agent's terminal or `--json` stream, `tool
/// call`, an MCP client. Told of each plan a call publishes; asked each
/// question a call asks.
pub trait Interaction: Send + Sync {
    /// Call `call_id` replaced the plan with `steps` (already validated).
    fn plan_updated(&self, call_id: &str, steps: &[PlanStep]);
    /// Call `call_id` asks `question` (already validated); blocks until
    /// answered or known to be unanswerable.
    fn ask(&self, call_id: &str, question: &Question) -> AskAnswer;
}

/// No one to ask: plans go nowhere, every question is unanswered with
/// the reason given.
pub struct NoOneToAsk(pub String);

impl Interaction for NoOneToAsk {
    fn plan_updated(&self, _call_id: &str, _steps: &[PlanStep]) {}

    fn ask(&self, _call_id: &str, _question: &Question) -> AskAnswer {
        AskAnswer::Unanswered {
            reason: self.0.clone(),
        }
    }
}

/// Why a plan is refused.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum PlanError {
    #[error("the plan has {0} steps; at most {MAX_PLAN_STEPS} are allowed: merge steps")]
    TooManySteps(usize),
    #[error(
        "step {index} is {bytes} bytes; at most {MAX_STEP_BYTES} are allowed: say it in one line"
    )]
    StepTooLong { index: usize, bytes: usize },
    #[error("step {0} is empty: describe what it does")]
    EmptyStep(usize),
    #[error("steps {0} and {1} are both in_progress; at most one step may be in progress")]
    TwoInProgress(usize, usize),
}

/// Check `steps` against the plan's rules; indexes in errors count from 1.
pub fn validate_plan(steps: &[PlanStep]) -> Result<(), PlanError> {
    if steps.len() > MAX_PLAN_STEPS {
        return Err(PlanError::TooManySteps(steps.len()));
    }
    let mut in_progress = None;
    for (i, s) in steps.iter().enumerate() {
        let index = i + 1;
        if s.step.trim().is_empty() {
            return Err(PlanError::EmptyStep(index));
        }
        if s.step.len() > MAX_STEP_BYTES {
            return Err(PlanError::StepTooLong {
                index,
                bytes: s.step.len(),
            });
        }
        match (s.status, in_progress) {
            (StepStatus::InProgress, Some(first)) => {
                return Err(PlanError::TwoInProgress(first, index));
            }
            (StepStatus::InProgress, None) => in_progress = Some(index),
            (StepStatus::Pending | StepStatus::Done, _) => {}
        }
    }
    Ok(())
}

/// `steps` as compact lines: `[x] done`, `[>] in progress`, `[ ] pending`.
pub fn plan_lines(steps: &[PlanStep]) -> Vec<String> {
    steps
        .iter()
        .map(|s| {
            let mark = match s.status {
                StepStatus::Pending => "[ ]",
                StepStatus::InProgress => "[>]",
                StepStatus::Done => "[x]",
            };
            format!("{mark} {}", s.step)
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn step(text: &str, status: StepStatus) -> PlanStep {
        PlanStep {
            step: text.into(),
            status,
        }
    }

    #[test]
    fn a_plan_with_two_steps_in_progress_is_refused() {
        let ok = [
            step("read", StepStatus::Done),
            step("edit", StepStatus::InProgress),
            step("test", StepStatus::Pending),
        ];
        assert_eq!(validate_plan(&ok), Ok(()));
        let two = [
            step("a", StepStatus::InProgress),
            step("b", StepStatus::Pending),
            step("c", StepStatus::InProgress),
        ];
        assert_eq!(validate_plan(&two), Err(PlanError::TwoInProgress(1, 3)));
        assert_eq!(
            validate_plan(&[step(" ", StepStatus::Pending)]),
            Err(PlanError::EmptyStep(1))
        );
        let many = vec![step("s", StepStatus::Pending); MAX_PLAN_STEPS + 1];
        assert!(matches!(
            validate_plan(&many),
            Err(PlanError::TooManySteps(_))
        ));
    }
}
