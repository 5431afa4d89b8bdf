//! The HTTP model providers against [`MockModel`] on 127.0.0.1, in each
//! wire format: streaming, tool-call assembly, retries, error mapping, and
//! the exact requests sent.

use std::time::Duration;

use serde_json::json;
use warden::provider::http::HttpProvider;
use warden::provider::{
    ApiKey, FinishReason, Message, ModelRequest, ModelResponse, ProviderConfig, ProviderError,
    RetryPolicy, StreamEvent, ToolCall, ToolDef, Usage, WireFormat,
};

use crate::mock_model::{MockModel, Reply, Script};

mod errors;
mod reasoning;
mod requests;
mod stalls;
mod whole;

const FORMATS: [WireFormat; 3] = [
    WireFormat::OpenAiChat,
    WireFormat::OpenAiResponses,
    WireFormat::Anthropic,
];

const KEY: &str = "sk-test-0123456789-SECRET";

/// Every turn in these tests finishes well within this.
const BOUND: Duration = Duration::from_secs(30);

fn retries(max_retries: u32) -> RetryPolicy {
    RetryPolicy {
        max_retries,
        initial_delay: Duration::from_millis(5),
        max_delay: Duration::from_millis(50),
        max_elapsed: Duration::from_secs(20),
    }
}

fn config(server: &MockModel, key: Option<&str>, retry: RetryPolicy) -> ProviderConfig {
    ProviderConfig {
        format: server.format(),
        base_url: server.base_url(),
        model: "mock-model".into(),
        api_key: key.map(ApiKey::new),
        retry,
        idle_timeout: Duration::from_secs(5),
    }
}

fn provider(server: &MockModel) -> HttpProvider {
    HttpProvider::new(config(server, Some(KEY), retries(3))).unwrap()
}

fn tools() -> Vec<ToolDef> {
    vec![ToolDef {
        name: "read_file".into(),
        description: "Read a file".into(),
        parameters: json!({"type": "object", "properties": {"path": {"type": "string"}},
            "required": ["path"]}),
    }]
}

fn ask(text: &str) -> ModelRequest {
    ModelRequest {
        model: "mock-model".into(),
        system: "You are terse.".into(),
        messages: vec![Message::User {
            content: text.into(),
        }],
        tools: tools(),
        max_output_tokens: None,
    }
}

/// Run one turn, bounded in time; the events it streamed.
async fn run(
    provider: &HttpProvider,
    request: &ModelRequest,
) -> (Result<ModelResponse, ProviderError>, Vec<StreamEvent>) {
    let (tx, mut rx) = tokio::sync::mpsc::unbounded_channel();
    let result = tokio::time::timeout(BOUND, provider.complete(request, &tx))
        .await
        .expect("the turn did not finish in time");
    drop(tx);
    let mut events = Vec::new();
    while let Ok(event) = rx.try_recv() {
        events.push(event);
    }
    (result, events)
}

fn text_deltas(events: &[StreamEvent]) -> Vec<String> {
    events
        .iter()
        .filter_map(|e| match e {
            StreamEvent::TextDelta(t) => Some(t.clone()),
            _ => None,
        })
        .collect()
}

fn ready_calls(events: &[StreamEvent]) -> Vec<ToolCall> {
    events
        .iter()
        .filter_map(|e| match e {
            StreamEvent::ToolCallReady(c) => Some(c.clone()),
            _ => None,
        })
        .collect()
}

fn retrying(events: &[StreamEvent]) -> Vec<(u32, Duration, String)> {
    events
        .iter()
        .filter_map(|e| match e {
            StreamEvent::Retrying {
                attempt,
                delay,
                reason,
            } => Some((*attempt, *delay, reason.clone())),
            _ => None,
        })
        .collect()
}

fn call(id: &str, name: &str, arguments: &str) -> ToolCall {
    ToolCall {
        id: id.into(),
        name: name.into(),
        arguments: arguments.into(),
    }
}

#[tokio::test]
async fn text_streams_in_order() {
    for format in FORMATS {
        let server = MockModel::start(format);
        server.push(Script::text("Hello, streaming world!").usage(42, 7));
        let (result, events) = run(&provider(&server), &ask("hi")).await;
        let response = result.unwrap();
        assert_eq!(response.text, "Hello, streaming world!", "{format:?}");
        let deltas = text_deltas(&events);
        assert!(
            deltas.len() > 3,
            "{format:?}: streamed in pieces: {deltas:?}"
        );
        assert_eq!(deltas.concat(), response.text, "{format:?}");
        assert_eq!(events.len(), deltas.len(), "{format:?}: only text events");
        assert_eq!(response.finish, FinishReason::Stop, "{format:?}");
        assert!(response.tool_calls.is_empty());
        let usage = Usage {
            input_tokens: 42,
            output_tokens: 7,
        };
        assert_eq!(response.usage, Some(usage), "{format:?}");
    }
}

#[tokio::test]
async fn parallel_tool_calls_are_assembled_in_order() {
    let calls = [
        (
            "call_1",
            "read_file",
            r#"{"path": "src/main.rs", "offset": 10}"#,
        ),
        (
            "call_2",
            "grep",
            r#"{"pattern": "fn main\\(", "path": "."}"#,
        ),
        ("call_3", "read_file", r#"{"path": "Cargo.toml"}"#),
    ];
    let expected: Vec<ToolCall> = calls.iter().map(|(i, n, a)| call(i, n, a)).collect();
    for format in FORMATS {
        let server = MockModel::start(format);
        server.push(Script::tool_calls(&calls).with_text("Let me look."));
        let (result, events) = run(&provider(&server), &ask("look")).await;
        let response = result.unwrap();
        assert_eq!(response.tool_calls, expected, "{format:?}");
        assert_eq!(response.text, "Let me look.", "{format:?}");
        assert_eq!(response.finish, FinishReason::ToolCalls, "{format:?}");
        assert_eq!(
            ready_calls(&events),
            expected,
            "{format:?}: one ready per call"
        );
        let first_ready = events
            .iter()
            .position(|e| matches!(e, StreamEvent::ToolCallReady(_)))
            .unwrap();
        assert!(
            events[first_ready..]
                .iter()
                .all(|e| matches!(e, StreamEvent::ToolCallReady(_))),
            "{format:?}: text first, then the calls: {events:?}"
        );
    }
}

#[tokio::test]
async fn malformed_arguments_and_unknown_tools_pass_through() {
    let calls = [
        ("call_a", "read_file", r#"{"path": "a.txt"#),
        ("call_b", "no_such_tool", r#"{"x": 1}"#),
        ("call_c", "read_file", "not json at all"),
    ];
    let expected: Vec<ToolCall> = calls.iter().map(|(i, n, a)| call(i, n, a)).collect();
    for format in FORMATS {
        let server = MockModel::start(format);
        server.push(Script::tool_calls(&calls));
        let (result, events) = run(&provider(&server), &ask("go")).await;
        assert_eq!(result.unwrap().tool_calls, expected, "{format:?}");
        assert_eq!(ready_calls(&events), expected, "{format:?}");
    }
}

#[tokio::test]
async fn finish_reasons_map_per_format() {
    for format in FORMATS {
        let server = MockModel::start(format);
        server.push(Script::text("trunc").finish(FinishReason::Length));
        server.push(Script::text("odd").finish(FinishReason::Other {
            reason: "content_filter".into(),
        }));
        let p = provider(&server);
        let (result, _) = run(&p, &ask("a")).await;
        assert_eq!(result.unwrap().finish, FinishReason::Length, "{format:?}");
        let (result, _) = run(&p, &ask("b")).await;
        let other = FinishReason::Other {
            reason: "content_filter".into(),
        };
        assert_eq!(result.unwrap().finish, other, "{format:?}");
    }
}

#[tokio::test]
async fn rate_limit_is_retried_after_retry_after() {
    for format in FORMATS {
        let server = MockModel::start(format);
        server.push(Reply::status(429, r#"{"error":{"message":"slow down"}}"#).retry_after("0"));
        server.push(Script::text("ok"));
        let (result, events) = run(&provider(&server), &ask("hi")).await;
        assert_eq!(result.unwrap().text, "ok", "{format:?}");
        let retries = retrying(&events);
        assert_eq!(retries.len(), 1, "{format:?}: {events:?}");
        let (attempt, delay, reason) = &retries[0];
        assert_eq!(*attempt, 1);
        assert_eq!(
            *delay,
            Duration::ZERO,
            "{format:?}: Retry-After: 0 honoured"
        );
        assert!(
            reason.contains("429") && reason.contains("slow down"),
            "{reason}"
        );
        assert_eq!(server.request_count(), 2, "{format:?}");
    }
}

#[tokio::test]
async fn server_errors_exhaust_the_retry_budget() {
    for format in FORMATS {
        let server = MockModel::start(format);
        for _ in 0..10 {
            server.push(Reply::status(500, r#"{"error":{"message":"boom"}}"#));
        }
        let p = HttpProvider::new(config(&server, Some(KEY), retries(2))).unwrap();
        let (result, events) = run(&p, &ask("hi")).await;
        match result {
            Err(ProviderError::RetriesExhausted { attempts, last }) => {
                assert_eq!(attempts, 3, "{format:?}");
                assert!(last.contains("500") && last.contains("boom"), "{last}");
            }
            other => panic!("{format:?}: expected RetriesExhausted, got {other:?}"),
        }
        assert_eq!(
            server.request_count(),
            3,
            "{format:?}: 1 attempt + 2 retries"
        );
        let attempts: Vec<u32> = retrying(&events).iter().map(|r| r.0).collect();
        assert_eq!(attempts, [1, 2], "{format:?}");
        for (_, delay, _) in retrying(&events) {
            assert!(delay <= Duration::from_millis(50), "capped by max_delay");
        }
    }
}

#[tokio::test]
async fn a_stream_cut_midway_is_retried() {
    for format in FORMATS {
        let server = MockModel::start(format);
        server.push(Reply::turn(Script::text("complete answer")).cut_after(4));
        server.push(Script::text("complete answer"));
        let (result, events) = run(&provider(&server), &ask("hi")).await;
        assert_eq!(result.unwrap().text, "complete answer", "{format:?}");
        let retries = retrying(&events);
        assert_eq!(retries.len(), 1, "{format:?}: {events:?}");
        assert!(
            retries[0]
                .2
                .starts_with("the stream ended before the response was complete"),
            "{format:?}: {}",
            retries[0].2
        );
        let at = events
            .iter()
            .position(|e| matches!(e, StreamEvent::Retrying { .. }))
            .unwrap();
        assert_eq!(
            text_deltas(&events[at..]).concat(),
            "complete answer",
            "{format:?}: everything streamed again after Retrying"
        );
    }
}

#[tokio::test]
async fn streams_ending_early_exhaust_with_a_clear_reason() {
    for format in FORMATS {
        let server = MockModel::start(format);
        let events = Script::text("never finished").render(format);
        // Clean ends before the terminal event, then a connection cut.
        server.push(Reply::events(events[..3].to_vec()));
        server.push(Reply::events(events[..events.len() - 3].to_vec()));
        server.push(Reply::turn(Script::text("never finished")).cut_after(2));
        let p = HttpProvider::new(config(&server, Some(KEY), retries(2))).unwrap();
        let (result, _) = run(&p, &ask("hi")).await;
        match result {
            Err(ProviderError::RetriesExhausted { attempts: 3, last }) => {
                assert!(
                    last.starts_with("the stream ended before the response was complete"),
                    "{format:?}: {last}"
                );
            }
            other => panic!("{format:?}: expected RetriesExhausted, got {other:?}"),
        }
    }
}

#[tokio::test]
async fn a_stalled_stream_times_out_and_is_retried() {
    for format in FORMATS {
        let server = MockModel::start(format);
        server.push(Reply::turn(Script::text("slow")).delay(Duration::from_millis(400)));
        server.push(Script::text("fast"));
        let mut cfg = config(&server, Some(KEY), retries(2));
        cfg.idle_timeout = Duration::from_millis(100);
        let (result, events) = run(&HttpProvider::new(cfg).unwrap(), &ask("hi")).await;
        assert_eq!(result.unwrap().text, "fast", "{format:?}");
        let retries = retrying(&events);
        assert_eq!(retries.len(), 1, "{format:?}");
        assert!(retries[0].2.contains("stalled"), "{}", retries[0].2);
    }
}

#[tokio::test]
async fn a_refused_loopback_connection_fails_at_once_naming_the_url() {
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    for host in ["127.0.0.1", "localhost"] {
        let cfg = ProviderConfig {
            format: WireFormat::OpenAiChat,
            base_url: format!("http://{host}:{port}/v1"),
            model: "m".into(),
            api_key: Some(ApiKey::new(KEY)),
            retry: retries(3),
            idle_timeout: Duration::from_secs(5),
        };
        let (result, events) = run(&HttpProvider::new(cfg).unwrap(), &ask("hi")).await;
        let url = format!("http://{host}:{port}/v1/chat/completions");
        match &result {
            Err(ProviderError::NotListening { url: u }) => assert_eq!(*u, url),
            other => panic!("{host}: expected NotListening, got {other:?}"),
        }
        let shown = result.unwrap_err().to_string();
        assert!(
            shown.contains("nothing is listening at") && shown.contains(&url),
            "{shown}"
        );
        assert!(retrying(&events).is_empty(), "{host}: not retried");
    }
}

#[tokio::test]
async fn openai_chat_accepts_a_clean_end_after_the_finish_reason() {
    let server = MockModel::start(WireFormat::OpenAiChat);
    let events = Script::text("no done marker").render(WireFormat::OpenAiChat);
    server.push(Reply::events(events[..events.len() - 1].to_vec()));
    let (result, events) = run(&provider(&server), &ask("hi")).await;
    assert_eq!(result.unwrap().text, "no done marker");
    assert!(retrying(&events).is_empty());
}

#[tokio::test]
async fn a_call_is_ready_before_the_turn_ends() {
    let calls = [
        ("call_1", "read_file", r#"{"path": "a"}"#),
        (
            "call_2",
            "read_file",
            r#"{"path": "a/much/longer/path/to/b"}"#,
        ),
    ];
    for format in FORMATS {
        let server = MockModel::start(format);
        server.push(Reply::turn(Script::tool_calls(&calls)).delay(Duration::from_millis(20)));
        let p = std::sync::Arc::new(provider(&server));
        let (tx, mut rx) = tokio::sync::mpsc::unbounded_channel();
        let turn = tokio::spawn({
            let p = p.clone();
            async move { p.complete(&ask("go"), &tx).await }
        });
        let first = tokio::time::timeout(BOUND, rx.recv()).await.unwrap();
        assert_eq!(
            first,
            Some(StreamEvent::ToolCallReady(call(
                calls[0].0, calls[0].1, calls[0].2
            ))),
            "{format:?}"
        );
        assert!(!turn.is_finished(), "{format:?}: call_2 is still streaming");
        let response = tokio::time::timeout(BOUND, turn).await.unwrap().unwrap();
        assert_eq!(response.unwrap().tool_calls.len(), 2, "{format:?}");
    }
}

/// The mock needs no runtime from its user: a plain blocking client (as a
/// `warden` subprocess would be) gets a scripted turn.
#[test]
fn the_mock_model_serves_sync_clients() {
    use std::io::{Read, Write};

    let server = MockModel::start(WireFormat::OpenAiChat);
    server.push(Script::text("sync"));
    let addr = server.base_url().replace("http://", "").replace("/v1", "");
    let mut stream = std::net::TcpStream::connect(addr).unwrap();
    stream.set_read_timeout(Some(BOUND)).unwrap();
    let body = r#"{"model":"m"}"#;
    write!(
        stream,
        "POST /v1/chat/completions HTTP/1.1\r\nhost: x\r\ncontent-type: application/json\r\n\
         content-length: {}\r\nconnection: close\r\n\r\n{body}",
        body.len()
    )
    .unwrap();
    let mut response = String::new();
    stream.read_to_string(&mut response).unwrap();
    assert!(response.starts_with("HTTP/1.1 200"), "{response}");
    assert!(response.contains("data: [DONE]"), "{response}");
    let requests = server.requests();
    assert_eq!(requests[0].path, "/v1/chat/completions");
    assert_eq!(requests[0].body, json!({"model": "m"}));
    assert_eq!(server.remaining(), 0);
}
