//! Every argument matcher of a policy, compiled into one automaton per
//! argument name, so a decision runs each argument through one glob set
//! and one regex set however many rules there are.
//!
//! Invariant: a rule's matcher matches exactly when the matcher alone would
//! (glob on the normalised string, prefix and regex on the raw string; a
//! missing or non-string argument never matches; for an array any string
//! element may match).

use std::collections::HashMap;

use globset::GlobBuilder;
use serde_json::Value;

use super::error::PatternError;
use super::protected::{normalized, trim_dot_slash};
use super::{ArgMatcher, Rule};

/// The compiled matchers of all rules.
#[derive(Debug, Clone)]
pub(super) struct ArgMatchers {
    /// One entry per distinct argument name.
    keys: Vec<KeySets>,
    /// For each rule, the checks that must all pass.
    rules: Vec<Vec<Check>>,
    /// How many glob and regex matchers there are (their ids are 0..ids).
    ids: usize,
}

#[derive(Debug, Clone)]
struct KeySets {
    name: String,
    /// Every glob pattern on this argument, as a regex over the normalised
    /// path, and the matcher id each pattern belongs to.
    globs: Option<(regex::bytes::RegexSet, Vec<usize>)>,
    /// Every regex on this argument, and its matcher id.
    regexes: Option<(regex::RegexSet, Vec<usize>)>,
}

#[derive(Debug, Clone)]
enum Check {
    /// A glob or regex matcher, resolved through its argument's sets.
    Set { key: usize, id: usize },
    /// A prefix matcher, checked directly.
    Prefix { key: usize, prefix: String },
}

impl ArgMatchers {
    /// Compile the matchers of `rules`, whose patterns are already
    /// validated one by one. Fails only if a combined set is too large.
    pub(super) fn build(rules: &[Rule]) -> Result<ArgMatchers, PatternError> {
        let mut key_no: HashMap<&str, usize> = HashMap::new();
        let mut globs: Vec<(Vec<String>, Vec<usize>)> = Vec::new();
        let mut regexes: Vec<(Vec<String>, Vec<usize>)> = Vec::new();
        let mut checks = Vec::with_capacity(rules.len());
        let mut ids = 0;
        for rule in rules {
            let mut rule_checks = Vec::with_capacity(rule.args.len());
            for (name, matcher) in &rule.args {
                let key = *key_no.entry(name).or_insert_with(|| {
                    globs.push(Default::default());
                    regexes.push(Default::default());
                    globs.len() - 1
                });
                match matcher {
                    ArgMatcher::Prefix(p) => {
                        rule_checks.push(Check::Prefix {
                            key,
                            prefix: p.clone(),
                        });
                        continue;
                    }
                    ArgMatcher::Glob(patterns) => {
                        for p in patterns {
                            let glob = GlobBuilder::new(trim_dot_slash(p))
                                .literal_separator(true)
                                .build()?;
                            globs[key].0.push(glob.regex().to_string());
                            globs[key].1.push(ids);
                        }
                    }
                    ArgMatcher::Regex(re) => {
                        regexes[key].0.push(re.clone());
                        regexes[key].1.push(ids);
                    }
                }
                rule_checks.push(Check::Set { key, id: ids });
                ids += 1;
            }
            checks.push(rule_checks);
        }
        let mut names: Vec<(&str, usize)> = key_no.into_iter().collect();
        names.sort_by_key(|(_, k)| *k);
        let keys = names
            .into_iter()
            .zip(globs.into_iter().zip(regexes))
            .map(|((name, _), ((gp, go), (rp, ro)))| {
                let globs = if gp.is_empty() {
                    None
                } else {
                    Some((regex::bytes::RegexSet::new(&gp)?, go))
                };
                let regexes = if rp.is_empty() {
                    None
                } else {
                    Some((regex::RegexSet::new(&rp)?, ro))
                };
                Ok(KeySets {
                    name: name.to_string(),
                    globs,
                    regexes,
                })
            })
            .collect::<Result<_, PatternError>>()?;
        Ok(ArgMatchers {
            keys,
            rules: checks,
            ids,
        })
    }

    /// A fresh evaluation of `input`; each argument is matched at most once.
    pub(super) fn evaluate<'a>(&'a self, input: &'a Value) -> Hits<'a> {
        Hits {
            matchers: self,
            input,
            done: vec![false; self.keys.len()],
            bits: vec![0; self.ids.div_ceil(64)],
        }
    }
}

/// Which matchers match one call's input, computed argument by argument
/// as rules ask.
pub(super) struct Hits<'a> {
    matchers: &'a ArgMatchers,
    input: &'a Value,
    done: Vec<bool>,
    bits: Vec<u64>,
}

impl Hits<'_> {
    /// Whether every matcher of rule `rule` matches.
    pub(super) fn rule_matches(&mut self, rule: usize) -> bool {
        let matchers = self.matchers;
        let Some(checks) = matchers.rules.get(rule) else {
            return false;
        };
        checks.iter().all(|check| match check {
            Check::Prefix { key, prefix } => {
                self.strings(*key).any(|s| s.starts_with(prefix.as_str()))
            }
            Check::Set { key, id } => {
                self.fill(*key);
                self.bits
                    .get(id / 64)
                    .is_some_and(|w| w & (1 << (id % 64)) != 0)
            }
        })
    }

    /// The string values of argument `key`: the string, or the strings of
    /// an array; nothing for any other value.
    fn strings(&self, key: usize) -> impl Iterator<Item = &str> {
        let value = self
            .matchers
            .keys
            .get(key)
            .and_then(|k| self.input.get(&k.name));
        let (one, many) = match value {
            Some(Value::String(s)) => (Some(s.as_str()), None),
            Some(Value::Array(items)) => (None, Some(items.iter().filter_map(Value::as_str))),
            Some(Value::Null | Value::Bool(_) | Value::Number(_) | Value::Object(_)) | None => {
                (None, None)
            }
        };
        one.into_iter().chain(many.into_iter().flatten())
    }

    /// Match argument `key` against its sets once, recording the hits.
    fn fill(&mut self, key: usize) {
        if self.done.get(key).is_none_or(|d| *d) {
            return;
        }
        self.done[key] = true;
        let Some(sets) = self.matchers.keys.get(key) else {
            return;
        };
        let mut hit = Vec::new();
        for s in self.strings(key) {
            if let Some((set, owners)) = &sets.globs {
                let path = normalized(s);
                hit.extend(set.matches(path.as_bytes()).iter().map(|i| owners[i]));
            }
            if let Some((set, owners)) = &sets.regexes {
                hit.extend(set.matches(s).iter().map(|i| owners[i]));
            }
        }
        for id in hit {
            if let Some(word) = self.bits.get_mut(id / 64) {
                *word |= 1 << (id % 64);
            }
        }
    }
}
