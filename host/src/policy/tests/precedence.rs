//! Deny beats ask beats allow, rules beat the mode, each mode's fallback,
//! and every kind of argument matcher.

use serde_json::json;

use super::*;
use crate::policy::{DecidedBy, Mode, Verdict};

const THREE_RULES: &str = r#"
name = "p"
mode = "auto"

[[rule]]
name = "allow-all"
decision = "allow"

[[rule]]
name = "ask-writes"
tools = ["write_*"]
decision = "ask"
reason = "writes need a look"

[[rule]]
name = "deny-secrets"
tools = ["write_file", "read_file"]
decision = "deny"
reason = "no secrets"
[rule.args]
path = { prefix = "secret" }
"#;

fn by_rule(d: &Decision) -> (&str, usize) {
    match &d.by {
        DecidedBy::Rule {
            index: Some(index),
            name,
        } => (name.as_str(), *index),
        DecidedBy::Rule { name, index: None } => panic!("decided by built-in {name}, not a rule"),
        DecidedBy::Mode(m) => panic!("decided by mode {m}, not a rule"),
    }
}

#[test]
fn deny_beats_ask_beats_allow() {
    let p = policy(THREE_RULES);
    let d = decide(&p, "write_file", WRITES, json!({"path": "secret.txt"}));
    assert_eq!(
        (d.verdict, by_rule(&d)),
        (Verdict::Deny, ("deny-secrets", 2))
    );
    assert_eq!(d.reason.as_deref(), Some("no secrets"));
    let d = decide(&p, "write_file", WRITES, json!({"path": "public.txt"}));
    assert_eq!((d.verdict, by_rule(&d)), (Verdict::Ask, ("ask-writes", 1)));
    let d = decide(&p, "read_file", READ_ONLY, json!({"path": "public.txt"}));
    assert_eq!((d.verdict, by_rule(&d)), (Verdict::Allow, ("allow-all", 0)));
}

#[test]
fn the_first_rule_of_the_winning_kind_decides() {
    let p = policy(
        r#"
name = "p"
[[rule]]
name = "first"
tools = ["a"]
decision = "deny"
[rule.args]
x = { prefix = "1" }
[[rule]]
name = "second"
tools = ["a"]
decision = "deny"
[rule.args]
y = { prefix = "2" }
"#,
    );
    let d = decide(&p, "a", READ_ONLY, json!({"x": "1", "y": "2"}));
    assert_eq!(by_rule(&d), ("first", 0));
    let d = decide(&p, "a", READ_ONLY, json!({"y": "2"}));
    assert_eq!(by_rule(&d), ("second", 1));
}

#[test]
fn a_rule_beats_the_mode() {
    let p = policy(
        "name = 'p'\nmode = 'read-only'\n[[rule]]\nname = 'w'\ntools = ['write_file']\ndecision = 'allow'\n",
    );
    let d = decide(&p, "write_file", WRITES, empty());
    assert_eq!((d.verdict, by_rule(&d)), (Verdict::Allow, ("w", 0)));
    let d = decide(&p, "edit_file", WRITES, empty());
    assert_eq!(d.by, DecidedBy::Mode(Mode::ReadOnly));
}

#[test]
fn each_mode_falls_back_on_annotations() {
    use Verdict::{Allow, Ask, Deny};
    let table = [
        ("read-only", [Allow, Deny, Deny]),
        ("ask", [Allow, Ask, Ask]),
        ("auto-edit", [Allow, Allow, Ask]),
        ("auto", [Allow, Allow, Allow]),
        ("allow-list", [Deny, Deny, Deny]),
    ];
    for (mode, expected) in table {
        let p = policy(&format!("name = 'p'\nmode = '{mode}'\n"));
        let got = [READ_ONLY, WRITES, NETWORK].map(|a| decide(&p, "t", a, empty()).verdict);
        assert_eq!(got, expected, "mode {mode}");
        assert_eq!(decide(&p, "t", WRITES, empty()).by, DecidedBy::Mode(p.mode));
    }
    let plan = policy("name = 'p'\nmode = 'read-only'\n");
    let d = decide(&plan, "t", WRITES, empty());
    assert_eq!(
        d.reason.as_deref(),
        Some("plan mode: only read-only tools may run")
    );
    assert_eq!(
        policy("name = 'p'").mode,
        Mode::Ask,
        "ask is the default mode"
    );
}

#[test]
fn non_interactive_turns_ask_into_deny() {
    let p = policy("name = 'p'\nmode = 'ask'\nnon_interactive = true\n");
    let d = decide(&p, "t", WRITES, empty());
    assert_eq!(d.verdict, Verdict::Deny);
    assert_eq!(
        d.reason.as_deref(),
        Some(
            "would ask, but this policy is non-interactive (ask mode: calls that are not read-only need approval)"
        )
    );
    assert_eq!(decide(&p, "t", READ_ONLY, empty()).verdict, Verdict::Allow);
}

#[test]
fn glob_prefix_and_regex_matchers() {
    let p = policy(
        r#"
name = "p"
mode = "auto"
[[rule]]
name = "glob"
tools = ["g"]
decision = "deny"
[rule.args]
path = { glob = ["src/*.rs", "docs/**"] }
[[rule]]
name = "prefix"
tools = ["p"]
decision = "deny"
[rule.args]
cmd = { prefix = "git push" }
[[rule]]
name = "regex"
tools = ["r"]
decision = "deny"
[rule.args]
url = { regex = '^https?://([a-z]+\.)?evil\.example(/|$)' }
"#,
    );
    let verdict = |tool: &str, input: serde_json::Value| decide(&p, tool, WRITES, input).verdict;
    assert_eq!(verdict("g", json!({"path": "src/main.rs"})), Verdict::Deny);
    assert_eq!(
        verdict("g", json!({"path": "src/a/main.rs"})),
        Verdict::Allow,
        "* stays in one component"
    );
    assert_eq!(verdict("g", json!({"path": "docs/a/b.md"})), Verdict::Deny);
    assert_eq!(
        verdict("p", json!({"cmd": "git push --force"})),
        Verdict::Deny
    );
    assert_eq!(
        verdict("p", json!({"cmd": "echo git push"})),
        Verdict::Allow
    );
    assert_eq!(
        verdict("r", json!({"url": "https://www.evil.example/x"})),
        Verdict::Deny
    );
    assert_eq!(
        verdict("r", json!({"url": "https://evil.example.org"})),
        Verdict::Allow
    );
}

#[test]
fn all_matchers_must_match_and_missing_or_non_string_args_do_not() {
    let p = policy(
        r#"
name = "p"
mode = "auto"
[[rule]]
name = "both"
decision = "deny"
[rule.args]
path = { glob = "*.lock" }
content = { regex = "evil" }
"#,
    );
    let verdict = |input: serde_json::Value| decide(&p, "write_file", WRITES, input).verdict;
    assert_eq!(
        verdict(json!({"path": "Cargo.lock", "content": "evil"})),
        Verdict::Deny
    );
    assert_eq!(
        verdict(json!({"path": "Cargo.lock", "content": "good"})),
        Verdict::Allow
    );
    assert_eq!(
        verdict(json!({"path": "Cargo.lock"})),
        Verdict::Allow,
        "missing arg"
    );
    assert_eq!(
        verdict(json!({"path": "Cargo.lock", "content": 7})),
        Verdict::Allow,
        "number"
    );
    assert_eq!(
        verdict(json!({"path": "a.lock", "content": {"x": "evil"}})),
        Verdict::Allow,
        "object"
    );
    assert_eq!(
        verdict(json!({"path": ["x.rs", "a.lock"], "content": ["ok", "evil"]})),
        Verdict::Deny,
        "arrays: any element"
    );
    assert_eq!(
        verdict(json!({"path": ["x.rs", 1], "content": "evil"})),
        Verdict::Allow
    );
}

#[test]
fn tool_globs_and_exact_names_are_both_indexed() {
    let p = policy(
        r#"
name = "p"
mode = "auto"
[[rule]]
name = "exact"
tools = ["mcp_fetch", "mcp_*"]
decision = "ask"
[[rule]]
name = "class"
tools = ["[a-c]_tool"]
decision = "deny"
"#,
    );
    assert_eq!(
        by_rule(&decide(&p, "mcp_fetch", NETWORK, empty())),
        ("exact", 0)
    );
    assert_eq!(
        by_rule(&decide(&p, "mcp_other", NETWORK, empty())),
        ("exact", 0)
    );
    assert_eq!(
        by_rule(&decide(&p, "b_tool", NETWORK, empty())),
        ("class", 1)
    );
    assert_eq!(
        decide(&p, "d_tool", NETWORK, empty()).by,
        DecidedBy::Mode(Mode::Auto)
    );
}
