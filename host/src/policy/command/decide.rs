//! One `shell` call: protected paths in its input and words, then each
//! part by the rules (a deny wins, then an ask or a construct no rule can
//! allow, then an allow that names everything the part does), else the
//! mode; the call gets its strongest part.
//!
//! Invariant: a part is allowed only by an allow rule matching its real
//! command (wrappers looked through) that covers every hazard the part
//! has, or, when no rule matches and it has no hazard, by `auto` mode.

use serde_json::Value;

use super::super::{CallFacts, DecidedBy, Decision, Mode, Policy, Verdict, protected_denial};
use super::hazard::Hazard;
use super::parse::{Part, parse};
use super::rules::Match;
use super::{PartDecision, SHELL_SAFETY_RULE};

impl Policy {
    /// Decide a call of the `shell` tool from its `command`.
    pub(in crate::policy) fn decide_shell(&self, call: &CallFacts<'_>) -> Decision {
        let parts = match call.input.get("command") {
            Some(Value::String(command)) => parse(command),
            Some(_) | None => vec![Part::opaque(
                "",
                Hazard::Unparsed("the input has no `command` string".into()),
            )],
        };
        if let Some(d) = self.shell_protected(call, &parts) {
            return d;
        }
        let candidates = self.index.candidates(call.tool);
        let mut hits = self.matchers.evaluate(call.input);
        let rules: Vec<usize> = candidates
            .iter()
            .filter(|&i| hits.rule_matches(i))
            .collect();
        let decided = parts.iter().map(|p| self.decide_part(p, &rules)).collect();
        self.combine(decided)
    }

    /// Deny a call whose input (the command string aside) or whose literal
    /// words and redirection targets name a protected path.
    fn shell_protected(&self, call: &CallFacts<'_>, parts: &[Part]) -> Option<Decision> {
        let read_only = call.annotations.read_only;
        if read_only && self.protected.readable {
            return None;
        }
        let in_input = match call.input {
            Value::Object(map) => map
                .iter()
                .filter(|(k, _)| k.as_str() != "command")
                .find_map(|(_, v)| self.protected.first_in(v)),
            Value::Null
            | Value::Bool(_)
            | Value::Number(_)
            | Value::String(_)
            | Value::Array(_) => None,
        };
        let path = in_input.map(str::to_string).or_else(|| {
            parts.iter().find_map(|p| {
                let words = p.words.iter().chain(p.redirects.iter().map(|r| &r.target));
                words.filter(|w| w.literal).find_map(|w| {
                    let after_eq = w.text.split_once('=').map(|(_, v)| v);
                    [Some(w.text.as_str()), after_eq]
                        .into_iter()
                        .flatten()
                        .find(|t| self.protected.names_protected(t))
                        .map(str::to_string)
                })
            })
        })?;
        Some(protected_denial(&path, read_only))
    }

    /// Decide one part under the rules in `rules` (those whose tools and
    /// argument matchers match the call), in file order.
    fn decide_part(&self, part: &Part, rules: &[usize]) -> PartDecision {
        let a = &part.analysis;
        let views: Vec<&[_]> = a
            .views
            .iter()
            .filter_map(|&s| part.words.get(s..))
            .collect();
        let mut deny_maybe = None;
        let mut ask = None;
        let mut allows = Vec::new();
        for &i in rules {
            let Some(rule) = self.rules.get(i) else {
                continue;
            };
            let m = match self.commands.get(i) {
                None => Match::Definite(0),
                Some(c) => match rule.decision {
                    Verdict::Allow => views
                        .last()
                        .map_or(Match::No, |w| c.matches(w, a.trailing_unknown)),
                    Verdict::Deny | Verdict::Ask => views
                        .iter()
                        .map(|w| c.matches(w, a.trailing_unknown))
                        .max()
                        .unwrap_or(Match::No),
                },
            };
            match (rule.decision, m) {
                (Verdict::Deny, Match::Definite(_)) => {
                    return self.by_rule(part, i, Verdict::Deny);
                }
                (Verdict::Deny, Match::Maybe(prefix)) => {
                    deny_maybe.get_or_insert((i, prefix));
                }
                (Verdict::Ask, Match::Definite(_) | Match::Maybe(_)) => {
                    ask.get_or_insert(i);
                }
                (Verdict::Allow, Match::Definite(n)) => allows.push((i, n)),
                (_, Match::No) | (Verdict::Allow, Match::Maybe(_)) => {}
            }
        }
        let (fallback, mode_reason) = unmatched(self.mode);
        let careful = |reason: String| PartDecision {
            command: part.text.clone(),
            verdict: stronger(Verdict::Ask, fallback),
            by: safety(),
            reason: Some(reason),
        };
        let opaque = deny_maybe
            .map(|(i, prefix)| {
                format!(
                    "it may run `{prefix}`, which rule `{}` denies: part of the command is \
                     known only when it runs",
                    self.rule_name(i)
                )
            })
            .or_else(|| a.hazards.iter().find(|h| h.opaque()).map(Hazard::describe))
            .map(careful);
        match (ask, opaque) {
            (_, Some(o)) if o.verdict == Verdict::Deny => return o,
            (Some(i), _) => return self.by_rule(part, i, Verdict::Ask),
            (None, Some(o)) => return o,
            (None, None) => {}
        }
        let uncovered = |i: usize, n: usize| {
            a.hazards
                .iter()
                .find(|h| !self.commands.get(i).is_some_and(|c| c.covers(h, n)))
        };
        if let Some(&(i, _)) = allows.iter().find(|&&(i, n)| uncovered(i, n).is_none()) {
            return self.by_rule(part, i, Verdict::Allow);
        }
        if let Some((i, hazard)) = allows
            .first()
            .and_then(|&(i, n)| uncovered(i, n).map(|h| (i, h)))
        {
            return careful(format!(
                "rule `{}` allows the command, but it {}",
                self.rule_name(i),
                hazard.describe()
            ));
        }
        match a.hazards.first() {
            Some(h) if fallback == Verdict::Allow => careful(format!(
                "no rule allows the command with what it does: it {}",
                h.describe()
            )),
            Some(_) | None => PartDecision {
                command: part.text.clone(),
                verdict: fallback,
                by: DecidedBy::Mode(self.mode),
                reason: mode_reason.map(str::to_string),
            },
        }
    }

    fn rule_name(&self, i: usize) -> &str {
        self.rules.get(i).map_or("?", |r| r.name.as_str())
    }

    fn by_rule(&self, part: &Part, i: usize, verdict: Verdict) -> PartDecision {
        PartDecision {
            command: part.text.clone(),
            verdict,
            by: DecidedBy::Rule {
                index: Some(i),
                name: self.rule_name(i).to_string(),
            },
            reason: self.rules.get(i).and_then(|r| r.reason.clone()),
        }
    }

    /// The call's decision: its strongest part, the first among equals.
    fn combine(&self, parts: Vec<PartDecision>) -> Decision {
        let mut lead: Option<&PartDecision> = None;
        for p in &parts {
            if lead.is_none_or(|l| p.verdict.strength() > l.verdict.strength()) {
                lead = Some(p);
            }
        }
        let Some(lead) = lead else {
            let (verdict, reason) = unmatched(self.mode);
            return Decision {
                verdict,
                by: DecidedBy::Mode(self.mode),
                reason: reason.map(|r| format!("the command line runs no command; {r}")),
                parts,
            };
        };
        let reason = match (lead.verdict, &lead.reason) {
            (Verdict::Allow, _) => None,
            (Verdict::Ask | Verdict::Deny, Some(r)) => Some(format!("`{}`: {r}", lead.command)),
            (Verdict::Ask | Verdict::Deny, None) => Some(format!("`{}`", lead.command)),
        };
        Decision {
            verdict: lead.verdict,
            by: lead.by.clone(),
            reason,
            parts,
        }
    }
}

/// How a part no rule matches is decided in `mode`. Only `auto` allows
/// it: a command can do anything its grant allows.
fn unmatched(mode: Mode) -> (Verdict, Option<&'static str>) {
    match mode {
        Mode::ReadOnly => (
            Verdict::Deny,
            Some("plan mode: only commands a rule allows may run"),
        ),
        Mode::Ask => (
            Verdict::Ask,
            Some("ask mode: commands no rule allows need approval"),
        ),
        Mode::AutoEdit => (
            Verdict::Ask,
            Some("auto-edit mode: commands no rule allows need approval"),
        ),
        Mode::Auto => (Verdict::Allow, None),
        Mode::AllowList => (
            Verdict::Deny,
            Some("allow-list mode: only commands a rule allows may run"),
        ),
    }
}

fn stronger(a: Verdict, b: Verdict) -> Verdict {
    if b.strength() > a.strength() { b } else { a }
}

fn safety() -> DecidedBy {
    DecidedBy::Rule {
        index: None,
        name: SHELL_SAFETY_RULE.to_string(),
    }
}
