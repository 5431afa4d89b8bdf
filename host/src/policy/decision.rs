//! What a policy decides about one call, and the facts it decides on.
//!
//! These enums are the documentation of Warden's approval modes: a call no
//! rule matches is decided by the [`Mode`] alone, from the tool's declared
//! annotations.

use serde::{Deserialize, Serialize};

use super::command::PartDecision;
use crate::protocol::Annotations;

/// How calls that no rule matches are decided.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Mode {
    /// Plan mode: read-only tools run, every other call is denied.
    ReadOnly,
    /// Read-only tools run, every other call asks the user first.
    #[default]
    Ask,
    /// Read-only tools and tools that stay off the network run; tools that
    /// reach an open world (the network) ask first.
    AutoEdit,
    /// Every call runs, within its grant.
    Auto,
    /// Only what a rule allows runs: every other call is denied, read-only
    /// tools included. For policies that list exactly what an unattended
    /// run may do (`warden policy suggest`).
    AllowList,
}

impl Mode {
    /// The name used in policy files and on the command line.
    pub fn as_str(self) -> &'static str {
        match self {
            Mode::ReadOnly => "read-only",
            Mode::Ask => "ask",
            Mode::AutoEdit => "auto-edit",
            Mode::Auto => "auto",
            Mode::AllowList => "allow-list",
        }
    }

    /// The mode's verdict for a call no rule matches, with its reason.
    pub(super) fn fallback(self, a: &Annotations) -> (Verdict, Option<&'static str>) {
        match self {
            Mode::ReadOnly if a.read_only => (Verdict::Allow, None),
            Mode::ReadOnly => (
                Verdict::Deny,
                Some("plan mode: only read-only tools may run"),
            ),
            Mode::Ask if a.read_only => (Verdict::Allow, None),
            Mode::Ask => (
                Verdict::Ask,
                Some("ask mode: calls that are not read-only need approval"),
            ),
            Mode::AutoEdit if a.read_only || !a.open_world => (Verdict::Allow, None),
            Mode::AutoEdit => (
                Verdict::Ask,
                Some("auto-edit mode: tools that reach the network need approval"),
            ),
            Mode::Auto => (Verdict::Allow, None),
            Mode::AllowList => (
                Verdict::Deny,
                Some("allow-list mode: only calls a rule allows may run"),
            ),
        }
    }
}

impl std::fmt::Display for Mode {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

/// What happens to a call. Deny beats ask beats allow.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Verdict {
    /// The call runs.
    Allow,
    /// The call runs only if the user approves it.
    Ask,
    /// The call does not run; the reason goes to the caller.
    Deny,
}

impl Verdict {
    /// The name used in policy files.
    pub fn as_str(self) -> &'static str {
        match self {
            Verdict::Allow => "allow",
            Verdict::Ask => "ask",
            Verdict::Deny => "deny",
        }
    }

    /// Precedence among matching rules: higher wins.
    pub(super) fn strength(self) -> u8 {
        match self {
            Verdict::Allow => 0,
            Verdict::Ask => 1,
            Verdict::Deny => 2,
        }
    }
}

impl std::fmt::Display for Verdict {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

/// What decided a call.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum DecidedBy {
    /// A rule of the policy, or a built-in check reporting itself as a
    /// rule (`protected-paths`, `shell-safety`), which has no index.
    Rule {
        /// Position of the rule in the policy file, from 0; absent for a
        /// built-in check.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        index: Option<usize>,
        /// The rule's name.
        name: String,
    },
    /// No rule matched; the policy's mode decided.
    Mode(Mode),
}

/// The policy's answer for one call.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Decision {
    /// Allow, ask or deny.
    pub verdict: Verdict,
    /// The rule or mode that decided.
    pub by: DecidedBy,
    /// Why, in words shown to the user and the model, when there is one.
    pub reason: Option<String>,
    /// For a `shell` call, the decision of each part of its command line;
    /// the call's verdict is the strongest of them. Empty for other tools.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub parts: Vec<PartDecision>,
}

/// What the policy knows about a call when it decides.
#[derive(Debug, Clone, Copy)]
pub struct CallFacts<'a> {
    /// The tool's name.
    pub tool: &'a str,
    /// The plugin that provides the tool.
    pub plugin: &'a str,
    /// The tool's declared behaviour hints.
    pub annotations: Annotations,
    /// The call's input, a JSON object already valid against the schema.
    pub input: &'a serde_json::Value,
}
