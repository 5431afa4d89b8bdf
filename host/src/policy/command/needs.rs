//! What an allow rule must name for a command line that ran to be allowed
//! again: per part, a prefix (the program, its subcommand, and every risky
//! option up to the last), the variables it sets and the files it writes.
//!
//! Invariant: a part is described only when a rule can allow it exactly as
//! it was written; a part with a construct no rule can allow, a word known
//! only when it runs, or a write outside the workspace is an error, never a
//! wider prefix.

use super::analyze::always_asks;
use super::hazard::Hazard;
use super::parse::parse;
use super::word::prefix_words;
use crate::capability::path_guard::normalized;

/// Programs whose first plain argument is a subcommand worth keeping in
/// the prefix (`git diff`, `cargo test`); others keep the program alone.
const SUBCOMMANDS: &[&str] = &[
    "git", "cargo", "npm", "pnpm", "yarn", "go", "docker", "podman", "kubectl", "pip", "pip3",
    "uv", "rustup", "make", "gh", "dotnet", "mvn", "gradle", "bundle", "rake", "poetry",
];

/// Characters that make a file name a glob pattern in `writes`.
const GLOB_META: &[char] = &['*', '?', '[', ']', '{', '}', '\\'];

/// One part of a command line, as an allow rule would have to name it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CommandNeed {
    /// The prefix: words separated by single spaces.
    pub prefix: String,
    /// Variables set for the command (`VAR=1 cargo test`).
    pub env: Vec<String>,
    /// Files it writes, normalised and relative to the workspace.
    pub writes: Vec<String>,
}

/// The parts of `line` as allow rules would have to name them, or why no
/// rule can allow one of them.
pub fn allow_needs(line: &str) -> Result<Vec<CommandNeed>, String> {
    let mut needs = Vec::new();
    for part in parse(line) {
        let shown = &part.text;
        if let Some(h) = part.analysis.hazards.iter().find(|h| h.opaque()) {
            return Err(format!("`{shown}`: {}", h.describe()));
        }
        let start = part.analysis.views.last().copied().unwrap_or(0);
        let words = part.words.get(start..).unwrap_or_default();
        let Some(program) = words.first() else {
            return Err(format!("`{shown}` runs no command a prefix can name"));
        };
        if always_asks(&program.text) {
            return Err(format!("`{shown}`: no rule may allow `{}`", program.text));
        }
        let mut len = 1;
        let plain = |w: &str| {
            w.chars().next().is_some_and(|c| c.is_ascii_alphanumeric())
                && w.chars()
                    .all(|c| c.is_ascii_alphanumeric() || "._:-".contains(c))
        };
        let second = words.get(1).filter(|w| w.literal);
        if SUBCOMMANDS.contains(&program.text.as_str()) && second.is_some_and(|w| plain(&w.text)) {
            len = 2;
        }
        if matches!(program.text.as_str(), "python" | "python3")
            && words.get(1).is_some_and(|w| w.literal && w.text == "-m")
            && words.get(2).is_some_and(|w| w.literal && plain(&w.text))
        {
            len = 3;
        }
        let mut env = Vec::new();
        let mut writes = Vec::new();
        for h in &part.analysis.hazards {
            match h {
                Hazard::RiskyOption { index, .. } => len = len.max(index + 1),
                Hazard::Assignment(name) => env.push(name.clone()),
                Hazard::Write { target, .. } => {
                    let path = normalized(target);
                    if path.starts_with('/') || path.starts_with("..") || path.contains(GLOB_META) {
                        return Err(format!(
                            "`{shown}` writes `{target}`, which a workspace glob cannot name exactly"
                        ));
                    }
                    writes.push(path.into_owned());
                }
                // Opaque: refused above.
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
                | Hazard::WriteUnknown(_) => {}
            }
        }
        let taken = words.get(..len).unwrap_or(words);
        if taken
            .iter()
            .any(|w| !w.literal || w.text.contains(char::is_whitespace))
        {
            return Err(format!(
                "`{shown}`: its leading words are known only when it runs"
            ));
        }
        let prefix = taken
            .iter()
            .map(|w| w.text.as_str())
            .collect::<Vec<_>>()
            .join(" ");
        if let Err(e) = prefix_words(&prefix) {
            return Err(format!("`{shown}`: `{prefix}` cannot be a prefix: {e}"));
        }
        needs.push(CommandNeed {
            prefix,
            env,
            writes,
        });
    }
    Ok(needs)
}
