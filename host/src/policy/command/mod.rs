//! Deciding a `shell` call from its command line: the line is parsed with
//! a real shell grammar into simple commands ("parts"), each part is
//! decided by the `commands` rules and the mode, and the call gets the
//! strongest verdict of its parts (deny beats ask beats allow).
//!
//! Invariants: a part is allowed only by a rule whose prefix matches its
//! words exactly as the shell will see them; what the parser cannot resolve
//! (substitutions, `eval`, nested shells, expansions in the program name,
//! syntax it does not understand) is never allowed by a rule, and neither
//! is a write or an execution hidden in an option, a redirection or a
//! variable unless an allow rule names it. The list of such constructs
//! lives in [`hazards`] and in `policies/README.md`.

mod analyze;
mod decide;
mod hazard;
mod needs;
mod options;
mod parse;
mod redirect;
mod rules;
mod word;
mod wrappers;

#[cfg(test)]
mod tests;

use serde::{Deserialize, Serialize};

use super::{DecidedBy, Verdict};
use crate::protocol::Annotations;

pub(super) use hazard::is_name;
pub use needs::{CommandNeed, allow_needs};
pub use rules::CommandMatch;
pub(super) use rules::{CommandRules, SpannedList, compile, covers, same_commands};

/// The tool whose calls are decided per command.
pub const SHELL_TOOL: &str = "shell";

/// The built-in plugin that provides [`SHELL_TOOL`].
pub const SHELL_PLUGIN: &str = "shell";

/// How the built-in `shell` tool is annotated: it may change anything its
/// grant allows, and it does not reach the network.
pub const SHELL_ANNOTATIONS: Annotations = Annotations {
    read_only: false,
    destructive: true,
    idempotent: false,
    open_world: false,
};

/// The name reported when the command-line checks, not a rule or the
/// mode, decide a part: a construct the policy cannot see through, or a
/// write an allow rule does not name.
pub const SHELL_SAFETY_RULE: &str = "shell-safety";

/// The plugin and annotations of a built-in tool that may not be installed
/// yet (today only `shell`), so policies can be checked and explained
/// without it.
pub fn builtin_facts(tool: &str) -> Option<(String, Annotations)> {
    (tool == SHELL_TOOL).then(|| (SHELL_PLUGIN.to_string(), SHELL_ANNOTATIONS))
}

/// What the policy decided about one part of a command line.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct PartDecision {
    /// The part as written: a simple command, or the construct (such as
    /// `$(…)`) that decided it.
    pub command: String,
    /// Allow, ask or deny.
    pub verdict: Verdict,
    /// The rule or mode that decided; [`SHELL_SAFETY_RULE`] when a
    /// construct the policy cannot allow decided.
    pub by: DecidedBy,
    /// Why, when there is more to say than the rule's name.
    pub reason: Option<String>,
}
