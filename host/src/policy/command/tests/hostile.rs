//! Input written to confuse the parser, or to make it work forever, is
//! opaque, never allowed by accident, and handled in bounded time.

use std::time::{Duration, Instant};

use super::super::parse::MAX_COMMAND_BYTES;
use super::*;

fn unparsed(cmd: &str) -> bool {
    hazards(cmd)
        .iter()
        .any(|h| matches!(h, Hazard::Unparsed(_)))
}

#[test]
fn unterminated_quotes_and_bad_syntax_are_opaque() {
    for cmd in [
        "echo 'abc",
        "echo \"abc",
        "echo $(ls",
        "if true; then ls",
        "ls &&",
        "cat <<EOF -n && rm x\nbody\nEOF",
        "a <> b",
    ] {
        assert!(unparsed(cmd), "{cmd:?}: {:?}", parse(cmd));
    }
    // What bash refuses to run is harmless; what it runs is seen.
    assert_eq!(words("ls;;"), ["ls"]);
    // A carriage return ends no command in bash (`ls\r` is not found),
    // but the grammar splits there: the split never hides a command.
    assert_eq!(words("ls\r\ngit push"), ["ls", "git push"]);
}

#[test]
fn here_documents_end_where_bash_ends_them() {
    // Commands after the delimiter run, however it is quoted or indented.
    for cmd in [
        "cat <<-EOF\n\tx\n\tEOF\nrm -rf x",
        "cat <<'EOF'\nEOF\nrm -rf x",
        "cat <<\"EOF\"\nEOF\nrm -rf x",
        "cat <<E\\OF\nx\nEOF\nrm -rf x",
        "cat << EOF\nx\nEOF\nrm -rf x",
        "x=$(cat <<EOF\n)\nEOF\n); rm -rf x",
    ] {
        assert!(
            words(cmd).contains(&"rm -rf x".to_string()),
            "{cmd:?}: {:?}",
            words(cmd)
        );
    }
    // A command the grammar cannot place is opaque.
    assert!(unparsed("cat <<EOF; rm -rf x\nbody\nEOF"));
}

#[test]
fn commands_inside_broken_syntax_are_still_parts() {
    // A deny rule must still see `git push` in a line that does not parse.
    let w = words("git push; echo 'unterminated");
    assert_eq!(w.first().map(String::as_str), Some("git push"), "{w:?}");
}

#[test]
fn hidden_options_cannot_reach_a_checked_program() {
    for cmd in [
        "rg x $'--pre=sh'",
        "rg x {--pre=sh,y}",
        "rg x *",
        "rg x \"$OPT\"",
        "find . $ACTION",
        "git $(echo push)",
        "echo --pre=sh | xargs rg x",
    ] {
        assert!(
            hazards(cmd)
                .iter()
                .any(|h| matches!(h, Hazard::ArgumentsUnknown(_))),
            "{cmd}: {:?}",
            hazards(cmd)
        );
    }
    // A program without risky options may take unknown arguments.
    assert!(!opaque("cat *.rs \"$F\""));
}

#[test]
fn nul_bytes_and_odd_characters_do_not_break_the_parse() {
    for cmd in [
        "ls\0rm -rf x",
        "echo héllo 🦀",
        "\u{7}",
        "''",
        "\"\"",
        "\\",
        ";",
        "&&",
    ] {
        let _ = parse(cmd);
    }
    assert_eq!(words("echo héllo 🦀"), ["echo héllo 🦀"]);
    assert!(parse("").is_empty());
    assert!(parse("   # only a comment").is_empty());
}

#[test]
fn very_long_input_is_refused_in_bounded_time() {
    let long = "a ".repeat(MAX_COMMAND_BYTES);
    let start = Instant::now();
    let parts = parse(&long);
    assert_eq!(parts.len(), 1);
    assert!(matches!(
        parts[0].analysis.hazards[0],
        Hazard::TooComplex(_)
    ));
    assert!(parts[0].text.chars().count() <= 201);

    // Just under the limit: many commands, capped.
    let many = "ls; ".repeat(MAX_COMMAND_BYTES / 4 - 1);
    let parts = parse(&many);
    assert!(
        parts
            .last()
            .is_some_and(|p| matches!(p.analysis.hazards.first(), Some(Hazard::TooComplex(_))))
    );
    assert!(parts.len() <= 600);
    assert!(
        start.elapsed() < Duration::from_secs(5),
        "{:?}",
        start.elapsed()
    );
}

#[test]
fn deep_nesting_is_refused_without_exhausting_the_stack() {
    let start = Instant::now();
    for (open, close) in [
        ("(", ")"),
        ("$(", ")"),
        ("{ ", "; }"),
        ("`", "`"),
        ("\"$(", ")\""),
    ] {
        let n = MAX_COMMAND_BYTES / (open.len() + close.len() + 1) - 4;
        let cmd = format!("{}ls{}", open.repeat(n), close.repeat(n));
        assert!(cmd.len() <= MAX_COMMAND_BYTES);
        assert!(opaque(&cmd), "{open}…{close}");
    }
    for (repeated, end) in [
        ("! ", "ls"),
        ("if true; then ", "ls; fi"),
        ("cat <<A ", "\nA"),
        ("ls >a ", ""),
        ("a && ", "b"),
        ("x | ", "y"),
    ] {
        let n = MAX_COMMAND_BYTES / (repeated.len() + end.len()) - 4;
        let cmd = if end == "ls; fi" {
            format!("{}ls{}", repeated.repeat(n), "; fi".repeat(n))
        } else {
            format!("{}{end}", repeated.repeat(n))
        };
        assert!(cmd.len() <= MAX_COMMAND_BYTES, "{repeated}");
        let _ = parse(&cmd);
    }
    assert!(
        start.elapsed() < Duration::from_secs(10),
        "{:?}",
        start.elapsed()
    );
}
