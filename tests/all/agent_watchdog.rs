//! `repeated_errors` against a scripted model over HTTP: failures count by
//! turn, so one wide turn of misses leaves the run going, and turn after
//! turn of nothing but failures still stops it.

use serde_json::Value;
use warden::provider::WireFormat;

use crate::agent_http::KEY;
use crate::mock_model::{MockModel, Script};
use crate::support::{Sandbox, shared_home, warden};

/// `warden run --json` against `server`, read-only; exit code and events.
fn run(server: &MockModel, sb: &Sandbox) -> (Option<i32>, Vec<Value>) {
    let out = warden(shared_home())
        .env("OPENAI_API_KEY", KEY)
        .args([
            "run",
            "--json",
            "--provider",
            "openai",
            "--policy",
            "read-only",
        ])
        .args(["--base-url", &server.base_url(), "-w"])
        .arg(sb.ws())
        .arg("look around")
        .output()
        .unwrap();
    let events = String::from_utf8(out.stdout)
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    (out.status.code(), events)
}

fn outcomes(events: &[Value]) -> Vec<&str> {
    events
        .iter()
        .filter(|e| e["type"] == "tool_result")
        .map(|e| e["outcome"].as_str().unwrap())
        .collect()
}

#[test]
fn eight_missing_paths_probed_in_one_turn_do_not_end_the_run() {
    let sb = Sandbox::new();
    let server = MockModel::start(WireFormat::OpenAiChat);
    let calls: Vec<(String, String)> = (0..8)
        .map(|n| {
            (
                format!("probe_{n}"),
                format!(r#"{{"path":"missing_{n}.txt"}}"#),
            )
        })
        .collect();
    let calls: Vec<(&str, &str, &str)> = calls
        .iter()
        .map(|(id, args)| (id.as_str(), "read_file", args.as_str()))
        .collect();
    server.push(Script::tool_calls(&calls));
    server.push(Script::text("None of those files exist."));
    let (code, events) = run(&server, &sb);
    assert_eq!(outcomes(&events), ["error"; 8], "{events:#?}");
    let finished = events.iter().find(|e| e["type"] == "finished").unwrap();
    assert_eq!(finished["reason"]["kind"], "done", "{finished}");
    assert_eq!(code, Some(0));
}

#[test]
fn a_model_whose_every_call_fails_turn_after_turn_stops_with_repeated_errors() {
    let sb = Sandbox::new();
    sb.write("a.txt", "alpha\n");
    let server = MockModel::start(WireFormat::OpenAiChat);
    let miss = |n: usize| {
        Script::tool_calls(&[(
            &format!("miss_{n}"),
            "read_file",
            &format!(r#"{{"path":"missing_{n}.txt"}}"#),
        )])
    };
    // Seven failing turns, then one with a call that works: the count
    // starts again, and eight more failing turns stop the run.
    for n in 0..7 {
        server.push(miss(n));
    }
    server.push(Script::tool_calls(&[
        ("hit", "read_file", r#"{"path":"a.txt"}"#),
        ("miss_7", "read_file", r#"{"path":"missing_7.txt"}"#),
    ]));
    for n in 8..16 {
        server.push(miss(n));
    }
    server.push(Script::text("never reached"));
    let (code, events) = run(&server, &sb);
    assert_eq!(code, Some(6), "{events:#?}");
    let finished = events.iter().find(|e| e["type"] == "finished").unwrap();
    assert_eq!(finished["reason"]["kind"], "repeated_errors", "{finished}");
    assert_eq!(finished["reason"]["count"], 8);
    assert_eq!(finished["turns"], 16);
    assert_eq!(server.remaining(), 1, "the last reply was never asked for");
}
