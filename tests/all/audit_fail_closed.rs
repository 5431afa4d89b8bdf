//! `warden tool call` runs no tool whose audit record cannot be written:
//! a read-only, unreadable or full data directory, or a file where the
//! audit directory should be, ends the command with exit 5 before the tool
//! runs; a record that still fails after the call ran fails the command.
//! Each case is real: a read-only bind mount and a full tmpfs in a user
//! and mount namespace, permissions as an unprivileged user.

use std::os::unix::fs::PermissionsExt;
use std::path::Path;
use std::process::{Command, Output};

use serde_json::json;

use crate::support::*;

/// The unprivileged user the permission tests run as.
const NOBODY: u32 = 65534;

fn write_input(path: &str, content: &str) -> String {
    json!({"path": path, "content": content}).to_string()
}

fn text(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes).into_owned()
}

/// Run `script` with `sh` as root of a new user and mount namespace, with
/// `WARDEN` naming the binary and `vars` in its environment.
fn in_namespace(script: &str, vars: &[(&str, &Path)]) -> Output {
    let mut cmd = Command::new("unshare");
    cmd.args(["-rm", "sh", "-c", script])
        .env("WARDEN", env!("CARGO_BIN_EXE_warden"))
        .env_remove("RUST_LOG");
    for (k, v) in vars {
        cmd.env(k, v);
    }
    cmd.output().unwrap()
}

/// Assert the command refused before running: exit 5, a message naming
/// `problem` and `path`, and nothing written in the workspace.
fn assert_refused(out: &Output, problem: &str, path: &Path, ws: &Path) {
    let stderr = text(&out.stderr);
    assert_eq!(out.status.code(), Some(5), "{stderr}");
    assert!(stderr.contains(problem), "{stderr}");
    assert!(stderr.contains(&path.display().to_string()), "{stderr}");
    assert!(stderr.contains("the call was not run"), "{stderr}");
    assert!(
        std::fs::read_dir(ws).unwrap().next().is_none(),
        "the tool ran"
    );
}

#[test]
fn a_read_only_data_dir_runs_no_call() {
    let home = fresh_home();
    let ws = tempfile::tempdir().unwrap();
    let first = warden(home.path())
        .args(["tool", "call", "write_file", "-w"])
        .arg(ws.path())
        .args(["--input", &write_input("first.txt", "x")])
        .output()
        .unwrap();
    assert_eq!(first.status.code(), Some(0), "{}", text(&first.stderr));
    std::fs::remove_file(ws.path().join("first.txt")).unwrap();
    let log = home.path().join("audit/audit.jsonl");
    let before = std::fs::read(&log).unwrap();

    let out = in_namespace(
        r#"mount --bind "$H" "$H" && mount -o remount,bind,ro "$H" &&
           WARDEN_HOME="$H" exec "$WARDEN" tool call write_file -w "$WS" --input '{"path":"second.txt","content":"x"}'"#,
        &[("H", home.path()), ("WS", ws.path())],
    );
    assert_refused(&out, "Read-only file system", &log, ws.path());
    assert_eq!(std::fs::read(&log).unwrap(), before);
}

#[test]
fn an_unreadable_audit_dir_runs_no_call() {
    let home = tempfile::tempdir().unwrap();
    let ws = tempfile::tempdir().unwrap();
    let audit = home.path().join("audit");
    std::fs::create_dir(&audit).unwrap();
    for dir in [home.path(), ws.path(), &audit] {
        std::os::unix::fs::chown(dir, Some(NOBODY), Some(NOBODY)).unwrap();
    }
    std::fs::set_permissions(&audit, std::fs::Permissions::from_mode(0o000)).unwrap();
    let out = Command::new("setpriv")
        .args([
            &format!("--reuid={NOBODY}"),
            &format!("--regid={NOBODY}"),
            "--clear-groups",
            env!("CARGO_BIN_EXE_warden"),
            "tool",
            "call",
            "write_file",
            "-w",
        ])
        .arg(ws.path())
        .args(["--input", &write_input("a.txt", "x")])
        .env("WARDEN_HOME", home.path())
        .env_remove("RUST_LOG")
        .output()
        .unwrap();
    assert_refused(
        &out,
        "Permission denied",
        &audit.join("audit.jsonl"),
        ws.path(),
    );
}

#[test]
fn a_file_where_the_audit_dir_should_be_runs_no_call() {
    let home = fresh_home();
    let ws = tempfile::tempdir().unwrap();
    let audit = home.path().join("audit");
    std::fs::write(&audit, "not a directory").unwrap();
    let out = warden(home.path())
        .args(["tool", "call", "write_file", "-w"])
        .arg(ws.path())
        .args(["--input", &write_input("a.txt", "x")])
        .output()
        .unwrap();
    assert_refused(&out, "is not a directory", &audit, ws.path());
    assert_eq!(std::fs::read_to_string(&audit).unwrap(), "not a directory");
}

/// A tmpfs of 1.5 MiB mounted over `$H`, with its own compile cache
/// holding only the built-ins' metadata, filled to `$FREE` KiB free.
const SMALL_DISK: &str = r#"
mount -t tmpfs -o size=1536k tmpfs "$H" || exit 90
mkdir "$H/cache" && cp "$SHARED"/*.meta.json "$H/cache/" || exit 91
avail=$(df --output=avail -k "$H" | tail -1)
head -c "$(( (avail - FREE) * 1024 ))" /dev/zero > "$H/fill" || exit 92
export WARDEN_HOME="$H"
"#;

#[test]
fn a_full_disk_runs_no_call_and_a_failed_cache_write_leaves_no_temporary_file() {
    catalog();
    let mount = tempfile::tempdir().unwrap();
    let ws = tempfile::tempdir().unwrap();
    std::fs::write(ws.path().join("a.txt"), "alpha\n").unwrap();
    let big = write_input("b.txt", &"y".repeat(80_000));
    let script = format!(
        r#"{SMALL_DISK}
# Room for records but not for a compiled component (2 MiB and more).
"$WARDEN" tool call read_file -w "$WS" --input '{{"path":"a.txt"}}'
echo "exit=$?"
echo "cache: $(ls -A "$H/cache" | grep -v '\.meta\.json$' | tr '\n' ' ')"
cat /dev/zero > "$H/fill-rest" 2>/dev/null
"$WARDEN" tool call write_file -w "$WS" --input '{big}'
echo "exit=$?"
echo "records: $(wc -l < "$H/audit/audit.jsonl")"
"#
    );
    let out = in_namespace(
        &script,
        &[
            ("H", mount.path()),
            ("WS", ws.path()),
            ("SHARED", &shared_home().join("cache")),
            ("FREE", Path::new("512")),
        ],
    );
    let stdout = text(&out.stdout);
    let stderr = text(&out.stderr);
    let lines: Vec<&str> = stdout.lines().collect();
    assert_eq!(out.status.code(), Some(0), "{stdout}\n{stderr}");
    assert!(stdout.contains("alpha"), "{stdout}\n{stderr}");
    assert_eq!(
        lines
            .iter()
            .copied()
            .filter(|l| l.starts_with("exit="))
            .collect::<Vec<_>>(),
        ["exit=0", "exit=5"],
        "{stdout}\n{stderr}"
    );
    assert!(
        lines.contains(&"cache: "),
        "the failed cache writes left files behind: {stdout}"
    );
    assert!(
        stderr.contains("no room for audit records") && stderr.contains("No space left on device"),
        "{stderr}"
    );
    assert!(lines.contains(&"records: 1"), "{stdout}");
    assert!(!ws.path().join("b.txt").exists(), "the refused call ran");
}

#[test]
fn a_record_that_cannot_be_written_after_the_call_fails_the_command() {
    catalog();
    let mount = tempfile::tempdir().unwrap();
    // The workspace shares the small disk: the call fills what the log's
    // reservation left, so the anchor cannot be moved after it. The
    // workspace lies in the data directory, so it needs --trust-workspace;
    // -q: no first-write notice, whose record would take a block.
    let input = tempfile::NamedTempFile::new().unwrap();
    std::fs::write(input.path(), write_input("c.txt", &"z".repeat(400_000))).unwrap();
    let script = format!(
        r#"{SMALL_DISK}
mkdir "$H/ws"
"$WARDEN" -q tool call write_file -w "$H/ws" --trust-workspace --input "@$IN"
echo "exit=$?"
echo "records: $(wc -l < "$H/audit/audit.jsonl")"
"#
    );
    let out = in_namespace(
        &script,
        &[
            ("H", mount.path()),
            ("IN", input.path()),
            ("SHARED", &shared_home().join("cache")),
            ("FREE", Path::new("512")),
        ],
    );
    let stdout = text(&out.stdout);
    let stderr = text(&out.stderr);
    assert!(stdout.contains("exit=5"), "{stdout}\n{stderr}");
    assert!(
        stderr.contains("the call ran, but recording it failed")
            && stderr.contains("No space left on device"),
        "{stderr}"
    );
    // The record itself had its room reserved; only the anchor lags.
    assert!(stdout.contains("records: 1"), "{stdout}");
}

#[test]
fn warden_mcp_does_not_serve_when_it_cannot_audit() {
    let home = fresh_home();
    let ws = tempfile::tempdir().unwrap();
    let audit = home.path().join("audit");
    std::fs::write(&audit, "not a directory").unwrap();
    let out = warden(home.path())
        .args(["mcp", "-w"])
        .arg(ws.path())
        .stdin(std::process::Stdio::null())
        .output()
        .unwrap();
    let stderr = text(&out.stderr);
    assert_eq!(out.status.code(), Some(5), "{stderr}");
    assert!(stderr.contains("is not a directory"), "{stderr}");
    assert!(
        stderr.contains("warden mcp runs no tool it cannot audit"),
        "{stderr}"
    );
    assert!(out.stdout.is_empty(), "it answered: {}", text(&out.stdout));
}
