//! The permission engine: policy files, approval modes, rules over tool
//! arguments, grants and protected paths.
//!
//! Pure logic, no I/O besides [`Policy::load_file`]. Invariants: a policy
//! is used only if it parsed and validated completely (unknown keys, bad
//! patterns, duplicate, unreachable or contradictory rules are errors);
//! every call gets exactly one [`Decision`], and deny beats ask beats
//! allow; a call that would write a protected path is denied whatever the
//! rules say. The file format is documented in `policies/README.md`.

mod call_grant;
pub mod command;
mod decide;
mod decision;
mod error;
mod fields;
mod grants;
mod host_reach;
mod inline_test;
mod limits;
mod lint;
mod matchers;
mod network_ask;
mod outright;
mod process;
mod protected;
mod rule;
pub mod suggest;

#[cfg(test)]
mod tests;

use std::collections::BTreeMap;
use std::path::Path;

use serde::Deserialize;
use toml::Spanned;

pub use call_grant::{grant_from_declared, grant_from_policy};
pub use decision::{CallFacts, DecidedBy, Decision, Mode, Verdict};
pub use error::PolicyError;
pub use grants::{ExtraDir, GrantSpec, GrantTable, Grants, LimitOverrides, WorkspaceAccess};
pub use host_reach::HostReach;
pub use inline_test::{PolicyTest, TestOutcome};
pub use limits::LimitAboveCeiling;
pub use lint::{KnownTool, PolicyLint};
pub use network_ask::{
    AskedDestination, DestinationGrant, NetworkAskError, URL_ARGUMENT, call_destinations,
    destination_of, with_approved,
};
pub use process::{ProcessSpec, ProcessTable, ToolchainDir, default_limits};
pub use protected::{DEFAULT_PROTECTED, Protected, normalize_path};
pub use rule::{ArgMatcher, Rule};

use command::CommandRules;

use crate::capability::egress::CredentialHandle;
use decide::{RuleIndex, protected_denial};
use error::Locator;
use matchers::ArgMatchers;

/// The name of the rule reported when a protected path decides a call.
pub const PROTECTED_RULE: &str = "protected-paths";

/// A parsed and validated policy.
#[derive(Debug, Clone)]
pub struct Policy {
    /// Short name, e.g. `workspace-write`.
    pub name: String,
    /// One line saying what the policy is for.
    pub description: String,
    /// How calls no rule matches are decided.
    pub mode: Mode,
    /// No one can answer a prompt: every ask becomes a deny.
    pub non_interactive: bool,
    /// The rules, in file order.
    pub rules: Vec<Rule>,
    /// Filesystem, network and limit grants per plugin and tool.
    pub grants: Grants,
    /// Paths tools may never write (and, optionally, read).
    pub protected: Protected,
    /// Credentials grants may name: how to inject them, never their values.
    pub credentials: Vec<CredentialHandle>,
    /// The policy's own test cases.
    pub tests: Vec<PolicyTest>,
    /// Every rule's argument matchers, compiled.
    matchers: ArgMatchers,
    /// Which rules can apply to a tool.
    index: RuleIndex,
    /// Every rule's `commands`, compiled.
    commands: CommandRules,
}

impl Policy {
    /// Parse and validate a policy. `origin` (a file name) prefixes every
    /// error, which also carries the line and column.
    pub fn parse(text: &str, origin: &str) -> Result<Policy, PolicyError> {
        let loc = Locator::new(text, origin);
        let file: PolicyFile = toml::from_str(text).map_err(|e| loc.syntax(&e))?;

        let mut paths = Vec::new();
        if !file.protected.replace_defaults {
            paths.extend(DEFAULT_PROTECTED.iter().map(|p| p.to_string()));
        }
        for p in &file.protected.paths {
            crate::capability::path_guard::check_glob(p.get_ref()).map_err(|e| {
                loc.invalid(
                    p.span(),
                    format!(
                        "bad glob `{}` in `protected.paths`: {}; fix the pattern",
                        e.pattern, e.message
                    ),
                )
            })?;
            paths.push(p.get_ref().clone());
        }
        let protected = Protected::new(paths, file.protected.readable).map_err(|(pat, msg)| {
            loc.invalid(0..0, format!("bad protected path `{pat}`: {msg}"))
        })?;

        let mut rules = Vec::with_capacity(file.rule.len());
        let mut spans = Vec::with_capacity(file.rule.len());
        for r in file.rule {
            spans.push(r.name.span());
            rules.push(rule::compile(r, &loc)?);
        }
        rule::check_rules(&rules, &spans, &loc)?;
        let index = RuleIndex::build(&rules)
            .map_err(|msg| loc.invalid(0..0, format!("bad tool glob: {msg}")))?;
        let matchers = ArgMatchers::build(&rules)
            .map_err(|msg| loc.invalid(0..0, format!("argument matchers: {msg}")))?;
        let commands = CommandRules::build(&rules)
            .map_err(|msg| loc.invalid(0..0, format!("command rules: {msg}")))?;

        let mut seen = std::collections::BTreeSet::new();
        for c in &file.credential {
            if !seen.insert(c.name.as_str()) {
                return Err(loc.invalid(0..0, format!("credential `{}` is declared twice", c.name)));
            }
        }
        for layer in file.grants.layers() {
            for name in layer.credentials.iter().flatten() {
                if !seen.contains(name.as_str()) {
                    return Err(loc.invalid(
                        0..0,
                        format!(
                            "grants name credential `{name}`, but no [[credential]] has that name"
                        ),
                    ));
                }
            }
        }

        Ok(Policy {
            name: file.name,
            description: file.description,
            mode: file.mode,
            non_interactive: file.non_interactive,
            rules,
            grants: file.grants,
            protected,
            credentials: file.credential,
            tests: file.test,
            matchers,
            index,
            commands,
        })
    }

    /// Read and parse the policy file at `path`.
    pub fn load_file(path: &Path) -> Result<Policy, PolicyError> {
        let text = std::fs::read_to_string(path).map_err(|source| PolicyError::Read {
            path: path.to_path_buf(),
            source,
        })?;
        Policy::parse(&text, &path.display().to_string())
    }

    /// The most this policy grants `tool` of `plugin`: `[grants.tool]`
    /// over `[grants.plugin]` over `[grants.default]`, field by field.
    /// The policy's protected paths come with it.
    pub fn grant_for(&self, plugin: &str, tool: &str) -> GrantSpec {
        let names = self.grants.credential_names(plugin, tool);
        GrantSpec {
            protected: self.protected.guard().clone(),
            credentials: self
                .credentials
                .iter()
                .filter(|c| names.contains(&c.name))
                .cloned()
                .collect(),
            ..self.grants.resolve(plugin, tool)
        }
    }

    /// The most this policy grants `call`: [`Policy::grant_for`], with no
    /// writes for a tool annotated read-only. The modes let such a tool
    /// run without asking, so the annotation must also confine it.
    pub fn grant_for_call(&self, call: &CallFacts<'_>) -> GrantSpec {
        let spec = self.grant_for(call.plugin, call.tool);
        if call.annotations.read_only {
            spec.read_only()
        } else {
            spec
        }
    }

    /// Why `tool` of `plugin`, whose manifest declares `declared`, may not
    /// run at all under this policy whatever its input: memory turned off
    /// (`memory = false`) for a plugin that keeps memory notes. Such tools
    /// are not offered to the model, and a call is denied with this reason.
    pub fn capability_refusal(
        &self,
        plugin: &str,
        tool: &str,
        declared: &crate::capability::DeclaredCapabilities,
    ) -> Option<String> {
        (declared.memory && !self.grants.resolve(plugin, tool).memory).then(|| {
            format!(
                "memory is turned off by policy {} (`memory = false`), and {tool} (plugin \
                 {plugin}) reads or writes memory notes",
                self.name
            )
        })
    }
}

/// The policies shipped with Warden, as `(name, TOML text)`. The default is
/// `workspace-write`.
pub fn builtin_policies() -> Vec<(&'static str, &'static str)> {
    vec![
        (
            "workspace-write",
            include_str!("../../../policies/workspace-write.toml"),
        ),
        (
            "read-only",
            include_str!("../../../policies/read-only.toml"),
        ),
        ("strict", include_str!("../../../policies/strict.toml")),
        ("ci", include_str!("../../../policies/ci.toml")),
    ]
}

/// The name of the policy used when none is given.
pub const DEFAULT_POLICY: &str = "workspace-write";

// The policy file exactly as TOML spells it, with source spans kept for
// error messages. Unknown keys are errors at every level.

/// A whole policy file.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct PolicyFile {
    pub name: String,
    #[serde(default)]
    pub description: String,
    #[serde(default)]
    pub mode: Mode,
    #[serde(default)]
    pub non_interactive: bool,
    #[serde(default)]
    pub grants: Grants,
    #[serde(default)]
    pub rule: Vec<RuleFile>,
    #[serde(default)]
    pub protected: ProtectedFile,
    #[serde(default)]
    pub test: Vec<PolicyTest>,
    #[serde(default)]
    pub credential: Vec<CredentialHandle>,
}

/// One `[[rule]]`.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct RuleFile {
    pub name: Spanned<String>,
    pub tools: Option<Spanned<Vec<String>>>,
    /// The plugin `tools` belong to, which may not be installed here.
    pub plugin: Option<String>,
    pub decision: Verdict,
    pub reason: Option<String>,
    #[serde(default)]
    pub args: BTreeMap<String, Spanned<MatcherFile>>,
    /// Prefixes of `shell` commands the rule decides.
    pub commands: Option<command::SpannedList>,
    /// Files an allow rule's commands may write.
    pub writes: Option<command::SpannedList>,
    /// Variables an allow rule's commands may be given.
    pub env: Option<command::SpannedList>,
}

/// One argument matcher: exactly one of the three kinds must be set.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct MatcherFile {
    pub glob: Option<OneOrMany>,
    pub prefix: Option<String>,
    pub regex: Option<String>,
}

/// A string or a list of strings.
#[derive(Debug, Deserialize)]
#[serde(untagged, expecting = "a string or an array of strings")]
enum OneOrMany {
    One(String),
    Many(Vec<String>),
}

impl OneOrMany {
    fn into_vec(self) -> Vec<String> {
        match self {
            OneOrMany::One(s) => vec![s],
            OneOrMany::Many(v) => v,
        }
    }
}

/// `[protected]`.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct ProtectedFile {
    #[serde(default)]
    pub paths: Vec<Spanned<String>>,
    #[serde(default)]
    pub replace_defaults: bool,
    #[serde(default = "yes")]
    pub readable: bool,
}

impl Default for ProtectedFile {
    fn default() -> Self {
        ProtectedFile {
            paths: Vec::new(),
            replace_defaults: false,
            readable: true,
        }
    }
}

fn yes() -> bool {
    true
}
