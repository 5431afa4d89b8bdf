//! `warden run` end to end: the real binary, real components, model turns
//! played back from recordings (the HTTP providers have their own tests).

use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::OnceLock;
use std::time::{Duration, Instant};

use serde_json::{Value, json};
use warden::agent::{Record, SessionStore};
use warden::home::Home;
use warden::provider::Message;

use crate::support::{Sandbox, home_with_installed, shared_home, warden};

/// One scripted model turn: text and calls `(id, tool, arguments as text)`.
pub(crate) fn turn(text: &str, calls: &[(&str, &str, &str)]) -> Value {
    json!({
        "text": text,
        "tool_calls": calls.iter().map(|(id, name, args)| json!({
            "id": id, "name": name, "arguments": args,
        })).collect::<Vec<_>>(),
        "usage": null,
        "finish": {"type": if calls.is_empty() { "stop" } else { "tool_calls" }},
    })
}

pub(crate) fn recording(dir: &Path, name: &str, turns: &[Value]) -> PathBuf {
    let path = dir.join(name);
    let mut text = json!({"warden_replay": 1, "source": "test script"}).to_string() + "\n";
    for t in turns {
        text += &(t.to_string() + "\n");
    }
    std::fs::write(&path, text).unwrap();
    path
}

/// A policy that lets every call run, within the workspace.
pub(crate) fn auto_policy(dir: &Path) -> PathBuf {
    let path = dir.join("auto.toml");
    std::fs::write(
        &path,
        "name = \"auto-test\"\ndescription = \"everything runs\"\nmode = \"auto\"\n\
         [grants.default]\nworkspace = \"read-write\"\nnetwork = []\n",
    )
    .unwrap();
    path
}

/// A data directory with the hostile fixture installed (slow and
/// cancellable tools), set up once.
pub(crate) fn hostile_home() -> &'static Path {
    static HOME: OnceLock<PathBuf> = OnceLock::new();
    HOME.get_or_init(|| home_with_installed("warden-agent-home-", warden::test_plugins::HOSTILE))
}

pub(crate) struct Run {
    pub(crate) code: Option<i32>,
    pub(crate) events: Vec<Value>,
    pub(crate) stderr: String,
}

impl Run {
    pub(crate) fn of_type<'a>(&'a self, ty: &'a str) -> impl Iterator<Item = &'a Value> + 'a {
        self.events.iter().filter(move |e| e["type"] == ty)
    }

    pub(crate) fn finished(&self) -> &Value {
        self.of_type("finished")
            .next()
            .unwrap_or_else(|| panic!("no finished event; stderr: {}", self.stderr))
    }

    pub(crate) fn session_id(&self) -> String {
        self.of_type("session_started").next().unwrap()["session_id"]
            .as_str()
            .unwrap()
            .to_string()
    }

    /// Outcomes of the tool results, in the order they were reported.
    pub(crate) fn outcomes(&self) -> Vec<(String, String)> {
        self.of_type("tool_result")
            .map(|e| {
                (
                    e["call_id"].as_str().unwrap().to_string(),
                    e["outcome"].as_str().unwrap().to_string(),
                )
            })
            .collect()
    }
}

pub(crate) fn run_agent(home: &Path, args: &[&str]) -> Run {
    let out = warden(home)
        .arg("run")
        .arg("--json")
        .args(args)
        .output()
        .unwrap();
    let stdout = String::from_utf8(out.stdout).unwrap();
    Run {
        code: out.status.code(),
        events: stdout
            .lines()
            .map(|l| serde_json::from_str(l).unwrap_or_else(|e| panic!("{e}: {l}")))
            .collect(),
        stderr: String::from_utf8_lossy(&out.stderr).into_owned(),
    }
}

pub(crate) fn load_session(home: &Path, id: &str) -> warden::agent::LoadedSession {
    SessionStore::new(&Home::at(home.to_path_buf()))
        .load(id)
        .unwrap()
}

/// Every assistant tool call is followed by exactly one result for it,
/// before the next assistant or user message.
#[track_caller]
pub(crate) fn assert_paired(messages: &[Message]) {
    let mut open: Vec<String> = Vec::new();
    for m in messages {
        match m {
            Message::Assistant { .. } | Message::User { .. } if !open.is_empty() => {
                panic!("calls {open:?} have no result in {messages:#?}")
            }
            Message::Assistant { tool_calls, .. } => {
                open = tool_calls.iter().map(|c| c.id.clone()).collect()
            }
            Message::User { .. } => {}
            Message::Tool { call_id, .. } => {
                assert_eq!(
                    open.first(),
                    Some(call_id),
                    "result out of order in {messages:#?}"
                );
                open.remove(0);
            }
        }
    }
    assert!(open.is_empty(), "calls {open:?} have no result");
}

fn demo_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("examples/demo")
}

#[test]
fn the_demo_replay_runs_end_to_end() {
    let demo = demo_dir();
    let run = run_agent(
        shared_home(),
        &[
            "--replay",
            demo.join("replay.jsonl").to_str().unwrap(),
            "-w",
            demo.join("workspace").to_str().unwrap(),
            "--policy",
            "read-only",
            "Where are HTTP retries configured, and what is the backoff schedule?",
        ],
    );
    assert_eq!(run.code, Some(0), "{}", run.stderr);
    assert_eq!(
        run.outcomes(),
        [
            ("call_1", "success"),
            ("call_2", "success"),
            ("call_3", "success")
        ]
        .map(|(a, b)| (a.to_string(), b.to_string()))
    );
    let grep = run.of_type("tool_call").next().unwrap();
    assert_eq!(grep["tool"], "grep");
    assert_eq!(grep["rationale"], "find where retries are configured");
    assert!(grep["arguments"].get("rationale").is_none(), "{grep}");
    let finished = run.finished();
    assert_eq!(finished["reason"]["kind"], "done");
    assert!(
        finished["answer"]
            .as_str()
            .unwrap()
            .contains("app/retry.py")
    );

    let session = load_session(shared_home(), &run.session_id());
    assert_paired(&session.messages);
    let read = session
        .messages
        .iter()
        .find_map(|m| match m {
            Message::Tool {
                call_id, content, ..
            } if call_id == "call_3" => Some(content),
            _ => None,
        })
        .unwrap();
    assert!(read.contains("MAX_ATTEMPTS = 4"), "{read}");
}

/// Copies the tree at `from` into `to` (files and directories only).
fn copy_tree(from: &Path, to: &Path) {
    std::fs::create_dir_all(to).unwrap();
    for entry in std::fs::read_dir(from).unwrap() {
        let entry = entry.unwrap();
        let target = to.join(entry.file_name());
        match entry.file_type().unwrap().is_dir() {
            true => copy_tree(&entry.path(), &target),
            false => {
                std::fs::copy(entry.path(), &target).unwrap();
            }
        }
    }
}

/// The second demo: the agent runs the failing tests with the `shell`
/// tool, fixes the function, and runs them again, under `workspace-write`.
/// It runs on a copy, so the checked-in workspace keeps its bug.
#[test]
fn the_fix_demo_replay_fixes_the_test_and_runs_the_tests() {
    let demo = Path::new(env!("CARGO_MANIFEST_DIR")).join("examples/fix-demo");
    let tmp = tempfile::tempdir().unwrap();
    let ws = tmp.path().join("workspace");
    copy_tree(&demo.join("workspace"), &ws);
    let checked_in = std::fs::read_to_string(demo.join("workspace/app/slug.py")).unwrap();
    let run = run_agent(
        shared_home(),
        &[
            "--replay",
            demo.join("replay.jsonl").to_str().unwrap(),
            "-w",
            ws.to_str().unwrap(),
            "--policy",
            "workspace-write",
            "Fix the failing test in tests/test_slug.py.",
        ],
    );
    assert_eq!(run.code, Some(0), "{}", run.stderr);
    let results: Vec<&Value> = run.of_type("tool_result").collect();
    assert_eq!(
        run.outcomes(),
        ["call_1", "call_2", "call_3", "call_4"].map(|id| (id.to_string(), "success".to_string())),
        "{results:#?}\n{}",
        run.stderr
    );
    let session = load_session(shared_home(), &run.session_id());
    assert_paired(&session.messages);
    let result_of = |id: &str| {
        session
            .messages
            .iter()
            .find_map(|m| match m {
                Message::Tool {
                    call_id, content, ..
                } if call_id == id => Some(content.clone()),
                _ => None,
            })
            .unwrap()
    };
    let before = result_of("call_1");
    assert!(before.contains("exit code 1"), "{before}");
    assert!(before.contains("FAILED (failures=1)"), "{before}");
    let after = result_of("call_4");
    assert!(after.contains("exit code 0"), "{after}");
    assert!(
        after.contains("Ran 2 tests") && after.contains("\nOK"),
        "{after}"
    );
    let fixed = std::fs::read_to_string(ws.join("app/slug.py")).unwrap();
    assert!(fixed.contains("title.lower()"), "{fixed}");
    assert_eq!(run.finished()["reason"]["kind"], "done");
    assert_eq!(
        std::fs::read_to_string(demo.join("workspace/app/slug.py")).unwrap(),
        checked_in,
        "the checked-in workspace was changed"
    );
    assert!(!demo.join("workspace/app/__pycache__").exists());
}

#[test]
fn the_json_event_stream_keeps_its_shape() {
    let demo = demo_dir();
    let run = run_agent(
        shared_home(),
        &[
            "--replay",
            demo.join("replay.jsonl").to_str().unwrap(),
            "-w",
            demo.join("workspace").to_str().unwrap(),
            "--policy",
            "read-only",
            "Where are HTTP retries configured?",
        ],
    );
    let normalized: Vec<Value> = run
        .events
        .iter()
        .cloned()
        .map(|mut e| {
            for (key, placeholder) in [
                ("session_id", "[session]"),
                ("workspace", "[workspace]"),
                ("duration_ms", "[ms]"),
                ("summary", "[summary]"),
                ("provider", "[provider]"),
                ("usage", "[usage]"),
            ] {
                if e.get(key).is_some() {
                    e[key] = json!(placeholder);
                }
            }
            e
        })
        .collect();
    insta::assert_json_snapshot!("run_json_events", normalized);
}

#[test]
fn a_denial_reaches_the_model_and_the_run_continues() {
    let sb = Sandbox::new();
    let tmp = tempfile::tempdir().unwrap();
    let rec = recording(
        tmp.path(),
        "deny.jsonl",
        &[
            turn(
                "Writing the file.",
                &[("w1", "write_file", r#"{"path":"x.txt","content":"hi"}"#)],
            ),
            turn("I may not write here; stopping.", &[]),
        ],
    );
    let run = run_agent(
        shared_home(),
        &[
            "--replay",
            rec.to_str().unwrap(),
            "-w",
            sb.ws().to_str().unwrap(),
            "--policy",
            "read-only",
            "write x",
        ],
    );
    assert_eq!(run.code, Some(0), "{}", run.stderr);
    assert_eq!(
        run.outcomes(),
        vec![("w1".to_string(), "denied".to_string())]
    );
    let decision = run.of_type("tool_decision").next().unwrap();
    assert_eq!(decision["verdict"], "deny");
    assert!(!sb.exists("x.txt"));
    let session = load_session(shared_home(), &run.session_id());
    assert_paired(&session.messages);
    let denied = session.messages.iter().find_map(|m| match m {
        Message::Tool {
            content, is_error, ..
        } => Some((content.clone(), *is_error)),
        _ => None,
    });
    let (content, is_error) = denied.unwrap();
    assert!(is_error);
    assert!(
        content.starts_with("denied: ") && content.contains("plan mode"),
        "{content}"
    );
    sb.assert_canaries_intact();
}

#[test]
fn bad_arguments_and_unknown_tools_are_observations_not_failures() {
    let sb = Sandbox::new();
    let tmp = tempfile::tempdir().unwrap();
    let rec = recording(
        tmp.path(),
        "bad.jsonl",
        &[
            turn(
                "",
                &[
                    ("b1", "read_file", r#"{"path": "a.txt""#),
                    ("b2", "read_fiel", r#"{"path":"a.txt"}"#),
                    ("b3", "read_file", r#"{"path": 7}"#),
                ],
            ),
            turn("Those failed.", &[]),
        ],
    );
    let run = run_agent(
        shared_home(),
        &[
            "--replay",
            rec.to_str().unwrap(),
            "-w",
            sb.ws().to_str().unwrap(),
            "--policy",
            "read-only",
            "read",
        ],
    );
    assert_eq!(run.code, Some(0), "{}", run.stderr);
    let session = load_session(shared_home(), &run.session_id());
    assert_paired(&session.messages);
    let results: Vec<String> = session
        .messages
        .iter()
        .filter_map(|m| match m {
            Message::Tool { content, .. } => Some(content.clone()),
            _ => None,
        })
        .collect();
    assert!(results[0].contains("not valid JSON"), "{}", results[0]);
    assert!(
        results[1].contains("did you mean `read_file`"),
        "{}",
        results[1]
    );
    assert!(results[2].contains("input.path"), "{}", results[2]);
}

#[test]
fn results_keep_the_call_order_and_writes_are_exclusive() {
    let sb = Sandbox::new();
    let tmp = tempfile::tempdir().unwrap();
    sb.write("a.txt", "alpha\n");
    let policy = auto_policy(tmp.path());
    let rec = recording(
        tmp.path(),
        "order.jsonl",
        &[
            turn(
                "",
                &[
                    ("o1", "read_file", r#"{"path":"a.txt"}"#),
                    ("o2", "glob", r#"{"pattern":"*.txt"}"#),
                    ("o3", "write_file", r#"{"path":"b.txt","content":"beta\n"}"#),
                    ("o4", "read_file", r#"{"path":"b.txt"}"#),
                    (
                        "o5",
                        "edit_file",
                        r#"{"path":"b.txt","old_string":"beta","new_string":"gamma"}"#,
                    ),
                    ("o6", "read_file", r#"{"path":"b.txt"}"#),
                ],
            ),
            turn("Done.", &[]),
        ],
    );
    let run = run_agent(
        shared_home(),
        &[
            "--replay",
            rec.to_str().unwrap(),
            "-w",
            sb.ws().to_str().unwrap(),
            "--policy",
            policy.to_str().unwrap(),
            "go",
        ],
    );
    assert_eq!(run.code, Some(0), "{}", run.stderr);
    let ids: Vec<String> = run
        .outcomes()
        .into_iter()
        .map(|(id, o)| {
            assert_eq!(o, "success", "{id}: {}", run.stderr);
            id
        })
        .collect();
    assert_eq!(ids, ["o1", "o2", "o3", "o4", "o5", "o6"]);
    let session = load_session(shared_home(), &run.session_id());
    assert_paired(&session.messages);
    let text = |id: &str| {
        session
            .messages
            .iter()
            .find_map(|m| match m {
                Message::Tool {
                    call_id, content, ..
                } if call_id == id => Some(content.clone()),
                _ => None,
            })
            .unwrap()
    };
    // Each read saw every write issued before it, and none issued after.
    assert!(
        text("o4").contains("beta") && !text("o4").contains("gamma"),
        "{}",
        text("o4")
    );
    assert!(text("o6").contains("gamma"), "{}", text("o6"));
    assert!(!text("o2").contains("b.txt"), "{}", text("o2"));
    assert_eq!(sb.read("b.txt"), "gamma\n");
}

#[test]
fn the_same_call_five_times_in_a_row_is_a_loop() {
    let sb = Sandbox::new();
    let tmp = tempfile::tempdir().unwrap();
    let same = turn("", &[("l", "glob", r#"{"pattern":"*"}"#)]);
    let mut turns: Vec<Value> = (0..6)
        .map(|i| {
            let mut t = same.clone();
            t["tool_calls"][0]["id"] = json!(format!("l{i}"));
            // Key order differs; the canonical arguments do not.
            if i % 2 == 1 {
                t["tool_calls"][0]["arguments"] = json!(r#"{ "pattern" : "*" }"#);
            }
            t
        })
        .collect();
    turns.push(turn("never reached", &[]));
    let rec = recording(tmp.path(), "loop.jsonl", &turns);
    let run = run_agent(
        shared_home(),
        &[
            "--replay",
            rec.to_str().unwrap(),
            "-w",
            sb.ws().to_str().unwrap(),
            "--policy",
            "read-only",
            "loop",
        ],
    );
    assert_eq!(run.code, Some(6), "{}", run.stderr);
    let finished = run.finished();
    assert_eq!(finished["reason"]["kind"], "loop_detected", "{finished}");
    assert_eq!(finished["turns"], 5);
    let outcomes = run.outcomes();
    assert_eq!(outcomes.len(), 5);
    assert_eq!(
        outcomes[4].1, "denied",
        "the fifth identical call is not run"
    );
    assert_paired(&load_session(shared_home(), &run.session_id()).messages);
}

#[test]
fn max_turns_stops_the_run_with_its_own_reason() {
    let sb = Sandbox::new();
    let tmp = tempfile::tempdir().unwrap();
    let rec = recording(
        tmp.path(),
        "turns.jsonl",
        &[
            turn("", &[("t1", "glob", r#"{"pattern":"*"}"#)]),
            turn("", &[("t2", "list_dir", r#"{"path":"."}"#)]),
            turn("done", &[]),
        ],
    );
    let run = run_agent(
        shared_home(),
        &[
            "--replay",
            rec.to_str().unwrap(),
            "-w",
            sb.ws().to_str().unwrap(),
            "--policy",
            "read-only",
            "--max-turns",
            "2",
            "x",
        ],
    );
    assert_eq!(run.code, Some(6), "{}", run.stderr);
    assert_eq!(
        run.finished()["reason"],
        json!({"kind": "max_turns", "limit": 2})
    );
}

#[test]
fn a_long_tool_output_is_cut_in_context_and_kept_in_full() {
    let sb = Sandbox::new();
    let tmp = tempfile::tempdir().unwrap();
    let big: String = (0..3000)
        .map(|i| format!("line {i} of a long file\n"))
        .collect();
    sb.write("big.txt", &big);
    let rec = recording(
        tmp.path(),
        "long.jsonl",
        &[
            turn("", &[("r", "read_file", r#"{"path":"big.txt"}"#)]),
            turn("ok", &[]),
        ],
    );
    let run = run_agent(
        shared_home(),
        &[
            "--replay",
            rec.to_str().unwrap(),
            "-w",
            sb.ws().to_str().unwrap(),
            "--policy",
            "read-only",
            "read",
        ],
    );
    assert_eq!(run.code, Some(0), "{}", run.stderr);
    let session = load_session(shared_home(), &run.session_id());
    let content = session
        .messages
        .iter()
        .find_map(|m| match m {
            Message::Tool { content, .. } => Some(content.clone()),
            _ => None,
        })
        .unwrap();
    assert!(content.len() < 20 * 1024, "{}", content.len());
    assert!(
        content.contains("line 0 of") && content.contains("line 1999 of"),
        "{}",
        &content[content.len() - 300..]
    );
    let saved = session
        .records
        .iter()
        .find_map(|r| match r {
            Record::Call(c) => c.full_output.clone(),
            _ => None,
        })
        .unwrap();
    assert!(content.contains(&saved), "the context names the file");
    let full = std::fs::read_to_string(&saved).unwrap();
    assert!(full.contains("line 1000 of") && full.len() > 60_000);
}

/// Spawn `warden run --json` and read its events as they come.
pub(crate) struct Live {
    child: Child,
    lines: std::sync::mpsc::Receiver<Value>,
    seen: Vec<Value>,
}

impl Live {
    pub(crate) fn spawn(home: &Path, args: &[&str]) -> Live {
        let mut cmd = warden(home);
        cmd.arg("run").arg("--json").args(args);
        Live::of(cmd)
    }

    /// Start `cmd` (a `warden run --json`) and read its events.
    pub(crate) fn of(mut cmd: Command) -> Live {
        let mut child = cmd
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .unwrap();
        let stdout = child.stdout.take().unwrap();
        let (tx, lines) = std::sync::mpsc::channel();
        std::thread::spawn(move || {
            for line in BufReader::new(stdout).lines().map_while(Result::ok) {
                if let Ok(v) = serde_json::from_str(&line) {
                    let _ = tx.send(v);
                }
            }
        });
        Live {
            child,
            lines,
            seen: Vec::new(),
        }
    }

    /// Wait (at most 60 s) for an event of type `ty`.
    pub(crate) fn wait_for(&mut self, ty: &str) -> Value {
        let end = Instant::now() + Duration::from_secs(60);
        loop {
            let left = end.saturating_duration_since(Instant::now());
            let ev = self
                .lines
                .recv_timeout(left)
                .unwrap_or_else(|_| panic!("no {ty} event; saw {:?}", self.seen));
            self.seen.push(ev.clone());
            if ev["type"] == ty {
                return ev;
            }
        }
    }

    /// Send `sig` to the process, straight away: a test timing a second
    /// interrupt cannot wait for a `kill` to spawn.
    pub(crate) fn signal(&self, sig: rustix::process::Signal) {
        let pid = i32::try_from(self.child.id())
            .ok()
            .and_then(rustix::process::Pid::from_raw);
        rustix::process::kill_process(pid.unwrap(), sig).unwrap();
    }

    /// Wait (at most 60 s) for the process to exit; its code and the rest of its events.
    pub(crate) fn finish(mut self) -> (Option<i32>, Vec<Value>) {
        let end = Instant::now() + Duration::from_secs(60);
        let status = loop {
            if let Some(s) = self.child.try_wait().unwrap() {
                break s;
            }
            assert!(Instant::now() < end, "warden run did not exit");
            std::thread::sleep(Duration::from_millis(20));
        };
        while let Ok(ev) = self.lines.recv_timeout(Duration::from_secs(5)) {
            self.seen.push(ev);
        }
        (status.code(), self.seen)
    }
}

#[test]
fn ctrl_c_cancels_running_calls_and_every_call_gets_a_result() {
    let home = hostile_home();
    let sb = Sandbox::new();
    let tmp = tempfile::tempdir().unwrap();
    let policy = auto_policy(tmp.path());
    let rec = recording(
        tmp.path(),
        "cancel.jsonl",
        &[
            turn(
                "Waiting.",
                &[
                    ("c1", "is_cancelled_spin", "{}"),
                    ("c2", "sleep_ms", r#"{"ms": 60000}"#),
                    ("c3", "write_file", r#"{"path":"after.txt","content":"no"}"#),
                ],
            ),
            turn("never reached", &[]),
        ],
    );
    let mut live = Live::spawn(
        home,
        &[
            "--replay",
            rec.to_str().unwrap(),
            "-w",
            sb.ws().to_str().unwrap(),
            "--policy",
            policy.to_str().unwrap(),
            "wait",
        ],
    );
    let started = live.wait_for("session_started");
    live.wait_for("tool_call");
    std::thread::sleep(Duration::from_millis(500));
    live.signal(rustix::process::Signal::INT);
    let interrupted = Instant::now();
    let (code, events) = live.finish();
    assert_eq!(code, Some(4), "{events:#?}");
    // c2 sleeps in the host for a minute, with a 30 s deadline: the
    // interrupt must end that wait, not the deadline.
    assert!(
        interrupted.elapsed() < Duration::from_secs(10),
        "the run took {:?} to stop",
        interrupted.elapsed()
    );
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
    assert_eq!(results.len(), 3, "{events:#?}");
    assert!(
        results
            .iter()
            .all(|(_, o)| *o == "cancelled" || *o == "success"),
        "{results:?}"
    );
    assert_eq!(
        results[2],
        ("c3", "cancelled"),
        "nothing starts after the interrupt"
    );
    assert!(!sb.exists("after.txt"));
    let finished = events.iter().find(|e| e["type"] == "finished").unwrap();
    assert_eq!(finished["reason"]["kind"], "cancelled");
    let session = load_session(home, started["session_id"].as_str().unwrap());
    assert_paired(&session.messages);
    assert!(matches!(
        session.ended,
        Some(warden::agent::StopReason::Cancelled)
    ));
}

#[test]
fn a_killed_run_resumes_without_its_partial_turn() {
    let home = hostile_home();
    let sb = Sandbox::new();
    let tmp = tempfile::tempdir().unwrap();
    let policy = auto_policy(tmp.path());
    let first = recording(
        tmp.path(),
        "first.jsonl",
        &[
            turn("Listing.", &[("k1", "glob", r#"{"pattern":"*"}"#)]),
            turn("Now waiting.", &[("k2", "sleep_ms", r#"{"ms": 60000}"#)]),
        ],
    );
    let mut live = Live::spawn(
        home,
        &[
            "--replay",
            first.to_str().unwrap(),
            "-w",
            sb.ws().to_str().unwrap(),
            "--policy",
            policy.to_str().unwrap(),
            "first task",
        ],
    );
    let id = live.wait_for("session_started")["session_id"]
        .as_str()
        .unwrap()
        .to_string();
    loop {
        let call = live.wait_for("tool_call");
        if call["call_id"] == "k2" {
            break;
        }
    }
    std::thread::sleep(Duration::from_millis(200));
    live.signal(rustix::process::Signal::KILL);
    let (code, _) = live.finish();
    assert_eq!(code, None, "killed by a signal");

    let crashed = load_session(home, &id);
    assert_eq!(crashed.ended, None);
    assert_eq!(crashed.turns, 1);
    assert_paired(&crashed.messages);
    assert_eq!(
        crashed.messages.len(),
        3,
        "task, k1 and its result: {:#?}",
        crashed.messages
    );

    let second = recording(tmp.path(), "second.jsonl", &[turn("All done.", &[])]);
    let run = run_agent(
        home,
        &[
            "--resume",
            &id,
            "--replay",
            second.to_str().unwrap(),
            "--policy",
            policy.to_str().unwrap(),
            "carry on",
        ],
    );
    assert_eq!(run.code, Some(0), "{}", run.stderr);
    assert_eq!(run.session_id(), id);
    let resumed = load_session(home, &id);
    assert_paired(&resumed.messages);
    let users: Vec<&str> = resumed
        .messages
        .iter()
        .filter_map(|m| match m {
            Message::User { content } => Some(content.as_str()),
            _ => None,
        })
        .collect();
    assert_eq!(users, ["first task", "carry on"]);
    assert!(
        matches!(resumed.messages.last(), Some(Message::Assistant { content, .. }) if content == "All done.")
    );

    let out = warden(home).args(["sessions", "list"]).output().unwrap();
    let list = String::from_utf8(out.stdout).unwrap();
    assert!(
        list.lines()
            .any(|l| l.starts_with(&id) && l.contains("done")),
        "{list}"
    );
}

#[test]
fn an_ask_without_a_terminal_is_denied_and_the_model_is_told_why() {
    let sb = Sandbox::new();
    let tmp = tempfile::tempdir().unwrap();
    let rec = recording(
        tmp.path(),
        "ask.jsonl",
        &[
            turn(
                "",
                &[("q1", "write_file", r#"{"path":"x.txt","content":"hi"}"#)],
            ),
            turn("Could not write.", &[]),
        ],
    );
    // `strict` asks before any call that is not read-only; no one can answer here.
    let run = run_agent(
        shared_home(),
        &[
            "--replay",
            rec.to_str().unwrap(),
            "-w",
            sb.ws().to_str().unwrap(),
            "--policy",
            "strict",
            "write x",
        ],
    );
    assert_eq!(run.code, Some(0), "{}", run.stderr);
    assert_eq!(
        run.outcomes(),
        vec![("q1".to_string(), "denied".to_string())]
    );
    let decision = run.of_type("tool_decision").next().unwrap();
    assert_eq!(decision["verdict"], "ask");
    assert_eq!(decision["approval"]["type"], "unanswered");
    assert!(!sb.exists("x.txt"));
    let session = load_session(shared_home(), &run.session_id());
    let told = session.messages.iter().find_map(|m| match m {
        Message::Tool { content, .. } => Some(content.clone()),
        _ => None,
    });
    let told = told.unwrap();
    assert!(told.contains("no terminal"), "{told}");
}
