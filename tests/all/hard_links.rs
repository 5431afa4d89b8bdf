//! Hard links to protected files: a file that is the same inode as a
//! protected file is refused under any name, as the protected file itself
//! would be — for reading (and metadata) where protected paths are
//! unreadable, and for every change under any policy — in the workspace,
//! across extra directories and in workers, with each refusal on the
//! call's report. Files that merely have several names work as usual.

use std::path::Path;
use std::time::SystemTime;

use serde_json::{Value, json};
use warden::base::Limits;
use warden::capability::{BoundaryDenial, FsOp, Grant, WriteMode};
use warden::policy::{Policy, grant_from_declared, grant_from_policy};
use warden::protocol::{ErrorKind, ToolOutcome};
use warden::runtime::CallReport;

use crate::support::*;

const DOT_ENV: &str = "SECRET=hunter2\n";

/// A workspace with a secret and, made before the call and outside the
/// sandbox, a second name for it (`notes.txt`), plus an ordinary file with
/// two names.
fn project() -> Sandbox {
    let sb = Sandbox::new();
    sb.write(".env", DOT_ENV);
    sb.write("shared.txt", "shared\n");
    link(&sb.ws(), ".env", "notes.txt");
    link(&sb.ws(), "shared.txt", "shared-too.txt");
    sb
}

fn link(dir: &Path, from: &str, to: &str) {
    std::fs::hard_link(dir.join(from), dir.join(to)).unwrap();
}

fn builtin(name: &str) -> Policy {
    let (_, text) = warden::policy::builtin_policies()
        .into_iter()
        .find(|(n, _)| *n == name)
        .unwrap();
    Policy::parse(text, &format!("{name}.toml")).unwrap()
}

/// The hostile plugin's grant for `tool` under `policy`.
fn grant(sb: &Sandbox, policy: &Policy, tool: &str) -> Grant {
    let caps = &hostile().meta.manifest.capabilities;
    grant_from_policy(caps, &sb.ws(), &policy.grant_for("hostile", tool)).0
}

fn hostile_call(tool: &str, input: Value, grant: &Grant) -> CallReport {
    call_plugin(&hostile(), tool, input, grant, &Limits::default())
}

/// Assert `r` was refused as permission denied, `op` on `path` on its report.
#[track_caller]
fn refused_at(r: &CallReport, op: FsOp, path: &str) {
    outcome_err(&r.outcome, ErrorKind::PermissionDenied);
    let wanted = BoundaryDenial {
        op,
        path: path.to_string(),
    };
    assert!(
        r.boundary_denials.contains(&wanted),
        "no {wanted:?} in {:?} ({:?})",
        r.boundary_denials,
        r.outcome
    );
}

#[track_caller]
fn succeeded(r: &CallReport) -> &str {
    match &r.outcome {
        ToolOutcome::Success(out) => &out.text,
        other => panic!("expected success, got {other:?}"),
    }
}

fn mtime(sb: &Sandbox, rel: &str) -> SystemTime {
    std::fs::metadata(sb.ws().join(rel))
        .unwrap()
        .modified()
        .unwrap()
}

#[test]
fn a_link_to_an_unreadable_protected_file_is_unreadable() {
    let sb = project();
    let strict = builtin("strict");
    let read = hostile_call(
        "read_path",
        json!({"path": "/workspace/notes.txt"}),
        &grant(&sb, &strict, "read_path"),
    );
    refused_at(&read, FsOp::Open, "notes.txt");
    let stat = hostile_call(
        "stat_path",
        json!({"path": "/workspace/notes.txt"}),
        &grant(&sb, &strict, "stat_path"),
    );
    refused_at(&stat, FsOp::Stat, "notes.txt");
    // A worker meets the same refusal, recorded on its call's report.
    let fan = hostile_call(
        "fan_out",
        json!({"tasks": [{"op": "read", "path": "notes.txt"}]}),
        &grant(&sb, &strict, "fan_out"),
    );
    let shown = serde_json::to_string(&fan.outcome).unwrap();
    assert!(!shown.contains("hunter2"), "{shown}");
    assert!(
        fan.boundary_denials.contains(&BoundaryDenial {
            op: FsOp::Open,
            path: "notes.txt".into()
        }),
        "{:?}",
        fan.boundary_denials
    );
    // Where protected paths are readable, so is the link, as `.env` is.
    let readable = hostile_call(
        "read_path",
        json!({"path": "/workspace/notes.txt"}),
        &grant(&sb, &builtin("workspace-write"), "read_path"),
    );
    assert_eq!(succeeded(&readable), DOT_ENV);
}

#[test]
fn a_link_to_a_protected_file_changes_nothing_under_any_policy() {
    let sb = project();
    let before = mtime(&sb, ".env");
    let workspace_write = builtin("workspace-write");
    let policies = [None, Some(&workspace_write), Some(&builtin("strict"))];
    let notes = "/workspace/notes.txt";
    for policy in policies {
        let name = policy.map_or("no policy", |p| p.name.as_str());
        let grant_for = |tool: &str| match policy {
            None => {
                let caps = &hostile().meta.manifest.capabilities;
                grant_from_declared(caps, &sb.ws(), WriteMode::AllowWrite).0
            }
            Some(policy) => grant(&sb, policy, tool),
        };
        let attempts = [
            (
                "write_path",
                json!({"path": notes, "content": "pwned"}),
                FsOp::Open,
            ),
            (
                "write_path",
                json!({"path": notes, "content": "pwned", "append": true}),
                FsOp::Open,
            ),
            ("open_truncate", json!({"path": notes}), FsOp::Open),
            ("set_len", json!({"path": notes, "len": 0}), FsOp::Open),
            ("touch_at", json!({"path": "notes.txt"}), FsOp::SetTimes),
            (
                "hard_link",
                json!({"from": notes, "to": "/workspace/third.txt"}),
                FsOp::Link,
            ),
        ];
        for (tool, input, op) in attempts {
            let r = hostile_call(tool, input.clone(), &grant_for(tool));
            // `touch_at` reports every WASI error as `io`, naming the code.
            assert!(
                matches!(&r.outcome, ToolOutcome::Error(e) if e.kind == ErrorKind::PermissionDenied
                    || e.message.contains("\"access\"")),
                "{name}: {tool} {input}: {:?}",
                r.outcome
            );
            assert!(
                r.boundary_denials
                    .iter()
                    .any(|d| d.op == op && d.path == "notes.txt"),
                "{name}: {tool} {input}: {:?}",
                r.boundary_denials
            );
        }
        assert!(!sb.exists("third.txt"), "{name}: a third name was made");
    }
    // Opened for reading (allowed where protected paths are readable), its
    // times still cannot be set through the descriptor.
    let r = hostile_call(
        "set_mtime",
        json!({"path": notes}),
        &grant(&sb, &workspace_write, "set_mtime"),
    );
    refused_at(&r, FsOp::SetTimes, "notes.txt");
    assert_eq!(sb.read(".env"), DOT_ENV);
    assert_eq!(mtime(&sb, ".env"), before);
    sb.assert_canaries_intact();
}

#[test]
fn a_link_into_an_extra_directory_s_protected_file_is_refused() {
    let sb = project();
    let extra = tempfile::tempdir().unwrap();
    let extra_dir = std::fs::canonicalize(extra.path()).unwrap();
    std::fs::write(extra_dir.join(".env"), DOT_ENV).unwrap();
    std::fs::hard_link(extra_dir.join(".env"), sb.ws().join("from-extra.txt")).unwrap();
    let text = format!(
        "name = 'p'\nmode = 'auto'\n[grants.default]\nworkspace = 'read-write'\n\
         extra_dirs = [{{ path = '{}', access = 'read-write' }}]\n\
         [protected]\nreadable = false\n",
        extra_dir.display()
    );
    let policy = Policy::parse(&text, "p.toml").unwrap();
    let r = hostile_call(
        "read_path",
        json!({"path": "/workspace/from-extra.txt"}),
        &grant(&sb, &policy, "read_path"),
    );
    refused_at(&r, FsOp::Open, "from-extra.txt");
}

#[test]
fn other_files_with_several_names_work_as_usual() {
    let sb = project();
    let strict = builtin("strict");
    let read = hostile_call(
        "read_path",
        json!({"path": "/workspace/shared-too.txt"}),
        &grant(&sb, &strict, "read_path"),
    );
    assert_eq!(succeeded(&read), "shared\n");
    let write = hostile_call(
        "write_path",
        json!({"path": "/workspace/shared-too.txt", "content": "changed\n"}),
        &grant(&sb, &strict, "write_path"),
    );
    succeeded(&write);
    assert_eq!(sb.read("shared.txt"), "changed\n", "one file, two names");
    assert!(
        write.boundary_denials.is_empty(),
        "{:?}",
        write.boundary_denials
    );
}
