//! Long work on a real terminal (a pty): a tool call that reports progress
//! shows a spinner with its counts and the time taken, then clears its
//! line; the first command on a fresh data directory and an install say
//! which plugin they compile. Piped or with `--json`, none of it appears:
//! `tool call --json` gets `tool_progress` events instead.

use std::path::Path;
use std::process::Command;

use rexpect::process::WaitStatus;
use rexpect::session::{PtySession, spawn_command};
use serde_json::Value;

use crate::agent::{auto_policy, hostile_home};
use crate::support::*;

/// How the pty shows a line's clearing (indicatif's `clear_line`).
const CLEAR_LINE: &str = "\r\x1b[2K";

fn spawn(cmd: Command) -> PtySession {
    spawn_command(cmd, Some(180_000)).unwrap()
}

/// The rest of the session's bytes as UTF-8 (rexpect reads Latin-1), and
/// the exit code.
fn finish(mut p: PtySession, seen: &str) -> (String, i32) {
    let rest = p.exp_eof().unwrap();
    let code = match p.process().wait().unwrap() {
        WaitStatus::Exited(_, code) => code,
        other => panic!("warden did not exit normally: {other:?}"),
    };
    let bytes: Vec<u8> = format!("{seen}{rest}")
        .chars()
        .map(|c| c as u32 as u8)
        .collect();
    (String::from_utf8(bytes).unwrap(), code)
}

/// `tool call progress` of the hostile fixture: eight reports 300 ms apart.
fn progress_call(home: &Path, policy: &Path, ws: &Path, extra: &[&str]) -> Command {
    let mut cmd = warden(home);
    cmd.args(["tool", "call", "progress", "--policy"])
        .arg(policy)
        .arg("-w")
        .arg(ws)
        .args(["--input", r#"{"count":8,"interval_ms":300}"#])
        .args(extra);
    cmd
}

/// `text` as rexpect sees its UTF-8 bytes: one Latin-1 character each.
fn latin1(text: &str) -> String {
    text.bytes().map(char::from).collect()
}

/// What a spinner would leave (`\r`, ESC) is absent; a plugin's own C1
/// bytes reach JSON as they are, by design.
#[track_caller]
fn assert_no_control_bytes(text: &str, what: &str) {
    let raw: Vec<char> = text
        .replace("\r\n", "\n")
        .chars()
        .filter(|&c| c.is_ascii_control() && c != '\n' && c != '\t')
        .collect();
    assert!(raw.is_empty(), "{what}: control bytes {raw:?} in\n{text}");
}

#[test]
fn a_long_call_shows_a_spinner_with_its_counts_and_clears_it() {
    let sb = Sandbox::new();
    let tmp = tempfile::tempdir().unwrap();
    let policy = auto_policy(tmp.path());
    let mut p = spawn(progress_call(hostile_home(), &policy, &sb.ws(), &[]));
    // Within the first second or two (the spinner waits 400 ms, so a quick
    // call never flashes one): the counts the guest reports, and elapsed
    // (`·` is two bytes, two Latin-1 characters here).
    let (before, shown) = p
        .exp_regex(r"progress: step \d of 8 \(\d+%\) \S+ \d+s")
        .unwrap();
    let (screen, code) = finish(p, &format!("{before}{shown}"));
    assert_eq!(code, 0, "{screen}");
    let last = screen.rfind("progress: step").unwrap();
    let after = &screen[last..];
    let cleared = after
        .find(CLEAR_LINE)
        .expect("the spinner's line is cleared");
    let result = after.find("reported 8").expect("the result");
    assert!(cleared < result, "cleared before the result: {screen:?}");
    assert!(
        !screen.contains("… progress:"),
        "no line per report on a terminal that redraws: {screen:?}"
    );
}

#[test]
fn a_call_piped_or_with_json_gets_no_spinner_and_json_gets_events() {
    let sb = Sandbox::new();
    let tmp = tempfile::tempdir().unwrap();
    let policy = auto_policy(tmp.path());
    let out = progress_call(hostile_home(), &policy, &sb.ws(), &[])
        .output()
        .unwrap();
    let stderr = String::from_utf8(out.stderr).unwrap();
    assert_eq!(out.status.code(), Some(0), "{stderr}");
    assert!(!stderr.contains("step"), "nothing in a pipe: {stderr}");
    assert_no_control_bytes(&stderr, "piped stderr");

    let (screen, code) = finish(
        spawn(progress_call(
            hostile_home(),
            &policy,
            &sb.ws(),
            &["--json"],
        )),
        "",
    );
    assert_eq!(code, 0, "{screen}");
    assert_no_control_bytes(&screen, "--json on a terminal");
    let docs: Vec<Value> = screen
        .lines()
        .map(|l| serde_json::from_str(l.trim_end()).unwrap_or_else(|e| panic!("{e}: {l}")))
        .collect();
    let events: Vec<&Value> = docs
        .iter()
        .filter(|d| d["type"] == "tool_progress")
        .collect();
    assert!(events.len() >= 2, "{screen}");
    assert_eq!(events[0]["tool"], "progress");
    assert_eq!(events[0]["message"], "step 1 of 8");
    assert!(events.iter().all(|e| e["elapsed_ms"].is_u64()), "{screen}");
    let result = docs.last().unwrap();
    assert_eq!(result["outcome"]["text"], "reported 8", "{result}");
}

/// A data directory with nothing compiled yet.
fn cold_home() -> tempfile::TempDir {
    tempfile::Builder::new()
        .prefix("warden-cold-")
        .tempdir()
        .unwrap()
}

#[test]
fn a_fresh_data_directory_and_an_install_say_what_they_compile_on_a_terminal() {
    let home = cold_home();
    let mut cmd = warden(home.path());
    cmd.args(["plugin", "install", warden::test_plugins::HOSTILE]);
    let mut p = spawn(cmd);
    let shown = latin1("compiling plugin fs (first use) …");
    let before = p.exp_string(&shown).unwrap();
    let (rest, code) = finish(p, &format!("{before}{shown}"));
    assert_eq!(code, 0, "{rest}");
    assert!(
        rest.contains("compiling plugin hostile (to install) …"),
        "{rest:?}"
    );
    let last = rest.rfind("compiling plugin").unwrap();
    assert!(
        rest[last..].contains(CLEAR_LINE),
        "the line is cleared: {rest:?}"
    );

    // Piped, or with --json on a terminal: not a word of it.
    let home = cold_home();
    let out = warden(home.path()).args(["tool", "list"]).output().unwrap();
    let stderr = String::from_utf8(out.stderr).unwrap();
    assert_eq!(out.status.code(), Some(0), "{stderr}");
    assert!(!stderr.contains("compiling"), "{stderr}");
    assert_no_control_bytes(&stderr, "piped stderr");
    let home = cold_home();
    let mut cmd = warden(home.path());
    cmd.args(["plugin", "install", warden::test_plugins::HOSTILE, "--json"]);
    let (screen, code) = finish(spawn(cmd), "");
    assert_eq!(code, 0, "{screen}");
    assert!(!screen.contains("compiling"), "{screen}");
    assert_no_control_bytes(&screen, "--json on a terminal");
}
