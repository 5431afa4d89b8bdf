//! `warden run --review` end to end: the real binary, a scripted model on
//! loopback, real files. Every write path of a run (the file tools, a
//! guest's own WASI calls, a command in the process sandbox) lands in the
//! overlay; the workspace stays byte for byte and mtime for mtime as it was.

use std::collections::BTreeMap;
use std::os::unix::fs::{FileTypeExt, MetadataExt};
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};
use std::time::{Duration, Instant};

use serde_json::{Value, json};
use warden::agent::SessionStore;
use warden::home::Home;
use warden::overlay::{Overlay, OverlayState};
use warden::provider::{Message, WireFormat};

use crate::mock_model::{MockModel, Reply, Script};
use crate::support::{fresh_home, warden};

/// Every call runs; commands get a process grant.
const POLICY: &str = r#"
name = "review-test"
mode = "auto"

[grants.default]
workspace = "read-write"
network = []

[grants.default.process]
enabled = true

[[rule]]
name = "these-commands-run"
decision = "allow"
commands = ["printf", "rm", "mv", "mkdir", "cat", "python3", "echo", "tail"]
writes = ["**"]
"#;

struct Setup {
    home: tempfile::TempDir,
    ws: tempfile::TempDir,
    policy: PathBuf,
}

/// A data directory with the hostile fixture (its `fs_script` tool makes
/// raw WASI calls) and a workspace with files to change.
fn setup() -> Setup {
    let home = fresh_home();
    let out = warden(home.path())
        .args(["plugin", "install", warden::test_plugins::HOSTILE])
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let ws = tempfile::tempdir().unwrap();
    for (rel, text) in [
        ("a.txt", "original a\n"),
        ("b.txt", "let x = old;\n"),
        ("gone.txt", "to delete\n"),
        ("ren.txt", "to rename\n"),
        ("c.txt", "line\n"),
        ("sh_gone.txt", "to delete by a command\n"),
        ("sh_ren.txt", "to rename by a command\n"),
        ("sub/deep.txt", "in a directory\n"),
        (".git/config", "[core]\n"),
    ] {
        let path = ws.path().join(rel);
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(path, text).unwrap();
    }
    let policy = home.path().join("review-test.toml");
    std::fs::write(&policy, POLICY).unwrap();
    Setup { home, ws, policy }
}

/// What a tree holds: per path, its kind, mode, mtime and bytes.
fn snapshot(root: &Path) -> BTreeMap<PathBuf, (String, u32, i64, i64, Vec<u8>)> {
    let mut out = BTreeMap::new();
    let mut todo = vec![root.to_path_buf()];
    while let Some(dir) = todo.pop() {
        for e in std::fs::read_dir(&dir).unwrap() {
            let e = e.unwrap();
            let m = std::fs::symlink_metadata(e.path()).unwrap();
            let bytes = match m.is_file() {
                true => std::fs::read(e.path()).unwrap(),
                false => Vec::new(),
            };
            if m.is_dir() {
                todo.push(e.path());
            }
            let rel = e.path().strip_prefix(root).unwrap().to_path_buf();
            let kind = format!("{:?}", m.file_type());
            out.insert(rel, (kind, m.mode(), m.mtime(), m.mtime_nsec(), bytes));
        }
    }
    let m = std::fs::metadata(root).unwrap();
    out.insert(
        PathBuf::new(),
        (
            "root".into(),
            m.mode(),
            m.mtime(),
            m.mtime_nsec(),
            Vec::new(),
        ),
    );
    out
}

fn is_whiteout(path: &Path) -> bool {
    std::fs::symlink_metadata(path)
        .map(|m| m.file_type().is_char_device() && m.rdev() == 0)
        .unwrap_or(false)
}

/// `warden run --json` against `server`, with extra `args`.
fn run_cmd(s: &Setup, server: &MockModel, args: &[&str]) -> Command {
    let mut cmd = warden(s.home.path());
    cmd.env("OPENAI_API_KEY", "sk-test")
        .args(["run", "--json", "--non-interactive", "--provider", "openai"])
        .args(["--base-url", &server.base_url(), "--model", "m", "-w"])
        .arg(s.ws.path())
        .arg("--policy")
        .arg(&s.policy)
        .args(args);
    cmd
}

fn events(out: &Output) -> Vec<Value> {
    String::from_utf8_lossy(&out.stdout)
        .lines()
        .map(|l| serde_json::from_str(l).unwrap_or_else(|e| panic!("{e}: {l}")))
        .collect()
}

fn of_type<'a>(events: &'a [Value], ty: &str) -> Vec<&'a Value> {
    events.iter().filter(|e| e["type"] == ty).collect()
}

fn overlay_of(home: &Path, events: &[Value]) -> Overlay {
    let started = of_type(events, "session_started");
    let id = started[0]["overlay"]
        .as_str()
        .unwrap_or_else(|| panic!("no overlay in {}", started[0]));
    Overlay::open(&Home::at(home.to_path_buf()), id).unwrap()
}

/// The text the model was given for call `id`.
fn tool_text(home: &Path, session: &str, id: &str) -> String {
    let loaded = SessionStore::new(&Home::at(home.to_path_buf()))
        .load(session)
        .unwrap();
    loaded
        .messages
        .iter()
        .find_map(|m| match m {
            Message::Tool {
                call_id, content, ..
            } if call_id == id => Some(content.clone()),
            _ => None,
        })
        .unwrap_or_else(|| panic!("no result for {id}"))
}

const SHELL_CHANGES: &str = "printf 'made by %s\\n' sh > sh_new.txt; printf 'more\\n' >> c.txt; \
    rm sh_gone.txt; mv sh_ren.txt sh_renamed.txt; mkdir sh_dir; mv sub sub_moved; \
    python3 -c \"open('.g' + 'it/config', 'a').write('x')\" 2>&1 | tail -n 1; echo protected-checked";

#[test]
fn every_write_of_a_reviewed_run_lands_in_the_overlay_and_the_workspace_is_untouched() {
    let s = setup();
    let before = snapshot(s.ws.path());
    let server = MockModel::start(WireFormat::OpenAiChat);
    let script = json!({"steps": [
        {"op": "delete", "path": "gone.txt"},
        {"op": "rename", "from": "ren.txt", "to": "renamed.txt"},
        {"op": "mkdir", "path": "made"},
        {"op": "create", "path": "made/x.txt", "content": "raw wasi"},
    ]});
    server.push(Script::tool_calls(&[
        (
            "w1",
            "write_file",
            r#"{"path":"new.txt","content":"new file\n"}"#,
        ),
        (
            "w2",
            "write_file",
            r#"{"path":"a.txt","content":"changed a\n"}"#,
        ),
    ]));
    server.push(Script::tool_calls(&[
        (
            "e1",
            "edit_file",
            r#"{"path":"b.txt","old_string":"old","new_string":"new"}"#,
        ),
        ("f1", "fs_script", &script.to_string()),
    ]));
    let shell = json!({ "command": SHELL_CHANGES }).to_string();
    server.push(Script::tool_calls(&[("s1", "shell", &shell)]));
    server.push(Script::tool_calls(&[
        ("r1", "read_file", r#"{"path":"sh_new.txt"}"#),
        ("r2", "shell", r#"{"command":"cat a.txt b.txt made/x.txt"}"#),
    ]));
    server.push(Script::text("Done."));
    let out = run_cmd(&s, &server, &["--review", "change things"])
        .output()
        .unwrap();
    let ev = events(&out);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(0), "{stderr}");
    let results: Vec<_> = of_type(&ev, "tool_result")
        .iter()
        .map(|e| {
            (
                e["call_id"].as_str().unwrap(),
                e["outcome"].as_str().unwrap(),
            )
        })
        .collect();
    let decisions: Vec<_> = of_type(&ev, "tool_decision");
    assert!(
        results.iter().all(|(_, o)| *o == "success"),
        "{results:?} {decisions:?} {stderr}"
    );
    assert!(!stderr.contains("could not confine"), "{stderr}");
    crate::json_schemas::assert_valid(
        "run-event.schema.json",
        &String::from_utf8_lossy(&out.stdout),
    );

    assert_eq!(snapshot(s.ws.path()), before, "the workspace changed");

    let overlay = overlay_of(s.home.path(), &ev);
    let upper = overlay.upper();
    let read = |rel: &str| std::fs::read_to_string(upper.join(rel)).unwrap_or_default();
    assert_eq!(read("new.txt"), "new file\n");
    assert_eq!(read("a.txt"), "changed a\n");
    assert_eq!(read("b.txt"), "let x = new;\n");
    assert_eq!(read("renamed.txt"), "to rename\n");
    assert_eq!(read("made/x.txt"), "raw wasi");
    assert_eq!(read("sh_new.txt"), "made by sh\n");
    assert_eq!(read("c.txt"), "line\nmore\n");
    assert_eq!(read("sh_renamed.txt"), "to rename by a command\n");
    assert_eq!(read("sub_moved/deep.txt"), "in a directory\n");
    assert!(upper.join("sh_dir").is_dir());
    for gone in ["gone.txt", "ren.txt", "sh_gone.txt", "sh_ren.txt", "sub"] {
        assert!(is_whiteout(&upper.join(gone)), "{gone} is no whiteout");
    }
    assert!(
        !upper.join(".git/config").exists(),
        "a protected path was written"
    );
    assert_eq!(overlay.meta().state, OverlayState::Finished);

    let session = of_type(&ev, "session_started")[0]["session_id"]
        .as_str()
        .unwrap()
        .to_string();
    assert_eq!(overlay.meta().session_id.as_deref(), Some(session.as_str()));
    let home = s.home.path();
    let refused = tool_text(home, &session, "s1");
    assert!(refused.contains("protected-checked"), "{refused}");
    assert!(
        refused.contains("Read-only file system") || refused.contains("Permission denied"),
        "{refused}"
    );
    assert!(tool_text(home, &session, "r1").contains("made by sh"));
    let cat = tool_text(home, &session, "r2");
    for seen in ["changed a", "let x = new;", "raw wasi"] {
        assert!(cat.contains(seen), "{seen} not in {cat}");
    }
    let audit = warden(home)
        .args(["audit", "show", "--json"])
        .output()
        .unwrap();
    let audit = String::from_utf8_lossy(&audit.stdout);
    assert!(
        audit.contains("overlay_created") && audit.contains(overlay.id()),
        "{audit}"
    );
}

#[test]
fn a_reviewed_run_killed_after_its_first_write_leaves_a_running_overlay() {
    let s = setup();
    let before = snapshot(s.ws.path());
    let server = MockModel::start(WireFormat::OpenAiChat);
    server.push(Script::tool_calls(&[(
        "w1",
        "write_file",
        r#"{"path":"a.txt","content":"half-way\n"}"#,
    )]));
    server.push(Reply::from(Script::text("never")).delay(Duration::from_secs(120)));
    let mut child = run_cmd(&s, &server, &["--review", "write then hang"])
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let overlays = s.home.path().join("overlays");
    let start = Instant::now();
    let written = loop {
        let found = std::fs::read_dir(&overlays)
            .into_iter()
            .flatten()
            .filter_map(Result::ok)
            .map(|e| e.path().join("upper/a.txt"))
            .find(|p| p.exists());
        if found.is_some() && server.request_count() >= 2 {
            break found;
        }
        assert!(start.elapsed() < Duration::from_secs(120), "no write seen");
        std::thread::sleep(Duration::from_millis(50));
    };
    child.kill().unwrap();
    child.wait().unwrap();
    let written = written.unwrap();
    assert_eq!(std::fs::read_to_string(&written).unwrap(), "half-way\n");
    assert_eq!(snapshot(s.ws.path()), before, "the workspace changed");
    let id = written
        .parent()
        .unwrap()
        .parent()
        .unwrap()
        .file_name()
        .unwrap();
    let overlay =
        Overlay::open(&Home::at(s.home.path().to_path_buf()), id.to_str().unwrap()).unwrap();
    assert_eq!(overlay.meta().state, OverlayState::Running);
    assert!(overlay.meta().session_id.is_some());
    assert!(!Path::new(&format!("/proc/{}", overlay.meta().pid)).exists());
}

#[test]
fn review_with_the_data_directory_inside_the_workspace_is_refused_and_nothing_is_written() {
    let s = setup();
    let home_inside = s.ws.path().join(".warden-home");
    std::fs::create_dir(&home_inside).unwrap();
    std::fs::write(home_inside.join("review-test.toml"), POLICY).unwrap();
    let before = snapshot(s.ws.path());
    let server = MockModel::start(WireFormat::OpenAiChat);
    server.push(Script::text("never asked"));
    let out = run_cmd(&s, &server, &["--review", "anything"])
        .env("WARDEN_HOME", &home_inside)
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert_eq!(out.status.code(), Some(5), "{stdout}");
    assert!(stdout.contains("outside the workspace"), "{stdout}");
    assert_eq!(stdout.lines().count(), 1, "{stdout}");
    assert_eq!(server.request_count(), 0);
    assert_eq!(snapshot(s.ws.path()), before, "something was written");
}

#[test]
fn a_reviewed_run_that_writes_past_its_cap_stops() {
    let s = setup();
    let server = MockModel::start(WireFormat::OpenAiChat);
    let big = json!({"path": "big.txt", "content": "x".repeat(5000)}).to_string();
    server.push(Script::tool_calls(&[("w1", "write_file", &big)]));
    server.push(Script::text("not reached"));
    let out = run_cmd(
        &s,
        &server,
        &["--review", "--review-max-bytes", "4096", "write"],
    )
    .output()
    .unwrap();
    let ev = events(&out);
    assert_eq!(
        out.status.code(),
        Some(6),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let finished = of_type(&ev, "finished")[0];
    assert_eq!(finished["reason"]["kind"], "review_cap", "{finished}");
    assert_eq!(finished["reason"]["limit"], 4096);
    assert_eq!(server.request_count(), 1, "the run went on past its cap");
    assert!(!s.ws.path().join("big.txt").exists());
}

#[test]
fn no_new_overlay_when_those_kept_exceed_the_total_cap() {
    let s = setup();
    let home = Home::at(s.home.path().to_path_buf());
    let kept = Overlay::create(&home, s.ws.path(), "review-test").unwrap();
    let file = std::fs::File::create(kept.upper().join("huge")).unwrap();
    file.set_len(warden::overlay::TOTAL_CAP + 1).unwrap(); // sparse
    let server = MockModel::start(WireFormat::OpenAiChat);
    server.push(Script::text("never asked"));
    let out = run_cmd(&s, &server, &["--review", "anything"])
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert_eq!(out.status.code(), Some(5), "{stdout}");
    assert!(stdout.contains("warden review list"), "{stdout}");
    assert!(stdout.contains("warden review clean"), "{stdout}");
    assert_eq!(Overlay::list(&home).unwrap().len(), 1);
    assert_eq!(server.request_count(), 0);
}

fn chown_tree(path: &Path, id: u32) {
    std::os::unix::fs::lchown(path, Some(id), Some(id)).unwrap();
    if std::fs::symlink_metadata(path).unwrap().is_dir() {
        for e in std::fs::read_dir(path).unwrap() {
            chown_tree(&e.unwrap().path(), id);
        }
    }
}

#[test]
fn a_reviewed_run_of_an_unprivileged_user_lands_in_its_overlay_too() {
    const NOBODY: u32 = 65534;
    // Its own data directory (compiled components included), owned by it.
    let home = tempfile::tempdir().unwrap();
    let ws = tempfile::tempdir().unwrap();
    std::fs::write(ws.path().join("a.txt"), "original a\n").unwrap();
    std::fs::write(ws.path().join("gone.txt"), "to delete\n").unwrap();
    let policy = home.path().join("review-test.toml");
    std::fs::write(&policy, POLICY).unwrap();
    chown_tree(home.path(), NOBODY);
    chown_tree(ws.path(), NOBODY);
    let before = snapshot(ws.path());
    let server = MockModel::start(WireFormat::OpenAiChat);
    server.push(Script::tool_calls(&[(
        "w1",
        "write_file",
        r#"{"path":"a.txt","content":"changed a\n"}"#,
    )]));
    server.push(Script::tool_calls(&[(
        "s1",
        "shell",
        r#"{"command":"rm gone.txt; printf 'by nobody\\n' > sh.txt; cat a.txt"}"#,
    )]));
    server.push(Script::text("Done."));
    let out = Command::new("setpriv")
        .args(["--reuid=65534", "--regid=65534", "--clear-groups", "--"])
        .arg(env!("CARGO_BIN_EXE_warden"))
        .env("WARDEN_HOME", home.path())
        .env("HOME", home.path())
        .env_remove("RUST_LOG")
        .env("OPENAI_API_KEY", "sk-test")
        .args(["run", "--json", "--non-interactive", "--provider", "openai"])
        .args(["--base-url", &server.base_url(), "--model", "m", "-w"])
        .arg(ws.path())
        .arg("--policy")
        .arg(&policy)
        .args(["--review", "change things"])
        .output()
        .unwrap();
    let ev = events(&out);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(0), "{stderr}");
    let outcomes: Vec<_> = of_type(&ev, "tool_result")
        .iter()
        .map(|e| e["outcome"].clone())
        .collect();
    assert_eq!(outcomes, vec!["success", "success"], "{stderr}");
    assert_eq!(snapshot(ws.path()), before, "the workspace changed");
    let overlay = overlay_of(home.path(), &ev);
    let upper = overlay.upper();
    assert_eq!(
        std::fs::read_to_string(upper.join("a.txt")).unwrap(),
        "changed a\n"
    );
    assert_eq!(
        std::fs::read_to_string(upper.join("sh.txt")).unwrap(),
        "by nobody\n"
    );
    assert!(is_whiteout(&upper.join("gone.txt")));
    assert_eq!(
        std::fs::metadata(upper.join("sh.txt")).unwrap().uid(),
        NOBODY
    );
    let session = of_type(&ev, "session_started")[0]["session_id"]
        .as_str()
        .unwrap()
        .to_string();
    assert!(tool_text(home.path(), &session, "s1").contains("changed a"));
}

#[test]
fn strict_reviews_by_default_and_a_resumed_session_mounts_its_overlay_again() {
    let s = setup();
    let server = MockModel::start(WireFormat::OpenAiChat);
    server.push(Script::text("Nothing to do."));
    let out = warden(s.home.path())
        .env("OPENAI_API_KEY", "sk-test")
        .args(["run", "--json", "--non-interactive", "--provider", "openai"])
        .args(["--base-url", &server.base_url(), "--model", "m", "-w"])
        .arg(s.ws.path())
        .args(["--policy", "strict", "look"])
        .output()
        .unwrap();
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(overlay_of(s.home.path(), &events(&out)).meta().policy == "strict");

    // A first run writes; its resumption reads the write back from the
    // same overlay, and writes there again.
    let before = snapshot(s.ws.path());
    server.push(Script::tool_calls(&[(
        "w1",
        "write_file",
        r#"{"path":"a.txt","content":"first run\n"}"#,
    )]));
    server.push(Script::text("Wrote."));
    let first = run_cmd(&s, &server, &["--review", "write"])
        .output()
        .unwrap();
    assert_eq!(first.status.code(), Some(0));
    let first_ev = events(&first);
    let overlay = overlay_of(s.home.path(), &first_ev);
    let session = of_type(&first_ev, "session_started")[0]["session_id"]
        .as_str()
        .unwrap()
        .to_string();
    server.push(Script::tool_calls(&[
        ("r2", "read_file", r#"{"path":"a.txt"}"#),
        (
            "w2",
            "write_file",
            r#"{"path":"b.txt","content":"second run\n"}"#,
        ),
    ]));
    server.push(Script::text("Read."));
    let second = warden(s.home.path())
        .env("OPENAI_API_KEY", "sk-test")
        .args(["run", "--json", "--non-interactive", "--provider", "openai"])
        .args(["--base-url", &server.base_url(), "--model", "m", "--policy"])
        .arg(&s.policy)
        .args(["--resume", &session, "go on"])
        .output()
        .unwrap();
    assert_eq!(
        second.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&second.stderr)
    );
    let second_ev = events(&second);
    assert_eq!(overlay_of(s.home.path(), &second_ev).id(), overlay.id());
    assert!(tool_text(s.home.path(), &session, "r2").contains("first run"));
    assert_eq!(
        std::fs::read_to_string(overlay.upper().join("b.txt")).unwrap(),
        "second run\n"
    );
    assert_eq!(snapshot(s.ws.path()), before, "the workspace changed");
}

/// The workflow end to end: a reviewed run's changes (a tool's and a
/// command's) are shown by `warden review`, applied by `review apply` into
/// the untouched workspace, audited, and the overlay is gone; a run killed
/// half-way is applied the same way.
#[test]
fn a_reviewed_run_is_shown_applied_and_audited_and_so_is_a_killed_one() {
    let s = setup();
    let server = MockModel::start(WireFormat::OpenAiChat);
    server.push(Script::tool_calls(&[
        (
            "w1",
            "write_file",
            r#"{"path":"new.txt","content":"new file\n"}"#,
        ),
        (
            "e1",
            "edit_file",
            r#"{"path":"b.txt","old_string":"old","new_string":"new"}"#,
        ),
    ]));
    let shell = json!({ "command": "rm gone.txt; mv ren.txt renamed.txt" }).to_string();
    server.push(Script::tool_calls(&[("s1", "shell", &shell)]));
    server.push(Script::text("Done."));
    let before = snapshot(s.ws.path());
    let out = run_cmd(&s, &server, &["--review", "change things"])
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let overlay = overlay_of(s.home.path(), &events(&out));
    assert_eq!(snapshot(s.ws.path()), before, "written before apply");

    let review = |args: &[&str]| {
        let out = warden(s.home.path()).args(args).output().unwrap();
        let text = String::from_utf8_lossy(&out.stdout).into_owned();
        (
            out.status.code(),
            text,
            String::from_utf8_lossy(&out.stderr).into_owned(),
        )
    };
    let (code, diff, err) = review(&["review", "--last"]);
    assert_eq!(code, Some(0), "{err}");
    for expected in [
        "new.txt",
        "b.txt",
        "gone.txt",
        "renamed.txt",
        "+let x = new;",
    ] {
        assert!(diff.contains(expected), "{expected} missing from {diff}");
    }
    let (code, out, err) = review(&["review", "apply", "--last"]);
    assert_eq!(code, Some(0), "{out}{err}");
    let ws = s.ws.path();
    assert_eq!(
        std::fs::read_to_string(ws.join("new.txt")).unwrap(),
        "new file\n"
    );
    assert_eq!(
        std::fs::read_to_string(ws.join("b.txt")).unwrap(),
        "let x = new;\n"
    );
    assert!(!ws.join("gone.txt").exists() && !ws.join("ren.txt").exists());
    assert_eq!(
        std::fs::read_to_string(ws.join("renamed.txt")).unwrap(),
        "to rename\n"
    );
    assert!(
        !overlay.dir().exists(),
        "the applied overlay is left behind"
    );
    let home = Home::at(s.home.path().to_path_buf());
    let log = std::fs::read_to_string(warden::audit::log_path(&home)).unwrap();
    assert!(
        log.contains("\"overlay_created\"") && log.contains("\"overlay_applied\""),
        "{log}"
    );

    // Killed after its first write: the interrupted overlay applies too.
    server.push(Script::tool_calls(&[(
        "w2",
        "write_file",
        r#"{"path":"a.txt","content":"half-way\n"}"#,
    )]));
    server.push(Reply::from(Script::text("never")).delay(Duration::from_secs(120)));
    let requests = server.request_count();
    let mut child = run_cmd(&s, &server, &["--review", "write then hang"])
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let start = Instant::now();
    while server.request_count() < requests + 2 {
        assert!(
            start.elapsed() < Duration::from_secs(120),
            "no second request"
        );
        std::thread::sleep(Duration::from_millis(50));
    }
    child.kill().unwrap();
    child.wait().unwrap();
    assert_eq!(
        std::fs::read_to_string(ws.join("a.txt")).unwrap(),
        "original a\n"
    );
    let (code, list, err) = review(&["review", "list"]);
    assert_eq!(code, Some(0), "{err}");
    assert!(list.contains("interrupted"), "{list}");
    let (code, out, err) = review(&["review", "apply", "--last"]);
    assert_eq!(code, Some(0), "{out}{err}");
    assert_eq!(
        std::fs::read_to_string(ws.join("a.txt")).unwrap(),
        "half-way\n"
    );
}
