//! The generator on recorded calls: generalisation, hostile inputs, and
//! what the generated policy decides.

use std::collections::BTreeSet;

use serde_json::{Value, json};

use super::*;
use crate::policy::{CallFacts, Verdict};

fn set(paths: &[&str]) -> BTreeSet<String> {
    paths.iter().map(|p| p.to_string()).collect()
}

fn annotations(read_only: bool, open_world: bool) -> Annotations {
    Annotations {
        read_only,
        destructive: !read_only,
        idempotent: read_only,
        open_world,
    }
}

fn lookup(tool: &str) -> Option<(String, Annotations)> {
    match tool {
        "read_file" | "list_dir" => Some(("fs".into(), annotations(true, false))),
        "write_file" => Some(("fs".into(), annotations(false, false))),
        "grep" => Some(("search".into(), annotations(true, false))),
        "http_fetch" => Some(("web".into(), annotations(true, true))),
        _ => crate::policy::command::builtin_facts(tool),
    }
}

fn ran(tool: &str, arguments: Value) -> RecordedCall {
    RecordedCall {
        tool: tool.into(),
        plugin: lookup(tool).map(|(p, _)| p),
        arguments,
        ..RecordedCall::default()
    }
}

fn request(calls: Vec<RecordedCall>) -> SuggestRequest {
    SuggestRequest {
        name: "learned".into(),
        source: "session test".into(),
        generated_at: "2026-11-25T12:00:00Z".into(),
        version: "0.0.0".into(),
        calls,
        unused_tools: vec!["grep".into()],
    }
}

/// Generate, parse, and return a decider for the suggested policy.
fn policy_of(calls: Vec<RecordedCall>) -> (Suggestion, Policy) {
    let s = suggest(&request(calls), &lookup).unwrap_or_else(|e| panic!("{e}"));
    let p = Policy::parse(&s.toml, "suggested").unwrap_or_else(|e| panic!("{e}\n{}", s.toml));
    (s, p)
}

fn verdict(p: &Policy, tool: &str, input: Value) -> Verdict {
    let (plugin, annotations) = lookup(tool).unwrap();
    p.decide(&CallFacts {
        tool,
        plugin: &plugin,
        annotations,
        input: &input,
    })
    .verdict
}

#[test]
fn one_file_is_its_path() {
    assert_eq!(generalise(&set(&["src/main.rs"])), ["src/main.rs"]);
}

#[test]
fn several_files_in_one_directory_are_its_star_with_a_shared_extension() {
    assert_eq!(generalise(&set(&["src/a.rs", "src/b.rs"])), ["src/*.rs"]);
    assert_eq!(generalise(&set(&["src/a.rs", "src/b.md"])), ["src/*"]);
    assert_eq!(
        generalise(&set(&["README", "src/a.rs"])),
        ["README", "src/a.rs"]
    );
}

#[test]
fn files_spread_over_a_subtree_are_its_double_star_but_never_the_whole_workspace() {
    assert_eq!(
        generalise(&set(&["src/a/x.rs", "src/b/c/y.rs"])),
        ["src/**/*.rs"]
    );
    assert_eq!(
        generalise(&set(&["src/a/x.rs", "src/b/y.toml"])),
        ["src/**"]
    );
    assert_eq!(
        generalise(&set(&["docs/a.md", "src/x.rs", "a.txt", "b.txt"])),
        ["*.txt", "docs/a.md", "src/x.rs"]
    );
    assert_eq!(
        generalise(&set(&["lib/x/deep/a.rs", "lib/x/b.rs"])),
        ["lib/x/**/*.rs"]
    );
}

#[test]
fn hostile_paths_are_refused_never_widened() {
    for bad in ["../x", "src/../../x", "/etc/passwd", "//etc/passwd"] {
        assert!(
            matches!(
                workspace_path(bad),
                Err(PathRefusal::Outside(_) | PathRefusal::Absolute(_))
            ),
            "{bad}"
        );
    }
    for bad in [
        "src/*.rs",
        "src/[ab].rs",
        "src/{a,b}.rs",
        "src/a?.rs",
        "src/a\\b",
    ] {
        assert!(
            matches!(workspace_path(bad), Err(PathRefusal::GlobMeta(_))),
            "{bad}"
        );
    }
    assert!(matches!(
        workspace_path("src/a\nb"),
        Err(PathRefusal::Control(_))
    ));
    assert_eq!(workspace_path("./src/../src/a.rs").unwrap(), "src/a.rs");
}

#[test]
fn a_hostile_recorded_path_is_left_out_and_stays_denied() {
    let (s, p) = policy_of(vec![
        ran("read_file", json!({"path": "src/a.rs"})),
        ran("read_file", json!({"path": "src/*"})),
        ran("read_file", json!({"path": "../secret"})),
        ran("read_file", json!({"path": "/etc/passwd"})),
    ]);
    assert_eq!(s.summary.not_allowed.len(), 3, "{:#?}", s.summary);
    assert_eq!(s.summary.tools[0].paths, ["src/a.rs"]);
    assert_eq!(
        verdict(&p, "read_file", json!({"path": "src/a.rs"})),
        Verdict::Allow
    );
    for denied in ["src/b.rs", "src/*", "../secret", "/etc/passwd"] {
        assert_eq!(
            verdict(&p, "read_file", json!({"path": denied})),
            Verdict::Deny,
            "{denied}\n{}",
            s.toml
        );
    }
}

#[test]
fn the_suggestion_allows_what_ran_and_denies_what_did_not() {
    let mut write = ran(
        "write_file",
        json!({"path": "out/report.md", "content": "x"}),
    );
    write.wrote = true;
    let mut fetch = ran("http_fetch", json!({"url": "http://127.0.0.1:8123/data"}));
    fetch.network = vec!["http://127.0.0.1:8123".into()];
    let mut refused = ran("write_file", json!({"path": "src/a.rs", "content": "x"}));
    refused.refused = Some("denied: no".into());
    let (s, p) = policy_of(vec![
        ran("read_file", json!({"path": "src/a.rs"})),
        ran("read_file", json!({"path": "src/b.rs"})),
        ran("read_file", json!({"path": "docs/guide.md"})),
        write,
        ran("shell", json!({"command": "cargo test 2>&1 | tail -n 5"})),
        ran(
            "shell",
            json!({"command": "RUST_LOG=debug git diff --stat > diff.txt"}),
        ),
        ran("shell", json!({"command": "echo $(date)"})),
        fetch,
        refused,
    ]);
    let allow = [
        ("read_file", json!({"path": "src/c.rs"})),
        ("read_file", json!({"path": "./docs/guide.md"})),
        (
            "write_file",
            json!({"path": "out/report.md", "content": "y"}),
        ),
        ("shell", json!({"command": "cargo test"})),
        (
            "shell",
            json!({"command": "RUST_LOG=debug git diff --stat > diff.txt"}),
        ),
        ("http_fetch", json!({"url": "http://127.0.0.1:8123/other"})),
    ];
    for (tool, input) in allow {
        assert_eq!(
            verdict(&p, tool, input.clone()),
            Verdict::Allow,
            "{input}\n{}",
            s.toml
        );
    }
    let deny = [
        ("read_file", json!({"path": "src/a/b.rs"})),
        ("read_file", json!({"path": "docs/other.md"})),
        ("read_file", json!({"path": "README.md"})),
        ("write_file", json!({"path": "src/a.rs", "content": "x"})),
        (
            "write_file",
            json!({"path": "out/other.md", "content": "x"}),
        ),
        ("grep", json!({"pattern": "x"})),
        ("shell", json!({"command": "cargo publish"})),
        ("shell", json!({"command": "git push"})),
        ("shell", json!({"command": "echo $(date)"})),
        ("shell", json!({"command": "cargo test > elsewhere.txt"})),
        ("http_fetch", json!({"url": "http://127.0.0.1:81234/data"})),
        (
            "http_fetch",
            json!({"url": "http://127.0.0.1:8123@evil.example/"}),
        ),
        ("http_fetch", json!({"url": "https://example.com/"})),
    ];
    for (tool, input) in deny {
        assert_eq!(
            verdict(&p, tool, input.clone()),
            Verdict::Deny,
            "{input}\n{}",
            s.toml
        );
    }
    assert_eq!(
        s.summary.not_allowed.len(),
        2,
        "{:#?}",
        s.summary.not_allowed
    );
    assert!(
        s.toml.contains("allow_private = [\"127.0.0.1/32\"]"),
        "{}",
        s.toml
    );
    assert!(
        s.toml
            .contains("commands = [\"cargo test\", \"git diff\", \"tail\"]"),
        "{}",
        s.toml
    );
    assert_eq!(s.summary.allow_tests, 7);
    assert!(s.summary.deny_tests >= 5, "{}", s.toml);
    assert!(
        s.toml
            .starts_with("# Suggested by `warden policy suggest` from session test")
    );
}

#[test]
fn a_run_where_nothing_ran_suggests_nothing() {
    let mut refused = ran("read_file", json!({"path": "a"}));
    refused.refused = Some("denied".into());
    assert!(matches!(
        suggest(&request(vec![refused]), &lookup),
        Err(SuggestError::NothingRan(_))
    ));
}

#[test]
fn recorded_text_cannot_add_lines_to_the_policy() {
    let (s, _) = policy_of(vec![
        ran("read_file", json!({"path": "a.txt"})),
        ran("read_file", json!({"path": "x\n[[rule]]\nname = \"evil\""})),
    ]);
    assert!(!s.toml.contains("\nname = \"evil\""), "{}", s.toml);
}
