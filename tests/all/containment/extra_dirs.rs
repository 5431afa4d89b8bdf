//! Extra directories a policy grants: each is preopened at the absolute
//! path the policy names, with its own access, and nothing beside it is
//! reachable: not through `..`, not through symlinks, not by naming a
//! directory that was not granted. Protected paths hold in each, and what
//! a model reads names no host path but the directories the user granted.

use std::path::{Path, PathBuf};

use serde_json::{Value, json};
use warden::base::{CancelToken, Limits};
use warden::capability::{BoundaryDenial, FsAccess, FsOp, Grant, WriteMode};
use warden::pipeline::{self, CallResult, Invocation};
use warden::policy::Policy;
use warden::protocol::ErrorKind;

use super::*;
use warden::policy::grant_from_policy;

/// A workspace sandbox plus, in a second temp dir, a read-write and a
/// read-only directory to grant, and canaries beside them that are never
/// granted: `hidden/` and `rw-evil/` (a sibling sharing `rw`'s prefix).
struct Extras {
    sb: Sandbox,
    dir: tempfile::TempDir,
}

impl Extras {
    fn new() -> Extras {
        let sb = Sandbox::new();
        let dir = tempfile::Builder::new()
            .prefix("warden-extra-")
            .tempdir()
            .unwrap();
        let root = dir.path();
        for (rel, text) in [
            ("rw/notes.txt", "N\n"),
            ("rw/sub/keep.txt", "K\n"),
            ("rw/.git/config", "[core]\n"),
            ("rw/.env", "TOKEN=x\n"),
            ("ro/data.txt", "D\n"),
            ("ro/sub/x.txt", "X\n"),
            ("hidden/canary.txt", CANARY),
            ("rw-evil/canary.txt", CANARY),
        ] {
            let p = root.join(rel);
            std::fs::create_dir_all(p.parent().unwrap()).unwrap();
            std::fs::write(p, text).unwrap();
        }
        Extras { sb, dir }
    }

    fn root(&self) -> PathBuf {
        std::fs::canonicalize(self.dir.path()).unwrap()
    }

    /// `rel` under the extras root, as a string (the name the policy uses).
    fn at(&self, rel: &str) -> String {
        self.root().join(rel).display().to_string()
    }

    /// A policy granting the workspace read-write, `rw` read-write and `ro`
    /// read-only, with protected paths `readable` or not.
    fn policy(&self, readable: bool) -> Policy {
        let text = format!(
            "name = 'extra'\nmode = 'auto'\n[grants.default]\nworkspace = 'read-write'\n\
             extra_dirs = [{{ path = '{}', access = 'read-write' }}, \
             {{ path = '{}', access = 'read-only' }}]\n[protected]\nreadable = {readable}\n",
            self.at("rw"),
            self.at("ro"),
        );
        Policy::parse(&text, "extra.toml").unwrap()
    }

    /// The hostile plugin's grant under [`Self::policy`].
    fn grant(&self, readable: bool) -> Grant {
        let caps = &hostile().meta.manifest.capabilities;
        let spec = self.policy(readable).grant_for("hostile", "write_path");
        grant_from_policy(caps, &self.sb.ws(), &spec).0
    }

    /// A built-in tool through the whole pipeline under [`Self::policy`].
    fn call(&self, tool: &str, input: Value) -> CallResult {
        let policy = self.policy(true);
        pipeline::run(
            catalog(),
            Invocation {
                tool,
                input: &input.to_string(),
                workspace: &self.sb.ws(),
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
        )
    }

    /// Panic unless the canaries beside the granted directories (and the
    /// workspace's) are intact, and nothing new appeared beside them.
    fn assert_canaries_intact(&self) {
        self.sb.assert_canaries_intact();
        for dir in ["hidden", "rw-evil"] {
            let names: Vec<_> = std::fs::read_dir(self.root().join(dir))
                .unwrap()
                .map(|e| e.unwrap().file_name())
                .collect();
            assert_eq!(names, ["canary.txt"], "files appeared in {dir}");
            let text = std::fs::read_to_string(self.root().join(dir).join("canary.txt"));
            assert_eq!(text.unwrap(), CANARY, "{dir}/canary.txt changed");
        }
        let mut top: Vec<_> = std::fs::read_dir(self.root())
            .unwrap()
            .map(|e| e.unwrap().file_name().into_string().unwrap())
            .collect();
        top.sort();
        assert_eq!(top, ["hidden", "ro", "rw", "rw-evil"]);
    }

    /// Panic if `text` names a host path other than the granted directories.
    #[track_caller]
    fn assert_sealed(&self, text: &str) {
        let rest = text
            .replace(&self.at("rw"), "RW")
            .replace(&self.at("ro"), "RO");
        assert_sealed(&rest, &self.sb);
        assert!(!rest.contains(CANARY_TEXT), "canary content in {text:?}");
    }
}

fn read(p: &Path) -> String {
    std::fs::read_to_string(p).unwrap()
}

#[test]
fn extra_dirs_are_reachable_at_their_absolute_paths_with_their_access() {
    let x = Extras::new();
    let r = x.call("read_file", json!({"path": x.at("ro/data.txt")}));
    assert!(ok(&r).text.contains('D'), "{:?}", r.outcome);
    let r = x.call("list_dir", json!({"path": x.at("ro")}));
    assert!(ok(&r).text.contains("data.txt"), "{:?}", r.outcome);
    let r = x.call("grep", json!({"pattern": "^X", "path": x.at("ro")}));
    assert!(
        ok(&r).text.contains(&x.at("ro/sub/x.txt")),
        "grep names matches by the granted path: {}",
        ok(&r).text
    );
    let r = x.call(
        "write_file",
        json!({"path": x.at("rw/sub/new.txt"), "content": "new\n"}),
    );
    assert!(
        ok(&r).text.contains(&x.at("rw/sub/new.txt")),
        "{:?}",
        r.outcome
    );
    assert_eq!(read(&x.root().join("rw/sub/new.txt")), "new\n");
    // The read-only directory refuses the same write, naming only itself.
    let r = x.call(
        "write_file",
        json!({"path": x.at("ro/data.txt"), "content": "pwned\n"}),
    );
    let message = err(&r, ErrorKind::PermissionDenied);
    assert!(message.starts_with(&x.at("ro/data.txt")), "{message}");
    x.assert_sealed(&r.outcome.model_text());
    assert_eq!(read(&x.root().join("ro/data.txt")), "D\n");
    // The grant says what the call got.
    let grant = r.grant.as_ref().unwrap();
    let got: Vec<_> = grant.extra_dirs.iter().map(|d| d.access).collect();
    assert_eq!(got, [FsAccess::ReadWrite, FsAccess::ReadOnly]);
    x.assert_canaries_intact();
}

#[test]
fn nothing_beside_an_extra_dir_is_reachable() {
    let x = Extras::new();
    let rw = x.at("rw");
    std::os::unix::fs::symlink(x.at("hidden/canary.txt"), x.root().join("rw/abs")).unwrap();
    std::os::unix::fs::symlink("../hidden/canary.txt", x.root().join("rw/rel")).unwrap();
    std::os::unix::fs::symlink("../rw-evil", x.root().join("rw/evil")).unwrap();
    let outside = [
        format!("{rw}/../hidden/canary.txt"),
        format!("{rw}/sub/../../rw-evil/canary.txt"),
        format!("{rw}/abs"),
        format!("{rw}/rel"),
        format!("{rw}/evil/canary.txt"),
        x.at("hidden/canary.txt"),
        x.at("rw-evil/canary.txt"),
        x.at("hidden"),
    ];
    // The built-in tools refuse each, whatever they do with it.
    for path in &outside {
        for tool in FS_TOOLS {
            let r = x.call(tool, input_for(tool, path));
            err(&r, ErrorKind::PermissionDenied);
            x.assert_sealed(&r.outcome.model_text());
        }
    }
    let r = x.call("read_file", json!({"path": x.at("hidden/canary.txt")}));
    let message = err(&r, ErrorKind::PermissionDenied);
    assert!(
        message.contains("outside the workspace and the directories granted to this call"),
        "{message}"
    );
    let r = x.call("read_file", json!({"path": outside[0]}));
    assert!(err(&r, ErrorKind::PermissionDenied).contains(&format!("escapes {rw}")));
    // So does WASI itself, for a plugin that ignores the SDK.
    let grant = x.grant(true);
    for path in &outside {
        for (tool, input) in [
            ("read_path", json!({"path": path})),
            ("write_path", json!({"path": path, "content": "pwned"})),
            ("list", json!({"path": path})),
        ] {
            let r = raw(tool, input, &grant);
            let message = match &r.outcome {
                warden::protocol::ToolOutcome::Error(e) => e.message.clone(),
                other => panic!("{tool} {path}: expected a refusal, got {other:?}"),
            };
            assert!(!message.contains(CANARY_TEXT), "{message}");
        }
    }
    // A link planted by one call is no way out for the next.
    let r = raw(
        "symlink",
        json!({"target": "../hidden/canary.txt", "link": format!("{rw}/planted")}),
        &grant,
    );
    ok_report(&r);
    let r = raw(
        "read_path",
        json!({"path": format!("{rw}/planted")}),
        &grant,
    );
    raw_refused(&r, ErrorKind::PermissionDenied);
    x.assert_canaries_intact();
}

#[test]
fn a_read_only_extra_dir_refuses_every_change() {
    let x = Extras::new();
    let (ro, rw) = (x.at("ro"), x.at("rw"));
    let grant = x.grant(true);
    let before = snapshot(&x.root().join("ro"));
    for (tool, input) in [
        (
            "write_path",
            json!({"path": format!("{ro}/new.txt"), "content": "x"}),
        ),
        (
            "write_path",
            json!({"path": format!("{ro}/data.txt"), "content": "x"}),
        ),
        (
            "write_path",
            json!({"path": format!("{ro}/data.txt"), "content": "x", "append": true}),
        ),
        ("open_truncate", json!({"path": format!("{ro}/data.txt")})),
        (
            "set_len",
            json!({"path": format!("{ro}/data.txt"), "len": 0}),
        ),
        (
            "rename",
            json!({"from": format!("{ro}/data.txt"), "to": format!("{ro}/moved.txt")}),
        ),
        (
            "rename",
            json!({"from": format!("{ro}/data.txt"), "to": format!("{rw}/stolen.txt")}),
        ),
        (
            "rename",
            json!({"from": format!("{rw}/notes.txt"), "to": format!("{ro}/planted.txt")}),
        ),
        (
            "hard_link",
            json!({"from": format!("{ro}/data.txt"), "to": format!("{rw}/h.txt")}),
        ),
        (
            "hard_link",
            json!({"from": format!("{rw}/notes.txt"), "to": format!("{ro}/h.txt")}),
        ),
        (
            "symlink",
            json!({"target": "data.txt", "link": format!("{ro}/s")}),
        ),
        ("remove", json!({"path": format!("{ro}/data.txt")})),
        ("remove", json!({"path": format!("{ro}/sub")})),
        ("mkdir", json!({"path": format!("{ro}/d")})),
        ("set_mtime", json!({"path": format!("{ro}/data.txt")})),
    ] {
        let r = raw(tool, input.clone(), &grant);
        raw_refused(&r, ErrorKind::PermissionDenied);
        assert_eq!(
            snapshot(&x.root().join("ro")),
            before,
            "{tool} {input} changed the read-only directory"
        );
        assert!(!x.root().join("rw/stolen.txt").exists());
        assert!(!x.root().join("rw/h.txt").exists());
        x.assert_canaries_intact();
    }
    assert_eq!(read(&x.root().join("rw/notes.txt")), "N\n");
    // Positive control: the read-write directory takes the same changes.
    let r = raw(
        "rename",
        json!({"from": format!("{rw}/notes.txt"), "to": format!("{rw}/sub/notes.txt")}),
        &grant,
    );
    assert_eq!(ok_report(&r), "renamed");
    let r = raw("mkdir", json!({"path": format!("{rw}/d")}), &grant);
    assert_eq!(ok_report(&r), "created");
}

#[test]
fn protected_paths_hold_in_extra_dirs() {
    let x = Extras::new();
    let rw = x.at("rw");
    for readable in [true, false] {
        let grant = x.grant(readable);
        for (tool, input, denied) in [
            (
                "write_path",
                json!({"path": format!("{rw}/.git/config"), "content": "x", "append": true}),
                format!("{rw}/.git/config"),
            ),
            (
                "write_path",
                json!({"path": format!("{rw}/sub/../.env"), "content": "x"}),
                format!("{rw}/.env"),
            ),
            (
                "rename",
                json!({"from": format!("{rw}/notes.txt"), "to": format!("{rw}/.git/hooks")}),
                format!("{rw}/.git/hooks"),
            ),
            (
                "remove",
                json!({"path": format!("{rw}/.git/config")}),
                format!("{rw}/.git/config"),
            ),
        ] {
            let r = raw(tool, input.clone(), &grant);
            raw_refused(&r, ErrorKind::PermissionDenied);
            assert!(
                r.boundary_denials.iter().any(|d| d.path == denied),
                "{tool} {input}: {:?}",
                r.boundary_denials
            );
        }
    }
    // Unreadable protected paths are unreadable there too, content and metadata.
    let sealed = x.grant(false);
    for (tool, op) in [("read_path", FsOp::Open), ("stat_path", FsOp::Stat)] {
        let r = raw(tool, json!({"path": format!("{rw}/.env")}), &sealed);
        raw_refused(&r, ErrorKind::PermissionDenied);
        let wanted = BoundaryDenial {
            op,
            path: format!("{rw}/.env"),
        };
        assert!(
            r.boundary_denials.contains(&wanted),
            "{:?}",
            r.boundary_denials
        );
    }
    assert_eq!(read(&x.root().join("rw/.git/config")), "[core]\n");
    assert_eq!(read(&x.root().join("rw/.env")), "TOKEN=x\n");
    assert_eq!(read(&x.root().join("rw/notes.txt")), "N\n");
    x.assert_canaries_intact();
}

#[test]
fn extra_dirs_come_only_with_the_workspace_and_the_declared_need() {
    let x = Extras::new();
    let text = format!(
        "name = 'p'\n[grants.default]\nworkspace = 'none'\n\
         extra_dirs = [{{ path = '{}', access = 'read-write' }}]\n",
        x.at("rw")
    );
    let policy = Policy::parse(&text, "p.toml").unwrap();
    let caps = &hostile().meta.manifest.capabilities;
    let (grant, _) = grant_from_policy(caps, &x.sb.ws(), &policy.grant_for("hostile", "x"));
    assert_eq!(grant, Grant::none());
    // A tool annotated read-only gets every directory read-only.
    let r = x.call("read_file", json!({"path": x.at("rw/notes.txt")}));
    let grant = r.grant.as_ref().unwrap();
    assert!(
        grant
            .extra_dirs
            .iter()
            .all(|d| d.access == FsAccess::ReadOnly)
    );
    // A directory that does not exist is left out, and the call says so.
    let missing = x.at("gone");
    let text = format!(
        "name = 'p'\nmode = 'auto'\n[grants.default]\nworkspace = 'read-write'\n\
         extra_dirs = [{{ path = '{missing}', access = 'read-only' }}]\n"
    );
    let policy = Policy::parse(&text, "p.toml").unwrap();
    let (grant, cuts) = grant_from_policy(caps, &x.sb.ws(), &policy.grant_for("hostile", "x"));
    assert!(grant.extra_dirs.is_empty());
    assert_eq!(cuts.len(), 1);
    assert_eq!(
        cuts[0].granted,
        format!("without the extra directory {missing}: it does not exist or is not a directory")
    );
}

#[test]
fn an_extra_dir_named_through_a_symlink_is_known_by_that_name() {
    let x = Extras::new();
    let links = tempfile::tempdir().unwrap();
    let alias = std::fs::canonicalize(links.path()).unwrap().join("alias");
    std::os::unix::fs::symlink(x.root().join("rw"), &alias).unwrap();
    let alias = alias.display().to_string();
    let text = format!(
        "name = 'alias'\nmode = 'auto'\n[grants.default]\nworkspace = 'read-write'\n\
         extra_dirs = [{{ path = '{alias}', access = 'read-write' }}]\n"
    );
    let policy = Policy::parse(&text, "alias.toml").unwrap();
    let r = pipeline::run(
        catalog(),
        Invocation {
            tool: "grep",
            input: &json!({"pattern": "^N", "path": alias}).to_string(),
            workspace: &x.sb.ws(),
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
    let found = &ok(&r).text;
    assert!(found.contains(&format!("{alias}/notes.txt")), "{found}");
    assert!(
        !found.contains(&x.at("rw")),
        "the real path leaked: {found}"
    );
    let caps = &hostile().meta.manifest.capabilities;
    let grant = grant_from_policy(caps, &x.sb.ws(), &policy.grant_for("hostile", "x")).0;
    assert_eq!(grant.extra_dirs[0].host_dir, x.root().join("rw"));
    let r = raw(
        "write_path",
        json!({"path": format!("{alias}/.env"), "content": "x"}),
        &grant,
    );
    let message = raw_refused(&r, ErrorKind::PermissionDenied);
    assert!(!message.contains(&x.at("rw")), "{message}");
    let wanted = BoundaryDenial {
        op: FsOp::Open,
        path: format!("{alias}/.env"),
    };
    assert!(
        r.boundary_denials.contains(&wanted),
        "{:?}",
        r.boundary_denials
    );
    assert_eq!(read(&x.root().join("rw/.env")), "TOKEN=x\n");
    x.assert_canaries_intact();
}
