#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::path::Path;

use super::*;

fn write(path: &Path, text: &str) {
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    std::fs::write(path, text).unwrap();
}

/// A repository `repo/` (with `.git`) holding the workspace `repo/app/ws`.
fn repo() -> (tempfile::TempDir, PathBuf) {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().canonicalize().unwrap();
    std::fs::create_dir_all(root.join("repo/.git")).unwrap();
    let ws = root.join("repo/app/ws");
    std::fs::create_dir_all(&ws).unwrap();
    (dir, ws)
}

fn tool(content: &str) -> Message {
    Message::Tool {
        call_id: "c0".into(),
        name: "read_file".into(),
        content: content.into(),
        is_error: false,
    }
}

#[test]
fn files_from_the_repository_root_to_the_workspace_come_outermost_first() {
    let (dir, ws) = repo();
    let root = dir.path().canonicalize().unwrap();
    write(&root.join("AGENTS.md"), "ABOVE THE REPOSITORY");
    write(&root.join("repo/AGENTS.md"), "REPO RULES");
    write(&root.join("repo/app/AGENTS.md"), "APP RULES");
    write(&ws.join("AGENTS.md"), "WORKSPACE RULES");
    let loaded = ProjectInstructions::load(&ws, DEFAULT_CAP);
    let shown: Vec<String> = loaded
        .files()
        .iter()
        .map(|f| loaded.shown(&f.path))
        .collect();
    assert_eq!(shown, ["../../AGENTS.md", "../AGENTS.md", "AGENTS.md"]);
    let prompt = loaded.system_prompt("BASE");
    assert!(prompt.starts_with("BASE\n"));
    assert!(!prompt.contains("ABOVE THE REPOSITORY"), "{prompt}");
    let at = |s: &str| prompt.find(s).unwrap();
    // The closest file comes last: it has the last word.
    assert!(at("REPO RULES") < at("APP RULES"));
    assert!(at("APP RULES") < at("WORKSPACE RULES"));
    assert!(prompt.contains("never change what the policy allows"));
}

#[test]
fn without_a_repository_only_the_workspace_file_is_read() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().canonicalize().unwrap();
    write(&root.join("AGENTS.md"), "PARENT");
    let ws = root.join("ws");
    write(&ws.join("AGENTS.md"), "OWN");
    let loaded = ProjectInstructions::load(&ws, DEFAULT_CAP);
    assert_eq!(loaded.files().len(), 1);
    assert_eq!(loaded.files()[0].text, "OWN");
}

#[test]
fn no_file_leaves_the_prompt_as_it_was() {
    let (_dir, ws) = repo();
    let loaded = ProjectInstructions::load(&ws, DEFAULT_CAP);
    assert!(loaded.files().is_empty());
    assert_eq!(loaded.system_prompt("BASE"), "BASE");
    assert_eq!(ProjectInstructions::off().system_prompt("BASE"), "BASE");
}

#[test]
fn the_cap_cuts_the_outermost_files_first() {
    let (dir, ws) = repo();
    let root = dir.path().canonicalize().unwrap();
    write(&root.join("repo/AGENTS.md"), &"o".repeat(300));
    write(&ws.join("AGENTS.md"), &"w".repeat(150));
    let loaded = ProjectInstructions::load(&ws, 200);
    let files = loaded.files();
    assert_eq!(files[1].text.len(), 150, "the workspace's file is whole");
    assert_eq!(files[1].cut, 0);
    assert_eq!(files[0].text.len(), 50, "the outer file gets what is left");
    assert_eq!(files[0].cut, 250);
    let prompt = loaded.system_prompt("");
    assert!(
        prompt.contains("250 more bytes of this file were left out"),
        "{prompt}"
    );
    assert!(!prompt.contains(&"o".repeat(51)));
}

#[test]
fn a_symlink_named_agents_md_is_not_followed() {
    let (dir, ws) = repo();
    let secret = dir.path().join("secret.txt");
    std::fs::write(&secret, "TOP SECRET").unwrap();
    std::os::unix::fs::symlink(&secret, ws.join("AGENTS.md")).unwrap();
    let loaded = ProjectInstructions::load(&ws, DEFAULT_CAP);
    assert!(loaded.files().is_empty());
    assert!(!loaded.system_prompt("").contains("TOP SECRET"));
    assert_eq!(loaded.skipped().len(), 1);
    assert!(
        loaded.skipped()[0].1.contains("symlink"),
        "{:?}",
        loaded.skipped()
    );
}

#[test]
fn a_fifo_named_agents_md_neither_blocks_nor_is_read() {
    let (_dir, ws) = repo();
    let fifo = ws.join("AGENTS.md");
    rustix::fs::mknodat(
        rustix::fs::CWD,
        &fifo,
        rustix::fs::FileType::Fifo,
        Mode::from_raw_mode(0o600),
        0,
    )
    .unwrap();
    let loaded = ProjectInstructions::load(&ws, DEFAULT_CAP);
    assert!(loaded.files().is_empty());
    assert!(loaded.skipped()[0].1.contains("not a regular file"));
}

#[test]
fn a_nested_file_comes_once_with_a_call_that_names_a_path_under_it() {
    let (_dir, ws) = repo();
    write(&ws.join("src/AGENTS.md"), "SRC RULES");
    write(&ws.join("src/api/AGENTS.md"), "API RULES");
    write(&ws.join("src/api/handler.rs"), "fn main() {}");
    write(&ws.join("docs/AGENTS.md"), "DOCS RULES");
    let loaded = ProjectInstructions::load(&ws, DEFAULT_CAP);

    let given = loaded.just_in_time(r#"{"path":"src/api/handler.rs"}"#, &[]);
    let shown: Vec<String> = given.iter().map(|(f, _)| loaded.shown(&f.path)).collect();
    assert_eq!(
        shown,
        ["src/AGENTS.md", "src/api/AGENTS.md"],
        "outermost first"
    );
    assert!(given[1].1.contains("API RULES"));
    assert!(given[1].1.contains("files under `src/api/`"));

    // Once given, not again while it is in the conversation.
    let history = [tool(&format!("ok{}{}", given[0].1, given[1].1))];
    assert!(
        loaded
            .just_in_time(r#"{"path":"./src/api/other.rs"}"#, &history)
            .is_empty()
    );
    // Compaction dropped it: it comes again.
    assert_eq!(
        loaded
            .just_in_time(r#"{"path":"src/api"}"#, &[tool("summary")])
            .len(),
        2
    );
    // An absolute path inside the workspace counts; one outside does not.
    let abs = serde_json::json!({ "path": ws.join("docs/x.md") }).to_string();
    assert_eq!(loaded.just_in_time(&abs, &[]).len(), 1);
    assert!(
        loaded
            .just_in_time(r#"{"path":"/etc/docs/x.md"}"#, &[])
            .is_empty()
    );
}

#[test]
fn nested_files_are_never_looked_for_outside_the_workspace_or_through_symlinks() {
    let (dir, ws) = repo();
    let outside = dir.path().join("outside");
    write(&outside.join("AGENTS.md"), "OUTSIDE");
    write(&outside.join("sub/AGENTS.md"), "OUTSIDE SUB");
    std::os::unix::fs::symlink(&outside, ws.join("link")).unwrap();
    write(&ws.join("real/AGENTS.md"), "REAL");
    let loaded = ProjectInstructions::load(&ws, DEFAULT_CAP);
    for input in [
        r#"{"path":"link/sub/x"}"#,
        r#"{"path":"../outside/sub/x"}"#,
        r#"{"path":"real/../../outside/sub/x"}"#,
    ] {
        assert!(loaded.just_in_time(input, &[]).is_empty(), "{input}");
    }
    assert_eq!(
        loaded
            .just_in_time(r#"{"paths":["a","real/x"]}"#, &[])
            .len(),
        1
    );
}

#[test]
fn instructions_that_are_off_look_for_nothing() {
    let (_dir, ws) = repo();
    write(&ws.join("src/AGENTS.md"), "SRC RULES");
    assert!(
        ProjectInstructions::off()
            .just_in_time(r#"{"path":"src/x"}"#, &[])
            .is_empty()
    );
}
