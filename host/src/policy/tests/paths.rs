//! Path normalisation, protected paths and grant layering.

use std::time::Duration;

use serde_json::json;

use super::*;
use crate::capability::FsAccess;
use crate::policy::{DecidedBy, ExtraDir, PROTECTED_RULE, Protected, Verdict, normalize_path};

#[test]
fn paths_are_normalised_lexically() {
    let cases = [
        ("./src/main.rs", "src/main.rs"),
        ("src/./a//b/", "src/a/b"),
        ("a/../b", "b"),
        ("a/b/../../c", "c"),
        ("../x", "../x"),
        ("a/../../x", "../x"),
        ("/abs/../etc", "/etc"),
        ("/..", "/"),
        (".", "."),
        ("", "."),
    ];
    for (input, expected) in cases {
        assert_eq!(normalize_path(input), expected, "{input}");
    }
}

#[test]
fn default_protected_paths() {
    let p = Protected::default();
    for yes in [
        ".git",
        ".git/config",
        "./.git/HEAD",
        "src/../.git/hooks/x",
        ".warden/state",
        ".env",
        ".env.local",
        "sub/.env.prod",
        "a/b/key.pem",
        "key.pem",
        "id_rsa",
        ".ssh/id_ed25519",
        ".GIT/config",
    ] {
        assert!(p.is_protected(yes), "{yes} should be protected");
    }
    for no in [
        "src/main.rs",
        ".github/x",
        "environment.rs",
        "git/config",
        "a/.gitignore",
        "pem",
    ] {
        assert!(!p.is_protected(no), "{no} should not be protected");
    }
}

#[test]
fn writing_a_protected_path_is_denied_whatever_the_rules_say() {
    let p = policy("name = 'p'\nmode = 'auto'\n[[rule]]\nname = 'yes'\ndecision = 'allow'\n");
    for path in [
        ".git/config",
        "./x/../.env",
        "/home/u/proj/.git/HEAD",
        "../other/.env",
    ] {
        let d = decide(
            &p,
            "write_file",
            WRITES,
            json!({"path": path, "content": "x"}),
        );
        assert_eq!(d.verdict, Verdict::Deny, "{path}");
        assert_eq!(
            d.by,
            DecidedBy::Rule {
                index: None,
                name: PROTECTED_RULE.into()
            }
        );
        assert!(
            d.reason.as_deref().unwrap().contains("protected path"),
            "{d:?}"
        );
    }
    let nested = json!({"edits": [{"path": "ok.rs"}, {"path": ".git/index"}]});
    assert_eq!(
        decide(&p, "multi_edit", WRITES, nested).verdict,
        Verdict::Deny
    );
    let d = decide(&p, "read_file", READ_ONLY, json!({"path": ".env"}));
    assert_eq!(d.verdict, Verdict::Allow, "readable by default");
}

#[test]
fn unreadable_protected_paths_and_replaced_defaults() {
    let p = policy(
        "name = 'p'\nmode = 'auto'\n[protected]\nreadable = false\npaths = ['secrets/**']\n",
    );
    assert_eq!(
        decide(&p, "read_file", READ_ONLY, json!({"path": ".env"})).verdict,
        Verdict::Deny
    );
    let d = decide(&p, "read_file", READ_ONLY, json!({"path": "secrets/a"}));
    assert_eq!(d.verdict, Verdict::Deny);
    assert!(d.reason.unwrap().contains("may not read"));
    assert!(p.protected.is_protected("secrets"));

    let p = policy(
        "name = 'p'\nmode = 'auto'\n[protected]\nreplace_defaults = true\npaths = ['vault/*']\n",
    );
    assert_eq!(p.protected.paths, ["vault/*"]);
    assert_eq!(
        decide(&p, "write_file", WRITES, json!({"path": ".env"})).verdict,
        Verdict::Allow
    );
    assert_eq!(
        decide(&p, "write_file", WRITES, json!({"path": "vault/k"})).verdict,
        Verdict::Deny
    );
}

#[test]
fn grants_layer_field_by_field() {
    let p = policy(
        r#"
name = "p"
[grants.default]
workspace = "read-only"
network = []
deadline_ms = 5000
memory_mib = 64
[grants.plugin.web]
workspace = "none"
network = ["https://api.example.com:443", "https://*.example.org:*"]
[grants.tool.fetch]
deadline_ms = 20000
extra_dirs = [{ path = "/var/cache/web", access = "read-write" }]
[grants.tool.write_file]
workspace = "read-write"
output_bytes = 1000
write_bytes = 65536
"#,
    );
    let fetch = p.grant_for("web", "fetch");
    assert_eq!(fetch.workspace, None);
    assert_eq!(fetch.network.len(), 2);
    assert_eq!(fetch.limits.deadline, Some(Duration::from_secs(20)));
    assert_eq!(fetch.limits.memory_bytes, Some(64 << 20));
    assert_eq!(
        fetch.extra_dirs,
        [ExtraDir {
            path: "/var/cache/web".into(),
            access: FsAccess::ReadWrite
        }]
    );
    let write = p.grant_for("fs", "write_file");
    assert_eq!(write.workspace, Some(FsAccess::ReadWrite));
    assert!(write.network.is_empty());
    assert_eq!(write.limits.deadline, Some(Duration::from_secs(5)));
    assert_eq!(write.limits.output_bytes, Some(1000));
    assert_eq!(fetch.limits.write_bytes, None, "the default quota");
    let limits = write.limits.apply(crate::base::Limits::default());
    assert_eq!(
        (limits.deadline, limits.output_bytes, limits.write_bytes),
        (Duration::from_secs(5), 1000, 65536)
    );

    let bare = policy("name = 'p'").grant_for("fs", "read_file");
    assert_eq!(
        bare.workspace,
        Some(FsAccess::ReadOnly),
        "read-only by default"
    );
    assert!(bare.network.is_empty() && bare.extra_dirs.is_empty());
    assert_eq!(bare.limits, Default::default());
}

#[test]
fn matchers_sharing_an_argument_stay_separate() {
    let p = policy(
        r#"
name = "p"
mode = "auto"
[[rule]]
name = "g"
tools = ["t"]
decision = "deny"
reason = "glob"
[rule.args]
path = { glob = "*.lock" }
[[rule]]
name = "r"
tools = ["t"]
decision = "ask"
reason = "regex"
[rule.args]
path = { regex = "^vendor/" }
[[rule]]
name = "p"
tools = ["t"]
decision = "allow"
reason = "prefix"
[rule.args]
path = { prefix = "docs" }
"#,
    );
    let reason = |path: serde_json::Value| decide(&p, "t", WRITES, json!({ "path": path })).reason;
    assert_eq!(reason(json!("./Cargo.lock")).as_deref(), Some("glob"));
    assert_eq!(reason(json!("vendor/x")).as_deref(), Some("regex"));
    assert_eq!(reason(json!("docs/x")).as_deref(), Some("prefix"));
    assert_eq!(
        reason(json!(["docs/x", "vendor/y"])).as_deref(),
        Some("regex")
    );
    assert_eq!(reason(json!("src/x")), None);
    assert_eq!(reason(json!(7)), None);
}

#[test]
fn a_tool_annotated_read_only_gets_no_writes() {
    let p = policy(
        r#"
name = "p"
mode = "ask"
[grants.default]
workspace = "read-write"
extra_dirs = [{ path = "/var/cache/x", access = "read-write" }]
"#,
    );
    let input = serde_json::json!({});
    let facts = |tool, annotations| CallFacts {
        tool,
        plugin: "fs",
        annotations,
        input: &input,
    };
    // Ask mode lets the read-only tool run unasked, so it must not write.
    let read = facts("read_file", READ_ONLY);
    assert_eq!(p.decide(&read).verdict, Verdict::Allow);
    let granted = p.grant_for_call(&read);
    assert_eq!(granted.workspace, Some(FsAccess::ReadOnly));
    assert_eq!(granted.extra_dirs[0].access, FsAccess::ReadOnly);
    let write = facts("write_file", WRITES);
    assert_eq!(p.decide(&write).verdict, Verdict::Ask);
    let granted = p.grant_for_call(&write);
    assert_eq!(granted.workspace, Some(FsAccess::ReadWrite));
    assert_eq!(granted.extra_dirs[0].access, FsAccess::ReadWrite);
}
