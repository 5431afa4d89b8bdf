//! A server that answers a streaming request with one JSON completion
//! (`Content-Type: application/json`, as some compatible servers do when
//! they do not stream): the body is rewritten as the events its stream
//! would have carried and fed to the wire format's own [`Decoder`], so a
//! whole response and a streamed one make the same turn.
//!
//! Invariant: a completion is read as one complete response, or refused
//! as a bad response when it has not the shape of its format's completion
//! (no `output` or `content` array, no choice) — never taken as an empty
//! answer.

use serde_json::{Value, json};
use tokio::sync::mpsc::UnboundedSender;

use super::super::{StreamEvent, WireFormat};
use super::retry::{self, Attempt, AttemptError};
use super::sse::{self, Decoder};

/// Read the completion `text` in `format`.
pub(super) fn read(
    text: &str,
    format: WireFormat,
    mut decoder: Box<dyn Decoder>,
    events: &UnboundedSender<StreamEvent>,
) -> Attempt {
    let body: Value = sse::json(text)?;
    if let Some(error) = body.get("error").filter(|e| !e.is_null()) {
        let field = |name: &str| error.get(name).and_then(Value::as_str);
        let code = field("code").or_else(|| field("type")).unwrap_or("error");
        let message = field("message").or(error.as_str()).unwrap_or_default();
        return Err(retry::stream_error(code, message));
    }
    let data = match format {
        WireFormat::OpenAiChat => openai_chat(&body),
        WireFormat::OpenAiResponses => openai_responses(&body),
        WireFormat::Anthropic => anthropic(&body),
    }
    .ok_or_else(|| {
        AttemptError::bad_response(format!(
            "the server sent JSON that is not a completion: {}",
            retry::excerpt(text)
        ))
    })?;
    for item in data {
        if let Some(response) = decoder.event(&item, events)? {
            return Ok(response);
        }
    }
    decoder.end(events).ok_or_else(|| {
        AttemptError::bad_response(format!(
            "the completion is incomplete: {}",
            retry::excerpt(text)
        ))
    })
}

/// One chunk per choice, its `message` as the `delta` (each tool call
/// given the `index` a stream would carry), then `[DONE]`.
fn openai_chat(body: &Value) -> Option<Vec<String>> {
    let choices = body.get("choices")?.as_array().filter(|c| !c.is_empty())?;
    let mut out = Vec::with_capacity(choices.len() + 1);
    for choice in choices {
        let mut delta = choice.get("message").cloned().unwrap_or(json!({}));
        if let Some(calls) = delta.get_mut("tool_calls").and_then(Value::as_array_mut) {
            for (index, call) in calls.iter_mut().enumerate() {
                if let Some(call) = call.as_object_mut() {
                    call.entry("index").or_insert(json!(index));
                }
            }
        }
        let chunk = json!({
            "choices": [{"delta": delta, "finish_reason": choice.get("finish_reason")}],
        });
        out.push(chunk.to_string());
    }
    if let Some(usage) = body.get("usage") {
        out.push(json!({"choices": [], "usage": usage}).to_string());
    }
    out.push("[DONE]".to_string());
    Some(out)
}

/// The `output` items as their stream events, then the terminal event its
/// `status` calls for, carrying the whole body as the `response`.
fn openai_responses(body: &Value) -> Option<Vec<String>> {
    let output = body.get("output")?.as_array()?;
    let mut out = Vec::new();
    for (index, item) in output.iter().enumerate() {
        match item.get("type").and_then(Value::as_str) {
            Some("message") => {
                let parts = item.get("content").and_then(Value::as_array);
                for part in parts.into_iter().flatten() {
                    if part.get("type").and_then(Value::as_str) == Some("output_text") {
                        let delta = part.get("text").cloned().unwrap_or(json!(""));
                        out.push(json!({"type": "response.output_text.delta", "delta": delta}));
                    }
                }
            }
            Some("reasoning") => {
                let summary = item.get("summary").and_then(Value::as_array);
                for (n, part) in summary.into_iter().flatten().enumerate() {
                    if n > 0 {
                        out.push(json!({"type": "response.reasoning_summary_part.added",
                            "summary_index": n}));
                    }
                    let delta = part.get("text").cloned().unwrap_or(json!(""));
                    out.push(json!({"type": "response.reasoning_summary_text.delta",
                        "delta": delta}));
                }
                out.push(json!({"type": "response.output_item.done", "item": item}));
            }
            Some("function_call") => {
                for kind in ["response.output_item.added", "response.output_item.done"] {
                    out.push(json!({"type": kind, "output_index": index, "item": item}));
                }
            }
            _ => {}
        }
    }
    let terminal = match body.get("status").and_then(Value::as_str) {
        Some("incomplete") => "response.incomplete",
        Some("failed") => "response.failed",
        _ => "response.completed",
    };
    out.push(json!({"type": terminal, "response": body}));
    Some(out.iter().map(Value::to_string).collect())
}

/// `message_start`, each content block given whole at its start, then the
/// stop reason and output usage, and `message_stop`.
fn anthropic(body: &Value) -> Option<Vec<String>> {
    let content = body.get("content")?.as_array()?;
    let usage = body.get("usage").cloned().unwrap_or(json!({}));
    let mut out = vec![json!({"type": "message_start", "message": {"usage": usage}})];
    for (index, block) in content.iter().enumerate() {
        out.push(json!({"type": "content_block_start", "index": index, "content_block": block}));
        out.push(json!({"type": "content_block_stop", "index": index}));
    }
    out.push(json!({
        "type": "message_delta",
        "delta": {"stop_reason": body.get("stop_reason")},
        "usage": {"output_tokens": usage.get("output_tokens").cloned().unwrap_or(json!(0))},
    }));
    out.push(json!({"type": "message_stop"}));
    Some(out.iter().map(Value::to_string).collect())
}
