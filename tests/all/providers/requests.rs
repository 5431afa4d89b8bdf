//! The exact requests each wire format sends: path, headers and body,
//! with a history holding parallel tool calls and their results.

use serde_json::Value;

use super::*;
use crate::mock_model::RecordedRequest;

/// A conversation with two parallel calls and their results, then a call
/// whose arguments the model garbled, its error result, and a user nudge.
fn history(max_output_tokens: Option<u32>) -> ModelRequest {
    ModelRequest {
        model: "mock-model".into(),
        system: "You are terse.".into(),
        messages: vec![
            Message::User {
                content: "Which files mention main?".into(),
            },
            Message::Assistant {
                content: "Checking.".into(),
                tool_calls: vec![
                    call("call_1", "read_file", r#"{"path":"src/main.rs"}"#),
                    call("call_2", "grep", r#"{"pattern":"main"}"#),
                ],
                reasoning: vec![],
            },
            Message::Tool {
                call_id: "call_1".into(),
                name: "read_file".into(),
                content: "fn main() {}".into(),
                is_error: false,
            },
            Message::Tool {
                call_id: "call_2".into(),
                name: "grep".into(),
                content: "denied by policy".into(),
                is_error: true,
            },
            Message::Assistant {
                content: String::new(),
                tool_calls: vec![call("call_3", "read_file", r#"{"path": "#)],
                reasoning: vec![],
            },
            Message::Tool {
                call_id: "call_3".into(),
                name: "read_file".into(),
                content: "invalid arguments".into(),
                is_error: true,
            },
            Message::User {
                content: "Go on.".into(),
            },
        ],
        tools: tools(),
        max_output_tokens,
    }
}

fn schema() -> Value {
    tools()[0].parameters.clone()
}

/// Send `request` once; the one request the server saw.
async fn sent(format: WireFormat, key: Option<&str>, request: &ModelRequest) -> RecordedRequest {
    let server = MockModel::start(format);
    server.push(Script::text("ok"));
    let p = HttpProvider::new(config(&server, key, retries(0))).unwrap();
    run(&p, request).await.0.unwrap();
    let mut requests = server.requests();
    assert_eq!(requests.len(), 1);
    requests.remove(0)
}

#[tokio::test]
async fn openai_chat_request() {
    let r = sent(WireFormat::OpenAiChat, Some(KEY), &history(Some(1000))).await;
    assert_eq!(r.method, "POST");
    assert_eq!(r.path, "/v1/chat/completions");
    assert_eq!(r.header("authorization"), Some(&*format!("Bearer {KEY}")));
    assert_eq!(r.header("content-type"), Some("application/json"));
    assert_eq!(r.header("accept"), Some("text/event-stream"));
    let expected = json!({
        "model": "mock-model",
        "stream": true,
        "stream_options": {"include_usage": true},
        "max_tokens": 1000,
        "messages": [
            {"role": "system", "content": "You are terse."},
            {"role": "user", "content": "Which files mention main?"},
            {"role": "assistant", "content": "Checking.", "tool_calls": [
                {"id": "call_1", "type": "function",
                 "function": {"name": "read_file", "arguments": r#"{"path":"src/main.rs"}"#}},
                {"id": "call_2", "type": "function",
                 "function": {"name": "grep", "arguments": r#"{"pattern":"main"}"#}},
            ]},
            {"role": "tool", "tool_call_id": "call_1", "content": "fn main() {}"},
            {"role": "tool", "tool_call_id": "call_2", "content": "denied by policy"},
            {"role": "assistant", "content": null, "tool_calls": [
                {"id": "call_3", "type": "function",
                 "function": {"name": "read_file", "arguments": r#"{"path": "#}},
            ]},
            {"role": "tool", "tool_call_id": "call_3", "content": "invalid arguments"},
            {"role": "user", "content": "Go on."},
        ],
        "tools": [{"type": "function", "function": {
            "name": "read_file", "description": "Read a file", "parameters": schema()}}],
    });
    assert_eq!(r.body, expected);
}

#[tokio::test]
async fn openai_responses_request() {
    let r = sent(WireFormat::OpenAiResponses, Some(KEY), &history(Some(1000))).await;
    assert_eq!(r.path, "/v1/responses");
    assert_eq!(r.header("authorization"), Some(&*format!("Bearer {KEY}")));
    let expected = json!({
        "model": "mock-model",
        "stream": true,
        "instructions": "You are terse.",
        "max_output_tokens": 1000,
        "input": [
            {"role": "user", "content": "Which files mention main?"},
            {"type": "message", "role": "assistant",
             "content": [{"type": "output_text", "text": "Checking."}]},
            {"type": "function_call", "call_id": "call_1", "name": "read_file",
             "arguments": r#"{"path":"src/main.rs"}"#},
            {"type": "function_call", "call_id": "call_2", "name": "grep",
             "arguments": r#"{"pattern":"main"}"#},
            {"type": "function_call_output", "call_id": "call_1", "output": "fn main() {}"},
            {"type": "function_call_output", "call_id": "call_2", "output": "denied by policy"},
            {"type": "function_call", "call_id": "call_3", "name": "read_file",
             "arguments": r#"{"path": "#},
            {"type": "function_call_output", "call_id": "call_3", "output": "invalid arguments"},
            {"role": "user", "content": "Go on."},
        ],
        "tools": [{"type": "function", "name": "read_file", "description": "Read a file",
                   "parameters": schema()}],
    });
    assert_eq!(r.body, expected);
}

#[tokio::test]
async fn anthropic_request() {
    let r = sent(WireFormat::Anthropic, Some(KEY), &history(None)).await;
    assert_eq!(r.path, "/v1/messages");
    assert_eq!(r.header("x-api-key"), Some(KEY));
    assert_eq!(r.header("anthropic-version"), Some("2023-06-01"));
    assert_eq!(r.header("authorization"), None);
    let expected = json!({
        "model": "mock-model",
        "max_tokens": 8192,
        "stream": true,
        "system": "You are terse.",
        "messages": [
            {"role": "user", "content": [{"type": "text", "text": "Which files mention main?"}]},
            {"role": "assistant", "content": [
                {"type": "text", "text": "Checking."},
                {"type": "tool_use", "id": "call_1", "name": "read_file",
                 "input": {"path": "src/main.rs"}},
                {"type": "tool_use", "id": "call_2", "name": "grep", "input": {"pattern": "main"}},
            ]},
            {"role": "user", "content": [
                {"type": "tool_result", "tool_use_id": "call_1", "content": "fn main() {}",
                 "is_error": false},
                {"type": "tool_result", "tool_use_id": "call_2", "content": "denied by policy",
                 "is_error": true},
            ]},
            {"role": "assistant", "content": [
                {"type": "tool_use", "id": "call_3", "name": "read_file", "input": {}},
            ]},
            {"role": "user", "content": [
                {"type": "tool_result", "tool_use_id": "call_3", "content": "invalid arguments",
                 "is_error": true},
                {"type": "text", "text": "Go on."},
            ]},
        ],
        "tools": [{"name": "read_file", "description": "Read a file", "input_schema": schema()}],
    });
    assert_eq!(r.body, expected);
    let r = sent(WireFormat::Anthropic, Some(KEY), &history(Some(1000))).await;
    assert_eq!(r.body["max_tokens"], 1000);
}

#[tokio::test]
async fn no_key_sends_no_auth_header() {
    for format in FORMATS {
        let r = sent(format, None, &ask("hi")).await;
        assert_eq!(r.header("authorization"), None, "{format:?}");
        assert_eq!(r.header("x-api-key"), None, "{format:?}");
    }
}

#[tokio::test]
async fn an_empty_system_prompt_and_no_tools_are_left_out() {
    let mut request = ask("hi");
    request.system.clear();
    request.tools.clear();
    for format in FORMATS {
        let body = sent(format, None, &request).await.body;
        assert!(body.get("tools").is_none(), "{format:?}");
        assert!(body.get("system").is_none() && body.get("instructions").is_none());
        if format == WireFormat::OpenAiChat {
            assert_eq!(body["messages"][0]["role"], "user");
        }
    }
}

#[test]
fn describe_names_format_and_model() {
    let cfg = |format| ProviderConfig {
        format,
        base_url: "http://localhost:11434/v1".into(),
        model: "qwen3".into(),
        api_key: None,
        retry: RetryPolicy::default(),
        idle_timeout: Duration::from_secs(1),
    };
    let names: Vec<String> = FORMATS
        .iter()
        .map(|f| HttpProvider::new(cfg(*f)).unwrap().describe())
        .collect();
    assert_eq!(
        names,
        [
            "openai-chat qwen3",
            "openai-responses qwen3",
            "anthropic qwen3"
        ]
    );
    let mut bad = cfg(WireFormat::OpenAiChat);
    bad.base_url = "localhost:11434".into();
    assert!(HttpProvider::new(bad).is_err());
}
