//! `warden run` against a model server that stops sending: the idle
//! timeout (flag or config file) retries the stream, and `--max-time` ends
//! the run on time whatever it waits for.

use serde_json::Value;
use warden::agent::StopReason;
use warden::provider::WireFormat;

use crate::agent::{Live, assert_paired, auto_policy, hostile_home, load_session, recording, turn};
use crate::agent_http::KEY;
use crate::mock_model::{MockModel, Reply, Script};
use crate::support::{Sandbox, fresh_home, shared_home, warden};

#[test]
fn max_time_ends_a_stalled_stream_as_time_budget_and_closes_the_session() {
    let sb = Sandbox::new();
    let tmp = tempfile::tempdir().unwrap();
    let policy = auto_policy(tmp.path());
    let server = MockModel::start(WireFormat::Anthropic);
    let script = Script::tool_calls(&[(
        "late",
        "write_file",
        r#"{"path":"late.txt","content":"no"}"#,
    )])
    .with_text("Writing.");
    let events = script.render(WireFormat::Anthropic);
    // Everything up to the end of the call's block, then silence.
    let at = events
        .iter()
        .rposition(|e| e.contains("content_block_stop"))
        .unwrap()
        + 1;
    server.push(Reply::events(events).stall_after(at));
    let mut cmd = warden(shared_home());
    cmd.env("ANTHROPIC_API_KEY", KEY)
        .args([
            "run",
            "--json",
            "--provider",
            "anthropic",
            "--max-time",
            "2",
        ])
        .args(["--base-url", &server.base_url(), "--policy"])
        .arg(&policy)
        .arg("-w")
        .arg(sb.ws())
        .arg("write late.txt");
    // `finish` fails the test unless the run exits within 60 s (the idle
    // timeout alone would wait 90).
    let (code, events) = Live::of(cmd).finish();
    assert_eq!(code, Some(6), "{events:#?}");
    let finished = events.iter().find(|e| e["type"] == "finished").unwrap();
    assert_eq!(finished["reason"]["kind"], "time_budget", "{finished}");
    assert_eq!(finished["reason"]["limit_secs"], 2);
    let of = |ty: &str| -> Vec<&Value> { events.iter().filter(|e| e["type"] == ty).collect() };
    assert_eq!(of("tool_call").len(), 1, "{events:#?}");
    let results = of("tool_result");
    assert_eq!(results.len(), 1, "{events:#?}");
    assert_eq!(results[0]["outcome"], "cancelled");
    assert!(!sb.exists("late.txt"), "nothing runs once the time is up");
    assert_eq!(server.request_count(), 1);

    let id = events[0]["session_id"].as_str().unwrap();
    let session = load_session(shared_home(), id);
    assert_eq!(
        session.ended,
        Some(StopReason::TimeBudget { limit_secs: 2 })
    );
    assert_paired(&session.messages);
}

#[test]
fn a_stalled_stream_is_retried_after_the_idle_timeout_of_the_flag_or_the_config() {
    let home = fresh_home();
    std::fs::write(
        home.path().join("config.toml"),
        "[providers.openai]\nidle_timeout_secs = 1\n",
    )
    .unwrap();
    for (home, flag) in [
        (shared_home(), &["--idle-timeout", "1"][..]),
        (home.path(), &[][..]),
    ] {
        let sb = Sandbox::new();
        let server = MockModel::start(WireFormat::OpenAiChat);
        server.push(Reply::turn(Script::text("lost")).stall_after(2));
        server.push(Script::text("done"));
        let mut cmd = warden(home);
        cmd.env("OPENAI_API_KEY", KEY)
            .args(["run", "--json", "--provider", "openai"])
            .args(flag)
            .args(["--base-url", &server.base_url(), "-w"])
            .arg(sb.ws())
            .arg("x");
        let (code, events) = Live::of(cmd).finish();
        assert_eq!(code, Some(0), "{flag:?}: {events:#?}");
        let retrying: Vec<&Value> = events.iter().filter(|e| e["type"] == "retrying").collect();
        assert_eq!(retrying.len(), 1, "{flag:?}: {events:#?}");
        let reason = retrying[0]["reason"].as_str().unwrap();
        assert!(reason.contains("stalled: no event for 1s"), "{reason}");
        let finished = events.iter().find(|e| e["type"] == "finished").unwrap();
        assert_eq!(finished["answer"], "done");
    }
}

#[test]
fn max_time_cancels_a_running_call_and_starts_no_other() {
    let home = hostile_home();
    let sb = Sandbox::new();
    let tmp = tempfile::tempdir().unwrap();
    let policy = auto_policy(tmp.path());
    let rec = recording(
        tmp.path(),
        "slow.jsonl",
        &[
            turn(
                "Waiting.",
                &[
                    ("slow", "sleep_ms", r#"{"ms": 60000}"#),
                    (
                        "after",
                        "write_file",
                        r#"{"path":"after.txt","content":"no"}"#,
                    ),
                ],
            ),
            turn("never reached", &[]),
        ],
    );
    let (code, events) = Live::spawn(
        home,
        &[
            "--replay",
            rec.to_str().unwrap(),
            "--max-time",
            "2",
            "--policy",
        ]
        .into_iter()
        .chain([
            policy.to_str().unwrap(),
            "-w",
            sb.ws().to_str().unwrap(),
            "wait",
        ])
        .collect::<Vec<_>>(),
    )
    .finish();
    assert_eq!(code, Some(6), "{events:#?}");
    let results: Vec<(&str, &str)> = events
        .iter()
        .filter(|e| e["type"] == "tool_result")
        .map(|e| {
            (
                e["call_id"].as_str().unwrap(),
                e["outcome"].as_str().unwrap(),
            )
        })
        .collect();
    // Not the call's own 30 s deadline (an error): the run's, which cancels.
    assert_eq!(results, [("slow", "cancelled"), ("after", "cancelled")]);
    assert!(!sb.exists("after.txt"));
    let finished = events.iter().find(|e| e["type"] == "finished").unwrap();
    assert_eq!(finished["reason"]["kind"], "time_budget");
}
