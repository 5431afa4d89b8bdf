//! Metadata of protected paths: when a policy makes them unreadable, the
//! filesystem layer refuses `stat` (following symlinks or not) and
//! `readlink` on them too, not only opens; when they are readable, both
//! work as usual.

use serde_json::json;
use warden::base::Limits;
use warden::capability::{BoundaryDenial, FsOp, Grant};
use warden::policy::Policy;
use warden::protocol::{ErrorKind, ToolOutcome};
use warden::runtime::CallReport;

use crate::support::*;
use warden::policy::grant_from_policy;

const GIT_CONFIG: &str = "[core]\n\tbare = false\n";

/// A workspace with a repository, a secret, a source file and links to them.
fn project() -> Sandbox {
    let sb = Sandbox::new();
    sb.write(".git/config", GIT_CONFIG);
    sb.write(".env", "SECRET=hunter2\n");
    sb.write("src/a.txt", "A\n");
    sb.symlink(".git/config", "innocent");
    sb.symlink(".git", "gitdir");
    // A protected name that is itself a symlink, to an ordinary file.
    sb.symlink("src/a.txt", ".env.local");
    sb
}

fn policy(readable: bool) -> Policy {
    let text = format!(
        "name = 'p'\nmode = 'auto'\n[grants.default]\nworkspace = 'read-write'\n\
         [protected]\nreadable = {readable}\n"
    );
    Policy::parse(&text, "p.toml").unwrap()
}

fn grant(sb: &Sandbox, readable: bool) -> Grant {
    let caps = &hostile().meta.manifest.capabilities;
    grant_from_policy(
        caps,
        &sb.ws(),
        &policy(readable).grant_for("hostile", "stat_path"),
    )
    .0
}

fn hostile_call(tool: &str, input: serde_json::Value, grant: &Grant) -> CallReport {
    call_plugin(&hostile(), tool, input, grant, &Limits::default())
}

fn text(r: &CallReport) -> &str {
    match &r.outcome {
        ToolOutcome::Success(out) => &out.text,
        other => panic!("expected success, got {other:?}"),
    }
}

#[test]
fn metadata_of_unreadable_protected_paths_is_refused() {
    let sb = project();
    let sealed = grant(&sb, false);
    for (tool, path, follow, op, denied) in [
        ("stat_path", ".git/config", false, FsOp::Stat, ".git/config"),
        ("stat_path", ".git/config", true, FsOp::Stat, ".git/config"),
        ("stat_path", ".git", false, FsOp::Stat, ".git"),
        ("stat_path", ".env", true, FsOp::Stat, ".env"),
        ("stat_path", "src/../.env", false, FsOp::Stat, ".env"),
        // Followed, a link is judged where it leads.
        ("stat_path", "innocent", true, FsOp::Stat, ".git/config"),
        (
            "stat_path",
            "gitdir/config",
            false,
            FsOp::Stat,
            ".git/config",
        ),
        ("stat_path", ".env.local", false, FsOp::Stat, ".env.local"),
        (
            "read_link",
            ".env.local",
            false,
            FsOp::Readlink,
            ".env.local",
        ),
    ] {
        let input = json!({"path": format!("/workspace/{path}"), "follow": follow});
        let r = hostile_call(tool, input, &sealed);
        let message = outcome_err(&r.outcome, ErrorKind::PermissionDenied);
        let wanted = BoundaryDenial {
            op,
            path: denied.to_string(),
        };
        assert!(
            r.boundary_denials.contains(&wanted),
            "{tool} {path}: no {wanted:?} in {:?} ({message})",
            r.boundary_denials
        );
        assert_no_host_paths(&message, &sb);
    }
    // The links themselves are not protected: their own metadata and
    // contents read as usual, and so does everything unprotected.
    for (tool, path, follow, expected) in [
        ("stat_path", "innocent", false, "symlink 11"),
        ("read_link", "innocent", false, ".git/config"),
        ("stat_path", "src/a.txt", true, "file 2"),
        ("stat_path", "src", false, "dir"),
    ] {
        let input = json!({"path": format!("/workspace/{path}"), "follow": follow});
        let r = hostile_call(tool, input, &sealed);
        assert!(
            text(&r).starts_with(expected),
            "{tool} {path}: {}",
            text(&r)
        );
        assert!(r.boundary_denials.is_empty(), "{:?}", r.boundary_denials);
    }
    sb.assert_canaries_intact();
}

#[test]
fn metadata_of_readable_protected_paths_reads_as_usual() {
    let sb = project();
    let open = grant(&sb, true);
    for (tool, path, follow, expected) in [
        (
            "stat_path",
            ".git/config",
            false,
            format!("file {}", GIT_CONFIG.len()),
        ),
        (
            "stat_path",
            "innocent",
            true,
            format!("file {}", GIT_CONFIG.len()),
        ),
        ("stat_path", ".env.local", false, "symlink 9".to_string()),
        ("read_link", ".env.local", false, "src/a.txt".to_string()),
    ] {
        let input = json!({"path": format!("/workspace/{path}"), "follow": follow});
        let r = hostile_call(tool, input, &open);
        assert_eq!(text(&r), expected, "{tool} {path}");
        assert!(r.boundary_denials.is_empty());
    }
}
