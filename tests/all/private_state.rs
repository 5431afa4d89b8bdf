//! What Warden keeps about a user's work is theirs alone: session files,
//! tool outputs kept in the session directory, the audit log and its
//! anchor are created `0600` in `0700` directories, and another user can
//! read none of them.

use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::process::Command;

use serde_json::json;

use crate::support::{fresh_home, warden};

fn mode(path: &Path) -> u32 {
    std::fs::metadata(path).unwrap().permissions().mode() & 0o777
}

/// Every file and directory under `dir`, symlinks left out.
fn walk(dir: &Path) -> Vec<PathBuf> {
    let mut out = Vec::new();
    for entry in std::fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        let meta = std::fs::symlink_metadata(&path).unwrap();
        if meta.is_symlink() {
            continue;
        }
        if meta.is_dir() {
            out.extend(walk(&path));
        }
        out.push(path);
    }
    out
}

#[test]
fn sessions_outputs_and_the_audit_log_are_private() {
    let home = fresh_home();
    let ws = tempfile::tempdir().unwrap();
    std::fs::write(ws.path().join("long.txt"), "a line of text\n".repeat(3000)).unwrap();
    let rec = ws.path().join("rec.jsonl");
    let turns = [
        json!({"warden_replay": 1, "source": "test script"}),
        json!({"text": "", "tool_calls": [{"id": "c1", "name": "read_file",
               "arguments": r#"{"path":"long.txt"}"#}],
               "usage": null, "finish": {"type": "tool_calls"}}),
        json!({"text": "done", "tool_calls": [], "usage": null, "finish": {"type": "stop"}}),
    ];
    let text: String = turns.iter().map(|t| t.to_string() + "\n").collect();
    std::fs::write(&rec, text).unwrap();
    let out = warden(home.path())
        .args(["run", "-p", "--policy", "read-only", "--replay"])
        .arg(&rec)
        .arg("-w")
        .arg(ws.path())
        .arg("read it")
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );

    let sessions = home.path().join("sessions");
    let audit = home.path().join("audit");
    let made: Vec<PathBuf> = walk(&sessions)
        .into_iter()
        .chain(walk(&audit))
        .chain([sessions.clone(), audit.clone()])
        .collect();
    let kept = made
        .iter()
        .filter(|p| p.extension().is_some_and(|e| e == "txt"))
        .count();
    assert_eq!(kept, 1, "the long output was kept: {made:?}");
    for path in &made {
        let want = if path.is_dir() { 0o700 } else { 0o600 };
        let found = mode(path);
        assert_eq!(found, want, "{}: {found:o}", path.display());
    }
    for name in ["audit.jsonl", "anchor.json"] {
        assert!(made.contains(&audit.join(name)), "{name}: {made:?}");
    }

    // Another user can open none of them, even knowing the names.
    std::fs::set_permissions(home.path(), std::fs::Permissions::from_mode(0o755)).unwrap();
    for path in made.iter().filter(|p| p.is_file()) {
        let out = Command::new("setpriv")
            .args(["--reuid=65534", "--regid=65534", "--clear-groups", "cat"])
            .arg(path)
            .output()
            .unwrap();
        assert!(!out.status.success(), "{} is readable", path.display());
        assert!(
            String::from_utf8_lossy(&out.stderr).contains("Permission denied"),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
    }
}
