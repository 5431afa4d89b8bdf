//! High-level model turns and their rendering as each wire format's SSE
//! events, text and arguments split into small chunks as real servers do.

use serde_json::{Value, json};
use warden::provider::{FinishReason, WireFormat};

use super::{default_finish, sse_event};

/// Characters per streamed chunk of text or arguments.
const CHUNK: usize = 3;

/// One model turn: reasoning, text, then tool calls, then the finish and usage.
#[derive(Debug, Clone, Default)]
pub struct Script {
    /// Reasoning streamed first, in the format's own shape.
    reasoning: Option<String>,
    text: String,
    /// (call id, tool name, argument text) in order.
    calls: Vec<(String, String, String)>,
    finish: Option<FinishReason>,
    usage: (u64, u64),
    /// Characters per streamed chunk; [`CHUNK`] when 0.
    chunk: usize,
}

impl Script {
    /// A turn that answers `text`.
    pub fn text(text: &str) -> Script {
        Script {
            text: text.to_string(),
            usage: (10, 5),
            ..Script::default()
        }
    }

    /// A turn that calls tools: `(call id, tool name, argument JSON text)`,
    /// the arguments sent verbatim (they may be malformed).
    pub fn tool_calls(calls: &[(&str, &str, &str)]) -> Script {
        Script {
            calls: calls
                .iter()
                .map(|(id, name, args)| (id.to_string(), name.to_string(), args.to_string()))
                .collect(),
            usage: (10, 5),
            ..Script::default()
        }
    }

    /// Text streamed before the tool calls.
    pub fn with_text(mut self, text: &str) -> Script {
        self.text = text.to_string();
        self
    }

    /// Reasoning streamed before anything else: `reasoning_content` deltas
    /// (Chat Completions); a `reasoning` item with a summary and
    /// [`encrypted`] content (Responses); a `thinking` block signed with
    /// [`signature`], then a `redacted_thinking` block holding [`redacted`]
    /// (Anthropic).
    pub fn with_reasoning(mut self, text: &str) -> Script {
        self.reasoning = Some(text.to_string());
        self
    }

    /// End with `finish` instead of the default (tool calls if any, else stop).
    pub fn finish(mut self, finish: FinishReason) -> Script {
        self.finish = Some(finish);
        self
    }

    /// Stream text and arguments in chunks of `chars` characters instead
    /// of [`CHUNK`] (for arguments of megabytes).
    pub fn chunk(mut self, chars: usize) -> Script {
        self.chunk = chars;
        self
    }

    /// Report this usage (default 10 in, 5 out).
    pub fn usage(mut self, input: u64, output: u64) -> Script {
        self.usage = (input, output);
        self
    }

    /// The turn as complete SSE event texts in `format`.
    pub fn render(&self, format: WireFormat) -> Vec<String> {
        match format {
            WireFormat::OpenAiChat => self.openai_chat(),
            WireFormat::OpenAiResponses => self.openai_responses(),
            WireFormat::Anthropic => self.anthropic(),
        }
    }

    /// The turn as the one JSON completion a server that does not stream
    /// answers in `format` (Anthropic `tool_use` inputs parsed, so the
    /// arguments must be a JSON object).
    pub fn completion(&self, format: WireFormat) -> Value {
        let (input, output) = self.usage;
        let finish = self.finish_reason();
        match format {
            WireFormat::OpenAiChat => {
                let calls: Vec<Value> = self
                    .calls
                    .iter()
                    .map(|(id, name, args)| {
                        json!({"id": id, "type": "function",
                            "function": {"name": name, "arguments": args}})
                    })
                    .collect();
                let mut message = json!({"role": "assistant",
                    "content": (!self.text.is_empty()).then_some(&self.text)});
                if !calls.is_empty() {
                    message["tool_calls"] = calls.into();
                }
                if let Some(reasoning) = &self.reasoning {
                    message["reasoning_content"] = reasoning.clone().into();
                }
                let reason = match finish {
                    FinishReason::Stop => "stop".to_string(),
                    FinishReason::ToolCalls => "tool_calls".to_string(),
                    FinishReason::Length => "length".to_string(),
                    FinishReason::Other { reason } => reason,
                };
                json!({"id": "chatcmpl-mock", "object": "chat.completion", "model": "mock",
                    "choices": [{"index": 0, "message": message, "finish_reason": reason}],
                    "usage": {"prompt_tokens": input, "completion_tokens": output,
                        "total_tokens": input + output}})
            }
            WireFormat::OpenAiResponses => {
                let mut items = Vec::new();
                if let Some(text) = &self.reasoning {
                    items.push(json!({"type": "reasoning", "id": "rs_mock",
                        "summary": [{"type": "summary_text", "text": text}],
                        "encrypted_content": encrypted(text)}));
                }
                if !self.text.is_empty() {
                    items.push(json!({"type": "message", "id": "msg_mock",
                        "role": "assistant", "status": "completed",
                        "content": [{"type": "output_text", "text": self.text,
                            "annotations": []}]}));
                }
                for (n, (call_id, name, args)) in self.calls.iter().enumerate() {
                    items.push(json!({"type": "function_call", "id": format!("fc_{n}"),
                        "call_id": call_id, "name": name, "arguments": args,
                        "status": "completed"}));
                }
                let (status, details) = match finish {
                    FinishReason::Stop | FinishReason::ToolCalls => ("completed", Value::Null),
                    FinishReason::Length => ("incomplete", json!({"reason": "max_output_tokens"})),
                    FinishReason::Other { reason } => ("incomplete", json!({"reason": reason})),
                };
                json!({"id": "resp_mock", "object": "response", "status": status,
                    "output": items, "error": null, "incomplete_details": details,
                    "usage": {"input_tokens": input, "output_tokens": output,
                        "total_tokens": input + output}})
            }
            WireFormat::Anthropic => {
                let mut content = Vec::new();
                if let Some(text) = &self.reasoning {
                    content.push(json!({"type": "thinking", "thinking": text,
                        "signature": signature(text)}));
                    content.push(json!({"type": "redacted_thinking", "data": redacted(text)}));
                }
                if !self.text.is_empty() {
                    content.push(json!({"type": "text", "text": self.text}));
                }
                for (id, name, args) in &self.calls {
                    let input: Value = serde_json::from_str(args).unwrap();
                    content.push(json!({"type": "tool_use", "id": id, "name": name,
                        "input": input}));
                }
                let reason = match finish {
                    FinishReason::Stop => "end_turn".to_string(),
                    FinishReason::ToolCalls => "tool_use".to_string(),
                    FinishReason::Length => "max_tokens".to_string(),
                    FinishReason::Other { reason } => reason,
                };
                json!({"id": "msg_mock", "type": "message", "role": "assistant",
                    "model": "mock", "content": content, "stop_reason": reason,
                    "stop_sequence": null,
                    "usage": {"input_tokens": input, "output_tokens": output}})
            }
        }
    }

    /// `text` in chunks of [`CHUNK`] characters (or the script's own size).
    fn pieces(&self, text: &str) -> Vec<String> {
        let size = if self.chunk == 0 { CHUNK } else { self.chunk };
        let chars: Vec<char> = text.chars().collect();
        chars.chunks(size).map(|c| c.iter().collect()).collect()
    }

    fn finish_reason(&self) -> FinishReason {
        self.finish
            .clone()
            .unwrap_or_else(|| default_finish(!self.calls.is_empty()))
    }

    fn openai_chat(&self) -> Vec<String> {
        let chunk = |delta: Value, finish: Value| {
            let data = json!({
                "id": "chatcmpl-mock",
                "object": "chat.completion.chunk",
                "model": "mock",
                "choices": [{"index": 0, "delta": delta, "finish_reason": finish}],
            });
            sse_event(None, &data.to_string())
        };
        let mut out = vec![chunk(
            json!({"role": "assistant", "content": ""}),
            Value::Null,
        )];
        for piece in self.pieces(self.reasoning.as_deref().unwrap_or_default()) {
            out.push(chunk(json!({"reasoning_content": piece}), Value::Null));
        }
        for piece in self.pieces(&self.text) {
            out.push(chunk(json!({"content": piece}), Value::Null));
        }
        for (index, (id, name, args)) in self.calls.iter().enumerate() {
            let first = json!({"index": index, "id": id, "type": "function",
                "function": {"name": name, "arguments": ""}});
            out.push(chunk(json!({"tool_calls": [first]}), Value::Null));
            for piece in self.pieces(args) {
                let more = json!({"index": index, "function": {"arguments": piece}});
                out.push(chunk(json!({"tool_calls": [more]}), Value::Null));
            }
        }
        let reason = match self.finish_reason() {
            FinishReason::Stop => "stop".to_string(),
            FinishReason::ToolCalls => "tool_calls".to_string(),
            FinishReason::Length => "length".to_string(),
            FinishReason::Other { reason } => reason,
        };
        out.push(chunk(json!({}), json!(reason)));
        let (input, output) = self.usage;
        let usage = json!({"id": "chatcmpl-mock", "choices": [], "usage": {
            "prompt_tokens": input, "completion_tokens": output, "total_tokens": input + output}});
        out.push(sse_event(None, &usage.to_string()));
        out.push(sse_event(None, "[DONE]"));
        out
    }

    fn openai_responses(&self) -> Vec<String> {
        let ev = |data: Value| {
            let name = data["type"].as_str().unwrap_or_default().to_string();
            sse_event(Some(&name), &data.to_string())
        };
        let mut out = vec![ev(json!({"type": "response.created",
            "response": {"id": "resp_mock", "status": "in_progress"}}))];
        let mut index = 0;
        if let Some(text) = &self.reasoning {
            let item = |summary: Value| {
                json!({"type": "reasoning", "id": "rs_mock", "summary": summary,
                    "encrypted_content": encrypted(text)})
            };
            out.push(ev(json!({"type": "response.output_item.added",
                "output_index": index, "item": item(json!([]))})));
            out.push(ev(json!({"type": "response.reasoning_summary_part.added",
                "item_id": "rs_mock", "output_index": index, "summary_index": 0,
                "part": {"type": "summary_text", "text": ""}})));
            for piece in self.pieces(text) {
                out.push(ev(json!({"type": "response.reasoning_summary_text.delta",
                    "item_id": "rs_mock", "output_index": index, "summary_index": 0,
                    "delta": piece})));
            }
            let done = item(json!([{"type": "summary_text", "text": text}]));
            out.push(ev(json!({"type": "response.output_item.done",
                "output_index": index, "item": done})));
            index += 1;
        }
        if !self.text.is_empty() {
            let item = json!({"type": "message", "id": "msg_mock", "role": "assistant",
                "status": "in_progress", "content": []});
            out.push(ev(json!({"type": "response.output_item.added",
                "output_index": index, "item": item})));
            for piece in self.pieces(&self.text) {
                out.push(ev(
                    json!({"type": "response.output_text.delta", "item_id": "msg_mock",
                    "output_index": index, "content_index": 0, "delta": piece}),
                ));
            }
            out.push(ev(
                json!({"type": "response.output_text.done", "item_id": "msg_mock",
                "output_index": index, "content_index": 0, "text": self.text}),
            ));
            let done = json!({"type": "message", "id": "msg_mock", "role": "assistant",
                "status": "completed",
                "content": [{"type": "output_text", "text": self.text, "annotations": []}]});
            out.push(ev(json!({"type": "response.output_item.done",
                "output_index": index, "item": done})));
            index += 1;
        }
        for (n, (call_id, name, args)) in self.calls.iter().enumerate() {
            let item_id = format!("fc_{n}");
            let item = |arguments: &str, status: &str| {
                json!({"type": "function_call", "id": item_id, "call_id": call_id,
                    "name": name, "arguments": arguments, "status": status})
            };
            out.push(ev(json!({"type": "response.output_item.added",
                "output_index": index, "item": item("", "in_progress")})));
            for piece in self.pieces(args) {
                out.push(ev(json!({"type": "response.function_call_arguments.delta",
                    "item_id": item_id, "output_index": index, "delta": piece})));
            }
            out.push(ev(json!({"type": "response.function_call_arguments.done",
                "item_id": item_id, "output_index": index, "arguments": args})));
            out.push(ev(json!({"type": "response.output_item.done",
                "output_index": index, "item": item(args, "completed")})));
            index += 1;
        }
        let (input, output) = self.usage;
        let usage =
            json!({"input_tokens": input, "output_tokens": output, "total_tokens": input + output});
        out.push(match self.finish_reason() {
            FinishReason::Stop | FinishReason::ToolCalls => {
                ev(json!({"type": "response.completed",
                "response": {"id": "resp_mock", "status": "completed", "usage": usage}}))
            }
            FinishReason::Length => ev(json!({"type": "response.incomplete",
                "response": {"id": "resp_mock", "status": "incomplete", "usage": usage,
                    "incomplete_details": {"reason": "max_output_tokens"}}})),
            FinishReason::Other { reason } => ev(json!({"type": "response.incomplete",
                "response": {"id": "resp_mock", "status": "incomplete", "usage": usage,
                    "incomplete_details": {"reason": reason}}})),
        });
        out
    }

    fn anthropic(&self) -> Vec<String> {
        let ev = |data: Value| {
            let name = data["type"].as_str().unwrap_or_default().to_string();
            sse_event(Some(&name), &data.to_string())
        };
        let (input, output) = self.usage;
        let mut out = vec![
            ev(
                json!({"type": "message_start", "message": {"id": "msg_mock", "type": "message",
                "role": "assistant", "content": [], "model": "mock", "stop_reason": null,
                "usage": {"input_tokens": input, "output_tokens": 1}}}),
            ),
            ev(json!({"type": "ping"})),
        ];
        let mut index = 0;
        if let Some(text) = &self.reasoning {
            out.push(ev(json!({"type": "content_block_start", "index": index,
                "content_block": {"type": "thinking", "thinking": "", "signature": ""}})));
            for piece in self.pieces(text) {
                out.push(ev(json!({"type": "content_block_delta", "index": index,
                    "delta": {"type": "thinking_delta", "thinking": piece}})));
            }
            let sig = signature(text);
            let (a, b) = sig.split_at(sig.len() / 2);
            for part in [a, b] {
                out.push(ev(json!({"type": "content_block_delta", "index": index,
                    "delta": {"type": "signature_delta", "signature": part}})));
            }
            out.push(ev(json!({"type": "content_block_stop", "index": index})));
            out.push(ev(
                json!({"type": "content_block_start", "index": index + 1,
                "content_block": {"type": "redacted_thinking", "data": redacted(text)}}),
            ));
            out.push(ev(
                json!({"type": "content_block_stop", "index": index + 1}),
            ));
            index += 2;
        }
        if !self.text.is_empty() {
            out.push(ev(json!({"type": "content_block_start", "index": index,
                "content_block": {"type": "text", "text": ""}})));
            for piece in self.pieces(&self.text) {
                out.push(ev(json!({"type": "content_block_delta", "index": index,
                    "delta": {"type": "text_delta", "text": piece}})));
            }
            out.push(ev(json!({"type": "content_block_stop", "index": index})));
            index += 1;
        }
        for (id, name, args) in &self.calls {
            out.push(ev(json!({"type": "content_block_start", "index": index,
                "content_block": {"type": "tool_use", "id": id, "name": name, "input": {}}})));
            for piece in self.pieces(args) {
                out.push(ev(json!({"type": "content_block_delta", "index": index,
                    "delta": {"type": "input_json_delta", "partial_json": piece}})));
            }
            out.push(ev(json!({"type": "content_block_stop", "index": index})));
            index += 1;
        }
        let reason = match self.finish_reason() {
            FinishReason::Stop => "end_turn".to_string(),
            FinishReason::ToolCalls => "tool_use".to_string(),
            FinishReason::Length => "max_tokens".to_string(),
            FinishReason::Other { reason } => reason,
        };
        out.push(ev(json!({"type": "message_delta",
            "delta": {"stop_reason": reason, "stop_sequence": null},
            "usage": {"output_tokens": output}})));
        out.push(ev(json!({"type": "message_stop"})));
        out
    }
}

/// The signature of the Anthropic thinking block for `text`.
pub fn signature(text: &str) -> String {
    format!("SIG{}x{}", text.len(), "Eq".repeat(8))
}

/// The data of the Anthropic redacted thinking block for `text`.
pub fn redacted(text: &str) -> String {
    format!("REDACTED{}", text.len())
}

/// The `encrypted_content` of the Responses reasoning item for `text`.
pub fn encrypted(text: &str) -> String {
    format!("gAAAA-ENC{}", text.len())
}
