//! A policy checked against the tools that exist: a rule that names a
//! tool no plugin provides, a glob that matches none, an argument that no
//! tool it names takes, a `[grants.tool.NAME]` table for a tool no plugin
//! provides, or a `[grants.plugin.NAME]` table for a plugin neither built
//! in nor installed can never apply, so `policy check` refuses it and
//! `policy explain` warns.
//!
//! A rule may say `plugin = "NAME"`: its tools belong to that plugin. When
//! the plugin is not installed here, its tools are not checked, nor are
//! their `[grants.tool]` tables nor its `[grants.plugin]` table; when it
//! is, they are checked against that plugin's tools alone.

use std::collections::BTreeSet;

use serde::Serialize;

use super::Policy;
use super::rule::Rule;

/// A tool of the catalog, as the check needs it.
#[derive(Debug, Clone, Copy)]
pub struct KnownTool<'a> {
    pub name: &'a str,
    pub plugin: &'a str,
    pub input_schema: &'a serde_json::Value,
}

/// A rule that cannot fire as written.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, thiserror::Error)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum PolicyLint {
    /// `tools` names a tool no installed plugin provides.
    #[error(
        "rule `{rule}`: no installed plugin provides a tool `{tool}`{}; a tool of a plugin not installed here needs `plugin = \"NAME\"` on its rule",
        did_you_mean(suggestion)
    )]
    UnknownTool {
        rule: String,
        tool: String,
        suggestion: Option<String>,
    },
    /// A glob in `tools` matches no tool.
    #[error(
        "rule `{rule}`: `{pattern}` in `tools` matches no installed tool; fix the pattern, or name the plugin with `plugin = \"NAME\"`"
    )]
    NoToolMatches { rule: String, pattern: String },
    /// An argument matcher names a field no tool of the rule takes.
    #[error(
        "rule `{rule}`: `args.{arg}` is not an argument of {}{}, so the rule never matches",
        tools.join(", "),
        did_you_mean(suggestion)
    )]
    UnknownArgument {
        rule: String,
        arg: String,
        tools: Vec<String>,
        suggestion: Option<String>,
    },
    /// `[grants.tool.NAME]` names a tool no installed plugin provides.
    #[error(
        "`[grants.tool.{tool}]`: no installed plugin provides a tool `{tool}`{}, so the grant never applies; a tool of a plugin not installed here needs a rule naming it with `plugin = \"NAME\"`",
        did_you_mean(suggestion)
    )]
    UnknownGrantTool {
        tool: String,
        suggestion: Option<String>,
    },
    /// `[grants.plugin.NAME]` names a plugin neither built in nor installed.
    #[error(
        "`[grants.plugin.{plugin}]`: no plugin `{plugin}` is built in or installed{}, so the grant never applies; a plugin not installed here needs a rule naming it with `plugin = \"{plugin}\"`",
        did_you_mean(suggestion)
    )]
    UnknownGrantPlugin {
        plugin: String,
        suggestion: Option<String>,
    },
}

fn did_you_mean(suggestion: &Option<String>) -> String {
    suggestion
        .as_ref()
        .map(|s| format!(" (did you mean `{s}`?)"))
        .unwrap_or_default()
}

impl Policy {
    /// Every rule that cannot fire given `tools`, the catalog's.
    pub fn lint(&self, tools: &[KnownTool<'_>]) -> Vec<PolicyLint> {
        let mut lints: Vec<PolicyLint> = self
            .rules
            .iter()
            .flat_map(|r| lint_rule(r, tools))
            .collect();
        lints.extend(self.lint_grant_tools(tools));
        lints.extend(self.lint_grant_plugins(tools));
        lints
    }

    /// Each `[grants.plugin.NAME]` whose plugin is neither built in nor
    /// installed (every plugin provides a tool), unless a rule says
    /// `plugin = "NAME"`, placing it among the plugins not installed here.
    fn lint_grant_plugins(&self, tools: &[KnownTool<'_>]) -> Vec<PolicyLint> {
        let plugins: BTreeSet<&str> = tools.iter().map(|t| t.plugin).collect();
        self.grants
            .plugin
            .keys()
            .filter(|name| !plugins.contains(name.as_str()))
            .filter(|name| !self.rules.iter().any(|r| r.plugin.as_ref() == Some(*name)))
            .map(|name| PolicyLint::UnknownGrantPlugin {
                plugin: name.clone(),
                suggestion: closest(name, plugins.iter().copied()),
            })
            .collect()
    }

    /// Each `[grants.tool.NAME]` whose tool no installed plugin provides,
    /// unless a rule places it in a plugin not installed here.
    fn lint_grant_tools(&self, tools: &[KnownTool<'_>]) -> Vec<PolicyLint> {
        let elsewhere = |name: &str| {
            self.rules.iter().any(|r| {
                r.plugin
                    .as_deref()
                    .is_some_and(|p| !tools.iter().any(|t| t.plugin == p))
                    && r.tools.iter().any(|t| t == name)
            })
        };
        self.grants
            .tool
            .keys()
            .filter(|name| !tools.iter().any(|t| t.name == name.as_str()))
            .filter(|name| !elsewhere(name))
            .map(|name| PolicyLint::UnknownGrantTool {
                tool: name.clone(),
                suggestion: closest(name, tools.iter().map(|t| t.name)),
            })
            .collect()
    }
}

fn matches(pattern: &str, tool: &str) -> bool {
    globset::Glob::new(pattern).is_ok_and(|g| g.compile_matcher().is_match(tool))
}

fn is_glob(pattern: &str) -> bool {
    pattern.contains(['*', '?', '[', '{'])
}

fn lint_rule(rule: &Rule, tools: &[KnownTool<'_>]) -> Vec<PolicyLint> {
    let candidates: Vec<&KnownTool<'_>> = match &rule.plugin {
        Some(plugin) => tools.iter().filter(|t| t.plugin == plugin).collect(),
        None => tools.iter().collect(),
    };
    // The rule's plugin is not installed here: nothing to check against.
    if rule.plugin.is_some() && candidates.is_empty() {
        return Vec::new();
    }
    let mut lints = Vec::new();
    let mut named: Vec<&KnownTool<'_>> = Vec::new();
    for pattern in &rule.tools {
        let hits: Vec<_> = candidates
            .iter()
            .filter(|t| matches(pattern, t.name))
            .collect();
        if hits.is_empty() {
            lints.push(if is_glob(pattern) {
                PolicyLint::NoToolMatches {
                    rule: rule.name.clone(),
                    pattern: pattern.clone(),
                }
            } else {
                PolicyLint::UnknownTool {
                    rule: rule.name.clone(),
                    tool: pattern.clone(),
                    suggestion: closest(pattern, candidates.iter().map(|t| t.name)),
                }
            });
        }
        for t in hits {
            if !named.iter().any(|n| n.name == t.name) {
                named.push(t);
            }
        }
    }
    if named.is_empty() {
        return lints;
    }
    for arg in rule.args.keys() {
        let mut fields = BTreeSet::new();
        let mut takes = false;
        for t in &named {
            match t.input_schema.get("properties").and_then(|p| p.as_object()) {
                Some(props) => {
                    takes |= props.contains_key(arg);
                    fields.extend(props.keys().map(String::as_str));
                }
                // A schema without properties takes any field.
                None => takes = true,
            }
        }
        if !takes {
            lints.push(PolicyLint::UnknownArgument {
                rule: rule.name.clone(),
                arg: arg.clone(),
                tools: named.iter().map(|t| t.name.to_string()).collect(),
                suggestion: closest(arg, fields.into_iter()),
            });
        }
    }
    lints
}

/// The candidate within three edits of `word` (and closer than its own
/// length), nearest first.
fn closest<'a>(word: &str, candidates: impl Iterator<Item = &'a str>) -> Option<String> {
    candidates
        .map(|c| (strsim::damerau_levenshtein(word, c), c))
        .filter(|(d, c)| *d <= 3 && *d < word.len().max(c.len()))
        .min_by_key(|(d, _)| *d)
        .map(|(_, c)| c.to_string())
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    fn lints(policy: &str) -> Vec<PolicyLint> {
        let policy = Policy::parse(policy, "t.toml").unwrap();
        let read = json!({"type": "object", "properties": {"path": {}, "offset": {}}});
        let write = json!({"type": "object", "properties": {"path": {}, "content": {}}});
        let tools = [
            KnownTool {
                name: "read_file",
                plugin: "fs",
                input_schema: &read,
            },
            KnownTool {
                name: "write_file",
                plugin: "fs",
                input_schema: &write,
            },
        ];
        policy.lint(&tools)
    }

    const HEAD: &str = "name = \"t\"\ndescription = \"t\"\nmode = \"auto\"\n";

    #[test]
    fn a_misspelt_tool_gets_a_suggestion() {
        let l = lints(&format!(
            "{HEAD}[[rule]]\nname = \"w\"\ntools = [\"write_fil\"]\ndecision = \"deny\"\n"
        ));
        assert_eq!(
            l,
            [PolicyLint::UnknownTool {
                rule: "w".into(),
                tool: "write_fil".into(),
                suggestion: Some("write_file".into())
            }]
        );
        assert!(
            l[0].to_string().contains("did you mean `write_file`?"),
            "{}",
            l[0]
        );
    }

    #[test]
    fn a_glob_matching_nothing_and_an_absent_argument_are_found() {
        let l = lints(&format!(
            "{HEAD}[[rule]]\nname = \"g\"\ntools = [\"wirte_*\"]\ndecision = \"deny\"\n\
             [[rule]]\nname = \"a\"\ntools = [\"write_file\"]\ndecision = \"deny\"\n\
             args.pth = {{ glob = \"x/**\" }}\n"
        ));
        assert_eq!(l.len(), 2, "{l:?}");
        assert!(matches!(&l[0], PolicyLint::NoToolMatches { pattern, .. } if pattern == "wirte_*"));
        assert!(
            matches!(&l[1], PolicyLint::UnknownArgument { arg, suggestion: Some(s), .. } if arg == "pth" && s == "path")
        );
    }

    #[test]
    fn an_argument_one_named_tool_takes_is_fine_and_so_is_an_absent_plugin() {
        let l = lints(&format!(
            "{HEAD}[[rule]]\nname = \"c\"\ntools = [\"*\"]\ndecision = \"deny\"\n\
             args.content = {{ prefix = \"x\" }}\n\
             [[rule]]\nname = \"d\"\ntools = [\"deploy\"]\nplugin = \"deployer\"\ndecision = \"ask\"\n"
        ));
        assert_eq!(l, []);
        let l = lints(&format!(
            "{HEAD}[[rule]]\nname = \"d\"\ntools = [\"deploy\"]\nplugin = \"fs\"\ndecision = \"ask\"\n"
        ));
        assert!(matches!(&l[..], [PolicyLint::UnknownTool { .. }]), "{l:?}");
    }

    #[test]
    fn a_misspelt_grant_tool_table_gets_a_suggestion() {
        let l = lints(&format!(
            "{HEAD}[grants.tool.write_fil]\nworkspace = \"read-write\"\n\
             [grants.tool.read_file]\nworkspace = \"read-only\"\n"
        ));
        assert_eq!(
            l,
            [PolicyLint::UnknownGrantTool {
                tool: "write_fil".into(),
                suggestion: Some("write_file".into())
            }]
        );
        assert!(
            l[0].to_string().contains("did you mean `write_file`?"),
            "{}",
            l[0]
        );
    }

    #[test]
    fn a_grant_for_a_tool_of_a_plugin_not_installed_is_not_flagged() {
        let l = lints(&format!(
            "{HEAD}[[rule]]\nname = \"d\"\ntools = [\"deploy\"]\nplugin = \"deployer\"\n\
             decision = \"ask\"\n[grants.tool.deploy]\nworkspace = \"read-only\"\n"
        ));
        assert_eq!(l, []);
    }

    #[test]
    fn a_misspelt_grant_plugin_table_gets_a_suggestion() {
        let l = lints(&format!(
            "{HEAD}[grants.plugin.fss]\nworkspace = \"read-write\"\n\
             [grants.plugin.fs]\nworkspace = \"read-only\"\n"
        ));
        assert_eq!(
            l,
            [PolicyLint::UnknownGrantPlugin {
                plugin: "fss".into(),
                suggestion: Some("fs".into())
            }]
        );
        assert!(l[0].to_string().contains("did you mean `fs`?"), "{}", l[0]);
    }

    #[test]
    fn a_grant_for_a_plugin_not_installed_is_not_flagged() {
        let l = lints(&format!(
            "{HEAD}[[rule]]\nname = \"d\"\ntools = [\"deploy\"]\nplugin = \"deployer\"\n\
             decision = \"ask\"\n[grants.plugin.deployer]\nworkspace = \"read-only\"\n"
        ));
        assert_eq!(l, []);
    }
}
