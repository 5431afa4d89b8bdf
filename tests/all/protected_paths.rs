//! Protected paths at the WASI boundary: whatever a plugin does with its
//! arguments, the host's filesystem layer refuses to change `.git/`,
//! `.env*` and the rest (and, when they are not readable, to read them),
//! including through symlinks; the files stay byte-for-byte the same and
//! every refusal is on the call's report.

use std::time::SystemTime;

use serde_json::{Value, json};
use warden::base::{CancelToken, Limits};
use warden::capability::{BoundaryDenial, FsAccess, FsOp, Grant, WriteMode};
use warden::pipeline::{self, Invocation, Stage};
use warden::policy::{CallFacts, Policy, Verdict};
use warden::protocol::{ErrorKind, ToolOutcome};
use warden::runtime::CallReport;

use crate::support::*;
use warden::policy::{grant_from_declared, grant_from_policy};

const GIT_CONFIG: &str = "[core]\n\tbare = false\n";
const GIT_HEAD: &str = "ref: refs/heads/main\n";
const DOT_ENV: &str = "SECRET=hunter2\n";

/// A workspace with a repository, secrets and sources to protect.
fn project() -> Sandbox {
    let sb = Sandbox::new();
    sb.write(".git/config", GIT_CONFIG);
    sb.write(".git/HEAD", GIT_HEAD);
    sb.write(".env", DOT_ENV);
    sb.write("keys/server.pem", "-----BEGIN-----\n");
    sb.write("src/a.txt", "A\n");
    sb
}

/// Panic unless every protected file is as [`project`] made it.
#[track_caller]
fn assert_protected_intact(sb: &Sandbox) {
    assert_eq!(sb.read(".git/config"), GIT_CONFIG);
    assert_eq!(sb.read(".git/HEAD"), GIT_HEAD);
    assert_eq!(sb.read(".env"), DOT_ENV);
    assert_eq!(sb.read("keys/server.pem"), "-----BEGIN-----\n");
    let git: Vec<_> = std::fs::read_dir(sb.ws().join(".git"))
        .unwrap()
        .map(|e| e.unwrap().file_name().into_string().unwrap())
        .collect();
    assert_eq!(git.len(), 2, "entries appeared in .git: {git:?}");
    sb.assert_canaries_intact();
}

fn workspace_write() -> Policy {
    let (_, text) = warden::policy::builtin_policies()
        .into_iter()
        .find(|(name, _)| *name == "workspace-write")
        .unwrap();
    Policy::parse(text, "workspace-write.toml").unwrap()
}

/// A policy granting read-write whose protected paths are not even readable.
fn sealed() -> Policy {
    let text = "name = 'sealed'\nmode = 'auto'\n[grants.default]\nworkspace = 'read-write'\n\
                [protected]\nreadable = false\npaths = ['config/secrets/**']\n";
    Policy::parse(text, "sealed.toml").unwrap()
}

/// The hostile plugin's grant without a policy, writes allowed.
fn default_grant(sb: &Sandbox) -> Grant {
    let caps = &hostile().meta.manifest.capabilities;
    grant_from_declared(caps, &sb.ws(), WriteMode::AllowWrite).0
}

/// The hostile plugin's grant under `policy`.
fn policy_grant(sb: &Sandbox, policy: &Policy) -> Grant {
    let caps = &hostile().meta.manifest.capabilities;
    grant_from_policy(caps, &sb.ws(), &policy.grant_for("hostile", "write_path")).0
}

/// The grants every refusal is checked under: none, the default policy, a sealed one.
fn grants(sb: &Sandbox) -> [Grant; 3] {
    [
        default_grant(sb),
        policy_grant(sb, &workspace_write()),
        policy_grant(sb, &sealed()),
    ]
}

fn hostile_call(tool: &str, input: Value, grant: &Grant) -> CallReport {
    call_plugin(&hostile(), tool, input, grant, &Limits::default())
}

/// Assert `r` failed as permission denied, with `path` among its boundary denials.
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

/// Assert `r` failed as permission denied, with some boundary denial on `path`.
#[track_caller]
fn refused_on(r: &CallReport, path: &str) {
    outcome_err(&r.outcome, ErrorKind::PermissionDenied);
    assert!(
        r.boundary_denials.iter().any(|d| d.path == path),
        "no denial on {path} in {:?} ({:?})",
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

fn ws_path(rel: &str) -> String {
    format!("/workspace/{rel}")
}

fn mtime(sb: &Sandbox, rel: &str) -> SystemTime {
    std::fs::metadata(sb.ws().join(rel))
        .unwrap()
        .modified()
        .unwrap()
}

#[test]
fn a_plugin_that_ignores_its_arguments_cannot_rewrite_git_config() {
    let sb = project();
    // The tool claims to be read-only and takes no arguments, so the policy
    // has nothing to object to: only the filesystem layer stands in the way.
    let policy = workspace_write();
    let decision = policy.decide(&CallFacts {
        tool: "clobber_git_config",
        plugin: "hostile",
        annotations: hostile()
            .tools()
            .iter()
            .find(|t| t.name.as_str() == "clobber_git_config")
            .unwrap()
            .annotations,
        input: &json!({}),
    });
    assert_eq!(decision.verdict, Verdict::Allow);
    for grant in grants(&sb) {
        let r = hostile_call("clobber_git_config", json!({}), &grant);
        refused_at(&r, FsOp::Open, ".git/config");
        assert_protected_intact(&sb);
    }
}

#[test]
fn writes_to_protected_paths_are_refused() {
    let sb = project();
    let head_mtime = mtime(&sb, ".git/HEAD");
    for grant in grants(&sb) {
        for (tool, input, path) in [
            (
                "write_path",
                json!({"path": ws_path(".env"), "content": "x"}),
                ".env",
            ),
            (
                "write_path",
                json!({"path": ws_path(".env"), "content": "x", "append": true}),
                ".env",
            ),
            (
                "write_path",
                json!({"path": ws_path(".env.local"), "content": "x"}),
                ".env.local",
            ),
            (
                "write_path",
                json!({"path": ws_path("src/.env"), "content": "x"}),
                "src/.env",
            ),
            (
                "write_path",
                json!({"path": ws_path("src/../.git/hooks/pre-commit"), "content": "x"}),
                ".git/hooks/pre-commit",
            ),
            (
                "write_path",
                json!({"path": ws_path("keys/server.pem"), "content": "x", "truncate": false}),
                "keys/server.pem",
            ),
            (
                "open_truncate",
                json!({"path": ws_path(".git/HEAD")}),
                ".git/HEAD",
            ),
            (
                "set_len",
                json!({"path": ws_path(".git/config"), "len": 0}),
                ".git/config",
            ),
        ] {
            let r = hostile_call(tool, input, &grant);
            refused_at(&r, FsOp::Open, path);
            assert_protected_intact(&sb);
        }
        // Times change through a descriptor opened for reading (where
        // reading is refused, the open already is).
        let r = hostile_call("set_mtime", json!({"path": ws_path(".git/HEAD")}), &grant);
        refused_on(&r, ".git/HEAD");
        assert_eq!(mtime(&sb, ".git/HEAD"), head_mtime);
    }
    for rel in [".env.local", "src/.env", ".git/hooks"] {
        assert!(!sb.exists(rel), "{rel} was created");
    }
}

#[test]
fn renames_links_and_deletes_of_protected_paths_are_refused() {
    let sb = project();
    for grant in grants(&sb) {
        for (tool, input, op, path) in [
            (
                "rename",
                json!({"from": ws_path("src/a.txt"), "to": ws_path(".git/HEAD")}),
                FsOp::Rename,
                ".git/HEAD",
            ),
            (
                "rename",
                json!({"from": ws_path(".env"), "to": ws_path("x")}),
                FsOp::Rename,
                ".env",
            ),
            (
                "rename",
                json!({"from": ws_path(".git"), "to": ws_path("git")}),
                FsOp::Rename,
                ".git",
            ),
            (
                "rename",
                json!({"from": ws_path("src"), "to": ws_path(".warden")}),
                FsOp::Rename,
                ".warden",
            ),
            (
                "hard_link",
                json!({"from": ws_path(".git/config"), "to": ws_path("x")}),
                FsOp::Link,
                ".git/config",
            ),
            (
                "hard_link",
                json!({"from": ws_path("src/a.txt"), "to": ws_path(".git/hooks")}),
                FsOp::Link,
                ".git/hooks",
            ),
            (
                "remove",
                json!({"path": ws_path(".git/HEAD")}),
                FsOp::Unlink,
                ".git/HEAD",
            ),
            (
                "remove",
                json!({"path": ws_path(".env")}),
                FsOp::Unlink,
                ".env",
            ),
            (
                "mkdir",
                json!({"path": ws_path(".git/hooks")}),
                FsOp::CreateDirectory,
                ".git/hooks",
            ),
            (
                "symlink",
                json!({"target": "src/a.txt", "link": ws_path(".env.link")}),
                FsOp::Symlink,
                ".env.link",
            ),
        ] {
            let r = hostile_call(tool, input, &grant);
            refused_at(&r, op, path);
            assert_protected_intact(&sb);
            assert_eq!(sb.read("src/a.txt"), "A\n");
        }
        // remove_dir_all goes entry by entry: the first protected one stops
        // it (or, where reading is refused, listing the directory does).
        let r = hostile_call("remove", json!({"path": ws_path(".git")}), &grant);
        outcome_err(&r.outcome, ErrorKind::PermissionDenied);
        assert!(
            r.boundary_denials
                .iter()
                .all(|d| d.path.starts_with(".git")),
            "{:?}",
            r.boundary_denials
        );
        assert_protected_intact(&sb);
    }
    assert!(!sb.exists("x") && !sb.exists("git") && !sb.exists(".warden"));
}

#[test]
fn moving_a_directory_onto_or_off_a_protected_tree_is_refused() {
    let sb = project();
    sb.write("config/secrets/token", "t0k3n\n");
    sb.write("tmp/secrets/token", "forged\n");
    let grant = policy_grant(&sb, &sealed());
    for (from, to, path) in [
        ("config", "cfg", "config"),
        ("tmp", "config", "config"),
        ("config/secrets", "stolen", "config/secrets"),
    ] {
        let r = hostile_call(
            "rename",
            json!({"from": ws_path(from), "to": ws_path(to)}),
            &grant,
        );
        refused_at(&r, FsOp::Rename, path);
    }
    assert_eq!(sb.read("config/secrets/token"), "t0k3n\n");
    assert_eq!(sb.read("tmp/secrets/token"), "forged\n");
    // Moving a directory holding files protected by name keeps them protected.
    let r = hostile_call(
        "rename",
        json!({"from": ws_path("keys"), "to": ws_path("moved")}),
        &grant,
    );
    assert_eq!(succeeded(&r), "renamed");
    let r = hostile_call(
        "write_path",
        json!({"path": ws_path("moved/server.pem"), "content": "x"}),
        &grant,
    );
    refused_at(&r, FsOp::Open, "moved/server.pem");
    assert_eq!(sb.read("moved/server.pem"), "-----BEGIN-----\n");
}

#[test]
fn symlinks_into_protected_paths_are_refused() {
    let sb = project();
    for grant in grants(&sb) {
        // Creating a link that points into a protected path is refused outright.
        for (target, path) in [
            ("../.git", ".git"),
            ("../.env", ".env"),
            ("/workspace/.git/config", ".git/config"),
        ] {
            let r = hostile_call(
                "symlink",
                json!({"target": target, "link": ws_path("src/link")}),
                &grant,
            );
            refused_at(&r, FsOp::Symlink, path);
            assert!(!sb.exists("src/link"));
        }
    }
    // Links planted on the host (by a git checkout, say) are followed to
    // where they lead, and judged there.
    sb.symlink(".git", "link");
    sb.symlink(".git/config", "innocent");
    sb.symlink("innocent", "chain");
    sb.symlink(".git/hooks/post-checkout", "dangling");
    sb.symlink("../link", "src/up");
    for grant in grants(&sb) {
        for (tool, input, path) in [
            (
                "write_path",
                json!({"path": ws_path("link/config"), "content": "x"}),
                ".git/config",
            ),
            (
                "write_path",
                json!({"path": ws_path("link/new"), "content": "x"}),
                ".git/new",
            ),
            (
                "write_path",
                json!({"path": ws_path("innocent"), "content": "x"}),
                ".git/config",
            ),
            (
                "write_path",
                json!({"path": ws_path("chain"), "content": "x", "append": true}),
                ".git/config",
            ),
            (
                "write_path",
                json!({"path": ws_path("dangling"), "content": "#!/bin/sh\n"}),
                ".git/hooks/post-checkout",
            ),
            (
                "write_path",
                json!({"path": ws_path("src/up/HEAD"), "content": "x"}),
                ".git/HEAD",
            ),
            (
                "open_truncate",
                json!({"path": ws_path("innocent")}),
                ".git/config",
            ),
            (
                "set_len",
                json!({"path": ws_path("chain"), "len": 1}),
                ".git/config",
            ),
            (
                "mkdir",
                json!({"path": ws_path("link/hooks")}),
                ".git/hooks",
            ),
            ("remove", json!({"path": ws_path("link/HEAD")}), ".git/HEAD"),
            (
                "rename",
                json!({"from": ws_path("src/a.txt"), "to": ws_path("link/HEAD")}),
                ".git/HEAD",
            ),
        ] {
            let r = hostile_call(tool, input.clone(), &grant);
            refused_on(&r, path);
            assert_protected_intact(&sb);
        }
        let r = hostile_call("set_mtime", json!({"path": ws_path("chain")}), &grant);
        refused_on(&r, ".git/config");
    }
    assert!(!sb.exists(".git/hooks") && !sb.exists(".git/new"));
}

#[test]
fn reads_of_protected_paths_follow_the_readable_setting() {
    let sb = project();
    sb.symlink(".git/config", "innocent");
    sb.symlink(".git", "link");
    for grant in [default_grant(&sb), policy_grant(&sb, &workspace_write())] {
        for path in [".git/config", "innocent", "link/config"] {
            let r = hostile_call("read_path", json!({"path": ws_path(path)}), &grant);
            assert_eq!(succeeded(&r), GIT_CONFIG);
        }
        let r = hostile_call("list", json!({"path": ws_path(".git")}), &grant);
        assert_eq!(succeeded(&r), "HEAD\nconfig");
        assert!(r.boundary_denials.is_empty());
    }
    let grant = policy_grant(&sb, &sealed());
    for (tool, path, denied) in [
        ("read_path", ".git/config", ".git/config"),
        ("read_path", ".env", ".env"),
        ("read_path", "innocent", ".git/config"),
        ("read_path", "link/config", ".git/config"),
        ("list", ".git", ".git"),
        ("list", "link", ".git"),
    ] {
        let r = hostile_call(tool, json!({"path": ws_path(path)}), &grant);
        refused_at(&r, FsOp::Open, denied);
        assert!(
            !format!("{:?}", r.outcome).contains("bare"),
            "{:?}",
            r.outcome
        );
    }
    // The rest of the workspace reads as usual, protected names included.
    let r = hostile_call("list", json!({"path": "/workspace"}), &grant);
    assert_eq!(succeeded(&r), ".env\n.git\ninnocent\nkeys\nlink\nsrc");
    let r = hostile_call("read_path", json!({"path": ws_path("src/a.txt")}), &grant);
    assert_eq!(succeeded(&r), "A\n");
}

#[test]
fn unprotected_paths_work_as_usual() {
    let sb = project();
    sb.symlink("src/a.txt", "alias");
    sb.symlink("src/fresh.txt", "to_fresh");
    for grant in grants(&sb) {
        let steps: [(&str, Value, &str); 9] = [
            (
                "write_path",
                json!({"path": ws_path("src/a.txt"), "content": "B\n"}),
                "wrote 2 bytes",
            ),
            ("mkdir", json!({"path": ws_path("src/d")}), "created"),
            (
                "write_path",
                json!({"path": ws_path("src/d/x.txt"), "content": "x"}),
                "wrote 1 bytes",
            ),
            (
                "rename",
                json!({"from": ws_path("src/d/x.txt"), "to": ws_path("src/y.txt")}),
                "renamed",
            ),
            (
                "hard_link",
                json!({"from": ws_path("src/y.txt"), "to": ws_path("src/z.txt")}),
                "linked",
            ),
            (
                "symlink",
                json!({"target": "y.txt", "link": ws_path("src/s")}),
                "symlinked",
            ),
            (
                "write_path",
                json!({"path": ws_path("alias"), "content": "C\n", "append": true}),
                "wrote 2 bytes",
            ),
            (
                "write_path",
                json!({"path": ws_path("to_fresh"), "content": "new"}),
                "wrote 3 bytes",
            ),
            ("set_mtime", json!({"path": ws_path("src/s")}), "mtime set"),
        ];
        for (tool, input, expected) in steps {
            let r = hostile_call(tool, input.clone(), &grant);
            assert_eq!(succeeded(&r), expected, "{tool} {input}");
            assert!(r.boundary_denials.is_empty());
        }
        assert_eq!(sb.read("src/a.txt"), "B\nC\n");
        assert_eq!(sb.read("src/fresh.txt"), "new");
        assert_eq!(
            mtime(&sb, "src/y.txt"),
            SystemTime::UNIX_EPOCH + std::time::Duration::from_secs(1)
        );
        for rel in ["src/y.txt", "src/z.txt", "src/s", "src/fresh.txt"] {
            let r = hostile_call("remove", json!({"path": ws_path(rel)}), &grant);
            assert_eq!(succeeded(&r), "removed");
        }
        let r = hostile_call("remove", json!({"path": ws_path("src/d")}), &grant);
        assert_eq!(succeeded(&r), "removed");
        let r = hostile_call(
            "open_many",
            json!({"path": ws_path("src/a.txt"), "count": 3, "write": true}),
            &grant,
        );
        assert_eq!(succeeded(&r), "opened 3");
        sb.write("src/a.txt", "A\n");
    }
    assert_protected_intact(&sb);
}

#[test]
fn without_protected_paths_the_same_writes_go_through() {
    // The control: what refuses above is the boundary, not wasmtime or the OS.
    let sb = project();
    let open = guarded_grant(&sb.ws(), FsAccess::ReadWrite, None);
    let r = hostile_call("clobber_git_config", json!({}), &open);
    assert_eq!(succeeded(&r), "git config rewritten");
    assert!(sb.read(".git/config").contains("fsmonitor"));
    // A read-only grant refuses every change itself; nothing reaches the boundary.
    let ro = ws_grant(&sb.ws(), FsAccess::ReadOnly);
    let r = hostile_call(
        "write_path",
        json!({"path": ws_path(".env"), "content": "x"}),
        &ro,
    );
    outcome_err(&r.outcome, ErrorKind::PermissionDenied);
    assert!(r.boundary_denials.is_empty(), "{:?}", r.boundary_denials);
    assert_eq!(sb.read(".env"), DOT_ENV);
}

#[test]
fn builtin_tools_are_refused_at_the_boundary_without_a_policy() {
    let sb = project();
    sb.symlink(".env", "settings");
    for (tool, input, path) in [
        (
            "write_file",
            json!({"path": ".env", "content": "SECRET=x\n"}),
            ".env",
        ),
        (
            "write_file",
            json!({"path": "settings", "content": "SECRET=x\n"}),
            ".env",
        ),
        (
            "write_file",
            json!({"path": ".git/hooks/pre-commit", "content": "x"}),
            ".git/hooks",
        ),
        (
            "edit_file",
            json!({"path": ".env", "old_string": "hunter2", "new_string": "x"}),
            ".env",
        ),
        (
            "edit_file",
            json!({"path": "settings", "old_string": "hunter2", "new_string": "x"}),
            ".env",
        ),
    ] {
        let r = call(tool, input.clone(), &sb.ws(), WriteMode::AllowWrite);
        assert_eq!(r.stage, Stage::Executed, "{tool} {input}");
        assert!(r.decision.is_none());
        err(&r, ErrorKind::PermissionDenied);
        let report = r.report.as_ref().unwrap();
        assert!(
            report.boundary_denials.iter().any(|d| d.path == path),
            "{tool} {input}: {:?}",
            report.boundary_denials
        );
        assert_no_host_paths(&r.outcome.model_text(), &sb);
        assert_protected_intact(&sb);
    }
    // Reading stays allowed by default, and so does writing elsewhere.
    let r = call(
        "read_file",
        json!({"path": ".env"}),
        &sb.ws(),
        WriteMode::AllowWrite,
    );
    assert!(ok(&r).text.contains("hunter2"));
    let r = call(
        "write_file",
        json!({"path": "src/b.txt", "content": "b"}),
        &sb.ws(),
        WriteMode::AllowWrite,
    );
    ok(&r);
    assert_eq!(sb.read("src/b.txt"), "b");
}

#[test]
fn grep_walks_past_unreadable_protected_paths_without_reading_them() {
    let sb = project();
    sb.write("src/nested/b.txt", "A again\n");
    sb.symlink(".env", "src/settings");
    let policy = sealed();
    let input = json!({"pattern": "A|bare|SECRET|BEGIN|ref:", "include_hidden": true}).to_string();
    let r = pipeline::run(
        catalog(),
        Invocation {
            tool: "grep",
            input: &input,
            workspace: &sb.ws(),
            write: WriteMode::ReadOnly,
            limits: Limits::default(),
            limit_requests: Default::default(),
            cancel: CancelToken::new(),
            progress: None,
            policy: Some(&policy),
            approval: None,
            rationale: None,
            interaction: None,
        },
    );
    let text = &ok(&r).text;
    assert!(
        text.starts_with("src/a.txt:1:A\nsrc/nested/b.txt:1:A again\n2 matches in 2 files"),
        "{text}"
    );
    let report = r.report.as_ref().unwrap();
    for denied in [".git", ".env", "keys/server.pem"] {
        assert!(
            report
                .boundary_denials
                .iter()
                .any(|d| d.op == FsOp::Open && d.path == denied),
            "no refused open of {denied} in {:?}",
            report.boundary_denials
        );
    }
    assert_protected_intact(&sb);
}
