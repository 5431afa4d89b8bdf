//! Reasoning in each wire format's own shapes, at the provider level: what
//! streams, what the response keeps, and what the next request carries.

use serde_json::json;
use warden::provider::Reasoning;

use super::*;
use crate::mock_model::sse_event;

fn reasoning_deltas(events: &[StreamEvent]) -> String {
    events
        .iter()
        .filter_map(|e| match e {
            StreamEvent::ReasoningDelta(t) => Some(t.as_str()),
            _ => None,
        })
        .collect()
}

#[tokio::test]
async fn chat_servers_reasoning_is_shown_and_kept_but_not_sent_back() {
    let server = MockModel::start(WireFormat::OpenAiChat);
    let chunk = |delta: serde_json::Value, finish: serde_json::Value| {
        let data = json!({"choices": [{"index": 0, "delta": delta, "finish_reason": finish}]});
        sse_event(None, &data.to_string())
    };
    // DeepSeek and llama.cpp say `reasoning_content`; Ollama says `reasoning`.
    server.push(Reply::events([
        chunk(json!({"reasoning_content": "First, "}), json!(null)),
        chunk(json!({"reasoning": "think."}), json!(null)),
        chunk(json!({"content": "Answer."}), json!("stop")),
        sse_event(None, "[DONE]"),
    ]));
    server.push(Script::text("ok"));
    let provider = provider(&server);
    let (result, events) = run(&provider, &ask("hi")).await;
    let response = result.unwrap();
    assert_eq!(reasoning_deltas(&events), "First, think.");
    assert_eq!(
        response.reasoning,
        [Reasoning::Text {
            text: "First, think.".into()
        }]
    );
    let mut next = ask("hi");
    next.messages.push(Message::Assistant {
        content: response.text,
        tool_calls: vec![],
        reasoning: response.reasoning,
    });
    next.messages.push(Message::User {
        content: "more".into(),
    });
    run(&provider, &next).await.0.unwrap();
    let body = server.requests()[1].body.to_string();
    assert!(
        !body.contains("think.") && !body.contains("reasoning"),
        "{body}"
    );
}

#[tokio::test]
async fn responses_summary_parts_stream_as_paragraphs_and_the_item_is_kept_whole() {
    let server = MockModel::start(WireFormat::OpenAiResponses);
    let ev = |data: serde_json::Value| {
        sse_event(Some(data["type"].as_str().unwrap()), &data.to_string())
    };
    let item = json!({"type": "reasoning", "id": "rs_1", "encrypted_content": "gAAAA-opaque",
        "summary": [{"type": "summary_text", "text": "One."},
                    {"type": "summary_text", "text": "Two."}]});
    server.push(Reply::events([
        ev(
            json!({"type": "response.output_item.added", "output_index": 0,
            "item": {"type": "reasoning", "id": "rs_1", "summary": []}}),
        ),
        ev(
            json!({"type": "response.reasoning_summary_part.added", "item_id": "rs_1",
            "output_index": 0, "summary_index": 0}),
        ),
        ev(
            json!({"type": "response.reasoning_summary_text.delta", "item_id": "rs_1",
            "output_index": 0, "summary_index": 0, "delta": "One."}),
        ),
        ev(
            json!({"type": "response.reasoning_summary_part.added", "item_id": "rs_1",
            "output_index": 0, "summary_index": 1}),
        ),
        ev(
            json!({"type": "response.reasoning_summary_text.delta", "item_id": "rs_1",
            "output_index": 0, "summary_index": 1, "delta": "Two."}),
        ),
        ev(json!({"type": "response.output_item.done", "output_index": 0, "item": item})),
        ev(json!({"type": "response.output_text.delta", "output_index": 1, "delta": "Hi."})),
        ev(json!({"type": "response.completed", "response": {"id": "r", "status": "completed"}})),
    ]));
    let (result, events) = run(&provider(&server), &ask("hi")).await;
    let response = result.unwrap();
    assert_eq!(reasoning_deltas(&events), "One.\n\nTwo.");
    assert_eq!(
        response.reasoning,
        [Reasoning::ResponsesItem { item: item.clone() }]
    );
    assert_eq!(response.reasoning[0].text(), "One.\nTwo.");
}
