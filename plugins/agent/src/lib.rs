//! Warden's built-in agent tools: `update_plan` shows the model's plan to
//! the user, `ask_user` asks the user a question and waits for the answer.
//!
//! Both go through the host's `warden:tool/interaction`: the host checks
//! the plan (at most one step in progress) and the question, and decides
//! who answers (the terminal, an MCP client, or no one). An answer is the
//! user's words for the model, never a permission.

use serde::Deserialize;
use warden_sdk::interaction::{self, Answer, PlanStep, StepStatus};
use warden_sdk::{
    Annotations, Context, Output, Tool, ToolError, register,
    serde_json::{Value, json},
};

register!(UpdatePlan, AskUser);

/// The `update_plan` tool.
pub struct UpdatePlan;

/// One step as the model writes it.
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Step {
    step: String,
    status: Status,
}

/// A step's status as the model writes it.
#[derive(Deserialize, Clone, Copy)]
#[serde(rename_all = "snake_case")]
pub enum Status {
    Pending,
    InProgress,
    Done,
}

/// Input of `update_plan`.
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
pub struct PlanInput {
    plan: Vec<Step>,
    #[serde(default)]
    explanation: Option<String>,
}

impl Tool for UpdatePlan {
    type Input = PlanInput;
    const NAME: &'static str = "update_plan";
    const DESCRIPTION: &'static str = "Show the user your plan for the task: a short list of \
        steps, each pending, in_progress or done (at most one in_progress). Send the whole plan \
        each time; it replaces the previous one. Use it for tasks of several steps, and update \
        it as steps start and finish.";
    const ANNOTATIONS: Annotations = Annotations::READ_ONLY;

    fn input_schema(&self) -> Value {
        json!({
            "type": "object",
            "properties": {
                "plan": {
                    "type": "array",
                    "maxItems": 50,
                    "items": {
                        "type": "object",
                        "properties": {
                            "step": {"type": "string", "minLength": 1, "maxLength": 500},
                            "status": {"type": "string", "enum": ["pending", "in_progress", "done"]}
                        },
                        "required": ["step", "status"],
                        "additionalProperties": false
                    }
                },
                "explanation": {
                    "type": "string",
                    "description": "Optional: why the plan changed, in one sentence."
                }
            },
            "required": ["plan"],
            "additionalProperties": false
        })
    }

    fn call(&self, input: PlanInput, _cx: &Context) -> Result<Output, ToolError> {
        let steps: Vec<PlanStep> = input
            .plan
            .iter()
            .map(|s| PlanStep {
                step: s.step.clone(),
                status: match s.status {
                    Status::Pending => StepStatus::Pending,
                    Status::InProgress => StepStatus::InProgress,
                    Status::Done => StepStatus::Done,
                },
            })
            .collect();
        interaction::update_plan(&steps)?;
        let done = input
            .plan
            .iter()
            .filter(|s| matches!(s.status, Status::Done))
            .count();
        let mut text = format!("Plan updated: {done} of {} steps done.", steps.len());
        if let Some(why) = input.explanation.filter(|w| !w.trim().is_empty()) {
            text.push_str(&format!(" ({why})"));
        }
        let structured: Vec<Value> = input
            .plan
            .iter()
            .map(|s| {
                json!({"step": s.step, "status": match s.status {
                    Status::Pending => "pending",
                    Status::InProgress => "in_progress",
                    Status::Done => "done",
                }})
            })
            .collect();
        Ok(Output::text(text).with_structured(json!({ "plan": structured })))
    }
}

/// The `ask_user` tool.
pub struct AskUser;

/// Input of `ask_user`.
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
pub struct AskInput {
    question: String,
    #[serde(default)]
    choices: Vec<String>,
}

impl Tool for AskUser {
    type Input = AskInput;
    const NAME: &'static str = "ask_user";
    const DESCRIPTION: &'static str = "Ask the user a question and wait for the answer, when you \
        cannot go on without their decision. Offer `choices` when the answer is one of a few; \
        the user may still answer something else. When no one can answer (an unattended run), \
        the result says so: then go on with the safest reasonable choice, saying what you \
        assumed, or stop and explain what you need.";
    const ANNOTATIONS: Annotations = Annotations::READ_ONLY;

    fn input_schema(&self) -> Value {
        json!({
            "type": "object",
            "properties": {
                "question": {"type": "string", "minLength": 1, "maxLength": 2000},
                "choices": {
                    "type": "array",
                    "maxItems": 10,
                    "items": {"type": "string", "minLength": 1, "maxLength": 500},
                    "description": "Optional suggested answers."
                }
            },
            "required": ["question"],
            "additionalProperties": false
        })
    }

    fn call(&self, input: AskInput, _cx: &Context) -> Result<Output, ToolError> {
        match interaction::ask(&input.question, &input.choices) {
            Answer::Answered(answer) => Ok(Output::text(format!("The user answered: {answer}"))
                .with_structured(json!({"answered": true, "answer": answer}))),
            Answer::Unanswered(reason) => Ok(Output::text(format!(
                "No one can answer this question: {reason}. Do not ask again; go on with the \
                 safest reasonable choice and say what you assumed, or stop and explain what \
                 you need."
            ))
            .with_structured(json!({"answered": false, "reason": reason}))),
        }
    }
}
