//! Anthropic Messages (`POST {base}/v1/messages`).
//!
//! The system prompt is the top-level `system`; tool results are
//! `tool_result` blocks of a user message, consecutive ones merged into one
//! message as the API requires. A `tool_use` block's `input` must be a JSON
//! object: the stored argument text is parsed, and text that is not a JSON
//! object (the model once produced malformed arguments) goes back as `{}`
//! — the tool's error result next to it tells the model what went wrong.
//! The terminal event is `message_stop`.

use serde::Deserialize;
use serde_json::{Value, json};
use tokio::sync::mpsc::UnboundedSender;

use super::super::{FinishReason, Message, ModelRequest, ModelResponse, StreamEvent, Usage};
use super::retry::{self, AttemptError};
use super::sse::{self, Decoder, PendingCall};

/// `max_tokens` when the request sets no limit; the API requires one.
pub(super) const DEFAULT_MAX_TOKENS: u32 = 8192;

/// The JSON body for `request`.
pub(super) fn request_body(request: &ModelRequest) -> Value {
    let mut messages: Vec<Value> = Vec::with_capacity(request.messages.len());
    for message in &request.messages {
        match message {
            Message::User { content } => {
                push_user_block(&mut messages, json!({"type": "text", "text": content}));
            }
            Message::Assistant {
                content,
                tool_calls,
            } => {
                let mut blocks = Vec::with_capacity(tool_calls.len() + 1);
                if !content.is_empty() {
                    blocks.push(json!({"type": "text", "text": content}));
                }
                blocks.extend(tool_calls.iter().map(|c| {
                    let input = serde_json::from_str::<Value>(&c.arguments)
                        .ok()
                        .filter(Value::is_object)
                        .unwrap_or_else(|| json!({}));
                    json!({"type": "tool_use", "id": c.id, "name": c.name, "input": input})
                }));
                if !blocks.is_empty() {
                    messages.push(json!({"role": "assistant", "content": blocks}));
                }
            }
            Message::Tool {
                call_id,
                content,
                is_error,
                ..
            } => push_user_block(
                &mut messages,
                json!({
                    "type": "tool_result",
                    "tool_use_id": call_id,
                    "content": content,
                    "is_error": is_error,
                }),
            ),
        }
    }
    let mut body = json!({
        "model": request.model,
        "max_tokens": request.max_output_tokens.unwrap_or(DEFAULT_MAX_TOKENS),
        "stream": true,
        "messages": messages,
    });
    if !request.system.is_empty() {
        body["system"] = request.system.clone().into();
    }
    if !request.tools.is_empty() {
        let tools: Vec<Value> = request
            .tools
            .iter()
            .map(|t| json!({"name": t.name, "description": t.description, "input_schema": t.parameters}))
            .collect();
        body["tools"] = tools.into();
    }
    body
}

/// Add a block to the user message at the end, or start one.
fn push_user_block(messages: &mut Vec<Value>, block: Value) {
    if let Some(last) = messages.last_mut()
        && last["role"] == "user"
        && let Some(blocks) = last["content"].as_array_mut()
    {
        blocks.push(block);
        return;
    }
    messages.push(json!({"role": "user", "content": [block]}));
}

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
                    _ => {}
                }
            }
            "content_block_delta" => {
                let BlockDelta { index, delta } = sse::typed(value)?;
                if let Some(text) = delta.text {
                    self.text(text, events);
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
