//! `commands`, `writes` and `env` in a policy file: every mistake is an
//! error with its line and column, and rules that could never decide are
//! refused.

use super::*;

fn rule(body: &str) -> String {
    format!("name = 'p'\n[[rule]]\nname = 'r'\n{body}")
}

#[test]
fn a_bad_prefix_is_located() {
    assert_eq!(
        error(&rule("decision = 'allow'\ncommands = ['ls', 'git $(x)']\n")),
        "test.toml:5:19: rule `r`: bad prefix `git $(x)` in `commands`: `$` is shell syntax; \
         a prefix is plain words separated by spaces, matched against each command after \
         quotes are removed"
    );
    for (prefix, problem) in [
        ("", "needs at least the program"),
        ("   ", "needs at least the program"),
        ("git push; rm", "`;` is shell syntax"),
        ("'git' status", "`'` is shell syntax"),
        ("rm *", "`*` is shell syntax"),
        ("FOO=1 cargo", "list their names in `env`"),
        ("a\\u0007b", "`\\u{7}` is shell syntax"),
    ] {
        let e = error(&rule(&format!(
            "decision = 'deny'\ncommands = [\"{prefix}\"]\n"
        )));
        assert!(
            e.starts_with("test.toml:5:13: ") && e.contains(problem),
            "{prefix:?}: {e}"
        );
    }
    let e = error(&rule("decision = 'deny'\ncommands = ['ls', 'ls ']\n"));
    assert!(e.contains("prefix `ls` is listed twice"), "{e}");
    let e = error(&rule("decision = 'deny'\ncommands = []\n"));
    assert!(
        e.starts_with("test.toml:5:12: rule `r`: `commands` is empty"),
        "{e}"
    );
}

#[test]
fn writes_and_env_only_widen_an_allow_rule_with_commands() {
    let e = error(&rule("decision = 'allow'\nwrites = ['*.log']\n"));
    assert!(
        e.starts_with("test.toml:5:10: rule `r`: `writes` widens what a `commands` rule allows"),
        "{e}"
    );
    let e = error(&rule("decision = 'deny'\ncommands = ['ls']\nenv = ['A']\n"));
    assert!(
        e.starts_with("test.toml:6:7: rule `r`: `env` only widens an allow rule"),
        "{e}"
    );
    let e = error(&rule(
        "decision = 'allow'\ncommands = ['ls']\nenv = ['A-B']\n",
    ));
    assert!(
        e.starts_with("test.toml:6:8: rule `r`: bad `A-B` in `env`: not a variable name"),
        "{e}"
    );
    let e = error(&rule(
        "decision = 'allow'\ncommands = ['ls']\nwrites = ['[x']\n",
    ));
    assert!(
        e.starts_with("test.toml:6:11: rule `r`: bad `[x` in `writes`"),
        "{e}"
    );
    let e = error(&rule(
        "decision = 'allow'\ncommands = ['ls']\nwrites = []\n",
    ));
    assert!(e.contains("`writes` is empty"), "{e}");
}

#[test]
fn unknown_keys_in_a_command_rule_are_errors() {
    let e = error(&rule("decision = 'allow'\ncommand = ['ls']\n"));
    assert!(
        e.starts_with("test.toml:5:1: unknown field `command`"),
        "{e}"
    );
}

#[test]
fn a_command_rule_must_be_able_to_reach_the_shell_tool() {
    let e = error(&rule(
        "tools = ['write_file']\ndecision = 'deny'\ncommands = ['ls']\n",
    ));
    assert!(
        e.starts_with(
            "test.toml:4:9: rule `r`: `commands` decide the parts of `shell` command lines"
        ),
        "{e}"
    );
    let p = policy(&rule("decision = 'deny'\ncommands = ['ls']\n"));
    assert_eq!(p.rules[0].tools, ["shell"]);
    let p = policy(&rule(
        "tools = ['sh*']\ndecision = 'deny'\ncommands = ['ls']\n",
    ));
    assert_eq!(p.rules[0].tools, ["sh*"]);
}

#[test]
fn an_allow_rule_for_what_always_asks_is_refused() {
    for program in [
        "bash",
        "sh",
        "eval",
        "source",
        "exec",
        "export",
        "/bin/bash",
    ] {
        let e = error(&rule(&format!(
            "decision = 'allow'\ncommands = ['{program} x']\n"
        )));
        assert!(
            e.contains("can never be allowed by a rule"),
            "{program}: {e}"
        );
    }
    // Deny and ask rules for them are fine.
    policy(&rule("decision = 'deny'\ncommands = ['bash', 'eval']\n"));
}

#[test]
fn shadowed_command_rules_are_unreachable() {
    let e = error(
        "name = 'p'\n[[rule]]\nname = 'no-git'\ndecision = 'deny'\ncommands = ['git']\n\
         [[rule]]\nname = 'status'\ndecision = 'allow'\ncommands = ['git status']\n",
    );
    assert!(
        e.contains("rule `status` can never decide: rule `no-git` (line 3)"),
        "{e}"
    );
    // Different prefixes neither shadow nor contradict each other.
    policy(
        "name = 'p'\n[[rule]]\nname = 'push'\ndecision = 'deny'\ncommands = ['git push']\n\
         [[rule]]\nname = 'status'\ndecision = 'allow'\ncommands = ['git status']\n",
    );
    // A later allow that names more writes is reachable; the reverse is not.
    policy(
        "name = 'p'\n[[rule]]\nname = 'a'\ndecision = 'allow'\ncommands = ['make']\n\
         [[rule]]\nname = 'b'\ndecision = 'allow'\ncommands = ['make']\nwrites = ['*.log']\n",
    );
    let e = error(
        "name = 'p'\n[[rule]]\nname = 'a'\ndecision = 'allow'\ncommands = ['make']\nwrites = ['*.log']\n\
         [[rule]]\nname = 'b'\ndecision = 'allow'\ncommands = ['make test']\n",
    );
    assert!(e.contains("rule `b` can never decide"), "{e}");
    // A rule without commands for the shell tool covers every part.
    let e = error(
        "name = 'p'\n[[rule]]\nname = 'all'\ntools = ['shell']\ndecision = 'deny'\n\
         [[rule]]\nname = 'ls'\ndecision = 'allow'\ncommands = ['ls']\n",
    );
    assert!(e.contains("rule `ls` can never decide"), "{e}");
}

#[test]
fn the_same_prefixes_with_different_decisions_contradict() {
    let e = error(
        "name = 'p'\n[[rule]]\nname = 'a'\ndecision = 'allow'\ncommands = ['make', 'ls']\n\
         [[rule]]\nname = 'b'\ndecision = 'ask'\ncommands = ['ls', 'make']\n",
    );
    assert!(
        e.contains("rules `a` (line 3) and `b` match exactly the same calls"),
        "{e}"
    );
}
