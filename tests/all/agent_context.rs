//! The context window, end to end over the mock model: automatic
//! compaction above the threshold, and compaction with exactly one retry
//! after the provider's context-length error. Every request body keeps
//! each tool call next to its result.

use std::path::{Path, PathBuf};

use serde_json::Value;
use warden::provider::WireFormat;

use crate::agent::{assert_paired, load_session};
use crate::agent_http::{KEY, key_var, provider_flag};
use crate::mock_model::{MockModel, RecordedRequest, Reply, Script};
use crate::support::{Sandbox, fresh_home, warden};

const FORMATS: [WireFormat; 3] = [
    WireFormat::OpenAiChat,
    WireFormat::OpenAiResponses,
    WireFormat::Anthropic,
];

/// What the model is told when summarizing (the start of the summary prompt).
const SUMMARY_PROMPT: &str = "You compress an AI agent's working history";
const SUMMARY: &str = "SUMMARY-OF-EARLIER-TURNS: the first file was read.";

/// A policy offering `read_file` alone, so the size of a request is known.
fn read_file_only(dir: &Path) -> PathBuf {
    let path = dir.join("read-file-only.toml");
    std::fs::write(
        &path,
        "name = \"read-file-only\"\ndescription = \"t\"\nmode = \"read-only\"\n\
         [grants.default]\nworkspace = \"read-only\"\nnetwork = []\n\
         [[rule]]\nname = \"nothing-else\"\ntools = [\"[!r]*\", \"r[!e]*\", \"re[!a]*\"]\n\
         decision = \"deny\"\n",
    )
    .unwrap();
    path
}

/// A workspace with a.txt and b.txt, each about 1100 tokens as read_file shows them.
fn workspace() -> Sandbox {
    let sb = Sandbox::new();
    for (file, word) in [("a.txt", "alpha"), ("b.txt", "bravo")] {
        let text: String = (0..50)
            .map(|i| format!("{word} line {i:03} {}\n", "x".repeat(60)))
            .collect();
        sb.write(file, text);
    }
    sb
}

fn reads() -> [Script; 2] {
    [
        Script::tool_calls(&[("c1", "read_file", r#"{"path":"a.txt"}"#)]),
        Script::tool_calls(&[("c2", "read_file", r#"{"path":"b.txt"}"#)]),
    ]
}

/// Run `warden run --json` against `server`; exit code and events.
fn run(
    server: &MockModel,
    sb: &Sandbox,
    policy: &Path,
    extra: &[&str],
) -> (Option<i32>, Vec<Value>) {
    let home = fresh_home();
    let out = warden(home.path())
        .env(key_var(server.format()), KEY)
        .args([
            "run",
            "--json",
            "--provider",
            provider_flag(server.format()),
        ])
        .args(["--base-url", &server.base_url(), "--policy"])
        .arg(policy)
        .args(extra)
        .arg("-w")
        .arg(sb.ws())
        .arg("read a.txt, then b.txt")
        .output()
        .unwrap();
    let events: Vec<Value> = String::from_utf8_lossy(&out.stdout)
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    let session = events[0]["session_id"].as_str().unwrap().to_string();
    let loaded = load_session(home.path(), &session);
    assert_paired(&loaded.messages);
    (out.status.code(), events)
}

/// One step of a request's history, for the pairing check.
#[derive(Debug)]
enum Step {
    Call(String),
    Result(String),
    /// A user message, or an assistant message's text.
    Other,
}

/// The history of a request body in `format`, in order.
fn steps(format: WireFormat, body: &Value) -> Vec<Step> {
    let s = |v: &Value| v.as_str().unwrap().to_string();
    let mut out = Vec::new();
    match format {
        WireFormat::OpenAiChat => {
            for m in body["messages"].as_array().unwrap() {
                match m["role"].as_str().unwrap() {
                    "tool" => out.push(Step::Result(s(&m["tool_call_id"]))),
                    "assistant" => {
                        out.push(Step::Other);
                        for c in m["tool_calls"].as_array().into_iter().flatten() {
                            out.push(Step::Call(s(&c["id"])));
                        }
                    }
                    _ => out.push(Step::Other),
                }
            }
        }
        WireFormat::OpenAiResponses => {
            for item in body["input"].as_array().unwrap() {
                out.push(match item["type"].as_str() {
                    Some("function_call") => Step::Call(s(&item["call_id"])),
                    Some("function_call_output") => Step::Result(s(&item["call_id"])),
                    Some("reasoning") => continue,
                    _ => Step::Other,
                });
            }
        }
        WireFormat::Anthropic => {
            for m in body["messages"].as_array().unwrap() {
                for block in m["content"].as_array().unwrap() {
                    out.push(match block["type"].as_str().unwrap() {
                        "tool_use" => Step::Call(s(&block["id"])),
                        "tool_result" => Step::Result(s(&block["tool_use_id"])),
                        _ => Step::Other,
                    });
                }
            }
        }
    }
    out
}

/// No call without its result before the next message, no result without its call.
#[track_caller]
fn assert_request_paired(format: WireFormat, r: &RecordedRequest) {
    let mut open: Vec<String> = Vec::new();
    for step in steps(format, &r.body) {
        match step {
            Step::Call(id) => open.push(id),
            Step::Result(id) => {
                let at = open.iter().position(|c| *c == id);
                let at = at.unwrap_or_else(|| {
                    panic!("{format:?}: result {id} without its call: {}", r.body)
                });
                open.remove(at);
            }
            Step::Other => assert!(
                open.is_empty(),
                "{format:?}: calls {open:?} cut from their results: {}",
                r.body
            ),
        }
    }
    assert!(
        open.is_empty(),
        "{format:?}: calls {open:?} without results: {}",
        r.body
    );
}

fn of_type<'a>(events: &'a [Value], ty: &'a str) -> impl Iterator<Item = &'a Value> + 'a {
    events.iter().filter(move |e| e["type"] == ty)
}

#[test]
fn above_the_threshold_older_turns_are_summarized_and_the_next_request_carries_the_summary() {
    for format in FORMATS {
        let sb = workspace();
        let policy = read_file_only(&sb.parent());
        let server = MockModel::start(format);
        for script in reads() {
            server.push(script);
        }
        server.push(Script::text(SUMMARY));
        server.push(Script::text("Both read."));
        let (code, events) = run(&server, &sb, &policy, &["--compact-above", "2000"]);
        assert_eq!(code, Some(0), "{format:?}: {events:#?}");

        let requests = server.requests();
        assert_eq!(
            requests.len(),
            4,
            "{format:?}: two turns, the summary, the answer"
        );
        for r in &requests {
            assert_request_paired(format, r);
        }
        let before = requests[1].body.to_string();
        assert!(
            !before.contains(SUMMARY_PROMPT),
            "{format:?}: compacted too early"
        );

        let summarize = requests[2].body.to_string();
        assert!(
            summarize.contains(SUMMARY_PROMPT),
            "{format:?}: {summarize}"
        );
        assert!(requests[2].body.get("tools").is_none(), "{format:?}");
        assert!(
            summarize.contains("alpha line 000")
                && summarize.contains("RESULT OF read_file (id c1)"),
            "{format:?}: the first turn is summarized"
        );
        assert!(
            !summarize.contains("bravo line"),
            "{format:?}: the last turn is kept"
        );

        let next = requests[3].body.to_string();
        assert!(next.contains(SUMMARY), "{format:?}: {next}");
        assert!(
            next.contains("bravo line 049") && !next.contains("alpha line"),
            "{format:?}"
        );
        assert!(!next.contains(SUMMARY_PROMPT), "{format:?}");
        assert!(requests[3].body["tools"].to_string().contains("read_file"));

        let compacted: Vec<&Value> = of_type(&events, "compacted").collect();
        assert_eq!(compacted.len(), 1, "{format:?}");
        assert!(compacted[0]["tokens_after"].as_u64() < compacted[0]["tokens_before"].as_u64());
        assert_eq!(
            of_type(&events, "finished").next().unwrap()["reason"]["kind"],
            "done"
        );
    }
}

#[test]
fn a_context_length_error_compacts_and_retries_exactly_once() {
    for format in FORMATS {
        let sb = workspace();
        let policy = read_file_only(&sb.parent());
        let server = MockModel::start(format);
        for script in reads() {
            server.push(script);
        }
        server.push(Reply::context_overflow());
        server.push(Script::text(SUMMARY));
        server.push(Script::text("Both read."));
        let (code, events) = run(&server, &sb, &policy, &[]);
        assert_eq!(code, Some(0), "{format:?}: {events:#?}");
        let requests = server.requests();
        assert_eq!(requests.len(), 5, "{format:?}");
        for r in &requests {
            assert_request_paired(format, r);
        }
        assert!(
            requests[2].body.to_string().contains("alpha line 000"),
            "the refused request"
        );
        assert!(
            requests[3].body.to_string().contains(SUMMARY_PROMPT),
            "{format:?}"
        );
        let retry = requests[4].body.to_string();
        assert!(
            retry.contains(SUMMARY) && retry.contains("bravo line 000"),
            "{format:?}"
        );
        assert!(!retry.contains("alpha line 000"), "{format:?}");
        assert_eq!(of_type(&events, "compacted").count(), 1);
        let turns: Vec<u64> = of_type(&events, "turn_started")
            .map(|e| e["turn"].as_u64().unwrap())
            .collect();
        assert_eq!(
            turns,
            [1, 2, 3, 3],
            "{format:?}: the refused turn is started again"
        );
    }
}

#[test]
fn a_second_context_length_error_stops_the_run_with_its_own_reason() {
    let format = WireFormat::OpenAiChat;
    let sb = workspace();
    let policy = read_file_only(&sb.parent());
    let server = MockModel::start(format);
    for script in reads() {
        server.push(script);
    }
    server.push(Reply::context_overflow());
    server.push(Script::text(SUMMARY));
    server.push(Reply::context_overflow());
    server.push(Script::text("never asked for"));
    let (code, events) = run(&server, &sb, &policy, &[]);
    assert_eq!(code, Some(6), "{events:#?}");
    assert_eq!(server.request_count(), 5, "one retry, not two");
    assert_eq!(server.remaining(), 1);
    let reason = &of_type(&events, "finished").next().unwrap()["reason"];
    assert_eq!(reason["kind"], "context_overflow", "{reason}");
    assert!(
        reason["message"]
            .as_str()
            .unwrap()
            .contains("maximum context length")
    );

    // With nothing older to summarize, there is nothing to retry.
    let server = MockModel::start(format);
    server.push(Reply::context_overflow());
    let (code, events) = run(&server, &sb, &policy, &[]);
    assert_eq!(code, Some(6));
    assert_eq!(server.request_count(), 1);
    let reason = &of_type(&events, "finished").next().unwrap()["reason"];
    assert_eq!(reason["kind"], "context_overflow");
    assert!(
        reason["message"]
            .as_str()
            .unwrap()
            .contains("no older turns"),
        "{reason}"
    );
}
