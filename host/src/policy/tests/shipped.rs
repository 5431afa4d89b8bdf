//! Every shipped policy parses, validates and passes its own tests.

use super::*;
use crate::capability::FsAccess;
use crate::policy::{DEFAULT_POLICY, Mode, builtin_policies};

fn shipped(name: &str) -> Policy {
    let (_, text) = builtin_policies()
        .into_iter()
        .find(|(n, _)| *n == name)
        .unwrap();
    Policy::parse(text, &format!("{name}.toml")).unwrap()
}

#[test]
fn every_shipped_policy_passes_its_inline_tests() {
    let all = builtin_policies();
    assert!(all.iter().any(|(n, _)| *n == DEFAULT_POLICY));
    for (name, text) in all {
        let p = Policy::parse(text, name).unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(p.name, name);
        assert!(!p.description.is_empty(), "{name} needs a description");
        assert!(p.tests.len() >= 4, "{name} needs tests");
        for outcome in p.run_tests(&builtin_lookup) {
            assert!(outcome.passed, "{name}: {outcome:?}");
        }
    }
}

#[test]
fn shipped_policies_say_what_they_promise() {
    let ro = shipped("read-only");
    assert_eq!(ro.mode, Mode::ReadOnly);
    assert_eq!(
        ro.grant_for("fs", "write_file").workspace,
        Some(FsAccess::ReadOnly)
    );

    let ww = shipped("workspace-write");
    assert_eq!(ww.mode, Mode::AutoEdit);
    assert_eq!(
        ww.grant_for("fs", "write_file").workspace,
        Some(FsAccess::ReadWrite)
    );
    assert!(ww.protected.readable);

    let strict = shipped("strict");
    assert_eq!(strict.mode, Mode::Ask);
    assert!(!strict.protected.readable);
    let limits = strict.grant_for("fs", "read_file").limits;
    assert_eq!(limits.memory_bytes, Some(128 << 20));
    assert_eq!(limits.deadline, Some(std::time::Duration::from_secs(10)));

    let ci = shipped("ci");
    assert!(ci.non_interactive);

    // Commands: only the shell plugin starts processes, read-only in plan mode.
    let ro_shell = ro.grant_for("shell", "shell");
    assert!(ro_shell.process.enabled);
    assert_eq!(ro_shell.workspace, Some(FsAccess::ReadOnly));
    assert!(ww.grant_for("shell", "shell").process.enabled);
    assert!(
        ww.grant_for("shell", "shell")
            .process
            .toolchains
            .iter()
            .any(|t| t.written == "~/.cargo")
    );
    assert_eq!(
        strict
            .grant_for("shell", "shell")
            .process
            .limits
            .cpu_seconds,
        60
    );
    for p in [&ro, &ww, &strict, &ci] {
        assert!(
            !p.grant_for("fs", "write_file").process.enabled,
            "{}",
            p.name
        );
        assert!(
            p.tests.iter().filter(|t| t.tool == "shell").count() >= 4,
            "{}: shell needs inline tests",
            p.name
        );
    }
    for p in [ro, ww, strict, ci] {
        assert!(
            p.grant_for("any", "tool").network.is_empty(),
            "{}: no network",
            p.name
        );
    }
}

#[test]
fn an_unknown_tool_fails_its_test() {
    let p =
        policy("name = 'p'\n[[test]]\nname = 't'\ntool = 'nope'\ninput = {}\nexpect = 'deny'\n");
    let outcomes = p.run_tests(&builtin_lookup);
    assert_eq!(outcomes.len(), 1);
    assert!(!outcomes[0].passed);
    assert!(
        outcomes[0]
            .got
            .reason
            .as_deref()
            .unwrap()
            .contains("unknown tool `nope`")
    );
}

#[test]
fn the_documented_example_parses_and_passes() {
    let readme = include_str!("../../../../policies/README.md");
    let start = readme.find("```toml\n").unwrap() + "```toml\n".len();
    let len = readme[start..].find("```").unwrap();
    let p =
        Policy::parse(&readme[start..start + len], "README.md").unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(p.rules.len(), 5);
    assert!(p.protected.is_protected("secrets/token") && p.protected.is_protected(".git"));
    for outcome in p.run_tests(&builtin_lookup) {
        assert!(outcome.passed, "{outcome:?}");
    }
}
