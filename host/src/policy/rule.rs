//! Rules over tool names and structured arguments, validated one by one
//! and against each other.
//!
//! Invariants: a [`Rule`] exists only if each of its globs and regexes
//! compiles (the compiled forms live in [`super::matchers`] and the rule
//! index, built once when the policy is parsed); names are unique; no rule
//! is unreachable or contradicts another.
//!
//! Rule A shadows rule B when both list the same tools, A's argument
//! matchers are a subset of B's (identical values), A's `commands` match
//! every command B's match, and A wins whenever both match: A's decision is
//! stronger (deny beats ask beats allow), or equal and A comes first. Then
//! B is unreachable. Two rules with the same tools, the same matchers and
//! the same `commands` but different decisions are contradictory.

use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::ops::Range;

use globset::GlobBuilder;
use regex::Regex;
use serde::Serialize;

use super::command::{self, CommandMatch, SHELL_TOOL};
use super::error::Locator;
use super::protected::trim_dot_slash;
use super::{PolicyError, RuleFile, Verdict};

/// One `[[rule]]`: when a call's tool matches `tools` and every argument
/// matcher matches, the rule's decision applies.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Rule {
    /// Unique name, shown with every decision the rule makes.
    pub name: String,
    /// Tool-name globs; the rule applies to a tool matching any of them.
    /// Default `["*"]`.
    pub tools: Vec<String>,
    /// What the rule decides.
    pub decision: Verdict,
    /// Why, shown to the user and the model.
    pub reason: Option<String>,
    /// Argument name to matcher; all must match (AND).
    pub args: BTreeMap<String, ArgMatcher>,
    /// For a rule with `commands`: the `shell` command parts it decides.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub commands: Option<CommandMatch>,
    /// The plugin the rule's tools belong to, when the policy says (it may
    /// not be installed here; see [`super::PolicyLint`]).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub plugin: Option<String>,
}

/// How one argument is matched. A missing argument, or one that is not a
/// string (or an array of strings, where any element may match), does not
/// match.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum ArgMatcher {
    /// Path globs, any of which may match the lexically normalised argument
    /// (`./a/../b` is `b`). `*` stays within one path component, `**`
    /// crosses components.
    Glob(Vec<String>),
    /// The argument starts with this text, as given.
    Prefix(String),
    /// The regex matches somewhere in the argument; anchor with `^…$`.
    Regex(String),
}

/// Validate one rule from the file: every pattern must compile.
pub(super) fn compile(file: RuleFile, loc: &Locator<'_>) -> Result<Rule, PolicyError> {
    let name = file.name.get_ref().clone();
    let commands = command::compile(
        &name,
        file.decision,
        file.commands,
        file.writes,
        file.env,
        loc,
    )?;
    let tools = match file.tools {
        None if commands.is_some() => vec![SHELL_TOOL.to_string()],
        None => vec!["*".to_string()],
        Some(t) => {
            let span = t.span();
            let tools = t.into_inner();
            if tools.is_empty() {
                return Err(loc.invalid(
                    span,
                    format!("rule `{name}`: `tools` is empty, so the rule can never apply; list tool names or globs, or leave `tools` out for all tools"),
                ));
            }
            for t in &tools {
                if let Err(e) = globset::Glob::new(t) {
                    return Err(loc.invalid(
                        span,
                        format!(
                            "rule `{name}`: bad glob `{t}` in `tools`: {}; fix the pattern",
                            e.kind()
                        ),
                    ));
                }
            }
            let shell = |t: &String| {
                globset::Glob::new(t).is_ok_and(|g| g.compile_matcher().is_match(SHELL_TOOL))
            };
            if commands.is_some() && !tools.iter().any(shell) {
                return Err(loc.invalid(
                    span,
                    format!("rule `{name}`: `commands` decide the parts of `{SHELL_TOOL}` command lines, but `tools` never matches `{SHELL_TOOL}`; add it, or leave `tools` out"),
                ));
            }
            tools
        }
    };
    let mut args = BTreeMap::new();
    for (key, spanned) in file.args {
        let span = spanned.span();
        let m = spanned.into_inner();
        let field = format!("args.{key}");
        let matcher = match (m.glob, m.prefix, m.regex) {
            (Some(globs), None, None) => {
                let globs = globs.into_vec();
                check_globs(&globs).map_err(|(pat, msg)| {
                    loc.invalid(
                        span.clone(),
                        format!(
                            "rule `{name}`: bad glob `{pat}` in `{field}`: {msg}; fix the pattern"
                        ),
                    )
                })?;
                ArgMatcher::Glob(globs)
            }
            (None, Some(prefix), None) => ArgMatcher::Prefix(prefix),
            (None, None, Some(re)) => {
                Regex::new(&re).map_err(|e| {
                    let msg = e
                        .to_string()
                        .split_whitespace()
                        .collect::<Vec<_>>()
                        .join(" ");
                    loc.invalid(
                        span.clone(),
                        format!("rule `{name}`: bad regex in `{field}`: {msg}; fix the pattern"),
                    )
                })?;
                ArgMatcher::Regex(re)
            }
            (None, None, None)
            | (Some(_), Some(_), _)
            | (Some(_), _, Some(_))
            | (_, Some(_), Some(_)) => {
                return Err(loc.invalid(
                    span,
                    format!("rule `{name}`: the matcher for `{field}` needs exactly one of `glob`, `prefix` or `regex`"),
                ));
            }
        };
        args.insert(key, matcher);
    }
    Ok(Rule {
        name,
        tools,
        decision: file.decision,
        reason: file.reason,
        args,
        commands,
        plugin: file.plugin,
    })
}

/// Check that every glob compiles; on failure, the pattern and why.
fn check_globs(globs: &[String]) -> Result<(), (String, String)> {
    if globs.is_empty() {
        return Err((String::new(), "the list is empty".into()));
    }
    for g in globs {
        GlobBuilder::new(trim_dot_slash(g))
            .literal_separator(true)
            .build()
            .map_err(|e| (g.clone(), e.kind().to_string()))?;
    }
    Ok(())
}

/// Check `rules`; `spans[i]` is where rule `i`'s name is written.
pub(super) fn check_rules(
    rules: &[Rule],
    spans: &[Range<usize>],
    loc: &Locator<'_>,
) -> Result<(), PolicyError> {
    let span_of = |i: usize| spans.get(i).cloned().unwrap_or(0..0);
    let line_of = |i: usize| loc.line_of(&span_of(i));

    let mut seen: HashMap<&str, usize> = HashMap::new();
    for (i, rule) in rules.iter().enumerate() {
        if let Some(&first) = seen.get(rule.name.as_str()) {
            return Err(loc.invalid(
                span_of(i),
                format!(
                    "duplicate rule name `{}` (first used on line {}); give each rule a unique name",
                    rule.name,
                    line_of(first)
                ),
            ));
        }
        seen.insert(&rule.name, i);
    }

    let mut groups: HashMap<BTreeSet<&str>, Vec<usize>> = HashMap::new();
    for (i, rule) in rules.iter().enumerate() {
        let tools = rule.tools.iter().map(String::as_str).collect();
        groups.entry(tools).or_default().push(i);
    }
    let mut problems: Vec<(usize, String)> = Vec::new();
    for members in groups.values() {
        for &b in members {
            if let Some(problem) = first_problem(rules, members, b, &line_of) {
                problems.push((b, problem));
                break;
            }
        }
    }
    match problems.into_iter().min_by_key(|(b, _)| *b) {
        Some((b, message)) => Err(loc.invalid(span_of(b), message)),
        None => Ok(()),
    }
}

/// Why rule `b` is contradictory or unreachable, given the rules `members`
/// that list the same tools.
fn first_problem(
    rules: &[Rule],
    members: &[usize],
    b: usize,
    line_of: &dyn Fn(usize) -> usize,
) -> Option<String> {
    let rb = rules.get(b)?;
    for &other in members.iter().filter(|&&a| a != b) {
        let (a, b) = (other.min(b), other.max(b));
        let (ra, rb) = (rules.get(a)?, rules.get(b)?);
        if ra.args == rb.args && command::same_commands(ra, rb) && ra.decision != rb.decision {
            return Some(format!(
                "rules `{}` (line {}) and `{}` match exactly the same calls but decide {} and {}; \
                 keep one of them, or give one a narrower argument matcher",
                ra.name,
                line_of(a),
                rb.name,
                ra.decision,
                rb.decision
            ));
        }
    }
    for &a in members.iter().filter(|&&a| a != b) {
        let ra = rules.get(a)?;
        let subset =
            ra.args.iter().all(|(k, m)| rb.args.get(k) == Some(m)) && command::covers(ra, rb);
        let a_wins = ra.decision.strength() > rb.decision.strength()
            || (ra.decision == rb.decision && a < b);
        if subset && a_wins {
            return Some(format!(
                "rule `{}` can never decide: rule `{}` (line {}) applies to the same tools \
                 with {} of its argument matchers and takes precedence \
                 (deny beats ask beats allow, then the earlier rule); remove `{}` or narrow `{}`",
                rb.name,
                ra.name,
                line_of(a),
                if ra.args == rb.args {
                    "the same"
                } else {
                    "a subset"
                },
                rb.name,
                ra.name
            ));
        }
    }
    None
}
