//! A server that answers the streaming request with one JSON completion:
//! read as the same turn its stream would have made, in every format.

use super::*;

#[tokio::test]
async fn a_json_completion_is_the_same_turn_as_its_stream() {
    let scripts = [
        Script::text("Hello, whole world!")
            .with_reasoning("think first")
            .usage(42, 7),
        Script::tool_calls(&[
            ("call_1", "read_file", r#"{"path":"a.txt"}"#),
            ("call_2", "grep", r#"{"path":".","pattern":"fn main"}"#),
        ])
        .with_text("Looking."),
        Script::text("cut short").finish(FinishReason::Length),
    ];
    for format in FORMATS {
        for script in &scripts {
            let server = MockModel::start(format);
            server.push(script.clone());
            server.push(Reply::completion(script.clone()));
            let p = provider(&server);
            let (streamed, _) = run(&p, &ask("hi")).await;
            let (whole, events) = run(&p, &ask("hi")).await;
            let whole = whole.unwrap();
            assert_eq!(whole, streamed.unwrap(), "{format:?}");
            assert!(!whole.text.is_empty() || !whole.tool_calls.is_empty());
            assert_eq!(text_deltas(&events).concat(), whole.text, "{format:?}");
            assert_eq!(ready_calls(&events), whole.tool_calls, "{format:?}");
            assert!(retrying(&events).is_empty(), "{format:?}: {events:?}");
            assert_eq!(server.request_count(), 2);
        }
    }
}

#[tokio::test]
async fn an_error_in_a_json_body_is_classified_like_one_in_a_stream() {
    for format in FORMATS {
        let server = MockModel::start(format);
        server.push(Reply::status(
            200,
            r#"{"type":"error","error":{"type":"overloaded_error","message":"busy"}}"#,
        ));
        server.push(Reply::completion(Script::text("recovered")));
        let (result, events) = run(&provider(&server), &ask("hi")).await;
        assert_eq!(result.unwrap().text, "recovered", "{format:?}");
        assert_eq!(retrying(&events).len(), 1, "{format:?}");
    }
}
