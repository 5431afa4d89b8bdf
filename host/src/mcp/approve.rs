//! Asking an MCP client about a call the policy asks about, through
//! `elicitation/create`: allow once, allow for the session, or deny with a
//! message for the model.
//!
//! Invariants: only the client's answer to our question allows a call; a
//! client that cannot be asked (no elicitation, `--non-interactive`), a
//! question left unanswered past [`ANSWER_TIMEOUT`], a cancelled call, an
//! answer we cannot read and a dismissed form all refuse it, with a reason
//! naming the rule and how to allow the call. Nothing here waits on a
//! terminal.

use std::cell::RefCell;
use std::time::Duration;

use rmcp::RoleServer;
use rmcp::model::{ElicitRequestParams, ElicitResult, ElicitationAction, ElicitationSchema};
use rmcp::service::Peer;
use serde_json::json;

use crate::approval::{ApprovalRequest, ApprovalResponse, Approver, SessionGrantKind};
use crate::base::CancelToken;

/// How long a question may stay unanswered.
pub(super) const ANSWER_TIMEOUT: Duration = Duration::from_secs(600);

thread_local! {
    /// The cancel token of the call running on this thread.
    static CALL_CANCEL: RefCell<Option<CancelToken>> = const { RefCell::new(None) };
}

/// Run `f` (a pipeline run on a blocking thread) with `cancel` as the
/// token an approval question gives up on.
pub(super) fn with_call_cancel<R>(cancel: &CancelToken, f: impl FnOnce() -> R) -> R {
    CALL_CANCEL.with(|c| *c.borrow_mut() = Some(cancel.clone()));
    let out = f();
    CALL_CANCEL.with(|c| *c.borrow_mut() = None);
    out
}

/// The cancel token of the call running on this thread (a fresh one off it).
fn call_cancel() -> CancelToken {
    CALL_CANCEL.with(|c| c.borrow().clone()).unwrap_or_default()
}

/// Puts `params` to the client and waits for its answer: `None` when the
/// call running on this thread is cancelled first; a timeout error past
/// [`ANSWER_TIMEOUT`].
pub(super) fn elicit(
    peer: &Peer<RoleServer>,
    runtime: &tokio::runtime::Handle,
    params: ElicitRequestParams,
) -> Option<Result<ElicitResult, rmcp::ServiceError>> {
    let cancel = call_cancel();
    runtime.block_on(async {
        tokio::select! {
            r = peer.create_elicitation(params) => Some(r),
            _ = cancel.cancelled() => None,
            _ = tokio::time::sleep(ANSWER_TIMEOUT) => Some(Err(rmcp::ServiceError::Timeout {
                timeout: ANSWER_TIMEOUT,
            })),
        }
    })
}

/// Who answers asks (and the agent's questions, see `ask.rs`) in one MCP
/// session.
pub(super) enum McpApprover {
    /// The client declared form elicitation: ask it.
    Client {
        peer: Peer<RoleServer>,
        runtime: tokio::runtime::Handle,
    },
    /// No one can be asked; `why` says why.
    Nobody { why: String },
}

impl Approver for McpApprover {
    fn approve(&self, req: &ApprovalRequest) -> ApprovalResponse {
        let because = req
            .decision
            .reason
            .as_deref()
            .map(|r| format!(" ({r})"))
            .unwrap_or_default();
        let refuse = |why: &str| ApprovalResponse::Unanswered {
            reason: format!(
                "needs approval under {}{because}{}, but {why}; to allow it, add a rule that \
                 allows `{}` to policy {} (see `warden policy explain --policy {} {}`){}",
                req.asked_under(),
                crate::approval::reaching(req),
                req.tool,
                req.policy,
                req.policy,
                req.tool,
                crate::approval::pre_allow(req)
            ),
        };
        let (peer, runtime) = match self {
            McpApprover::Nobody { why } => return refuse(why),
            McpApprover::Client { peer, runtime } => (peer, runtime),
        };
        let Some(params) = question(req) else {
            return refuse("the approval form could not be built");
        };
        match elicit(peer, runtime, params) {
            None => refuse("the call was cancelled before the client answered"),
            Some(Err(e)) => refuse(&format!("the client could not be asked ({e})")),
            Some(Ok(answer)) => match read_answer(&answer) {
                Some(ApprovalResponse::AllowSession(_)) => {
                    ApprovalResponse::AllowSession(req.session_kind())
                }
                Some(other) => other,
                None => refuse("the client's answer chose no decision"),
            },
        }
    }
}

/// The form put to the client.
fn question(req: &ApprovalRequest) -> Option<ElicitRequestParams> {
    let because = req
        .decision
        .reason
        .as_deref()
        .map(|r| format!(": {r}"))
        .unwrap_or_default();
    let reaches = req
        .destinations()
        .iter()
        .map(|d| format!("It will reach: {d}\n"))
        .collect::<String>();
    let message = crate::base::terminal_text(&format!(
        "Allow the tool `{}` (plugin {})?\nAsked under {}{because}.\nArguments:\n{}\n{reaches}It may use: {}",
        req.tool,
        req.plugin,
        req.asked_under(),
        req.pretty_input(),
        req.grant_summary()
    ));
    let session_title = match req.session_kind() {
        SessionGrantKind::Destinations => {
            "Allow this tool to reach these destinations for the rest of the session"
        }
        SessionGrantKind::Fingerprint | SessionGrantKind::Pattern(_) => {
            "Allow this exact call for the rest of the session"
        }
    };
    let schema = json!({
        "type": "object",
        "properties": {
            "decision": {
                "type": "string",
                "title": "Decision",
                "oneOf": [
                    {"const": "allow_once", "title": "Allow once"},
                    {"const": "allow_session", "title": session_title},
                    {"const": "deny", "title": "Deny"}
                ]
            },
            "message": {
                "type": "string",
                "title": "Message to the model",
                "description": "Optional: why you deny, or what to do instead"
            }
        },
        "required": ["decision"]
    });
    let serde_json::Value::Object(schema) = schema else {
        return None;
    };
    let requested_schema = ElicitationSchema::from_json_schema(schema).ok()?;
    Some(ElicitRequestParams::FormElicitationParams {
        meta: None,
        message,
        requested_schema,
    })
}

/// The decision in the client's answer; `None` when it holds none we know.
fn read_answer(answer: &ElicitResult) -> Option<ApprovalResponse> {
    match answer.action {
        ElicitationAction::Decline => Some(ApprovalResponse::Deny { message: None }),
        ElicitationAction::Cancel => Some(ApprovalResponse::Unanswered {
            reason: "the user dismissed the approval question without answering; the call \
                     did not run"
                .into(),
        }),
        ElicitationAction::Accept => {
            let content = answer.content.as_ref()?;
            let message = content
                .get("message")
                .and_then(|m| m.as_str())
                .map(str::trim)
                .filter(|m| !m.is_empty())
                .map(str::to_string);
            match content.get("decision").and_then(|d| d.as_str())? {
                "allow_once" => Some(ApprovalResponse::AllowOnce),
                "allow_session" => Some(ApprovalResponse::AllowSession(
                    SessionGrantKind::Fingerprint,
                )),
                "deny" => Some(ApprovalResponse::Deny { message }),
                _ => None,
            }
        }
        // A kind of answer newer than this server allows nothing.
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn accept(content: serde_json::Value) -> ElicitResult {
        ElicitResult::new(ElicitationAction::Accept).with_content(content)
    }

    #[test]
    fn answers_map_to_decisions_and_anything_else_refuses() {
        assert_eq!(
            read_answer(&accept(json!({"decision": "allow_once"}))),
            Some(ApprovalResponse::AllowOnce)
        );
        assert_eq!(
            read_answer(&accept(json!({"decision": "allow_session"}))),
            Some(ApprovalResponse::AllowSession(
                SessionGrantKind::Fingerprint
            ))
        );
        assert_eq!(
            read_answer(&accept(
                json!({"decision": "deny", "message": " use notes/ "})
            )),
            Some(ApprovalResponse::Deny {
                message: Some("use notes/".into())
            })
        );
        assert_eq!(
            read_answer(&ElicitResult::new(ElicitationAction::Decline)),
            Some(ApprovalResponse::Deny { message: None })
        );
        assert!(matches!(
            read_answer(&ElicitResult::new(ElicitationAction::Cancel)),
            Some(ApprovalResponse::Unanswered { .. })
        ));
        assert_eq!(read_answer(&accept(json!({"decision": "allow_all"}))), None);
        assert_eq!(read_answer(&accept(json!({}))), None);
        assert_eq!(
            read_answer(&ElicitResult::new(ElicitationAction::Accept)),
            None
        );
    }
}
