//! Reasoning, end to end over the mock model in each wire format: streamed
//! as `reasoning` events, kept in the session record, and sent back
//! unchanged where the format wants it (Anthropic thinking blocks with
//! their signatures, Responses reasoning items with their encrypted
//! content), but not to Chat Completions servers.

use serde_json::{Value, json};
use warden::provider::{Message, Reasoning, WireFormat};

use crate::agent::load_session;
use crate::agent_http::{KEY, key_var, provider_flag};
use crate::mock_model::{MockModel, Script, encrypted, redacted, signature};
use crate::support::{Sandbox, shared_home, warden};

const THOUGHT: &str = "The user wants a.txt; read it before answering.";

fn run(format: WireFormat, sb: &Sandbox, json: bool) -> (MockModel, std::process::Output) {
    let server = MockModel::start(format);
    server.push(
        Script::tool_calls(&[("c1", "read_file", r#"{"path":"a.txt"}"#)])
            .with_reasoning(THOUGHT)
            .with_text("Reading."),
    );
    server.push(Script::text("It says alpha."));
    let mut cmd = warden(shared_home());
    cmd.env(key_var(format), KEY)
        .args([
            "run",
            "--provider",
            provider_flag(format),
            "--policy",
            "read-only",
        ])
        .args(["--base-url", &server.base_url(), "-w"])
        .arg(sb.ws());
    if json {
        cmd.arg("--json");
    }
    let out = cmd.arg("read a.txt").output().unwrap();
    (server, out)
}

#[test]
fn reasoning_is_streamed_recorded_and_sent_back_where_the_format_wants_it() {
    for format in [
        WireFormat::OpenAiChat,
        WireFormat::OpenAiResponses,
        WireFormat::Anthropic,
    ] {
        let sb = Sandbox::new();
        sb.write("a.txt", "alpha\n");
        let (server, out) = run(format, &sb, true);
        let events: Vec<Value> = String::from_utf8_lossy(&out.stdout)
            .lines()
            .map(|l| serde_json::from_str(l).unwrap())
            .collect();
        assert_eq!(out.status.code(), Some(0), "{format:?}: {events:#?}");
        let streamed: String = events
            .iter()
            .filter(|e| e["type"] == "reasoning")
            .map(|e| e["text"].as_str().unwrap())
            .collect();
        assert_eq!(streamed, THOUGHT, "{format:?}");
        let first_reasoning = events.iter().position(|e| e["type"] == "reasoning");
        let first_text = events.iter().position(|e| e["type"] == "text_delta");
        assert!(
            first_reasoning < first_text,
            "{format:?}: reasoning streams first"
        );

        let requests = server.requests();
        assert_eq!(requests.len(), 2);
        let body = &requests[1].body;
        match format {
            WireFormat::Anthropic => {
                let assistant = &body["messages"][1];
                assert_eq!(assistant["role"], "assistant");
                assert_eq!(
                    assistant["content"][0],
                    json!({"type": "thinking", "thinking": THOUGHT, "signature": signature(THOUGHT)})
                );
                assert_eq!(
                    assistant["content"][1],
                    json!({"type": "redacted_thinking", "data": redacted(THOUGHT)})
                );
                assert_eq!(assistant["content"][2]["type"], "text");
                assert_eq!(assistant["content"][3]["type"], "tool_use");
            }
            WireFormat::OpenAiResponses => {
                let input = body["input"].as_array().unwrap();
                let at = |ty: &str| input.iter().position(|i| i["type"] == ty).unwrap();
                let item = &input[at("reasoning")];
                assert_eq!(
                    *item,
                    json!({"type": "reasoning", "id": "rs_mock", "encrypted_content": encrypted(THOUGHT),
                        "summary": [{"type": "summary_text", "text": THOUGHT}]})
                );
                assert!(at("reasoning") < at("function_call"), "{body}");
            }
            WireFormat::OpenAiChat => {
                assert!(!body.to_string().contains(THOUGHT), "not sent back: {body}");
            }
        }

        let id = events[0]["session_id"].as_str().unwrap();
        let session = load_session(shared_home(), id);
        let kept = session.messages.iter().find_map(|m| match m {
            Message::Assistant { reasoning, .. } if !reasoning.is_empty() => {
                Some(reasoning.clone())
            }
            _ => None,
        });
        let kept = kept.unwrap_or_else(|| panic!("{format:?}: no reasoning in the session"));
        assert_eq!(kept[0].text(), THOUGHT, "{format:?}");
        if format == WireFormat::Anthropic {
            assert_eq!(
                kept,
                [
                    Reasoning::Thinking {
                        thinking: THOUGHT.into(),
                        signature: signature(THOUGHT)
                    },
                    Reasoning::RedactedThinking {
                        data: redacted(THOUGHT)
                    }
                ]
            );
        }
    }
}

#[test]
fn reasoning_shows_on_the_terminal_apart_from_the_answer() {
    let sb = Sandbox::new();
    sb.write("a.txt", "alpha\n");
    let (_server, out) = run(WireFormat::OpenAiChat, &sb, false);
    let stdout = String::from_utf8_lossy(&out.stdout);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(0), "{stderr}");
    assert!(stderr.contains(THOUGHT), "{stderr}");
    assert!(
        !stdout.contains(THOUGHT),
        "stdout keeps only the answer: {stdout}"
    );
    assert!(
        !stderr.contains("\x1b["),
        "no styles when stderr is not a terminal"
    );
}
