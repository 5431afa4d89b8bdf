//! `ask_user` through an MCP client: the question put to the user with
//! `elicitation/create` when the client declared it, else (and under
//! `warden mcp --non-interactive`) a result saying no one can answer.
//!
//! Invariant: an answer is only ever the text the client returned for
//! this question; a declined, dismissed, unreadable, cancelled or
//! timed-out question is unanswered, with the reason.

use rmcp::model::{ElicitRequestParams, ElicitResult, ElicitationAction, ElicitationSchema};
use serde_json::json;

use super::approve::{McpApprover, elicit};
use crate::protocol::{AskAnswer, Interaction, PlanStep, Question};

impl Interaction for McpApprover {
    fn plan_updated(&self, _call_id: &str, _steps: &[PlanStep]) {}

    fn ask(&self, _call_id: &str, question: &Question) -> AskAnswer {
        let unanswered = |reason: String| AskAnswer::Unanswered { reason };
        let (peer, runtime) = match self {
            McpApprover::Nobody { why } => return unanswered(format!("no one can answer: {why}")),
            McpApprover::Client { peer, runtime } => (peer, runtime),
        };
        let Some(params) = form(question) else {
            return unanswered("the question form could not be built".into());
        };
        match elicit(peer, runtime, params) {
            None => unanswered("the call was cancelled before the user answered".into()),
            Some(Err(e)) => unanswered(format!("the client could not be asked ({e})")),
            Some(Ok(answer)) => read(&answer),
        }
    }
}

/// The form put to the client: one text field, the choices suggested.
fn form(q: &Question) -> Option<ElicitRequestParams> {
    let suggested = match q.choices.is_empty() {
        true => "Your answer".to_string(),
        false => format!("Suggested: {}", q.choices.join(" | ")),
    };
    let schema = json!({
        "type": "object",
        "properties": {
            "answer": {"type": "string", "title": "Answer", "description": suggested}
        },
        "required": ["answer"]
    });
    let serde_json::Value::Object(schema) = schema else {
        return None;
    };
    Some(ElicitRequestParams::FormElicitationParams {
        meta: None,
        message: crate::base::terminal_text(&format!("The agent asks: {}", q.text)),
        requested_schema: ElicitationSchema::from_json_schema(schema).ok()?,
    })
}

/// The answer in the client's reply.
fn read(answer: &ElicitResult) -> AskAnswer {
    let text = answer
        .content
        .as_ref()
        .and_then(|c| c.get("answer"))
        .and_then(|a| a.as_str())
        .map(str::trim)
        .filter(|a| !a.is_empty());
    match (&answer.action, text) {
        (ElicitationAction::Accept, Some(text)) => AskAnswer::Answered {
            answer: text.to_string(),
        },
        (ElicitationAction::Accept, None) => AskAnswer::Unanswered {
            reason: "the user's answer was empty".into(),
        },
        (ElicitationAction::Decline, _) => AskAnswer::Unanswered {
            reason: "the user declined to answer".into(),
        },
        (ElicitationAction::Cancel, _) => AskAnswer::Unanswered {
            reason: "the user dismissed the question without answering".into(),
        },
        // A kind of answer newer than this server answers nothing.
        _ => AskAnswer::Unanswered {
            reason: "the client's reply held no answer".into(),
        },
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_an_accepted_non_empty_answer_answers() {
        let accept = |v| ElicitResult::new(ElicitationAction::Accept).with_content(v);
        assert_eq!(
            read(&accept(json!({"answer": " postgres "}))),
            AskAnswer::Answered {
                answer: "postgres".into()
            }
        );
        assert!(matches!(
            read(&accept(json!({"answer": ""}))),
            AskAnswer::Unanswered { .. }
        ));
        assert!(matches!(
            read(&ElicitResult::new(ElicitationAction::Decline)),
            AskAnswer::Unanswered { .. }
        ));
    }
}
