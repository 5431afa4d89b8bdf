//! The OpenAI Responses API (`POST {base}/responses`).
//!
//! The history goes out as `input` items, the system prompt as
//! `instructions`. A function call opens with `response.output_item.added`
//! (call id and name), streams `response.function_call_arguments.delta`
//! and is complete at `response.output_item.done`. The terminal event is
//! `response.completed` (or `response.incomplete` when the output was cut
//! short); `response.failed` and `error` end the turn with an error.
//! A `reasoning` output item (its summary streamed as
//! `response.reasoning_summary_text.delta`, or raw text as
//! `response.reasoning_text.delta`) is kept verbatim, `encrypted_content`
//! included, and goes back in later requests just before the assistant's
//! message and calls of its turn.

use serde::Deserialize;
use serde_json::{Value, json};
use tokio::sync::mpsc::UnboundedSender;

use super::super::{
    FinishReason, Message, ModelRequest, ModelResponse, Reasoning, StreamEvent, Usage,
};
use super::retry::{self, AttemptError};
use super::sse::{self, Decoder, PendingCall};

/// The JSON body for `request`.
pub(super) fn request_body(request: &ModelRequest) -> Value {
    let mut input = Vec::with_capacity(request.messages.len());
    for message in &request.messages {
        match message {
            Message::User { content } => input.push(json!({"role": "user", "content": content})),
            Message::Assistant {
                content,
                tool_calls,
                reasoning,
            } => {
                for r in reasoning {
                    match r {
                        Reasoning::ResponsesItem { item } => input.push(item.clone()),
                        Reasoning::Thinking { .. }
                        | Reasoning::RedactedThinking { .. }
                        | Reasoning::Text { .. } => {}
                    }
                }
                if !content.is_empty() || tool_calls.is_empty() {
                    input.push(json!({
                        "type": "message",
                        "role": "assistant",
                        "content": [{"type": "output_text", "text": content}],
                    }));
                }
                input.extend(tool_calls.iter().map(|c| {
                    json!({
                        "type": "function_call",
                        "call_id": c.id,
                        "name": c.name,
                        "arguments": c.arguments,
                    })
                }));
            }
            Message::Tool {
                call_id, content, ..
            } => input.push(json!({
                "type": "function_call_output",
                "call_id": call_id,
                "output": content,
            })),
        }
    }
    let mut body = json!({"model": request.model, "stream": true, "input": input});
    if !request.system.is_empty() {
        body["instructions"] = request.system.clone().into();
    }
    if !request.tools.is_empty() {
        let tools: Vec<Value> = request
            .tools
            .iter()
            .map(|t| {
                json!({
                    "type": "function",
                    "name": t.name,
                    "description": t.description,
                    "parameters": t.parameters,
                })
            })
            .collect();
        body["tools"] = tools.into();
    }
    if let Some(max) = request.max_output_tokens {
        body["max_output_tokens"] = max.into();
    }
    body
}

#[derive(Deserialize)]
struct TextDelta {
    delta: String,
}

#[derive(Deserialize)]
struct ItemEvent {
    output_index: Option<u64>,
    item: Item,
}

#[derive(Deserialize)]
struct Item {
    #[serde(rename = "type")]
    kind: String,
    id: Option<String>,
    call_id: Option<String>,
    name: Option<String>,
    arguments: Option<String>,
}

#[derive(Deserialize)]
struct ArgumentsEvent {
    output_index: Option<u64>,
    item_id: Option<String>,
    delta: Option<String>,
    arguments: Option<String>,
}

#[derive(Deserialize)]
struct ResponseEvent {
    response: ResponseBody,
}

#[derive(Deserialize)]
struct ResponseBody {
    usage: Option<ResponsesUsage>,
    error: Option<ErrorBody>,
}

#[derive(Deserialize)]
struct ResponsesUsage {
    #[serde(default)]
    input_tokens: u64,
    #[serde(default)]
    output_tokens: u64,
}

#[derive(Deserialize)]
struct ErrorBody {
    code: Option<String>,
    #[serde(default)]
    message: String,
}

/// A call with the `output_index` and item id that locate its events.
struct Slot {
    output_index: Option<u64>,
    item_id: Option<String>,
    call: PendingCall,
}

/// Assembles one Responses stream.
#[derive(Default)]
pub(super) struct ResponsesDecoder {
    text: String,
    reasoning: Vec<Reasoning>,
    calls: Vec<Slot>,
}

impl ResponsesDecoder {
    fn slot(&mut self, output_index: Option<u64>, item_id: Option<&str>) -> Option<&mut Slot> {
        let by_id = item_id.and_then(|id| {
            self.calls
                .iter()
                .position(|s| s.item_id.as_deref() == Some(id))
        });
        let at = by_id.or_else(|| {
            output_index.and_then(|i| self.calls.iter().position(|s| s.output_index == Some(i)))
        })?;
        self.calls.get_mut(at)
    }

    fn done(
        &mut self,
        value: Value,
        finish: FinishReason,
        events: &UnboundedSender<StreamEvent>,
    ) -> Result<ModelResponse, AttemptError> {
        let event: ResponseEvent = sse::typed(value)?;
        for slot in &mut self.calls {
            slot.call.finish(events);
        }
        let tool_calls: Vec<_> = self.calls.iter().map(|s| s.call.to_call()).collect();
        let finish = match finish {
            FinishReason::Stop if !tool_calls.is_empty() => FinishReason::ToolCalls,
            other => other,
        };
        Ok(ModelResponse {
            text: std::mem::take(&mut self.text),
            reasoning: std::mem::take(&mut self.reasoning),
            tool_calls,
            usage: event.response.usage.map(|u| Usage {
                input_tokens: u.input_tokens,
                output_tokens: u.output_tokens,
            }),
            finish,
        })
    }
}

impl Decoder for ResponsesDecoder {
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
            "response.output_text.delta" => {
                let TextDelta { delta } = sse::typed(value)?;
                if !delta.is_empty() {
                    self.text.push_str(&delta);
                    sse::emit(events, StreamEvent::TextDelta(delta));
                }
            }
            "response.reasoning_summary_text.delta" | "response.reasoning_text.delta" => {
                let TextDelta { delta } = sse::typed(value)?;
                if !delta.is_empty() {
                    sse::emit(events, StreamEvent::ReasoningDelta(delta));
                }
            }
            // Summary parts after the first are paragraphs of their own.
            "response.reasoning_summary_part.added"
                if value["summary_index"].as_u64().is_some_and(|i| i > 0) =>
            {
                sse::emit(events, StreamEvent::ReasoningDelta("\n\n".into()));
            }
            "response.output_item.done"
                if value.pointer("/item/type").and_then(Value::as_str) == Some("reasoning") =>
            {
                if let Some(item) = value.get("item") {
                    self.reasoning
                        .push(Reasoning::ResponsesItem { item: item.clone() });
                }
            }
            "response.output_item.added" => {
                let ItemEvent { output_index, item } = sse::typed(value)?;
                if item.kind == "function_call" {
                    self.calls.push(Slot {
                        output_index,
                        item_id: item.id,
                        call: PendingCall {
                            id: item.call_id.unwrap_or_default(),
                            name: item.name.unwrap_or_default(),
                            arguments: item.arguments.unwrap_or_default(),
                            ready: false,
                        },
                    });
                }
            }
            "response.function_call_arguments.delta" | "response.function_call_arguments.done" => {
                let event: ArgumentsEvent = sse::typed(value)?;
                if let Some(slot) = self.slot(event.output_index, event.item_id.as_deref()) {
                    if let Some(delta) = event.delta {
                        slot.call.arguments.push_str(&delta);
                    }
                    if let Some(all) = event.arguments {
                        slot.call.arguments = all;
                    }
                }
            }
            "response.output_item.done" => {
                let ItemEvent { output_index, item } = sse::typed(value)?;
                if item.kind == "function_call"
                    && let Some(slot) = self.slot(output_index, item.id.as_deref())
                {
                    let call = &mut slot.call;
                    if let Some(id) = item.call_id.filter(|_| call.id.is_empty()) {
                        call.id = id;
                    }
                    if let Some(name) = item.name.filter(|_| call.name.is_empty()) {
                        call.name = name;
                    }
                    if let Some(arguments) = item.arguments {
                        call.arguments = arguments;
                    }
                    call.finish(events);
                }
            }
            "response.completed" => return self.done(value, FinishReason::Stop, events).map(Some),
            "response.incomplete" => {
                let reason = value
                    .pointer("/response/incomplete_details/reason")
                    .and_then(Value::as_str)
                    .unwrap_or("incomplete")
                    .to_string();
                let finish = match reason.as_str() {
                    "max_output_tokens" => FinishReason::Length,
                    _ => FinishReason::Other { reason },
                };
                return self.done(value, finish, events).map(Some);
            }
            "response.failed" => {
                let event: ResponseEvent = sse::typed(value)?;
                let (code, message) = match event.response.error {
                    Some(e) => (e.code.unwrap_or_default(), e.message),
                    None => (String::new(), "the response failed".to_string()),
                };
                return Err(retry::stream_error(&code, &message));
            }
            "error" => {
                let error = value.get("error").unwrap_or(&value);
                let field = |name: &str| error.get(name).and_then(Value::as_str);
                let code = field("code").or_else(|| field("type")).unwrap_or("error");
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
