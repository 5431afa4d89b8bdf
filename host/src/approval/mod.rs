//! Approvals: what happens when the policy decides that a call needs the
//! user's consent.
//!
//! Invariants: only an [`Approver`] — the user at a terminal, or the
//! non-interactive refusal — answers an ask; nothing a tool or a model
//! sends can grant anything (a model's `rationale` is shown, never used to
//! decide). Session grants only turn a later *ask* into an allow, never a
//! deny. One prompt is on screen at a time, however many threads call.

mod session;
mod terminal;

use std::sync::{Arc, Mutex, PoisonError};

use serde::{Deserialize, Serialize};

use crate::base::Limits;
use crate::capability::Grant;
use crate::policy::{AskedDestination, DecidedBy, Decision, DestinationGrant};

pub use session::{
    ApprovalPattern, ApprovalPatternError, ApprovalSession, CallFingerprint, SessionGrant,
    canonical_json,
};
pub use terminal::TerminalApprover;

/// A call waiting for the user's consent.
#[derive(Debug, Clone)]
pub struct ApprovalRequest {
    /// The call's id, as in its [`CallResult`](crate::pipeline::CallResult).
    pub call_id: String,
    /// The tool.
    pub tool: String,
    /// The plugin that provides it.
    pub plugin: String,
    /// The arguments, valid against the tool's schema.
    pub input: serde_json::Value,
    /// The name of the policy that asks.
    pub policy: String,
    /// The policy's decision (its verdict is ask), with the rule or mode
    /// and its reason.
    pub decision: Decision,
    /// What the call may use if it runs (with the destinations approving
    /// it adds).
    pub grant: Grant,
    /// The network destinations the call will reach, each with what lets
    /// it: the policy, or this approval. Empty for a call that names none.
    pub network: Vec<AskedDestination>,
    /// The limits it runs under.
    pub limits: Limits,
    /// Why the model says it wants the call, if it said. Shown to the user
    /// as the model's words; never used to decide.
    pub rationale: Option<String>,
}

impl ApprovalRequest {
    /// `rule R of policy P` or `ask mode of policy P`.
    pub fn asked_under(&self) -> String {
        let by = match &self.decision.by {
            DecidedBy::Rule { name, .. } => format!("rule {name}"),
            DecidedBy::Mode(mode) => format!("{mode} mode"),
        };
        format!("{by} of policy {}", self.policy)
    }

    /// What the grant allows, in one line.
    pub fn grant_summary(&self) -> String {
        format!(
            "{}; deadline {} ms, memory {} MiB, output {} bytes",
            self.grant.describe(),
            self.limits.deadline.as_millis(),
            self.limits.memory_bytes >> 20,
            self.limits.output_bytes
        )
    }

    /// The arguments as indented JSON, keys sorted.
    pub fn pretty_input(&self) -> String {
        let sorted: serde_json::Value =
            serde_json::from_str(&canonical_json(&self.input)).unwrap_or(self.input.clone());
        serde_json::to_string_pretty(&sorted).unwrap_or_else(|_| self.input.to_string())
    }

    /// The fingerprint of this exact call.
    pub fn fingerprint(&self) -> CallFingerprint {
        CallFingerprint::of(&self.tool, &self.input)
    }

    /// What "allow for the session" remembers for this call: its
    /// destinations when it reaches the network, else this exact call.
    pub fn session_kind(&self) -> SessionGrantKind {
        if self.network.is_empty() {
            SessionGrantKind::Fingerprint
        } else {
            SessionGrantKind::Destinations
        }
    }

    /// The destinations, each with what approving does for it:
    /// `http://example.com:80 (approving grants it)`.
    pub fn destinations(&self) -> Vec<String> {
        self.network
            .iter()
            .map(|d| match &d.via {
                DestinationGrant::Policy => format!("{} (the policy allows it)", d.target),
                DestinationGrant::Approval { rule } => {
                    format!("{} (approving grants {rule})", d.target)
                }
            })
            .collect()
    }
}

/// What to remember when the user allows a call for the session.
#[derive(Debug, Clone, PartialEq)]
pub enum SessionGrantKind {
    /// The same tool with the same arguments.
    Fingerprint,
    /// The same tool reaching the same network destinations.
    Destinations,
    /// Every call matching a pattern the user confirmed.
    Pattern(ApprovalPattern),
}

/// The answer to an [`ApprovalRequest`].
#[derive(Debug, Clone, PartialEq)]
pub enum ApprovalResponse {
    /// Run this call; ask again next time.
    AllowOnce,
    /// Run this call, and later calls the grant covers without asking.
    AllowSession(SessionGrantKind),
    /// Do not run it. The message, if any, goes to the model.
    Deny {
        /// The user's words to the model.
        message: Option<String>,
    },
    /// Nobody answered: there is no terminal, or it went away. The call
    /// does not run; the reason says why.
    Unanswered {
        /// Why no one could answer, and what to do about it.
        reason: String,
    },
}

/// Who answers asks. Implementations must be shareable across the threads
/// of an agent session; [`Approvals`] calls one at a time.
pub trait Approver: Send + Sync {
    /// Ask about `req` and wait for the answer.
    fn approve(&self, req: &ApprovalRequest) -> ApprovalResponse;
}

/// The approver when no one can be asked: every ask is refused, with a
/// reason saying why and what to do.
#[derive(Debug, Clone)]
pub struct NonInteractive {
    why: String,
}

impl NonInteractive {
    /// Refuse because `why` (e.g. `prompts are off (--non-interactive)`).
    pub fn new(why: impl Into<String>) -> Self {
        NonInteractive { why: why.into() }
    }
}

impl Default for NonInteractive {
    /// Refuse because there is no terminal.
    fn default() -> Self {
        NonInteractive::new("there is no terminal to ask (non-interactive)")
    }
}

impl Approver for NonInteractive {
    fn approve(&self, req: &ApprovalRequest) -> ApprovalResponse {
        let because = req
            .decision
            .reason
            .as_deref()
            .map(|r| format!(" ({r})"))
            .unwrap_or_default();
        ApprovalResponse::Unanswered {
            reason: format!(
                "needs approval under {}{because}{}, but {}; run it from a terminal to \
                 approve it, or use a policy that allows it{}",
                req.asked_under(),
                reaching(req),
                self.why,
                pre_allow(req)
            ),
        }
    }
}

/// ` to reach A, B` for a call with destinations, else nothing.
pub fn reaching(req: &ApprovalRequest) -> String {
    if req.network.is_empty() {
        return String::new();
    }
    let targets: Vec<String> = req.network.iter().map(|d| d.target.to_string()).collect();
    format!(" to reach {}", targets.join(", "))
}

/// How to let a call with destinations run unasked: ` (network = [...]
/// under [grants.tool.T])`, or nothing.
pub fn pre_allow(req: &ApprovalRequest) -> String {
    let targets: Vec<String> = req
        .network
        .iter()
        .filter(|d| match d.via {
            DestinationGrant::Policy => false,
            DestinationGrant::Approval { .. } => true,
        })
        .map(|d| format!("\"{}\"", d.target))
        .collect();
    let network = if targets.is_empty() {
        String::new()
    } else {
        format!(
            "add `network = [{}]` under `[grants.tool.{}]` and ",
            targets.join(", "),
            req.tool
        )
    };
    if req.network.is_empty() {
        return String::new();
    }
    format!(" (to run it without asking, {network}a rule that allows the call)")
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;
    use crate::policy::{AskedDestination, Verdict};

    #[test]
    fn the_hint_names_only_destinations_the_policy_does_not_grant() {
        let dest = |target: &str, via: DestinationGrant| AskedDestination {
            target: target.parse().unwrap(),
            via,
        };
        let approved = DestinationGrant::Approval {
            rule: crate::capability::egress::NetRule::to("https://a.test".parse().unwrap()),
        };
        let mut req = ApprovalRequest {
            call_id: "c".into(),
            tool: "http_fetch".into(),
            plugin: "web".into(),
            input: json!({"url": "https://a.test/"}),
            policy: "p".into(),
            decision: Decision {
                verdict: Verdict::Ask,
                by: DecidedBy::Mode(crate::policy::Mode::Ask),
                reason: None,
                parts: Vec::new(),
            },
            grant: Grant::none(),
            network: vec![dest("https://a.test", approved)],
            limits: Limits::default(),
            rationale: None,
        };
        assert_eq!(
            pre_allow(&req),
            " (to run it without asking, add `network = [\"https://a.test:443\"]` under \
             `[grants.tool.http_fetch]` and a rule that allows the call)"
        );
        req.network = vec![dest("https://a.test", DestinationGrant::Policy)];
        assert_eq!(
            pre_allow(&req),
            " (to run it without asking, a rule that allows the call)"
        );
        req.network.clear();
        assert_eq!(pre_allow(&req), "");
    }
}

/// How the approval step ended for one call, for the call's record and
/// the audit log. Its JSON is the same in `tool call --json` and in
/// `run --json`'s `tool_decision` events.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum Approval {
    /// The policy allowed the call; no one was asked.
    Policy,
    /// The user allowed this call once.
    UserOnce,
    /// The user allowed this call and granted `grant` for the session.
    UserSession {
        /// What the user granted.
        grant: SessionGrant,
    },
    /// An earlier session grant covered the call; no one was asked.
    SessionGrant {
        /// The grant that covered it.
        grant: SessionGrant,
    },
    /// The user denied the call.
    UserDenied {
        /// The user's words to the model.
        message: Option<String>,
    },
    /// No one could answer; the call was refused.
    Unanswered {
        /// Why.
        reason: String,
    },
}

impl Approval {
    /// Why the call does not run, or `None` when it does.
    pub fn refusal(&self, req: &ApprovalRequest) -> Option<String> {
        match self {
            Approval::Policy
            | Approval::UserOnce
            | Approval::UserSession { .. }
            | Approval::SessionGrant { .. } => None,
            Approval::UserDenied { message } => {
                let said = message
                    .as_deref()
                    .map(|m| format!(", saying: {m}"))
                    .unwrap_or_default();
                Some(format!(
                    "denied by the user (asked under {}){said}",
                    req.asked_under()
                ))
            }
            Approval::Unanswered { reason } => Some(reason.clone()),
        }
    }
}

/// An approver and the session it grants into, shared by every call of a
/// process or agent session (`Arc<Approvals>` across threads).
pub struct Approvals {
    approver: Arc<dyn Approver>,
    session: ApprovalSession,
    /// Held while a prompt is open: one question at a time.
    turn: Mutex<()>,
}

impl Approvals {
    /// A fresh session answered by `approver`.
    pub fn new(approver: Arc<dyn Approver>) -> Self {
        Approvals {
            approver,
            session: ApprovalSession::new(),
            turn: Mutex::new(()),
        }
    }

    /// A session in which every ask is refused for want of a terminal.
    pub fn non_interactive() -> Self {
        Approvals::new(Arc::new(NonInteractive::default()))
    }

    /// The session grants so far.
    pub fn session(&self) -> &ApprovalSession {
        &self.session
    }

    /// Settle an ask: a session grant that covers the call, else the
    /// approver's answer (remembering a session grant if one was given).
    /// Callers waiting for their turn see grants given meanwhile.
    pub fn resolve(&self, req: &ApprovalRequest) -> Approval {
        if let Some(grant) = self.session.covering(&req.tool, &req.input) {
            return Approval::SessionGrant { grant };
        }
        let _turn = self.turn.lock().unwrap_or_else(PoisonError::into_inner);
        if let Some(grant) = self.session.covering(&req.tool, &req.input) {
            return Approval::SessionGrant { grant };
        }
        match self.approver.approve(req) {
            ApprovalResponse::AllowOnce => Approval::UserOnce,
            ApprovalResponse::AllowSession(kind) => {
                let grant = match kind {
                    SessionGrantKind::Fingerprint => SessionGrant::Fingerprint {
                        tool: req.tool.clone(),
                        sha256: req.fingerprint(),
                    },
                    SessionGrantKind::Destinations => SessionGrant::Network {
                        tool: req.tool.clone(),
                        destinations: req.network.iter().map(|d| d.target.clone()).collect(),
                    },
                    SessionGrantKind::Pattern(pattern) => SessionGrant::Pattern { pattern },
                };
                self.session.add(grant.clone());
                Approval::UserSession { grant }
            }
            ApprovalResponse::Deny { message } => Approval::UserDenied { message },
            ApprovalResponse::Unanswered { reason } => Approval::Unanswered { reason },
        }
    }
}

impl std::fmt::Debug for Approvals {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Approvals")
            .field("session", &self.session)
            .finish_non_exhaustive()
    }
}
