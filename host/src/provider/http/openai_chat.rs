//! OpenAI-compatible Chat Completions (`POST {base}/chat/completions`), as
//! spoken by OpenAI, Ollama, llama.cpp's server, vLLM and LM Studio.
//!
//! Tool calls stream as `delta.tool_calls` pieces keyed by `index`: id and
//! name in the first piece, arguments spread over the rest. A call is
//! complete when a piece for another index arrives or the choice finishes.
//! The terminal event is `data: [DONE]`; a server that closes the stream
//! cleanly after a `finish_reason` without it is accepted too. Tool results
//! have no error flag in this format: their text says what went wrong.
//! Reasoning streamed as `delta.reasoning_content` (DeepSeek, llama.cpp,
//! vLLM) or `delta.reasoning` (Ollama, newer vLLM) is shown and recorded
//! but not sent back: several of these servers refuse it in a request.

use serde::Deserialize;
use serde_json::{Value, json};
use tokio::sync::mpsc::UnboundedSender;

use super::super::{
    FinishReason, Message, ModelRequest, ModelResponse, Reasoning, StreamEvent, Usage,
};
use super::retry::{self, AttemptError};
use super::sse::{self, Decoder, PendingCall};

/// The JSON body for `request`. `max_output_tokens` goes out as
/// `max_tokens`, the name every compatible server understands.
pub(super) fn request_body(request: &ModelRequest) -> Value {
    let mut messages = Vec::with_capacity(request.messages.len() + 1);
    if !request.system.is_empty() {
        messages.push(json!({"role": "system", "content": request.system}));
    }
    for message in &request.messages {
        messages.push(match message {
            Message::User { content } => json!({"role": "user", "content": content}),
            Message::Assistant {
                content,
                tool_calls,
                ..
            } if tool_calls.is_empty() => json!({"role": "assistant", "content": content}),
            Message::Assistant {
                content,
                tool_calls,
                ..
            } => {
                let calls: Vec<Value> = tool_calls
                    .iter()
                    .map(|c| {
                        json!({
                            "id": c.id,
                            "type": "function",
                            "function": {"name": c.name, "arguments": c.arguments},
                        })
                    })
                    .collect();
                let content = (!content.is_empty()).then_some(content);
                json!({"role": "assistant", "content": content, "tool_calls": calls})
            }
            Message::Tool {
                call_id, content, ..
            } => json!({"role": "tool", "tool_call_id": call_id, "content": content}),
        });
    }
    let mut body = json!({
        "model": request.model,
        "stream": true,
        "stream_options": {"include_usage": true},
        "messages": messages,
    });
    if !request.tools.is_empty() {
        let tools: Vec<Value> = request
            .tools
            .iter()
            .map(|t| {
                json!({
                    "type": "function",
                    "function": {
                        "name": t.name,
                        "description": t.description,
                        "parameters": t.parameters,
                    },
                })
            })
            .collect();
        body["tools"] = tools.into();
    }
    if let Some(max) = request.max_output_tokens {
        body["max_tokens"] = max.into();
    }
    body
}

#[derive(Deserialize)]
struct Chunk {
    #[serde(default)]
    choices: Vec<Choice>,
    usage: Option<ChatUsage>,
    error: Option<Value>,
}

#[derive(Deserialize)]
struct Choice {
    delta: Option<Delta>,
    finish_reason: Option<String>,
}

#[derive(Deserialize)]
struct Delta {
    content: Option<String>,
    reasoning_content: Option<String>,
    reasoning: Option<String>,
    tool_calls: Option<Vec<CallDelta>>,
}

#[derive(Deserialize)]
struct CallDelta {
    index: Option<u64>,
    id: Option<String>,
    function: Option<FunctionDelta>,
}

#[derive(Deserialize)]
struct FunctionDelta {
    name: Option<String>,
    arguments: Option<String>,
}

#[derive(Deserialize)]
struct ChatUsage {
    #[serde(default)]
    prompt_tokens: u64,
    #[serde(default)]
    completion_tokens: u64,
}

/// Assembles one Chat Completions stream.
#[derive(Default)]
pub(super) struct ChatDecoder {
    text: String,
    reasoning: String,
    /// Each call with the stream `index` it arrived under.
    calls: Vec<(Option<u64>, PendingCall)>,
    finish: Option<FinishReason>,
    usage: Option<Usage>,
}

impl ChatDecoder {
    fn call_delta(&mut self, delta: CallDelta, events: &UnboundedSender<StreamEvent>) {
        let found = match (delta.index, &delta.id) {
            (Some(index), _) => self.calls.iter().position(|(i, _)| *i == Some(index)),
            // No index (some servers): a new id starts a new call.
            (None, Some(id)) => self.calls.iter().position(|(_, c)| &c.id == id),
            (None, None) => self.calls.len().checked_sub(1),
        };
        let at = match found {
            Some(at) => at,
            None => {
                // A new call: every earlier one is complete.
                self.ready_all(events);
                self.calls.push((delta.index, PendingCall::default()));
                self.calls.len() - 1
            }
        };
        let call = &mut self.calls[at].1;
        if call.id.is_empty() {
            call.id = delta.id.unwrap_or_default();
        }
        if let Some(function) = delta.function {
            if call.name.is_empty() {
                call.name = function.name.unwrap_or_default();
            }
            call.arguments
                .push_str(function.arguments.as_deref().unwrap_or_default());
        }
    }

    fn ready_all(&mut self, events: &UnboundedSender<StreamEvent>) {
        for (n, (_, call)) in self.calls.iter_mut().enumerate() {
            if call.id.is_empty() {
                call.id = format!("call_{n}");
            }
            call.finish(events);
        }
    }

    fn response(&mut self, events: &UnboundedSender<StreamEvent>) -> ModelResponse {
        self.ready_all(events);
        let tool_calls: Vec<_> = self.calls.iter().map(|(_, c)| c.to_call()).collect();
        let finish = self.finish.take().unwrap_or(if tool_calls.is_empty() {
            FinishReason::Stop
        } else {
            FinishReason::ToolCalls
        });
        let reasoning = std::mem::take(&mut self.reasoning);
        ModelResponse {
            text: std::mem::take(&mut self.text),
            reasoning: if reasoning.is_empty() {
                Vec::new()
            } else {
                vec![Reasoning::Text { text: reasoning }]
            },
            tool_calls,
            usage: self.usage,
            finish,
        }
    }
}

impl Decoder for ChatDecoder {
    fn event(
        &mut self,
        data: &str,
        events: &UnboundedSender<StreamEvent>,
    ) -> Result<Option<ModelResponse>, AttemptError> {
        if data.trim() == "[DONE]" {
            return Ok(Some(self.response(events)));
        }
        let chunk: Chunk = sse::json(data)?;
        if let Some(error) = chunk.error {
            let field = |name: &str| error.get(name).and_then(Value::as_str);
            let code = field("code").or_else(|| field("type")).unwrap_or("error");
            let message = field("message").or(error.as_str()).unwrap_or_default();
            return Err(retry::stream_error(code, message));
        }
        if let Some(usage) = chunk.usage {
            self.usage = Some(Usage {
                input_tokens: usage.prompt_tokens,
                output_tokens: usage.completion_tokens,
            });
        }
        for choice in chunk.choices {
            let delta = choice.delta.unwrap_or(Delta {
                content: None,
                reasoning_content: None,
                reasoning: None,
                tool_calls: None,
            });
            let thought = delta.reasoning_content.or(delta.reasoning);
            if let Some(text) = thought.filter(|t| !t.is_empty()) {
                self.reasoning.push_str(&text);
                sse::emit(events, StreamEvent::ReasoningDelta(text));
            }
            if let Some(text) = delta.content.filter(|t| !t.is_empty()) {
                self.text.push_str(&text);
                sse::emit(events, StreamEvent::TextDelta(text));
            }
            for call in delta.tool_calls.unwrap_or_default() {
                self.call_delta(call, events);
            }
            if let Some(reason) = choice.finish_reason {
                self.ready_all(events);
                self.finish = Some(match reason.as_str() {
                    "stop" => FinishReason::Stop,
                    "tool_calls" | "function_call" => FinishReason::ToolCalls,
                    "length" => FinishReason::Length,
                    _ => FinishReason::Other { reason },
                });
            }
        }
        Ok(None)
    }

    fn end(&mut self, events: &UnboundedSender<StreamEvent>) -> Option<ModelResponse> {
        self.finish.is_some().then(|| self.response(events))
    }
}
