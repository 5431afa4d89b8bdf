//! The request body of Anthropic Messages: the conversation as content
//! blocks, thinking blocks first and unchanged in their assistant message.

use serde_json::{Value, json};

use super::super::super::{Message, ModelRequest, Reasoning};

/// `max_tokens` when the request sets no limit; the API requires one.
pub(in super::super) const DEFAULT_MAX_TOKENS: u32 = 8192;

/// The JSON body for `request`.
pub(in super::super) fn request_body(request: &ModelRequest) -> Value {
    let mut messages: Vec<Value> = Vec::with_capacity(request.messages.len());
    for message in &request.messages {
        match message {
            Message::User { content } => {
                push_user_block(&mut messages, json!({"type": "text", "text": content}));
            }
            Message::Assistant {
                content,
                tool_calls,
                reasoning,
            } => {
                let mut blocks = Vec::with_capacity(tool_calls.len() + reasoning.len() + 1);
                for r in reasoning {
                    match r {
                        Reasoning::Thinking {
                            thinking,
                            signature,
                        } => blocks.push(
                            json!({"type": "thinking", "thinking": thinking, "signature": signature}),
                        ),
                        Reasoning::RedactedThinking { data } => {
                            blocks.push(json!({"type": "redacted_thinking", "data": data}))
                        }
                        Reasoning::ResponsesItem { .. } | Reasoning::Text { .. } => {}
                    }
                }
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
