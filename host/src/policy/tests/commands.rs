//! `shell` calls decided command by command: the strongest part wins, and
//! nothing an allow rule does not name is allowed.

use serde_json::json;

use super::*;
use crate::policy::command::{SHELL_ANNOTATIONS, SHELL_SAFETY_RULE, SHELL_TOOL};
use crate::policy::{DecidedBy, Verdict};

const RULES: &str = r#"
[[rule]]
name = "read"
decision = "allow"
commands = ["ls", "cat", "wc", "echo", "cd", "find", "rg", "git status", "git diff"]

[[rule]]
name = "build"
decision = "allow"
commands = ["cargo test", "cargo build"]
env = ["RUST_BACKTRACE"]
writes = ["*.log", "target/**"]

[[rule]]
name = "sed-in-place"
decision = "allow"
commands = ["sed -i"]

[[rule]]
name = "no-network"
decision = "deny"
reason = "no network from commands"
commands = ["git push", "curl"]

[[rule]]
name = "ask-make"
decision = "ask"
commands = ["make"]
"#;

fn with_mode(mode: &str) -> Policy {
    policy(&format!("name = 'p'\nmode = '{mode}'\n{RULES}"))
}

fn shell(p: &Policy, command: &str) -> Decision {
    shell_input(p, json!({ "command": command }))
}

fn shell_input(p: &Policy, input: Value) -> Decision {
    p.decide(&CallFacts {
        tool: SHELL_TOOL,
        plugin: "shell",
        annotations: SHELL_ANNOTATIONS,
        input: &input,
    })
}

/// The verdict and the rule (or `mode`) that decided each part.
fn parts(d: &Decision) -> Vec<(String, Verdict, String)> {
    d.parts
        .iter()
        .map(|p| {
            let by = match &p.by {
                DecidedBy::Rule { name, .. } => name.clone(),
                DecidedBy::Mode(m) => format!("mode {m}"),
            };
            (p.command.clone(), p.verdict, by)
        })
        .collect()
}

fn verdict(p: &Policy, command: &str) -> Verdict {
    shell(p, command).verdict
}

#[test]
fn one_denied_part_denies_the_whole_command() {
    let p = with_mode("auto-edit");
    let d = shell(&p, "cargo test && git push origin");
    assert_eq!(d.verdict, Verdict::Deny);
    assert_eq!(
        d.by,
        DecidedBy::Rule {
            index: Some(3),
            name: "no-network".into()
        }
    );
    assert_eq!(
        d.reason.as_deref(),
        Some("`git push origin`: no network from commands")
    );
    assert_eq!(
        parts(&d),
        [
            ("cargo test".into(), Verdict::Allow, "build".into()),
            ("git push origin".into(), Verdict::Deny, "no-network".into())
        ]
    );
}

#[test]
fn a_command_is_allowed_only_if_every_part_is() {
    let p = with_mode("auto-edit");
    assert_eq!(verdict(&p, "ls | wc -l"), Verdict::Allow);
    assert_eq!(
        verdict(&p, "cd sub && cargo build 2>&1 | wc -l"),
        Verdict::Allow
    );
    let d = shell(&p, "ls && npm install");
    assert_eq!(d.verdict, Verdict::Ask);
    assert_eq!(
        parts(&d)[1],
        ("npm install".into(), Verdict::Ask, "mode auto-edit".into())
    );
    assert_eq!(verdict(&p, "ls; make"), Verdict::Ask);
}

#[test]
fn a_prefix_matches_whole_words_and_the_program_as_written() {
    let p = with_mode("auto-edit");
    assert_eq!(verdict(&p, "git status -s"), Verdict::Allow);
    assert_eq!(verdict(&p, "'git' \"status\""), Verdict::Allow);
    assert_eq!(verdict(&p, "git statusx"), Verdict::Ask);
    assert_eq!(verdict(&p, "git"), Verdict::Ask);
    assert_eq!(verdict(&p, "/usr/bin/git status"), Verdict::Ask);
    assert_eq!(verdict(&p, "./cat x"), Verdict::Ask);
    assert_eq!(verdict(&p, "/usr/bin/curl x"), Verdict::Ask);
}

#[test]
fn substitutions_ask_and_their_commands_are_decided_too() {
    let p = with_mode("auto-edit");
    let d = shell(&p, "echo $(curl x)");
    assert_eq!(d.verdict, Verdict::Deny);
    assert_eq!(
        parts(&d),
        [
            ("echo $(curl x)".into(), Verdict::Allow, "read".into()),
            ("$(curl x)".into(), Verdict::Ask, SHELL_SAFETY_RULE.into()),
            ("curl x".into(), Verdict::Deny, "no-network".into()),
        ]
    );
    let d = shell(&p, "echo `ls`");
    assert_eq!(d.verdict, Verdict::Ask);
    assert_eq!(
        d.by,
        DecidedBy::Rule {
            index: None,
            name: SHELL_SAFETY_RULE.into()
        }
    );
    assert!(
        d.reason
            .as_deref()
            .unwrap()
            .contains("a command substitution"),
        "{:?}",
        d.reason
    );
    for cmd in [
        "eval ls",
        "bash -c 'ls'",
        "source x.sh",
        "$CMD",
        "exec ls",
        "xargs -I{} {}",
        "echo 'unterminated",
        "PATH=/tmp; ls",
    ] {
        assert_eq!(verdict(&p, cmd), Verdict::Ask, "{cmd}");
    }
    // A nested shell's written-out script is decided too.
    assert_eq!(verdict(&p, "bash -c 'git push'"), Verdict::Deny);
}

#[test]
fn writes_an_allow_rule_does_not_name_ask() {
    let p = with_mode("auto-edit");
    let d = shell(&p, "cat a > b");
    assert_eq!(d.verdict, Verdict::Ask);
    assert_eq!(
        d.reason.as_deref(),
        Some(
            "`cat a > b`: rule `read` allows the command, but it writes to `b` with `>` \
             (list it in an allow rule's `writes` to allow that)"
        )
    );
    assert_eq!(verdict(&p, "cat a > /dev/null 2>&1"), Verdict::Allow);
    assert_eq!(verdict(&p, "cargo test > test.log 2>&1"), Verdict::Allow);
    assert_eq!(verdict(&p, "cargo test > ./target/out.txt"), Verdict::Allow);
    assert_eq!(verdict(&p, "cargo test > src/main.rs"), Verdict::Ask);
    assert_eq!(verdict(&p, "cargo test > logs/a.log"), Verdict::Ask);
    assert_eq!(verdict(&p, "cargo test | tee test.log"), Verdict::Ask);
    assert_eq!(verdict(&p, "{ ls; cargo test; } > test.log"), Verdict::Ask);
}

#[test]
fn risky_options_ask_unless_the_prefix_names_them() {
    let p = with_mode("auto-edit");
    assert_eq!(verdict(&p, "find . -name '*.rs'"), Verdict::Allow);
    let d = shell(&p, "find . -delete");
    assert_eq!(d.verdict, Verdict::Ask);
    assert_eq!(
        d.reason.as_deref(),
        Some(
            "`find . -delete`: rule `read` allows the command, but it gives `find` `-delete`, \
             which deletes files (a rule allows that only if its prefix includes the option)"
        )
    );
    assert_eq!(
        d.by,
        DecidedBy::Rule {
            index: None,
            name: SHELL_SAFETY_RULE.into()
        }
    );
    assert_eq!(verdict(&p, "find . -exec rm {} +"), Verdict::Ask);
    assert_eq!(verdict(&p, "rg --pre=sh x"), Verdict::Ask);
    assert_eq!(verdict(&p, "rg x *"), Verdict::Ask);
    assert_eq!(verdict(&p, "git -c core.pager=sh status"), Verdict::Ask);
    assert_eq!(verdict(&p, "git diff --output=x"), Verdict::Ask);
    assert_eq!(verdict(&p, "sed -i s/a/b/ f"), Verdict::Allow);
    assert_eq!(verdict(&p, "sed -n -i s/a/b/ f"), Verdict::Ask);
}

#[test]
fn variables_set_for_a_command_ask_unless_the_rule_names_them() {
    let p = with_mode("auto-edit");
    assert_eq!(verdict(&p, "RUST_BACKTRACE=1 cargo test"), Verdict::Allow);
    assert_eq!(
        verdict(&p, "env RUST_BACKTRACE=1 cargo test"),
        Verdict::Allow
    );
    let d = shell(&p, "FOO=1 cargo test");
    assert_eq!(d.verdict, Verdict::Ask);
    assert!(
        d.reason.as_deref().unwrap().contains("sets `FOO`"),
        "{:?}",
        d.reason
    );
    assert_eq!(verdict(&p, "LD_PRELOAD=x.so ls"), Verdict::Ask);
    assert_eq!(verdict(&p, "GIT_DIR=x git status"), Verdict::Ask);
}

#[test]
fn wrappers_do_not_hide_a_denied_command_nor_lend_it_their_allow() {
    let p = with_mode("auto-edit");
    assert_eq!(verdict(&p, "timeout 10 git push"), Verdict::Deny);
    assert_eq!(verdict(&p, "env -i nice -n 5 curl x"), Verdict::Deny);
    assert_eq!(verdict(&p, "nice cargo test"), Verdict::Allow);
    assert_eq!(verdict(&p, "find . -name x | xargs wc -l"), Verdict::Allow);
    // `xargs git` could be `git push`: unknown arguments could complete a
    // denied prefix.
    let d = shell(&p, "echo push | xargs git");
    assert_eq!(d.verdict, Verdict::Ask);
    assert!(
        d.reason
            .as_deref()
            .unwrap()
            .contains("it may run `git push`"),
        "{:?}",
        d.reason
    );
    assert_eq!(verdict(&p, "for x in push; do git $x; done"), Verdict::Ask);
    // An allow rule for a wrapper does not allow what it runs.
    let q = policy(
        "name = 'q'\nmode = 'auto-edit'\n[[rule]]\nname = 'env'\ndecision = 'allow'\ncommands = ['env', 'timeout']\n",
    );
    assert_eq!(verdict(&q, "env"), Verdict::Allow);
    assert_eq!(verdict(&q, "env rm -rf x"), Verdict::Ask);
    assert_eq!(verdict(&q, "timeout 5 rm -rf x"), Verdict::Ask);
}

#[test]
fn an_unmatched_command_is_allowed_only_in_auto_mode() {
    for (mode, expected) in [
        ("read-only", Verdict::Deny),
        ("ask", Verdict::Ask),
        ("auto-edit", Verdict::Ask),
        ("auto", Verdict::Allow),
        ("allow-list", Verdict::Deny),
    ] {
        let p = with_mode(mode);
        let d = shell(&p, "npm install");
        assert_eq!(d.verdict, expected, "{mode}");
        assert_eq!(d.by, DecidedBy::Mode(p.mode), "{mode}");
    }
    // Auto mode still asks for what no rule could check or allow.
    let auto = with_mode("auto");
    assert_eq!(verdict(&auto, "npm install > out"), Verdict::Ask);
    assert_eq!(verdict(&auto, "echo $(date)"), Verdict::Ask);
    assert_eq!(verdict(&auto, "cat a > b"), Verdict::Ask);
    // Plan mode denies them.
    let ro = with_mode("read-only");
    assert_eq!(verdict(&ro, "cat a > b"), Verdict::Deny);
    assert_eq!(verdict(&ro, "echo $(ls)"), Verdict::Deny);
    assert_eq!(
        verdict(&with_mode("allow-list"), "cat a > b"),
        Verdict::Deny
    );
    assert_eq!(verdict(&ro, "ls | wc -l"), Verdict::Allow);
    // An explicit rule still decides.
    assert_eq!(verdict(&ro, "make"), Verdict::Ask);
    assert_eq!(verdict(&ro, "git push"), Verdict::Deny);
    // An empty command runs nothing; the mode decides.
    assert_eq!(shell(&ro, "").verdict, Verdict::Deny);
    assert_eq!(
        shell(&with_mode("auto"), "# nothing").verdict,
        Verdict::Allow
    );
}

#[test]
fn a_non_interactive_policy_denies_what_would_ask() {
    let p = policy(&format!(
        "name = 'p'\nmode = 'auto-edit'\nnon_interactive = true\n{RULES}"
    ));
    let d = shell(&p, "cargo test && cat a > b");
    assert_eq!(d.verdict, Verdict::Deny);
    assert!(
        d.reason
            .as_deref()
            .unwrap()
            .starts_with("would ask, but this policy is non-interactive (`cat a > b`: rule `read`"),
        "{:?}",
        d.reason
    );
    assert_eq!(d.parts.len(), 2);
    assert_eq!(verdict(&p, "cargo test && ls"), Verdict::Allow);
}

#[test]
fn protected_paths_in_words_targets_and_cwd_are_denied() {
    let p = with_mode("auto");
    for input in [
        json!({"command": "cat .env"}),
        json!({"command": "echo x > .git/config"}),
        json!({"command": "ls --file=.git/HEAD"}),
        json!({"command": "cat 'certs/a.pem'"}),
        json!({"command": "cat x < .env.local"}),
        json!({"command": "ls", "cwd": ".git/hooks"}),
        json!({"command": "ls", "cwd": "/home/u/proj/.git"}),
    ] {
        let d = shell_input(&p, input.clone());
        assert_eq!(d.verdict, Verdict::Deny, "{input}");
        assert_eq!(
            d.by,
            DecidedBy::Rule {
                index: None,
                name: "protected-paths".into()
            },
            "{input}"
        );
    }
    // Each word is checked as a path, not the command string.
    assert_eq!(verdict(&p, "echo 'a .env b'"), Verdict::Allow);
    assert_eq!(verdict(&p, ".env"), Verdict::Deny);
    assert_eq!(
        shell_input(&p, json!({"command": "ls src", "cwd": "src"})).verdict,
        Verdict::Allow
    );
}

#[test]
fn rules_without_commands_apply_to_every_part() {
    let p = policy(
        r#"
name = "p"
mode = "auto-edit"
[[rule]]
name = "read"
decision = "allow"
commands = ["ls"]
[[rule]]
name = "no-force-push"
tools = ["shell*"]
decision = "deny"
[rule.args]
command = { regex = '^git\s+push\b.*\s(-f|--force)\b' }
[[rule]]
name = "ask-outside"
tools = ["shell"]
decision = "ask"
[rule.args]
cwd = { glob = ["/**", "../**"] }
"#,
    );
    assert_eq!(verdict(&p, "git push -f"), Verdict::Deny);
    assert_eq!(verdict(&p, "ls"), Verdict::Allow);
    assert_eq!(
        shell_input(&p, json!({"command": "ls", "cwd": "/tmp"})).verdict,
        Verdict::Ask
    );
    // A call-level allow allows every part, but not what a prefix cannot.
    let q = policy(
        "name = 'q'\nmode = 'read-only'\n[[rule]]\nname = 'all'\ntools = ['shell']\ndecision = 'allow'\n",
    );
    assert_eq!(verdict(&q, "npm install && make"), Verdict::Allow);
    assert_eq!(verdict(&q, "echo $(id)"), Verdict::Deny);
}

#[test]
fn command_rules_do_not_decide_other_tools() {
    let p = policy(
        "name = 'p'\nmode = 'ask'\n[[rule]]\nname = 'all'\ntools = ['*']\ndecision = 'allow'\ncommands = ['ls']\n",
    );
    let d = decide(
        &p,
        "write_file",
        WRITES,
        json!({"path": "a", "content": "x"}),
    );
    assert_eq!((d.verdict, d.by), (Verdict::Ask, DecidedBy::Mode(p.mode)));
    assert!(d.parts.is_empty());
    assert_eq!(verdict(&p, "ls"), Verdict::Allow);
}

#[test]
fn only_shell_decisions_carry_parts_in_json() {
    let p = with_mode("auto-edit");
    let other = decide(&p, "read_file", READ_ONLY, json!({"path": "a"}));
    let v = serde_json::to_value(&other).unwrap();
    assert!(v.get("parts").is_none(), "{v}");
    let d = shell(&p, "ls | wc -l");
    let v = serde_json::to_value(&d).unwrap();
    assert_eq!(v["parts"][1]["command"], "wc -l");
    assert_eq!(v["parts"][1]["by"]["rule"]["name"], "read");
    let back: Decision = serde_json::from_value(v).unwrap();
    assert_eq!(back, d);
}
