//! The hazards of a part: what about a command its prefix alone cannot
//! vouch for, and how a part was looked through.

use super::word::Word;

/// Something about a part that a prefix alone cannot vouch for.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Hazard {
    /// The command line, or this part of it, does not parse completely.
    Unparsed(String),
    /// Longer, more deeply nested or with more commands than Warden checks.
    TooComplex(String),
    /// `$(…)` or backticks: output becomes part of the command line.
    Substitution,
    /// `<(…)` or `>(…)`.
    ProcessSubstitution,
    /// `$((…))`, `((…))`, `for ((…))`, `let`, `[[ a -eq b ]]`, `${a[i]}`:
    /// arithmetic evaluates variables' contents, which can run commands.
    Arithmetic,
    /// The program is known only when the command runs (`$CMD`, a glob).
    ProgramUnknown(String),
    /// A nested shell (`bash -c`, `sh script.sh`, `bash <<EOF`).
    NestedShell(String),
    /// Runs code the line does not show (`eval`, `source`, `exec`, …).
    Evaluates(String),
    /// Changes the shell for the commands after it (`export`, `alias`,
    /// a function definition, a bare assignment, …).
    ChangesShell(String),
    /// A program whose options are checked has an argument known only when
    /// the command runs, which could be any option.
    ArgumentsUnknown(String),
    /// Writes to a file named only when the command runs.
    WriteUnknown(String),
    /// Sets a variable for the command: `VAR=value cmd`, `env VAR=value cmd`.
    Assignment(String),
    /// An option that makes the program write or run something; allowed
    /// only by a prefix that includes it.
    RiskyOption {
        /// The program, as its basename.
        program: String,
        /// The option as written.
        option: String,
        /// Its position among the command's words (the program is 0).
        index: usize,
        /// What it does, e.g. "runs a command for each file".
        effect: &'static str,
    },
    /// Writes a named file; allowed by an allow rule's `writes`.
    Write {
        /// The file, as written.
        target: String,
        /// How: `>`, `>>`, `tee`, `sort -o`, …
        how: String,
    },
}

impl Hazard {
    /// Whether no rule can allow it: what runs is not known from the text.
    pub(crate) fn opaque(&self) -> bool {
        match self {
            Hazard::Unparsed(_)
            | Hazard::TooComplex(_)
            | Hazard::Substitution
            | Hazard::ProcessSubstitution
            | Hazard::Arithmetic
            | Hazard::ProgramUnknown(_)
            | Hazard::NestedShell(_)
            | Hazard::Evaluates(_)
            | Hazard::ChangesShell(_)
            | Hazard::ArgumentsUnknown(_)
            | Hazard::WriteUnknown(_) => true,
            Hazard::Assignment(_) | Hazard::RiskyOption { .. } | Hazard::Write { .. } => false,
        }
    }

    /// One sentence for the user and the model.
    pub(crate) fn describe(&self) -> String {
        match self {
            Hazard::Unparsed(why) => format!("the command line cannot be checked: {why}"),
            Hazard::TooComplex(why) => format!("the command line is too complex to check: {why}"),
            Hazard::Substitution => {
                "a command substitution's output becomes part of the command line, \
                 which cannot be checked before it runs"
                    .into()
            }
            Hazard::ProcessSubstitution => {
                "a process substitution runs a command whose input or output the policy \
                 cannot follow"
                    .into()
            }
            Hazard::Arithmetic => {
                "shell arithmetic evaluates variables' contents, which can run commands".into()
            }
            Hazard::ProgramUnknown(word) => {
                format!("the program `{word}` is known only when the command runs")
            }
            Hazard::NestedShell(what) => format!("{what} runs a nested shell"),
            Hazard::Evaluates(what) => format!("{what} runs commands the line does not show"),
            Hazard::ChangesShell(what) => {
                format!("{what} changes the shell for the commands after it")
            }
            Hazard::ArgumentsUnknown(program) => format!(
                "an argument of `{program}` is known only when the command runs, and could be \
                 an option that writes files or runs commands"
            ),
            Hazard::WriteUnknown(how) => {
                format!("{how} writes to a file named only when the command runs")
            }
            Hazard::Assignment(name) => format!(
                "sets `{name}` for the command (list it in an allow rule's `env` to allow that)"
            ),
            Hazard::RiskyOption {
                program,
                option,
                effect,
                ..
            } => format!(
                "gives `{program}` `{option}`, which {effect} (a rule allows that only if its \
                 prefix includes the option)"
            ),
            Hazard::Write { target, how } => format!(
                "writes to `{target}` with {how} (list it in an allow rule's `writes` to allow \
                 that)"
            ),
        }
    }
}

/// How one part was looked through.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub(crate) struct Analysis {
    /// Where each command the part runs starts among its words, outermost
    /// first: `[0, 2]` for `nice -5 cargo test`. Allow rules match the
    /// last; deny and ask rules any of them.
    pub views: Vec<usize>,
    /// The last command also gets arguments read from input (`xargs`).
    pub trailing_unknown: bool,
    /// Scripts the part runs that are written out (`bash -c '…'`,
    /// `eval …`): they are parsed and decided as parts too.
    pub scripts: Vec<String>,
    /// Everything a prefix alone cannot vouch for.
    pub hazards: Vec<Hazard>,
}

/// The last component of a program named by path.
pub(crate) fn basename(program: &str) -> &str {
    program.rsplit('/').next().unwrap_or(program)
}

/// The write hazard of an option whose value names the file written.
pub(crate) fn write_to(value: Option<&Word>, how: &str) -> Hazard {
    match value {
        Some(w) if w.literal => Hazard::Write {
            target: w.text.clone(),
            how: how.to_string(),
        },
        Some(_) | None => Hazard::WriteUnknown(how.to_string()),
    }
}

/// Whether `s` is a shell variable name.
pub(crate) fn is_name(s: &str) -> bool {
    let mut chars = s.chars();
    chars
        .next()
        .is_some_and(|c| c.is_ascii_alphabetic() || c == '_')
        && chars.all(|c| c.is_ascii_alphanumeric() || c == '_')
}
