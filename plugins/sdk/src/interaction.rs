//! Talking with whoever runs the agent: the plan shown to the user, a
//! question to the user, and the workspace's memory notes.
//!
//! A call reaches this only when its grant includes interaction (the
//! manifest declares `interaction = true`, or `memory = true` for the
//! notes, and the policy does not turn them off); otherwise the first
//! call fails the call, naming the interface. The host checks every plan
//! and question, redacts secrets from notes, and caps their size.

use crate::bindings::interaction as wit;
use crate::{ErrorKind, ToolError};

pub use wit::{Answer, PlanStep, StepStatus};

fn error(e: wit::InteractionError) -> ToolError {
    match e {
        wit::InteractionError::Invalid(m) => ToolError::invalid_input(m),
        wit::InteractionError::LimitExceeded(m) => ToolError::new(ErrorKind::LimitExceeded, m),
        wit::InteractionError::Denied(m) => ToolError::permission_denied(m),
        wit::InteractionError::Io(m) => ToolError::io(m),
    }
}

/// Replace the plan shown to the user (at most one step in progress).
pub fn update_plan(steps: &[PlanStep]) -> Result<(), ToolError> {
    wit::update_plan(steps).map_err(error)
}

/// Ask the user `text`, suggesting `choices`, and wait for the answer.
pub fn ask(text: &str, choices: &[String]) -> Answer {
    wit::ask(&wit::Question {
        text: text.to_string(),
        choices: choices.to_vec(),
    })
}

/// The workspace's memory notes (empty when there are none).
pub fn memory_read() -> Result<String, ToolError> {
    wit::memory_read().map_err(error)
}

/// Replace the workspace's memory notes; returns them as stored (redacted).
pub fn memory_write(notes: &str) -> Result<String, ToolError> {
    wit::memory_write(notes).map_err(error)
}
