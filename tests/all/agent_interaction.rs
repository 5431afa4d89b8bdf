//! The agent's interaction tools end to end over the mock model: a plan
//! shown, kept in the session and restored by `--resume`; a question
//! answered at a pseudo-terminal, and told "no one can answer" under
//! `--non-interactive`; memory notes that survive runs, redacted, kept
//! out of the workspace, and gone (not offered, denied naming the key)
//! when a policy sets `memory = false`; `warden:tool/interaction` not
//! linked without the grant; and a 0.2.0 component still loading.

use std::path::Path;

use serde_json::{Value, json};
use warden::capability::Grant;
use warden::provider::WireFormat;

use crate::agent_http::{KEY, key_var, provider_flag};
use crate::mock_model::{MockModel, Script};
use crate::support::{Sandbox, audited_calls, call_plugin, catalog, cli, fresh_home, warden};

/// `warden run --json` against `server` in `sb` with data directory
/// `home`; exit code, events, stderr.
fn run(
    server: &MockModel,
    home: &Path,
    sb: &Sandbox,
    extra: &[&str],
) -> (Option<i32>, Vec<Value>, String) {
    let out = warden(home)
        .env(key_var(server.format()), KEY)
        .args([
            "run",
            "--json",
            "--provider",
            provider_flag(server.format()),
        ])
        .args(["--base-url", &server.base_url()])
        .arg("-w")
        .arg(sb.ws())
        .args(extra)
        .output()
        .unwrap();
    let events = String::from_utf8_lossy(&out.stdout)
        .lines()
        .filter_map(|l| serde_json::from_str(l).ok())
        .collect();
    (
        out.status.code(),
        events,
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

fn of_type<'e>(events: &'e [Value], kind: &str) -> Vec<&'e Value> {
    events.iter().filter(|e| e["type"] == kind).collect()
}

/// The text of each request the model received.
fn bodies(server: &MockModel) -> Vec<String> {
    server
        .requests()
        .iter()
        .map(|r| r.body.to_string())
        .collect()
}

/// The names of the tools offered in a request body.
fn offered(body: &str) -> Vec<String> {
    let v: Value = serde_json::from_str(body).unwrap();
    v["tools"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| {
            t["function"]["name"]
                .as_str()
                .or(t["name"].as_str())
                .unwrap()
                .to_string()
        })
        .collect()
}

const PLAN: &str = r#"{"plan":[{"step":"read the failing test","status":"done"},{"step":"fix the parser","status":"in_progress"},{"step":"run the suite","status":"pending"}]}"#;

#[test]
fn a_plan_is_shown_kept_in_the_session_and_restored_by_resume() {
    let sb = Sandbox::new();
    let home = fresh_home();
    let server = MockModel::start(WireFormat::OpenAiChat);
    server.push(Script::tool_calls(&[("c1", "update_plan", PLAN)]));
    server.push(Script::text("Working on it."));
    let (code, events, stderr) = run(&server, home.path(), &sb, &["fix the parser"]);
    assert_eq!(code, Some(0), "{stderr}");
    let updated = of_type(&events, "plan_updated");
    assert_eq!(updated.len(), 1, "{events:?}");
    assert_eq!(updated[0]["call_id"], "c1");
    assert_eq!(updated[0]["steps"][1]["status"], "in_progress");
    assert_eq!(updated[0]["steps"][2]["step"], "run the suite");

    let server = MockModel::start(WireFormat::OpenAiChat);
    server.push(Script::text("Resumed."));
    let (code, events, stderr) = run(&server, home.path(), &sb, &["--last"]);
    assert_eq!(code, Some(0), "{stderr}");
    let restored = of_type(&events, "plan_updated");
    assert_eq!(restored.len(), 1, "{events:?}");
    assert!(restored[0].get("call_id").is_none());
    assert_eq!(restored[0]["steps"], updated[0]["steps"]);
    let first = &bodies(&server)[0];
    assert!(
        first.contains("Your plan so far") && first.contains("[>] fix the parser"),
        "the model sees the restored plan: {first}"
    );
}

#[test]
fn a_plan_with_two_steps_in_progress_is_refused_and_not_shown() {
    let sb = Sandbox::new();
    let home = fresh_home();
    let server = MockModel::start(WireFormat::OpenAiChat);
    let two =
        r#"{"plan":[{"step":"a","status":"in_progress"},{"step":"b","status":"in_progress"}]}"#;
    server.push(Script::tool_calls(&[("c1", "update_plan", two)]));
    server.push(Script::text("Oops."));
    let (code, events, stderr) = run(&server, home.path(), &sb, &["plan"]);
    assert_eq!(code, Some(0), "{stderr}");
    assert!(of_type(&events, "plan_updated").is_empty(), "{events:?}");
    let result = of_type(&events, "tool_result")[0];
    assert_eq!(result["outcome"], "error");
    assert!(
        bodies(&server)[1].contains("at most one step may be in progress"),
        "{:?}",
        bodies(&server)[1]
    );
}

const QUESTION: &str =
    r#"{"question":"Which database should the cache use?","choices":["sqlite","postgres"]}"#;

#[test]
fn ask_user_under_non_interactive_tells_the_model_no_one_can_answer() {
    let sb = Sandbox::new();
    let home = fresh_home();
    let server = MockModel::start(WireFormat::OpenAiChat);
    server.push(Script::tool_calls(&[("c1", "ask_user", QUESTION)]));
    server.push(Script::text("I will use sqlite."));
    let (code, events, stderr) = run(&server, home.path(), &sb, &["--non-interactive", "pick"]);
    assert_eq!(code, Some(0), "{stderr}");
    assert_eq!(of_type(&events, "tool_result")[0]["outcome"], "success");
    let second = &bodies(&server)[1];
    assert!(
        second.contains("No one can answer this question") && second.contains("--non-interactive"),
        "{second}"
    );
    let sessions = std::fs::read_dir(home.path().join("sessions")).unwrap();
    let file = sessions
        .filter_map(|e| e.ok().map(|e| e.path()))
        .find(|p| p.extension().is_some_and(|x| x == "jsonl"))
        .unwrap();
    let text = std::fs::read_to_string(file).unwrap();
    assert!(
        text.contains(r#""type":"asked""#) && text.contains("unanswered"),
        "the question is in the session: {text}"
    );
    let (calls, shown) = audited_calls(home.path(), "ask_user");
    let asked = &calls[0]["exercised"]["asked"][0];
    assert_eq!(
        asked["question"]["text"], "Which database should the cache use?",
        "{shown}"
    );
    assert_eq!(asked["answer"]["type"], "unanswered", "{shown}");
}

#[test]
fn ask_user_is_answered_at_a_terminal() {
    use rexpect::process::WaitStatus;
    let sb = Sandbox::new();
    let home = fresh_home();
    let server = MockModel::start(WireFormat::OpenAiChat);
    server.push(Script::tool_calls(&[("c1", "ask_user", QUESTION)]));
    server.push(Script::text("Using postgres."));
    let mut cmd = warden(home.path());
    cmd.env(key_var(server.format()), KEY)
        .args([
            "run",
            "--provider",
            "openai",
            "--base-url",
            &server.base_url(),
        ])
        .arg("-w")
        .arg(sb.ws())
        .arg("set up the cache");
    let mut p = rexpect::session::spawn_command(cmd, Some(60_000)).unwrap();
    let shown = p
        .exp_string("Your answer (a number or your own words): ")
        .unwrap();
    assert!(
        shown.contains("The agent asks: Which database should the cache use?")
            && shown.contains("[2] postgres"),
        "{shown}"
    );
    p.send_line("2").unwrap();
    let rest = p.exp_eof().unwrap();
    let code = match p.process().wait().unwrap() {
        WaitStatus::Exited(_, code) => code,
        other => panic!("warden did not exit normally: {other:?}"),
    };
    assert_eq!(code, 0, "{rest}");
    let second = &bodies(&server)[1];
    assert!(second.contains("The user answered: postgres"), "{second}");
}

#[test]
fn memory_survives_runs_is_redacted_and_never_lands_in_the_workspace() {
    let sb = Sandbox::new();
    let home = fresh_home();
    let before: Vec<_> = std::fs::read_dir(sb.ws()).unwrap().collect();
    let server = MockModel::start(WireFormat::OpenAiChat);
    let note = json!({"text": format!("build with `make check`; the key is {KEY}")});
    server.push(Script::tool_calls(&[(
        "c1",
        "memory_write",
        &note.to_string(),
    )]));
    server.push(Script::text("Noted."));
    let (code, events, stderr) = run(&server, home.path(), &sb, &["remember how to build"]);
    assert_eq!(code, Some(0), "{stderr}");
    assert_eq!(of_type(&events, "tool_result")[0]["outcome"], "success");

    let server = MockModel::start(WireFormat::OpenAiChat);
    server.push(Script::tool_calls(&[("c1", "memory_read", "{}")]));
    server.push(Script::text("Build with make check."));
    let (code, _, stderr) = run(&server, home.path(), &sb, &["how do I build?"]);
    assert_eq!(code, Some(0), "{stderr}");
    let second = &bodies(&server)[1];
    assert!(second.contains("build with `make check`"), "{second}");
    assert!(
        second.contains("[redacted]") && !second.contains(KEY),
        "{second}"
    );

    let after: Vec<_> = std::fs::read_dir(sb.ws()).unwrap().collect();
    assert_eq!(
        before.len(),
        after.len(),
        "nothing was written to the workspace"
    );
    let ws = sb.ws().display().to_string();
    let (code, shown, err) = cli(home.path(), &["memory", "show", "-w", &ws]);
    assert_eq!(code, Some(0), "{err}");
    assert!(
        shown.contains("make check") && !shown.contains(KEY),
        "{shown}"
    );
}

/// A policy that turns memory off, otherwise as the default.
fn memory_off(dir: &Path) -> String {
    let path = dir.join("no-memory.toml");
    std::fs::write(
        &path,
        "name = \"no-memory\"\nmode = \"auto-edit\"\n[grants.default]\nworkspace = \"read-write\"\nmemory = false\n",
    )
    .unwrap();
    path.display().to_string()
}

#[test]
fn memory_is_absent_when_the_policy_turns_it_off() {
    let sb = Sandbox::new();
    let home = fresh_home();
    let policy = memory_off(&sb.parent());
    let server = MockModel::start(WireFormat::OpenAiChat);
    server.push(Script::tool_calls(&[(
        "c1",
        "memory_write",
        r#"{"text":"remember me"}"#,
    )]));
    server.push(Script::text("Could not."));
    let (code, events, stderr) = run(&server, home.path(), &sb, &["--policy", &policy, "note"]);
    assert_eq!(code, Some(0), "{stderr}");
    let tools = offered(&bodies(&server)[0]);
    assert!(tools.contains(&"update_plan".to_string()), "{tools:?}");
    assert!(
        !tools.iter().any(|t| t.starts_with("memory_")),
        "memory tools are not offered: {tools:?}"
    );
    assert_eq!(of_type(&events, "tool_result")[0]["outcome"], "denied");
    assert!(
        bodies(&server)[1].contains("`memory = false`"),
        "the denial names the key: {}",
        bodies(&server)[1]
    );
    let ws = sb.ws().display().to_string();
    let (_, shown, err) = cli(home.path(), &["memory", "show", "-w", &ws, "--json"]);
    let v: Value = serde_json::from_str(&shown).unwrap_or_else(|_| panic!("{shown}{err}"));
    assert_eq!(v["notes"], "", "nothing was stored");
}

#[test]
fn without_the_grant_the_interaction_interface_is_not_linked() {
    let sb = Sandbox::new();
    let home = fresh_home();
    let path = sb.parent().join("no-interaction.toml");
    std::fs::write(
        &path,
        "name = \"no-interaction\"\nmode = \"auto-edit\"\n[grants.plugin.agent]\ninteraction = false\n",
    )
    .unwrap();
    let ws = sb.ws().display().to_string();
    let (code, out, err) = cli(
        home.path(),
        &[
            "tool",
            "call",
            "update_plan",
            "--json",
            "-w",
            &ws,
            "--policy",
            &path.display().to_string(),
            "-i",
            PLAN,
        ],
    );
    assert_eq!(code, Some(1), "{out}{err}");
    assert!(
        out.contains("warden:tool/interaction") && out.contains("grant does not include"),
        "the failure names the interface: {out}"
    );
    // With the grant, the same call succeeds.
    let (code, out, err) = cli(
        home.path(),
        &[
            "tool",
            "call",
            "update_plan",
            "--json",
            "-w",
            &ws,
            "-i",
            PLAN,
        ],
    );
    assert_eq!(code, Some(0), "{out}{err}");
}

#[test]
fn memory_edit_stores_what_the_editor_saved_redacted_and_refuses_too_much() {
    let sb = Sandbox::new();
    let home = fresh_home();
    let ws = sb.ws().display().to_string();
    let editor = sb.parent().join("editor.sh");
    std::fs::write(
        &editor,
        "#!/bin/sh\nprintf 'use four spaces\\npassword = hunter2hunter2\\n' > \"$1\"\n",
    )
    .unwrap();
    let big = sb.parent().join("big-editor.sh");
    std::fs::write(
        &big,
        "#!/bin/sh\nhead -c 17000 /dev/zero | tr '\\0' 'x' > \"$1\"\n",
    )
    .unwrap();
    for script in [&editor, &big] {
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(script, std::fs::Permissions::from_mode(0o755)).unwrap();
    }
    let edit = |script: &Path| {
        let o = warden(home.path())
            .env("VISUAL", script)
            .args(["memory", "edit", "-w", &ws])
            .output()
            .unwrap();
        (
            o.status.code(),
            String::from_utf8_lossy(&o.stderr).into_owned(),
        )
    };
    let (code, err) = edit(&editor);
    assert_eq!(code, Some(0), "{err}");
    let (_, shown, _) = cli(home.path(), &["memory", "show", "-w", &ws]);
    assert_eq!(shown, "use four spaces\n[redacted]\n");

    let (code, err) = edit(&big);
    assert_eq!(code, Some(2), "{err}");
    assert!(err.contains("16 KiB") && err.contains("unchanged"), "{err}");
    let (_, kept, _) = cli(home.path(), &["memory", "show", "-w", &ws]);
    assert_eq!(kept, shown);

    let (code, out, _) = cli(home.path(), &["memory", "clear", "-w", &ws]);
    assert_eq!(code, Some(0));
    assert!(out.contains("cleared"), "{out}");
}

#[test]
fn a_component_built_against_0_2_0_still_loads_and_keeps_its_error_kinds() {
    let wasm = std::fs::read(warden::test_plugins::LEGACY_V2).unwrap();
    let plugin = catalog().runtime().load(&wasm, None).unwrap();
    assert_eq!(plugin.meta.wit_version, "0.2.0");
    let ok = call_plugin(
        &plugin,
        "legacy_v2_echo",
        json!({"text": "old"}),
        &Grant::none(),
        &Default::default(),
    );
    assert!(
        matches!(&ok.outcome, warden::protocol::ToolOutcome::Success(o) if o.text.contains("old")),
        "{:?}",
        ok.outcome
    );
    let limit = call_plugin(
        &plugin,
        "legacy_v2_echo",
        json!({"text": "limit"}),
        &Grant::none(),
        &Default::default(),
    );
    assert!(
        matches!(&limit.outcome, warden::protocol::ToolOutcome::Error(e)
            if e.kind == warden::protocol::ErrorKind::LimitExceeded),
        "{:?}",
        limit.outcome
    );
}
