//! `commands` rules: a `[[rule]]` with `commands = ["git status", …]`
//! decides the parts of a `shell` command line that start with one of its
//! prefixes; an allow rule may also name the files its commands write
//! (`writes`) and the variables they set (`env`).
//!
//! Invariants: a prefix is plain words and matches whole words, the
//! program exactly as written (`/usr/bin/git` is not `git`); a word known
//! only when the command runs never matches a prefix word, but may, so a
//! deny or ask rule that could match still counts; `writes` and `env`
//! appear only on allow rules with `commands`.

use globset::{GlobBuilder, GlobSet, GlobSetBuilder};
use serde::Serialize;
use toml::Spanned;

use super::super::error::{Locator, PatternError};
use super::super::protected::{normalized, trim_dot_slash};
use super::super::{PolicyError, Rule, Verdict};
use super::analyze::always_asks;
use super::hazard::{Hazard, is_name};
use super::word::{Word, prefix_words};

/// What a rule with `commands` matches, and what its commands may do
/// besides.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct CommandMatch {
    /// Prefixes of whole words, e.g. `git status`; a part matches if its
    /// words start with one of them.
    pub prefixes: Vec<String>,
    /// Globs of files the commands may write, by redirection or by an
    /// output option (allow rules only).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub writes: Vec<String>,
    /// Variables the commands may be given (`VAR=value cmd`; allow rules
    /// only).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub env: Vec<String>,
}

/// A list of strings in a policy file, each with its place.
pub(in crate::policy) type SpannedList = Spanned<Vec<Spanned<String>>>;

/// Validate the `commands`, `writes` and `env` of rule `name`.
pub(in crate::policy) fn compile(
    name: &str,
    decision: Verdict,
    commands: Option<SpannedList>,
    writes: Option<SpannedList>,
    env: Option<SpannedList>,
    loc: &Locator<'_>,
) -> Result<Option<CommandMatch>, PolicyError> {
    let Some(commands) = commands else {
        if let Some((field, list)) = [("writes", &writes), ("env", &env)]
            .into_iter()
            .find_map(|(f, l)| l.as_ref().map(|l| (f, l)))
        {
            return Err(loc.invalid(
                list.span(),
                format!(
                    "rule `{name}`: `{field}` widens what a `commands` rule allows; \
                     add `commands`, or remove `{field}`"
                ),
            ));
        }
        return Ok(None);
    };
    if commands.get_ref().is_empty() {
        return Err(loc.invalid(
            commands.span(),
            format!("rule `{name}`: `commands` is empty, so the rule can never apply; list prefixes such as \"git status\""),
        ));
    }
    let mut prefixes: Vec<String> = Vec::new();
    for p in commands.into_inner() {
        let words = prefix_words(p.get_ref()).map_err(|msg| {
            loc.invalid(
                p.span(),
                format!(
                    "rule `{name}`: bad prefix `{}` in `commands`: {msg}",
                    p.get_ref()
                ),
            )
        })?;
        let joined = words.join(" ");
        if prefixes.contains(&joined) {
            return Err(loc.invalid(
                p.span(),
                format!("rule `{name}`: prefix `{joined}` is listed twice in `commands`"),
            ));
        }
        if decision == Verdict::Allow
            && let Some(program) = words.first().filter(|w| always_asks(w))
        {
            return Err(loc.invalid(
                p.span(),
                format!(
                    "rule `{name}`: `{program}` can never be allowed by a rule: it runs code or \
                     changes the shell in ways a prefix cannot check (see policies/README.md); \
                     remove `{joined}`, or make the rule ask or deny"
                ),
            ));
        }
        prefixes.push(joined);
    }
    let mut out = CommandMatch {
        prefixes,
        writes: Vec::new(),
        env: Vec::new(),
    };
    for (field, list) in [("writes", writes), ("env", env)] {
        let Some(list) = list else { continue };
        if decision != Verdict::Allow {
            return Err(loc.invalid(
                list.span(),
                format!(
                    "rule `{name}`: `{field}` only widens an allow rule, and this rule decides \
                     {decision}; remove `{field}`"
                ),
            ));
        }
        if list.get_ref().is_empty() {
            return Err(loc.invalid(
                list.span(),
                format!("rule `{name}`: `{field}` is empty; remove it or list what it allows"),
            ));
        }
        for item in list.into_inner() {
            let span = item.span();
            let value = item.into_inner();
            let problem = if field == "writes" {
                write_glob(&value).err().map(|e| e.to_string())
            } else {
                (!is_name(&value)).then(|| {
                    "not a variable name (letters, digits and `_`, not starting with a digit)"
                        .to_string()
                })
            };
            if let Some(problem) = problem {
                return Err(loc.invalid(
                    span,
                    format!("rule `{name}`: bad `{value}` in `{field}`: {problem}"),
                ));
            }
            if field == "writes" {
                out.writes.push(value);
            } else {
                out.env.push(value);
            }
        }
    }
    Ok(Some(out))
}

fn write_glob(pattern: &str) -> Result<globset::Glob, PatternError> {
    GlobBuilder::new(trim_dot_slash(pattern))
        .literal_separator(true)
        .build()
        .map_err(PatternError::WriteGlob)
}

/// How well a rule's prefixes match a command's words. Ordered: a longer
/// definite match is better than a shorter one, any definite match better
/// than a possible one.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
pub(super) enum Match {
    /// No prefix matches.
    No,
    /// A prefix could match: a word it needs is known only when the
    /// command runs.
    Maybe(String),
    /// A prefix of this many words matches.
    Definite(usize),
}

/// Every rule's `commands`, compiled.
#[derive(Debug, Clone, Default)]
pub(in crate::policy) struct CommandRules {
    rules: Vec<Option<Compiled>>,
}

/// One rule's `commands`, compiled.
#[derive(Debug, Clone)]
pub(super) struct Compiled {
    prefixes: Vec<Vec<String>>,
    writes: GlobSet,
    env: Vec<String>,
}

impl CommandRules {
    /// Compile the `commands` of `rules`, already validated one by one.
    pub(in crate::policy) fn build(rules: &[Rule]) -> Result<CommandRules, PatternError> {
        let mut out = Vec::with_capacity(rules.len());
        for rule in rules {
            let Some(m) = &rule.commands else {
                out.push(None);
                continue;
            };
            let mut writes = GlobSetBuilder::new();
            for w in &m.writes {
                writes.add(write_glob(w)?);
            }
            out.push(Some(Compiled {
                prefixes: m
                    .prefixes
                    .iter()
                    .map(|p| p.split_whitespace().map(str::to_string).collect())
                    .collect(),
                writes: writes.build()?,
                env: m.env.clone(),
            }));
        }
        Ok(CommandRules { rules: out })
    }

    /// Rule `rule`'s `commands`, if it has any.
    pub(super) fn get(&self, rule: usize) -> Option<&Compiled> {
        self.rules.get(rule).and_then(Option::as_ref)
    }
}

impl Compiled {
    /// The best match of any prefix against `words` (a command, its
    /// program first); `trailing_unknown`: more words follow that are
    /// known only when the command runs.
    pub(super) fn matches(&self, words: &[Word], trailing_unknown: bool) -> Match {
        self.prefixes
            .iter()
            .map(|p| prefix_match(p, words, trailing_unknown))
            .max()
            .unwrap_or(Match::No)
    }

    /// Whether this allow rule, matched by a prefix of `matched` words,
    /// allows `hazard`.
    pub(super) fn covers(&self, hazard: &Hazard, matched: usize) -> bool {
        match hazard {
            Hazard::Assignment(name) => self.env.contains(name),
            Hazard::RiskyOption { index, .. } => *index < matched,
            Hazard::Write { target, .. } => self.writes.is_match(normalized(target).as_ref()),
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
            | Hazard::WriteUnknown(_) => false,
        }
    }
}

fn prefix_match(prefix: &[String], words: &[Word], trailing_unknown: bool) -> Match {
    for (j, p) in prefix.iter().enumerate() {
        match words.get(j) {
            Some(w) if !w.literal => return Match::Maybe(prefix.join(" ")),
            Some(w) if w.text == *p => {}
            Some(_) => return Match::No,
            None if trailing_unknown => return Match::Maybe(prefix.join(" ")),
            None => return Match::No,
        }
    }
    Match::Definite(prefix.len())
}

/// Whether rules `a` and `b` match exactly the same command parts (both
/// without `commands`, or with the same prefixes).
pub(in crate::policy) fn same_commands(a: &Rule, b: &Rule) -> bool {
    match (&a.commands, &b.commands) {
        (None, None) => true,
        (Some(x), Some(y)) => {
            let mut x: Vec<&String> = x.prefixes.iter().collect();
            let mut y: Vec<&String> = y.prefixes.iter().collect();
            x.sort();
            y.sort();
            x == y
        }
        (None, Some(_)) | (Some(_), None) => false,
    }
}

/// Whether rule `a` matches every command part rule `b` matches (their
/// tools and argument matchers aside), and, when both allow, allows at
/// least what `b` allows besides.
pub(in crate::policy) fn covers(a: &Rule, b: &Rule) -> bool {
    let (x, y) = match (&a.commands, &b.commands) {
        (None, _) => return true,
        (Some(_), None) => return false,
        (Some(x), Some(y)) => (x, y),
    };
    let extends = |long: &str, short: &str| {
        let mut long = long.split_whitespace();
        short.split_whitespace().all(|w| long.next() == Some(w))
    };
    let matched = y
        .prefixes
        .iter()
        .all(|pb| x.prefixes.iter().any(|pa| extends(pb, pa)));
    let widens = a.decision == Verdict::Allow
        && b.decision == Verdict::Allow
        && (y.writes.iter().any(|w| !x.writes.contains(w))
            || y.env.iter().any(|e| !x.env.contains(e)));
    matched && !widens
}
