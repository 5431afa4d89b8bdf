//! Reading one streamed response: bytes split into server-sent events by
//! `eventsource-stream`, fed to the wire format's [`Decoder`] until its
//! terminal event, with an idle timeout between two events.
//!
//! Invariants: a stream that ends, stalls or breaks before the terminal
//! event is a retryable failure, never a short response; and the idle
//! timeout runs from event to event, so bytes that never complete an event
//! (a trickle, or keep-alive comments) do not keep a stalled stream open.

use std::time::Duration;

use eventsource_stream::{EventStreamError, Eventsource};
use futures_util::StreamExt;
use serde::de::DeserializeOwned;
use serde_json::Value;
use tokio::sync::mpsc::UnboundedSender;

use super::super::{ModelResponse, StreamEvent, ToolCall};
use super::retry::{self, Attempt, AttemptError};

/// The reason given when a stream ends before its terminal event.
pub(super) const INCOMPLETE: &str = "the stream ended before the response was complete";

/// Turns one wire format's events into a [`ModelResponse`].
pub(super) trait Decoder: Send {
    /// Take the `data` of one event; `Some` once the terminal event arrived.
    fn event(
        &mut self,
        data: &str,
        events: &UnboundedSender<StreamEvent>,
    ) -> Result<Option<ModelResponse>, AttemptError>;

    /// The stream ended cleanly without its terminal event: a response if
    /// what arrived is complete all the same.
    fn end(&mut self, _events: &UnboundedSender<StreamEvent>) -> Option<ModelResponse> {
        None
    }
}

/// Read `response` to its terminal event, `idle` being the longest wait
/// for the next event.
pub(super) async fn read(
    response: reqwest::Response,
    idle: Duration,
    mut decoder: Box<dyn Decoder>,
    events: &UnboundedSender<StreamEvent>,
) -> Attempt {
    let mut stream = std::pin::pin!(response.bytes_stream().eventsource());
    loop {
        let item = match tokio::time::timeout(idle, stream.next()).await {
            Ok(Some(item)) => item,
            Ok(None) => break,
            Err(_) => {
                return Err(AttemptError::retry(format!(
                    "the stream stalled: no event for {idle:?}"
                )));
            }
        };
        let event = match item {
            Ok(event) => event,
            Err(EventStreamError::Transport(e)) => {
                let reason = match retry::transport_error(&e) {
                    AttemptError::Retry { reason, .. } => reason,
                    AttemptError::Fail(e) => e.to_string(),
                };
                return Err(AttemptError::retry(format!("{INCOMPLETE}: {reason}")));
            }
            Err(EventStreamError::Utf8(e)) => {
                return Err(AttemptError::bad_response(format!(
                    "the event stream is not UTF-8: {e}"
                )));
            }
            Err(EventStreamError::Parser(e)) => {
                return Err(AttemptError::bad_response(format!(
                    "the event stream is malformed: {e}"
                )));
            }
        };
        if let Some(response) = decoder.event(&event.data, events)? {
            return Ok(response);
        }
    }
    decoder
        .end(events)
        .ok_or_else(|| AttemptError::retry(INCOMPLETE))
}

/// Parse an event's JSON payload.
pub(super) fn json<T: DeserializeOwned>(data: &str) -> Result<T, AttemptError> {
    serde_json::from_str(data).map_err(|e| {
        AttemptError::bad_response(format!(
            "an event is not the JSON expected ({e}): {}",
            retry::excerpt(data)
        ))
    })
}

/// Decode one typed event out of an already parsed payload.
pub(super) fn typed<T: DeserializeOwned>(value: Value) -> Result<T, AttemptError> {
    let data = value.to_string();
    serde_json::from_value(value).map_err(|e| {
        AttemptError::bad_response(format!(
            "an event is not the JSON expected ({e}): {}",
            retry::excerpt(&data)
        ))
    })
}

/// Send a stream event; a receiver that is gone only means nobody watches.
pub(super) fn emit(events: &UnboundedSender<StreamEvent>, event: StreamEvent) {
    let _ = events.send(event);
}

/// A tool call being streamed: id and name first, arguments in pieces.
#[derive(Debug, Default)]
pub(super) struct PendingCall {
    pub id: String,
    pub name: String,
    pub arguments: String,
    /// `ToolCallReady` went out for it.
    pub ready: bool,
}

impl PendingCall {
    /// Mark the call complete and announce it, once.
    pub fn finish(&mut self, events: &UnboundedSender<StreamEvent>) {
        if !self.ready {
            self.ready = true;
            emit(events, StreamEvent::ToolCallReady(self.to_call()));
        }
    }

    pub fn to_call(&self) -> ToolCall {
        ToolCall {
            id: self.id.clone(),
            name: self.name.clone(),
            arguments: self.arguments.clone(),
        }
    }
}
