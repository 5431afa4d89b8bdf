//! Anthropic Messages (`POST {base}/v1/messages`).
//!
//! The system prompt is the top-level `system`; tool results are
//! `tool_result` blocks of a user message, consecutive ones merged into one
//! message as the API requires. A `tool_use` block's `input` must be a JSON
//! object: the stored argument text is parsed, and text that is not a JSON
//! object (the model once produced malformed arguments) goes back as `{}`
//! — the tool's error result next to it tells the model what went wrong.
//! The terminal event is `message_stop`. `thinking` blocks (their text
//! streamed as `thinking_delta`, then a `signature_delta`) and
//! `redacted_thinking` blocks are kept and sent back unchanged, first in
//! their assistant message, as the API requires while a tool-use turn goes on.

mod request;

pub(super) use request::request_body;

use serde::Deserialize;
use serde_json::Value;
use tokio::sync::mpsc::UnboundedSender;

use super::super::{FinishReason, ModelResponse, Reasoning, StreamEvent, Usage};
use super::retry::{self, AttemptError};
use super::sse::{self, Decoder, PendingCall};

#[derive(Deserialize)]
struct MessageStart {
    message: StartMessage,
}

#[derive(Deserialize)]
struct StartMessage {
    usage: Option<StartUsage>,
}

#[derive(Deserialize)]
struct StartUsage {
    #[serde(default)]
    input_tokens: u64,
    #[serde(default)]
    cache_creation_input_tokens: Option<u64>,
    #[serde(default)]
    cache_read_input_tokens: Option<u64>,
}

#[derive(Deserialize)]
struct BlockStart {
    index: u64,
    content_block: StartBlock,
}

#[derive(Deserialize)]
struct StartBlock {
    #[serde(rename = "type")]
    kind: String,
    id: Option<String>,
    name: Option<String>,
    text: Option<String>,
    input: Option<Value>,
    thinking: Option<String>,
    signature: Option<String>,
    data: Option<String>,
}

#[derive(Deserialize)]
struct BlockDelta {
    index: u64,
    delta: DeltaBody,
}

#[derive(Deserialize)]
struct DeltaBody {
    text: Option<String>,
    partial_json: Option<String>,
    thinking: Option<String>,
    signature: Option<String>,
}

#[derive(Deserialize)]
struct BlockStop {
    index: u64,
}

#[derive(Deserialize)]
struct MessageDelta {
    delta: Option<StopDelta>,
    usage: Option<DeltaUsage>,
}

#[derive(Deserialize)]
struct StopDelta {
    stop_reason: Option<String>,
}

#[derive(Deserialize)]
struct DeltaUsage {
    #[serde(default)]
    output_tokens: u64,
}

/// Assembles one Messages stream.
#[derive(Default)]
pub(super) struct AnthropicDecoder {
    text: String,
    /// Tool-use blocks by content-block index, in stream order, each with
    /// the input given whole at block start (normally empty).
    calls: Vec<(u64, PendingCall, Option<String>)>,
    /// Thinking blocks by content-block index, in stream order.
    reasoning: Vec<(u64, Reasoning)>,
    input_tokens: Option<u64>,
    output_tokens: Option<u64>,
    stop_reason: Option<String>,
}

impl AnthropicDecoder {
    fn call(&mut self, index: u64) -> Option<&mut (u64, PendingCall, Option<String>)> {
        self.calls.iter_mut().find(|(i, ..)| *i == index)
    }

    fn text(&mut self, text: String, events: &UnboundedSender<StreamEvent>) {
        if !text.is_empty() {
            self.text.push_str(&text);
            sse::emit(events, StreamEvent::TextDelta(text));
        }
    }

    /// More of the thinking block at `index`: text to show, or its signature.
    fn thinking(
        &mut self,
        index: u64,
        more: Option<String>,
        signature_part: Option<String>,
        events: &UnboundedSender<StreamEvent>,
    ) {
        let Some((
            _,
            Reasoning::Thinking {
                thinking,
                signature,
            },
        )) = self.reasoning.iter_mut().find(|(i, _)| *i == index)
        else {
            return;
        };
        if let Some(more) = more.filter(|t| !t.is_empty()) {
            thinking.push_str(&more);
            sse::emit(events, StreamEvent::ReasoningDelta(more));
        }
        if let Some(part) = signature_part {
            signature.push_str(&part);
        }
    }

    fn response(&mut self, events: &UnboundedSender<StreamEvent>) -> ModelResponse {
        for (_, call, _) in &mut self.calls {
            call.finish(events);
        }
        let tool_calls: Vec<_> = self.calls.iter().map(|(_, c, _)| c.to_call()).collect();
        let finish = match self.stop_reason.take().as_deref() {
            Some("end_turn" | "stop_sequence") => FinishReason::Stop,
            Some("tool_use") => FinishReason::ToolCalls,
            Some("max_tokens") => FinishReason::Length,
            Some(other) => FinishReason::Other {
                reason: other.to_string(),
            },
            None if tool_calls.is_empty() => FinishReason::Stop,
            None => FinishReason::ToolCalls,
        };
        let usage = (self.input_tokens.is_some() || self.output_tokens.is_some()).then(|| Usage {
            input_tokens: self.input_tokens.unwrap_or_default(),
            output_tokens: self.output_tokens.unwrap_or_default(),
        });
        ModelResponse {
            text: std::mem::take(&mut self.text),
            reasoning: self.reasoning.drain(..).map(|(_, r)| r).collect(),
            tool_calls,
            usage,
            finish,
        }
    }
}

impl Decoder for AnthropicDecoder {
    fn event(
        &mut self,
        data: &str,
        events: &UnboundedSender<StreamEvent>,
    ) -> Result<Option<ModelResponse>, AttemptError> {
        let value: Value = sse::json(data)?;
        let kind = value
            .get("type")
            .and_then(Value::as_str)
            .unwrap_or_default();
        match kind {
            "message_start" => {
                let MessageStart { message } = sse::typed(value)?;
                if let Some(u) = message.usage {
                    let cached = u.cache_creation_input_tokens.unwrap_or_default()
                        + u.cache_read_input_tokens.unwrap_or_default();
                    self.input_tokens = Some(u.input_tokens + cached);
                }
            }
            "content_block_start" => {
                let BlockStart {
                    index,
                    content_block: block,
                } = sse::typed(value)?;
                match block.kind.as_str() {
                    "text" => self.text(block.text.unwrap_or_default(), events),
                    "tool_use" => {
                        let whole = block
                            .input
                            .filter(|v| v.as_object().is_some_and(|o| !o.is_empty()))
                            .map(|v| v.to_string());
                        let call = PendingCall {
                            id: block.id.unwrap_or_default(),
                            name: block.name.unwrap_or_default(),
                            ..PendingCall::default()
                        };
                        self.calls.push((index, call, whole));
                    }
                    "thinking" => {
                        let thinking = block.thinking.unwrap_or_default();
                        if !thinking.is_empty() {
                            sse::emit(events, StreamEvent::ReasoningDelta(thinking.clone()));
                        }
                        let signature = block.signature.unwrap_or_default();
                        let r = Reasoning::Thinking {
                            thinking,
                            signature,
                        };
                        self.reasoning.push((index, r));
                    }
                    "redacted_thinking" => {
                        let data = block.data.unwrap_or_default();
                        self.reasoning
                            .push((index, Reasoning::RedactedThinking { data }));
                    }
                    _ => {}
                }
            }
            "content_block_delta" => {
                let BlockDelta { index, delta } = sse::typed(value)?;
                if let Some(text) = delta.text {
                    self.text(text, events);
                } else if delta.thinking.is_some() || delta.signature.is_some() {
                    self.thinking(index, delta.thinking, delta.signature, events);
                } else if let Some(json) = delta.partial_json
                    && let Some((_, call, _)) = self.call(index)
                {
                    call.arguments.push_str(&json);
                }
            }
            "content_block_stop" => {
                let BlockStop { index } = sse::typed(value)?;
                if let Some((_, call, whole)) = self.call(index) {
                    if call.arguments.trim().is_empty() {
                        call.arguments = whole.take().unwrap_or_else(|| "{}".to_string());
                    }
                    call.finish(events);
                }
            }
            "message_delta" => {
                let MessageDelta { delta, usage } = sse::typed(value)?;
                if let Some(reason) = delta.and_then(|d| d.stop_reason) {
                    self.stop_reason = Some(reason);
                }
                if let Some(usage) = usage {
                    self.output_tokens = Some(usage.output_tokens);
                }
            }
            "message_stop" => return Ok(Some(self.response(events))),
            "error" => {
                let error = value.get("error").unwrap_or(&value);
                let field = |name: &str| error.get(name).and_then(Value::as_str);
                let code = field("type").unwrap_or("error");
                return Err(retry::stream_error(
                    code,
                    field("message").unwrap_or_default(),
                ));
            }
            _ => {}
        }
        Ok(None)
    }
}
