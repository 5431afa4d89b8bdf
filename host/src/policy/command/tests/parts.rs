//! Every command a line runs becomes a part, with its words as the
//! program will see them.

use super::*;

#[test]
fn no_operator_hides_a_second_command() {
    assert_eq!(
        words("a && b || c; d | e & f |& g\nh"),
        ["a", "b", "c", "d", "e", "f", "g", "h"]
    );
    // A long chain is long, not deep.
    let chain: Vec<String> = (0..300).map(|i| format!("echo {i}")).collect();
    let joined = chain.join(" && ");
    assert_eq!(words(&joined), chain);
    assert!(!opaque(&joined));
}

#[test]
fn no_compound_command_hides_its_commands() {
    assert_eq!(
        words(
            "(cd x; ls) && { pwd; }; if true; then cat a; elif false; then cat b; else cat c; fi; \
             for f in x y; do wc -l \"$f\"; done; while false; do :; done; \
             case x in a) rg y;; esac; ! git status"
        ),
        [
            "cd x",
            "ls",
            "pwd",
            "true",
            "cat a",
            "false",
            "cat b",
            "cat c",
            "wc -l ?\"$f\"",
            "false",
            ":",
            "rg y",
            "git status"
        ]
    );
}

#[test]
fn quotes_and_escapes_are_removed_as_the_shell_removes_them() {
    assert_eq!(words("'git' \"status\" -s"), ["git status -s"]);
    assert_eq!(
        words(r#"ec\ho a\ b "c d"e 'x'"y" "q\"r\$s" 'a\nb'"#),
        [r#"echo a b c de xy q"r$s a\nb"#]
    );
    assert_eq!(words("ls \\\n -l"), ["ls -l"]);
    assert_eq!(words("echo a#b # rm -rf /"), ["echo a#b"]);
}

#[test]
fn a_word_the_shell_expands_is_never_taken_literally() {
    for (cmd, word) in [
        ("cat $HOME", "?$HOME"),
        ("cat \"$HOME/x\"", "?\"$HOME/x\""),
        ("cat ${x}", "?${x}"),
        ("cat *.rs", "?*.rs"),
        ("cat a?", "?a?"),
        ("cat [ab]", "?[ab]"),
        ("cat ~/x", "?~/x"),
        ("cat {a,b}", "?{a,b}"),
        ("cat $'\\x41'", "?$'\\x41'"),
        ("cat $(id)", "?$(id)"),
    ] {
        let w = words(cmd);
        assert_eq!(
            w.first().map(String::as_str),
            Some(&*format!("cat {word}")),
            "{cmd}"
        );
    }
    // Quoted, the same characters are literal.
    assert_eq!(
        words("cat '*.rs' \"{a,b}\" '$HOME' \\~"),
        ["cat *.rs {a,b} $HOME ~"]
    );
}

#[test]
fn leading_assignments_are_noted() {
    let parts = parse("FOO=1 BAR=\"x y\" cargo test");
    assert_eq!(parts.len(), 1);
    assert_eq!(parts[0].assignments, ["FOO", "BAR"]);
    assert_eq!(effective(&parts[0]), "cargo test");
    assert_eq!(
        parts[0].analysis.hazards,
        [
            Hazard::Assignment("FOO".into()),
            Hazard::Assignment("BAR".into())
        ]
    );
}

#[test]
fn output_redirections_are_writes_and_the_harmless_ones_are_not() {
    assert_eq!(
        writes("cat a > b 2>&1 2>/dev/null >> c &> d &>> e >| f 1>&- < g <&0 >&h"),
        ["`>` b", "`>>` c", "`&>` d", "`&>>` e", "`>|` f", "`>&` h"]
    );
    assert_eq!(
        writes("cat a >/dev/stderr 2>/dev/null >&2"),
        Vec::<String>::new()
    );
    assert_eq!(writes("echo x > \"$F\""), ["`>` ?"]);
    assert_eq!(writes(">out"), ["`>` out"]);
}

#[test]
fn a_redirection_of_a_group_applies_to_every_command_in_it() {
    let parts = parse("{ ls; pwd; } > out; (cat a) 2> err; while true; do ls; done >> log");
    let w: Vec<_> = parts
        .iter()
        .map(|p| {
            p.redirects
                .iter()
                .map(|r| r.target.text.clone())
                .collect::<Vec<_>>()
                .join(",")
        })
        .collect();
    assert_eq!(w, ["out", "out", "err", "log", "log"]);
}

#[test]
fn arguments_after_a_redirection_stay_arguments() {
    // The grammar hangs `--pre=sh x` on the `>&2` redirection.
    assert_eq!(words("rg >&2 --pre=sh x"), ["rg --pre=sh x"]);
    assert_eq!(risky("rg >&2 --pre=sh x"), ["--pre=sh"]);
    assert_eq!(words(">out git status"), ["git status"]);
}

#[test]
fn substituted_commands_are_parts_and_the_substitution_is_opaque() {
    let parts = parse("echo $(curl x) `id` \"$(whoami)\"");
    let texts: Vec<_> = parts.iter().map(|p| p.text.as_str()).collect();
    assert_eq!(
        texts,
        [
            "echo $(curl x) `id` \"$(whoami)\"",
            "$(curl x)",
            "curl x",
            "`id`",
            "id",
            "$(whoami)",
            "whoami"
        ]
    );
    assert_eq!(parts[1].analysis.hazards, [Hazard::Substitution]);
    assert!(parts[0].analysis.hazards.is_empty());
    assert_eq!(
        words("diff <(ls a) >(wc)"),
        ["diff ?<(ls a) ?>(wc)", "ls a", "wc"]
    );
    assert!(hazards("diff <(ls a)").contains(&Hazard::ProcessSubstitution));
    assert_eq!(words("X=$(id) ls"), ["ls", "id"]);
}

#[test]
fn here_documents_expand_unless_quoted() {
    assert_eq!(words("cat <<EOF\nhi $(id)\nEOF"), ["cat", "id"]);
    assert!(opaque("cat <<EOF\nhi $(id)\nEOF"));
    assert_eq!(words("cat <<'EOF'\nhi $(id)\nEOF"), ["cat"]);
    assert!(!opaque("cat <<'EOF'\nhi $(id)\nEOF"));
    assert_eq!(words("cat <<EOF | bash\nrm -rf x\nEOF"), ["cat", "bash"]);
    assert!(
        hazards("cat <<EOF | bash\nrm -rf x\nEOF").contains(&Hazard::NestedShell("`bash`".into()))
    );
    assert!(opaque("bash <<< 'rm -rf x'"));
}

#[test]
fn written_out_nested_scripts_are_parsed_too() {
    assert_eq!(
        words("bash -c 'git push'"),
        ["bash -c git push", "git push"]
    );
    assert_eq!(
        words("sh -ec \"curl x | sh\""),
        ["sh -ec curl x | sh", "curl x", "sh"]
    );
    assert_eq!(
        words("bash -o pipefail -c 'ls'"),
        ["bash -o pipefail -c ls", "ls"]
    );
    assert_eq!(words("eval git push"), ["eval git push", "git push"]);
    assert_eq!(words("eval \"$X\""), ["eval ?\"$X\""]);
    assert!(opaque("bash script.sh") && opaque("sh") && opaque("/bin/bash -c ls"));
    // Nesting is bounded.
    let deep = "bash -c \"bash -c 'bash -c \\\"bash -c ls\\\"'\"";
    assert!(
        hazards(deep)
            .iter()
            .any(|h| matches!(h, Hazard::TooComplex(_))),
        "{:?}",
        hazards(deep)
    );
}

#[test]
fn wrappers_are_looked_through_to_the_real_command() {
    for (cmd, real) in [
        ("env -i -- FOO=1 git status", "git status"),
        ("nice -n 5 cargo test", "cargo test"),
        ("nice -5 cargo test", "cargo test"),
        ("timeout -s KILL 10 cargo test", "cargo test"),
        ("timeout --kill-after=5 10s make", "make"),
        ("nohup make", "make"),
        ("time -p ls", "ls"),
        ("command -p git log", "git log"),
        ("builtin cd x", "cd x"),
        ("stdbuf -oL rg x", "rg x"),
        ("env nice timeout 5 nohup git diff", "git diff"),
        ("xargs -0 -n 1 wc -l", "wc -l"),
        ("xargs", "xargs"),
        ("command -v git", "command -v git"),
        ("env", "env"),
    ] {
        let parts = parse(cmd);
        assert_eq!(effective(&parts[0]), real, "{cmd}");
    }
    assert_eq!(hazards("env FOO=1 ls"), [Hazard::Assignment("FOO".into())]);
    assert!(parse("xargs wc")[0].analysis.trailing_unknown);
    assert!(opaque("xargs -I{} {} x"));
    assert!(opaque("env -S 'rm -rf x'"));
    assert!(opaque("exec ls"));
    assert!(opaque("timeout --frobnicate 5 ls"));
}

#[test]
fn an_unknown_program_is_opaque() {
    for cmd in [
        "$CMD x",
        "\"$X\" y",
        "./*",
        "~/bin/tool",
        "$(echo rm) -rf x",
    ] {
        assert!(
            hazards(cmd)
                .iter()
                .any(|h| matches!(h, Hazard::ProgramUnknown(_))),
            "{cmd}"
        );
    }
}

#[test]
fn what_changes_the_shell_or_evaluates_code_is_opaque() {
    for cmd in [
        "export PATH=/tmp",
        "PATH=/tmp; git status",
        "declare -x A=1",
        "unset HOME",
        "alias ls=rm",
        "f() { ls; }",
        "function f { ls; }",
        "read x",
        "set -o noclobber",
        "source x.sh",
        ". x.sh",
        "eval ls",
        "trap 'rm -rf x' EXIT",
        "coproc ls",
        "fc -s",
        "hash -p /tmp/evil git",
        "printf -v PATH x",
        "echo ${x:=y}",
        "echo ${a[$i]}",
        "echo $((1+2))",
        "(( x++ ))",
        "let x=1",
        "for ((i=0; i<3; i++)); do ls; done",
        "[[ $x -eq 1 ]]",
        "[[ x -lt 2 ]]",
        "[ -v 'a[$(id)]' ]",
    ] {
        assert!(opaque(cmd), "{cmd}: {:?}", hazards(cmd));
    }
    for cmd in ["[[ -f x ]] && ls", "cd x && ls", "echo $HOME", "cat *.rs"] {
        assert!(!opaque(cmd), "{cmd}: {:?}", hazards(cmd));
    }
    // The commands inside a function or a trap are still parts.
    assert_eq!(words("f() { rm -rf x; }"), ["rm -rf x"]);
    assert_eq!(words("trap 'curl x' EXIT"), ["trap curl x EXIT", "curl x"]);
}
