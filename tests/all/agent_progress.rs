//! While a tool runs, over the mock model and the real binary: its
//! progress reports reach the user (rate-limited `tool_progress` events
//! with the elapsed time, or a spinner on a terminal), and a second Ctrl-C
//! exits at once while the first waits for a guest to stop, leaving a
//! session that loads and resumes.

use std::process::Command;
use std::time::{Duration, Instant};

use rustix::process::Signal;
use serde_json::Value;
use warden::agent::Record;
use warden::provider::WireFormat;

use crate::agent::{Live, assert_paired, auto_policy, hostile_home, load_session};
use crate::agent_http::KEY;
use crate::mock_model::{MockModel, Script};
use crate::support::{Sandbox, warden};

/// `warden run` against `server` with the hostile fixture installed.
fn run_cmd(server: &MockModel, policy: &std::path::Path, sb: &Sandbox) -> Command {
    let mut cmd = warden(hostile_home());
    cmd.env("OPENAI_API_KEY", KEY)
        .args(["run", "--base-url", &server.base_url(), "--policy"])
        .arg(policy)
        .arg("-w")
        .arg(sb.ws());
    cmd
}

fn progress_turn() -> Script {
    Script::tool_calls(&[
        ("slow", "progress", r#"{"count":4,"interval_ms":300}"#),
        ("flood", "progress", r#"{"count":500}"#),
    ])
}

#[test]
fn progress_reaches_the_json_stream_rate_limited_while_the_tool_runs() {
    let sb = Sandbox::new();
    let tmp = tempfile::tempdir().unwrap();
    let policy = auto_policy(tmp.path());
    let server = MockModel::start(WireFormat::OpenAiChat);
    server.push(progress_turn());
    server.push(Script::text("Done."));
    let out = run_cmd(&server, &policy, &sb)
        .arg("--json")
        .arg("report")
        .output()
        .unwrap();
    let events: Vec<Value> = String::from_utf8_lossy(&out.stdout)
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert_eq!(out.status.code(), Some(0), "{events:#?}");

    let position = |ty: &str, id: &str| {
        events
            .iter()
            .position(|e| e["type"] == ty && e["call_id"] == id)
            .unwrap_or_else(|| panic!("no {ty} for {id}: {events:#?}"))
    };
    let progress = |id: &str| -> Vec<(usize, &Value)> {
        events
            .iter()
            .enumerate()
            .filter(|(_, e)| e["type"] == "tool_progress" && e["call_id"] == id)
            .collect()
    };

    let slow = progress("slow");
    let shown: Vec<(&str, f64)> = slow
        .iter()
        .map(|(_, e)| {
            (
                e["message"].as_str().unwrap(),
                e["fraction"].as_f64().unwrap(),
            )
        })
        .collect();
    assert_eq!(
        shown,
        [
            ("step 1 of 4", 0.25),
            ("step 2 of 4", 0.5),
            ("step 3 of 4", 0.75),
            ("step 4 of 4", 1.0)
        ],
        "reports 300 ms apart all pass the 200 ms limit"
    );
    let elapsed: Vec<u64> = slow
        .iter()
        .map(|(_, e)| e["elapsed_ms"].as_u64().unwrap())
        .collect();
    assert!(
        elapsed.windows(2).all(|w| w[1] >= w[0] + 200),
        "{elapsed:?}"
    );
    assert!(elapsed[3] >= 800, "{elapsed:?}");

    let flood = progress("flood");
    let duration = events[position("tool_result", "flood")]["duration_ms"]
        .as_u64()
        .unwrap();
    assert!(!flood.is_empty(), "the first report is shown at once");
    assert!(
        flood.len() as u64 <= 2 + duration / 200,
        "500 reports in {duration} ms became {} events",
        flood.len()
    );
    for id in ["slow", "flood"] {
        let (call, result) = (position("tool_call", id), position("tool_result", id));
        assert!(
            progress(id)
                .iter()
                .all(|(at, _)| call < *at && *at < result),
            "{id}"
        );
    }
}

#[test]
fn progress_shows_as_a_spinner_on_a_terminal_and_not_in_a_pipe() {
    let sb = Sandbox::new();
    let tmp = tempfile::tempdir().unwrap();
    let policy = auto_policy(tmp.path());
    let server = MockModel::start(WireFormat::OpenAiChat);
    server.push(progress_turn());
    server.push(Script::text("Done."));
    let out = run_cmd(&server, &policy, &sb)
        .arg("report")
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(0), "{stderr}");
    assert!(
        !stderr.contains("step 1"),
        "no progress in a pipe: {stderr}"
    );
    assert!(
        !stderr.contains(['\x1b', '\r']),
        "no spinner in a pipe: {stderr:?}"
    );

    let server = MockModel::start(WireFormat::OpenAiChat);
    server.push(progress_turn());
    server.push(Script::text("Done."));
    let mut cmd = run_cmd(&server, &policy, &sb);
    cmd.arg("report");
    let mut p = rexpect::session::spawn_command(cmd, Some(120_000)).unwrap();
    // The slow call's count, its percentage and the time since it started.
    p.exp_regex(r"progress: step [2-4] of 4 \(\d+%\) \S+ \d+s")
        .unwrap();
    let rest = p.exp_eof().unwrap();
    assert!(rest.contains("\r\x1b[2K"), "the line is cleared: {rest:?}");
    assert!(rest.contains("Done."), "{rest:?}");
}

#[test]
fn a_second_ctrl_c_exits_at_once_and_the_session_stays_valid() {
    let home = hostile_home();
    let sb = Sandbox::new();
    let tmp = tempfile::tempdir().unwrap();
    let policy = auto_policy(tmp.path());
    // A guest spinning without asking `is-cancelled` gets the grace
    // (`CANCEL_GRACE`, 100 ms) before the host stops it: the first Ctrl-C
    // waits that long, and a second one inside it must not. Should the
    // second land after the grace (a stalled test machine), the run has
    // ended as the first Ctrl-C asked, with `finished`: try again, at most
    // three times.
    let (server, id, code, events, second) = (0..3)
        .map(|_| {
            let server = MockModel::start(WireFormat::OpenAiChat);
            server.push(Script::tool_calls(&[(
                "first",
                "glob",
                r#"{"pattern":"*"}"#,
            )]));
            server.push(Script::tool_calls(&[("stuck", "spin", "{}")]));
            let mut cmd = run_cmd(&server, &policy, &sb);
            cmd.arg("--json").arg("wait for it");
            let mut live = Live::of(cmd);
            let id = live.wait_for("session_started")["session_id"]
                .as_str()
                .unwrap()
                .to_string();
            while live.wait_for("tool_call")["call_id"] != "stuck" {}
            std::thread::sleep(Duration::from_millis(300));
            live.signal(Signal::INT);
            live.wait_for("interrupted");
            let second = Instant::now();
            live.signal(Signal::INT);
            let (code, events) = live.finish();
            (server, id, code, events, second)
        })
        .find(|(_, _, code, events, _)| {
            let late = *code == Some(4) && events.iter().any(|e| e["type"] == "finished");
            !late
        })
        .expect("in three tries the second Ctrl-C never came within the grace");
    assert_eq!(code, Some(130), "{events:#?}");
    assert!(
        second.elapsed() < Duration::from_secs(10),
        "exited after {:?}",
        second.elapsed()
    );
    assert!(
        !events.iter().any(|e| e["type"] == "finished"),
        "it did not wait for the run"
    );

    let session = load_session(home, &id);
    assert_eq!(session.ended, None);
    assert_eq!(session.turns, 1, "the partial turn is cut");
    assert_paired(&session.messages);
    assert_eq!(
        session.messages.len(),
        3,
        "task, the first call and its result"
    );
    assert!(
        !session
            .records
            .iter()
            .any(|r| matches!(r, Record::Call(c) if c.call_id == "stuck")),
        "the interrupted call has no record"
    );

    server.push(Script::text("Resumed."));
    let out = warden(home)
        .env("OPENAI_API_KEY", KEY)
        .args([
            "run",
            "-p",
            "--resume",
            &id,
            "--base-url",
            &server.base_url(),
            "--policy",
        ])
        .arg(&policy)
        .arg("carry on")
        .output()
        .unwrap();
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let last = server.requests().pop().unwrap().body.to_string();
    assert!(last.contains("first") && !last.contains("stuck"), "{last}");
    assert_paired(&load_session(home, &id).messages);
}
