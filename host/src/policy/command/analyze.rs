//! What makes a command more than its prefix: programs that run code
//! Warden cannot see, builtins that change the shell for later commands,
//! and (in [`super::wrappers`] and [`super::options`]) the wrappers looked
//! through and the options that turn a reader into a writer or an
//! executor: together, the one list.
//! `policies/README.md` ("What a prefix cannot allow") lists the same.
//!
//! Invariant: every part gets every hazard that applies to it; an
//! [opaque](Hazard::opaque) hazard is never allowed by a rule, and any
//! other only by an allow rule that names it (its prefix, `writes` or
//! `env`).

use super::hazard::{Analysis, Hazard, basename};
use super::options::program_options;
use super::redirect::{Redirect, RedirectKind};
use super::word::Word;
use super::wrappers::wrapper;

/// Redirection targets that write nowhere.
const HARMLESS_TARGETS: &[&str] = &["/dev/null", "/dev/stdout", "/dev/stderr"];

/// Nested shells.
const SHELLS: &[&str] = &[
    "sh", "bash", "dash", "zsh", "ksh", "mksh", "ash", "yash", "fish", "csh", "tcsh",
];

/// Builtins that change the shell for the commands after them.
const SHELL_STATE: &[&str] = &[
    "export",
    "declare",
    "typeset",
    "local",
    "readonly",
    "unset",
    "set",
    "shopt",
    "alias",
    "unalias",
    "hash",
    "enable",
    "bind",
    "complete",
    "compopt",
    "read",
    "mapfile",
    "readarray",
    "getopts",
    "let",
    "trap",
    "ulimit",
    "umask",
];

/// Programs that run code the command line does not show.
/// (`exec` is looked through as a wrapper, with the same hazard.)
const EVALUATORS: &[&str] = &["eval", "source", ".", "fc", "coproc"];

/// Look through a part's wrappers and collect its hazards.
pub(crate) fn analyze(words: &[Word], assignments: &[String], redirects: &[Redirect]) -> Analysis {
    let mut a = Analysis::default();
    a.hazards
        .extend(assignments.iter().cloned().map(Hazard::Assignment));
    for r in redirects {
        match (&r.kind, r.target.literal) {
            (RedirectKind::Write, true) if HARMLESS_TARGETS.contains(&r.target.text.as_str()) => {}
            (RedirectKind::Write, true) => a.hazards.push(Hazard::Write {
                target: r.target.text.clone(),
                how: format!("`{}`", r.how),
            }),
            (RedirectKind::Write, false) => {
                a.hazards.push(Hazard::WriteUnknown(format!("`{}`", r.how)))
            }
            (RedirectKind::Read | RedirectKind::Duplicate, _) => {}
        }
    }
    let mut at = 0;
    while let Some(program) = words.get(at) {
        a.views.push(at);
        if !program.literal {
            a.hazards.push(Hazard::ProgramUnknown(program.text.clone()));
            return a;
        }
        let name = basename(&program.text);
        let args = &words[at + 1..];
        match wrapper(name, args, &mut a) {
            Ok(Some(inner)) => at += 1 + inner,
            Ok(None) => break,
            Err(h) => {
                a.hazards.push(h);
                return a;
            }
        }
    }
    let Some(&start) = a.views.last() else {
        return a;
    };
    let (Some(program), Some(args)) = (words.get(start), words.get(start + 1..)) else {
        return a;
    };
    let name = basename(&program.text);
    if SHELLS.contains(&name) {
        a.hazards
            .push(Hazard::NestedShell(format!("`{}`", program.text)));
        a.scripts.extend(shell_script(args));
    } else if EVALUATORS.contains(&name) {
        a.hazards.push(Hazard::Evaluates(format!("`{name}`")));
        if name == "eval" && args.iter().all(|w| w.literal) {
            let script: Vec<&str> = args.iter().map(|w| w.text.as_str()).collect();
            a.scripts.push(script.join(" "));
        }
    } else if SHELL_STATE.contains(&name) {
        a.hazards.push(Hazard::ChangesShell(format!("`{name}`")));
        if name == "trap"
            && let Some(action) = args.iter().find(|w| !w.text.starts_with('-'))
            && action.literal
        {
            a.scripts.push(action.text.clone());
        }
    }
    let checked = program_options(name, args, &mut a.hazards);
    if checked && (a.trailing_unknown || args.iter().any(|w| !w.literal)) {
        a.hazards.push(Hazard::ArgumentsUnknown(name.to_string()));
    }
    a
}

/// The script of `bash -c 'script'`, if written out.
fn shell_script(args: &[Word]) -> Option<String> {
    let mut wants_script = false;
    let mut k = 0;
    while let Some(w) = args.get(k) {
        let t = w.text.as_str();
        if t == "--" {
            k += 1;
            break;
        }
        if !(t.starts_with('-') || t.starts_with('+')) || t.len() < 2 {
            break;
        }
        if t.starts_with("--") {
            k += if matches!(t, "--rcfile" | "--init-file") {
                2
            } else {
                1
            };
            continue;
        }
        wants_script |= t.contains('c');
        k += if t.contains(['o', 'O']) { 2 } else { 1 };
    }
    let script = args.get(k)?;
    (wants_script && script.literal).then(|| script.text.clone())
}

/// Whether every part running `program` has an opaque hazard, so that no
/// rule can allow it.
pub(crate) fn always_asks(program: &str) -> bool {
    let name = basename(program);
    SHELLS.contains(&name)
        || EVALUATORS.contains(&name)
        || SHELL_STATE.contains(&name)
        || name == "exec"
}
