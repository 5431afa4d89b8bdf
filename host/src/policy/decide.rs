//! One decision: protected paths first, then the rules (deny beats ask
//! beats allow, the earliest rule of a kind decides), then the mode; a
//! non-interactive policy turns every ask into a deny. A `shell` call is
//! decided command by command ([`super::command`]).
//!
//! Invariant: only the rules one of whose `tools` globs matches the tool
//! are evaluated, found through [`RuleIndex`] without scanning every rule,
//! and they are visited in file order.

use std::collections::HashMap;

use globset::{Glob, GlobSet, GlobSetBuilder};

use super::error::PatternError;
use super::{CallFacts, DecidedBy, Decision, PROTECTED_RULE, Policy, Rule, Verdict, command};

/// The reason given when a non-interactive policy refuses what would ask.
const NON_INTERACTIVE: &str = "would ask, but this policy is non-interactive";

impl Policy {
    /// Decide `call`. Never fails: every call gets exactly one decision.
    pub fn decide(&self, call: &CallFacts<'_>) -> Decision {
        if call.tool == command::SHELL_TOOL {
            return self.finish(self.decide_shell(call));
        }
        let decision = self
            .protected_decision(call)
            .or_else(|| self.rule_decision(call))
            .unwrap_or_else(|| {
                let (verdict, reason) = self.mode.fallback(&call.annotations);
                Decision {
                    verdict,
                    by: DecidedBy::Mode(self.mode),
                    reason: reason.map(str::to_string),
                    parts: Vec::new(),
                }
            });
        self.finish(decision)
    }

    /// Deny a call that would write (or, when protected paths are not
    /// readable, read) a protected path.
    fn protected_decision(&self, call: &CallFacts<'_>) -> Option<Decision> {
        let read_only = call.annotations.read_only;
        if read_only && self.protected.readable {
            return None;
        }
        let path = self.protected.first_in(call.input)?;
        Some(protected_denial(path, read_only))
    }

    /// The strongest matching rule, the earliest among equals.
    fn rule_decision(&self, call: &CallFacts<'_>) -> Option<Decision> {
        let candidates = self.index.candidates(call.tool);
        let mut hits = self.matchers.evaluate(call.input);
        let mut first_ask = None;
        let mut first_allow = None;
        for i in candidates.iter() {
            let Some(rule) = self.rules.get(i) else {
                continue;
            };
            if rule.commands.is_some() {
                continue; // decides parts of `shell` command lines only
            }
            let undecided = match rule.decision {
                Verdict::Deny => true,
                Verdict::Ask => first_ask.is_none(),
                Verdict::Allow => first_ask.is_none() && first_allow.is_none(),
            };
            if !undecided || !hits.rule_matches(i) {
                continue;
            }
            match rule.decision {
                Verdict::Deny => return Some(by_rule(i, rule)),
                Verdict::Ask => {
                    first_ask.get_or_insert((i, rule));
                }
                Verdict::Allow => {
                    first_allow.get_or_insert((i, rule));
                }
            }
        }
        first_ask.or(first_allow).map(|(i, rule)| by_rule(i, rule))
    }

    /// Apply `non_interactive`: nobody can answer, so ask means deny.
    fn finish(&self, decision: Decision) -> Decision {
        match decision.verdict {
            Verdict::Ask if self.non_interactive => Decision {
                verdict: Verdict::Deny,
                reason: Some(match decision.reason {
                    Some(r) => format!("{NON_INTERACTIVE} ({r})"),
                    None => NON_INTERACTIVE.to_string(),
                }),
                by: decision.by,
                parts: decision.parts,
            },
            Verdict::Allow | Verdict::Ask | Verdict::Deny => decision,
        }
    }
}

/// The decision of rule `index`.
fn by_rule(index: usize, rule: &Rule) -> Decision {
    Decision {
        verdict: rule.decision,
        by: DecidedBy::Rule {
            index: Some(index),
            name: rule.name.clone(),
        },
        reason: rule.reason.clone(),
        parts: Vec::new(),
    }
}

/// The denial of a call that would write (or, when protected paths are not
/// readable, read) the protected `path`.
pub(super) fn protected_denial(path: &str, read_only: bool) -> Decision {
    let what = if read_only { "read" } else { "write" };
    Decision {
        verdict: Verdict::Deny,
        by: DecidedBy::Rule {
            index: None,
            name: PROTECTED_RULE.to_string(),
        },
        reason: Some(format!(
            "`{path}` is a protected path, which tools may not {what}; \
             only the user can change it (see [protected] in the policy)"
        )),
        parts: Vec::new(),
    }
}

/// Rules indexed by exact tool name, by `*`, and by the other globs.
#[derive(Debug, Clone)]
pub(super) struct RuleIndex {
    /// How many rules there are.
    len: usize,
    /// Tool name to the rules that list it literally.
    exact: HashMap<String, Vec<usize>>,
    /// Rules that list `*`: they apply to every tool.
    every: Vec<usize>,
    /// The other tool globs, each pattern once.
    wildcard: GlobSet,
    /// For each pattern of `wildcard`, the rules that list it.
    wildcard_rules: Vec<Vec<usize>>,
}

/// The rules that may apply to one tool, as a bit set over rule indices.
pub(super) struct Candidates(Vec<u64>);

impl Candidates {
    fn mark(&mut self, rule: usize) {
        if let Some(word) = self.0.get_mut(rule / 64) {
            *word |= 1 << (rule % 64);
        }
    }

    /// The marked rules, ascending.
    pub(super) fn iter(&self) -> impl Iterator<Item = usize> + '_ {
        self.0.iter().enumerate().flat_map(|(w, &word)| {
            let mut bits = word;
            std::iter::from_fn(move || {
                if bits == 0 {
                    return None;
                }
                let bit = bits.trailing_zeros() as usize;
                bits &= bits - 1;
                Some(w * 64 + bit)
            })
        })
    }
}

impl RuleIndex {
    /// Index `rules`, whose tool globs have already been validated; a
    /// pattern that fails to compile here is an error.
    pub(super) fn build(rules: &[Rule]) -> Result<RuleIndex, PatternError> {
        let mut exact: HashMap<String, Vec<usize>> = HashMap::new();
        let mut every = Vec::new();
        let mut patterns: HashMap<&str, usize> = HashMap::new();
        let mut builder = GlobSetBuilder::new();
        let mut wildcard_rules: Vec<Vec<usize>> = Vec::new();
        for (i, rule) in rules.iter().enumerate() {
            for pattern in &rule.tools {
                let list = if pattern == "*" {
                    &mut every
                } else if pattern.contains(['*', '?', '[', ']', '{', '}', '\\']) {
                    let slot = match patterns.get(pattern.as_str()) {
                        Some(&slot) => slot,
                        None => {
                            builder.add(Glob::new(pattern)?);
                            wildcard_rules.push(Vec::new());
                            patterns.insert(pattern, wildcard_rules.len() - 1);
                            wildcard_rules.len() - 1
                        }
                    };
                    &mut wildcard_rules[slot]
                } else {
                    exact.entry(pattern.clone()).or_default()
                };
                if list.last() != Some(&i) {
                    list.push(i);
                }
            }
        }
        let wildcard = builder.build()?;
        Ok(RuleIndex {
            len: rules.len(),
            exact,
            every,
            wildcard,
            wildcard_rules,
        })
    }

    /// The rules that may apply to `tool`.
    pub(super) fn candidates(&self, tool: &str) -> Candidates {
        let mut c = Candidates(vec![0; self.len.div_ceil(64)]);
        let exact = self.exact.get(tool).map(Vec::as_slice).unwrap_or_default();
        for &rule in exact.iter().chain(&self.every) {
            c.mark(rule);
        }
        if !self.wildcard_rules.is_empty() {
            for slot in self.wildcard.matches(tool) {
                for &rule in self.wildcard_rules.get(slot).map_or(&[][..], Vec::as_slice) {
                    c.mark(rule);
                }
            }
        }
        c
    }
}
