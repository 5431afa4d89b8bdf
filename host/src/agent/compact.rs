//! Compaction in the turn loop: older turns are summarized by the model
//! when a request's estimate passes [`super::ContextLimits::compact_above`],
//! or when the provider says the request does not fit its window.
//!
//! Invariant: the summary replaces a prefix of the history that ends just
//! before a user or assistant message ([`context::split_point`]), so no
//! request ever carries a tool call without its result or a result without
//! its call; and a context-length error is retried at most once per turn.

use tokio::sync::mpsc::unbounded_channel;

use crate::provider::{Message, ModelRequest, ProviderError};

use super::context::{self, SUMMARY_PROMPT};
use super::deadline::Deadline;
use super::session::{Record, SessionWriter};
use super::{Agent, AgentEvent, SessionError, StopReason};

/// What compaction did.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Compacted {
    /// Older turns were replaced by their summary.
    Yes,
    /// The history is too short to summarize anything.
    NothingToSummarize,
}

impl Agent {
    /// Summarize older turns with the model, keeping about `keep` tokens
    /// of the latest history verbatim. `Ok(Err(stop))` when the model
    /// could not do it before `deadline` and the run must stop.
    pub(super) async fn compact(
        &self,
        session: &mut SessionWriter,
        messages: &mut Vec<Message>,
        keep: u64,
        deadline: Deadline,
    ) -> Result<Result<Compacted, StopReason>, SessionError> {
        let Some(cut) = context::split_point(messages, keep) else {
            return Ok(Ok(Compacted::NothingToSummarize));
        };
        let request = ModelRequest {
            model: self.config.model.clone(),
            system: SUMMARY_PROMPT.to_string(),
            messages: vec![Message::User {
                content: context::transcript(&messages[..cut]),
            }],
            tools: Vec::new(),
            max_output_tokens: Some(2048),
        };
        let (tx, _rx) = unbounded_channel();
        let response = tokio::select! {
            biased;
            () = self.interrupt.wait() => return Ok(Err(self.interrupt.stop_reason())),
            () = deadline.reached() => return Ok(Err(self.out_of_time())),
            r = self.provider.complete(&request, &tx) => r,
        };
        let response = match response {
            Ok(r) => r,
            Err(ProviderError::ContextLength { message }) => {
                return Ok(Err(StopReason::ContextOverflow {
                    message: format!("even the summary request is too long: {message}"),
                }));
            }
            Err(e) => {
                return Ok(Err(StopReason::ProviderFailed {
                    message: format!("compacting the context failed: {e}"),
                }));
            }
        };
        if let Some(rec) = &self.recorder {
            rec.record(&response)?;
        }
        let before = messages.len();
        let tokens_before: u64 = messages.iter().map(context::message_tokens).sum();
        let after = context::compacted(messages, cut, &response.text);
        session.append(&Record::Compaction {
            messages: after.clone(),
        })?;
        session.sync_soon()?;
        *messages = after;
        (self.events)(AgentEvent::Compacted {
            messages_before: before,
            messages_after: messages.len(),
            tokens_before,
            tokens_after: messages.iter().map(context::message_tokens).sum(),
        });
        Ok(Ok(Compacted::Yes))
    }

    /// The provider refused a request as too long. `Ok(None)`: the history
    /// was compacted and the turn may be retried; `Ok(Some(stop))`: it was
    /// retried once already, or there was nothing to compact. The model's
    /// window is evidently smaller than the settings assume, so the kept
    /// tail is at most a quarter of the history.
    pub(super) async fn after_overflow(
        &self,
        session: &mut SessionWriter,
        messages: &mut Vec<Message>,
        message: String,
        retried: bool,
        deadline: Deadline,
    ) -> Result<Option<StopReason>, SessionError> {
        if retried {
            return Ok(Some(StopReason::ContextOverflow { message }));
        }
        let history: u64 = messages.iter().map(context::message_tokens).sum();
        let keep = self.config.context.keep_recent.min(history / 4);
        Ok(
            match self.compact(session, messages, keep, deadline).await? {
                Ok(Compacted::Yes) => None,
                Ok(Compacted::NothingToSummarize) => Some(StopReason::ContextOverflow {
                    message: format!("{message}; there were no older turns to summarize"),
                }),
                Err(stop) => Some(stop),
            },
        )
    }
}
