//! The plan a resumed session gives back to the model.
//!
//! Invariant: the plan a resumed session restores is the last one a
//! committed turn recorded, and it reaches the model in the first message
//! of the new run.

use crate::protocol::{PlanStep, plan_lines};

/// The task of a resumed run, with the plan it restores for the model.
pub fn with_restored_plan(task: &str, plan: &[PlanStep]) -> String {
    if plan.is_empty() {
        return task.to_string();
    }
    format!(
        "{task}\n\nYour plan so far (restored from the session; update it with update_plan):\n{}",
        plan_lines(plan).join("\n")
    )
}
