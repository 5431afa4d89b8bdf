//! Pure data types shared by every layer: tool specs, call outcomes, errors.
//!
//! No I/O lives here. Every tool call ends in exactly one [`ToolOutcome`],
//! and consumers match it exhaustively, so a new outcome forces a decision
//! everywhere it is handled.

mod interaction;
mod outcome;
mod spec;

pub use interaction::{
    AskAnswer, Interaction, MAX_CHOICES, MAX_PLAN_STEPS, MAX_QUESTION_BYTES, MAX_STEP_BYTES,
    NoOneToAsk, PlanError, PlanStep, Question, StepStatus, plan_lines, validate_plan,
};
pub use outcome::{ErrorKind, ToolError, ToolOutcome, ToolOutput, hide_paths_in};
pub use spec::{Annotations, ToolName, ToolNameError, ToolSpec};
