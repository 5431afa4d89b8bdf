//! Failures that are not retried, errors reported inside a stream, and
//! the API key kept out of every error.

use super::*;
use crate::mock_model::sse_event;

#[tokio::test]
async fn unauthorized_is_auth_without_retry() {
    for format in FORMATS {
        for status in [401, 403] {
            let server = MockModel::start(format);
            server.push(Reply::status(
                status,
                r#"{"error":{"message":"invalid x-api-key"}}"#,
            ));
            server.push(Script::text("never served"));
            let (result, events) = run(&provider(&server), &ask("hi")).await;
            match result {
                Err(ProviderError::Auth { status: s, message }) => {
                    assert_eq!(s, status);
                    assert_eq!(message, "invalid x-api-key");
                }
                other => panic!("{format:?}: expected Auth, got {other:?}"),
            }
            assert_eq!(server.request_count(), 1, "{format:?}: not retried");
            assert!(events.is_empty());
        }
    }
}

#[tokio::test]
async fn context_overflow_is_context_length() {
    for format in FORMATS {
        let server = MockModel::start(format);
        server.push(Reply::context_overflow());
        let (result, _) = run(&provider(&server), &ask("hi")).await;
        assert!(
            matches!(result, Err(ProviderError::ContextLength { .. })),
            "{format:?}: {result:?}"
        );
        assert_eq!(server.request_count(), 1);
    }
}

#[tokio::test]
async fn other_client_errors_are_bad_requests_without_retry() {
    for format in FORMATS {
        let server = MockModel::start(format);
        server.push(Reply::status(
            404,
            r#"{"error":{"message":"model 'nope' not found"}}"#,
        ));
        let (result, _) = run(&provider(&server), &ask("hi")).await;
        match result {
            Err(ProviderError::BadRequest { status, message }) => {
                assert_eq!(status, 404);
                assert_eq!(message, "model 'nope' not found");
            }
            other => panic!("{format:?}: expected BadRequest, got {other:?}"),
        }
        assert_eq!(server.request_count(), 1);
    }
}

#[tokio::test]
async fn malformed_event_json_is_a_bad_response_without_retry() {
    for format in FORMATS {
        let server = MockModel::start(format);
        server.push(Reply::events([sse_event(None, "{\"choices\": [")]));
        server.push(Script::text("never served"));
        let (result, _) = run(&provider(&server), &ask("hi")).await;
        assert!(
            matches!(&result, Err(ProviderError::BadResponse(m)) if m.contains("not the JSON")),
            "{format:?}: {result:?}"
        );
        assert_eq!(server.request_count(), 1, "{format:?}");
    }
}

#[tokio::test]
async fn json_that_is_not_a_completion_is_a_bad_response_without_retry() {
    for (format, body) in [
        (WireFormat::OpenAiChat, r#"{"choices":[]}"#),
        (WireFormat::OpenAiChat, r#"{"object":"list","data":[]}"#),
        (
            WireFormat::OpenAiResponses,
            r#"{"id":"resp_1","status":"completed"}"#,
        ),
        (WireFormat::Anthropic, r#"{"id":"msg_1","type":"message"}"#),
        (WireFormat::Anthropic, "[1, 2]"),
    ] {
        let server = MockModel::start(format);
        server.push(Reply::status(200, body));
        server.push(Script::text("never served"));
        let (result, _) = run(&provider(&server), &ask("hi")).await;
        assert!(
            matches!(&result, Err(ProviderError::BadResponse(m)) if m.contains("not a completion")),
            "{format:?} {body}: {result:?}"
        );
        assert_eq!(server.request_count(), 1, "{format:?}");
    }
}

#[tokio::test]
async fn errors_inside_the_stream_are_classified() {
    let overloaded = [
        (
            WireFormat::Anthropic,
            sse_event(
                Some("error"),
                r#"{"type":"error","error":{"type":"overloaded_error","message":"Overloaded"}}"#,
            ),
        ),
        (
            WireFormat::OpenAiResponses,
            sse_event(
                Some("response.failed"),
                r#"{"type":"response.failed","response":{"status":"failed","error":{"code":"server_error","message":"try again"}}}"#,
            ),
        ),
        (
            WireFormat::OpenAiChat,
            sse_event(
                None,
                r#"{"error":{"message":"overloaded","type":"server_error"}}"#,
            ),
        ),
    ];
    for (format, event) in overloaded {
        let server = MockModel::start(format);
        server.push(Reply::events([event]));
        server.push(Script::text("recovered"));
        let (result, events) = run(&provider(&server), &ask("hi")).await;
        assert_eq!(result.unwrap().text, "recovered", "{format:?}");
        assert_eq!(retrying(&events).len(), 1, "{format:?}");
    }

    let server = MockModel::start(WireFormat::OpenAiResponses);
    server.push(Reply::events([sse_event(
        Some("error"),
        r#"{"type":"error","code":"context_length_exceeded","message":"Your input exceeds the context window of this model."}"#,
    )]));
    let (result, _) = run(&provider(&server), &ask("hi")).await;
    assert!(
        matches!(result, Err(ProviderError::ContextLength { .. })),
        "{result:?}"
    );
}

#[tokio::test]
async fn the_api_key_never_appears_in_errors() {
    for format in FORMATS {
        let server = MockModel::start(format);
        // A server that echoes the key back is the worst case.
        let echo = format!(r#"{{"error":{{"message":"bad key {KEY}"}}}}"#);
        server.push(Reply::status(401, echo.clone()));
        server.push(Reply::status(400, echo.clone()));
        for _ in 0..2 {
            server.push(Reply::status(503, echo.clone()));
        }
        server.push(Reply::events([sse_event(None, KEY)]));
        let cfg = config(&server, Some(KEY), retries(1));
        assert!(!format!("{cfg:?}").contains(KEY));
        let p = HttpProvider::new(cfg).unwrap();
        for _ in 0..4 {
            let (result, events) = run(&p, &ask("hi")).await;
            let error = result.unwrap_err();
            let shown = format!("{error} {error:?} {events:?}");
            assert!(!shown.contains(KEY), "{format:?}: {shown}");
            assert!(shown.contains("<redacted>"), "{format:?}: {shown}");
        }
        assert!(server.requests().iter().all(|r| {
            let header = r
                .header("authorization")
                .or(r.header("x-api-key"))
                .unwrap_or_default();
            header.ends_with(KEY)
        }));
    }
}
