//! `warden policy suggest`: the narrowest policy that would have allowed
//! exactly the calls a run made, from plain data the CLI reads out of the
//! audit log ([`RecordedCall`]).
//!
//! Invariants: a call the run did not let run is never allowed by the
//! suggestion; a recorded path or command that cannot be named exactly
//! (outside the workspace, glob metacharacters, a construct no prefix can
//! allow) is left out and listed, never widened; the result parses, and
//! its own `[[test]]` cases (every recorded call allowed, probes just
//! outside denied) pass, or no policy is returned.

mod paths;
mod plan;
mod render;

#[cfg(test)]
mod tests;

use serde::Serialize;
use serde_json::Value;

pub use paths::{PathRefusal, generalise, workspace_path};

use super::{Policy, PolicyError};
use crate::protocol::Annotations;

/// One call as the audit log recorded it.
#[derive(Debug, Clone, Default)]
pub struct RecordedCall {
    /// The tool called.
    pub tool: String,
    /// Its plugin, when recorded.
    pub plugin: Option<String>,
    /// The input as recorded (secret-looking values redacted).
    pub arguments: Value,
    /// Why the run did not let the call run (denied, unanswered, failed
    /// validation); `None` for a call that ran.
    pub refused: Option<String>,
    /// Whether it changed files (for `shell`, whose files are not recorded
    /// one by one: whether it was granted the workspace read-write).
    pub wrote: bool,
    /// Destinations it reached, `scheme://host:port`.
    pub network: Vec<String>,
    /// Toolchain directories its process grant had.
    pub toolchains: Vec<String>,
    /// Variables its process grant passed through.
    pub process_env: Vec<String>,
    /// How long it ran.
    pub duration_ms: u64,
    /// How much output it made.
    pub output_bytes: u64,
}

/// What to generate.
#[derive(Debug, Clone)]
pub struct SuggestRequest {
    /// The new policy's `name`.
    pub name: String,
    /// Where the calls came from, for the header (`session 1a2b…`).
    pub source: String,
    /// When, RFC 3339.
    pub generated_at: String,
    /// The Warden version generating it.
    pub version: String,
    /// The calls, in log order.
    pub calls: Vec<RecordedCall>,
    /// Installed tools the calls did not use (one becomes a deny probe).
    pub unused_tools: Vec<String>,
}

/// A generated policy and what it allows.
#[derive(Debug, Clone, Serialize)]
pub struct Suggestion {
    /// The policy file.
    pub toml: String,
    /// What it allows, per tool, and what it leaves out.
    pub summary: SuggestSummary,
}

/// The structured summary of a [`Suggestion`] (`--json`).
#[derive(Debug, Clone, Default, Serialize)]
pub struct SuggestSummary {
    /// The policy's name.
    pub name: String,
    /// Where the calls came from.
    pub source: String,
    /// How many calls were read.
    pub calls: usize,
    /// What each tool called is allowed.
    pub tools: Vec<ToolSummary>,
    /// The calls left out, and why.
    pub not_allowed: Vec<NotAllowed>,
    /// Test cases expecting `allow`: the distinct calls allowed again.
    pub allow_tests: usize,
    /// Test cases expecting `deny`: probes just outside.
    pub deny_tests: usize,
}

/// What the suggestion allows one tool.
#[derive(Debug, Clone, Default, Serialize)]
pub struct ToolSummary {
    /// The tool's name.
    pub tool: String,
    /// Its plugin, when recorded.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub plugin: Option<String>,
    /// Calls of it that the suggestion allows again.
    pub calls: usize,
    /// `read-only` or `read-write`.
    pub workspace: &'static str,
    /// Globs on its `path` argument; empty when it is not constrained.
    pub paths: Vec<String>,
    /// Command prefixes (`shell`).
    pub commands: Vec<String>,
    /// Destinations, `scheme://host:port`.
    pub network: Vec<String>,
}

/// A recorded call the suggestion does not allow, and why.
#[derive(Debug, Clone, Serialize)]
pub struct NotAllowed {
    /// The tool called.
    pub tool: String,
    /// Its input as recorded.
    pub arguments: Value,
    /// Why the suggestion does not allow it.
    pub reason: String,
}

/// Why no policy could be suggested.
#[derive(Debug, thiserror::Error)]
pub enum SuggestError {
    /// Nothing ran, so there is nothing to allow.
    #[error(
        "no call in {0} ran, so there is nothing to allow; pick a session or time range with calls (`warden sessions list`, `warden audit show`)"
    )]
    NothingRan(String),
    /// The generated text did not parse: a bug in the generator.
    #[error(
        "the suggested policy does not parse ({0}); this is a bug in `warden policy suggest`, please report it"
    )]
    Invalid(PolicyError),
    /// The generated policy fails its own tests: a bug in the generator.
    #[error(
        "the suggested policy fails its own tests ({0}); this is a bug in `warden policy suggest`, please report it"
    )]
    OwnTestsFail(String),
}

/// Generate the policy for `req`, and check it: it must parse and pass
/// its own tests, run with `lookup` (a tool's plugin and annotations).
pub fn suggest(
    req: &SuggestRequest,
    lookup: &dyn Fn(&str) -> Option<(String, Annotations)>,
) -> Result<Suggestion, SuggestError> {
    let plan = plan::Plan::of(req);
    if plan.tools.is_empty() {
        return Err(SuggestError::NothingRan(req.source.clone()));
    }
    let toml = render::render(req, &plan);
    let policy = Policy::parse(&toml, "suggested policy").map_err(SuggestError::Invalid)?;
    let failed: Vec<String> = policy
        .run_tests(lookup)
        .into_iter()
        .filter(|o| !o.passed)
        .map(|o| {
            format!(
                "`{}` expected {}, got {}{}",
                o.name,
                o.expected,
                o.got.verdict,
                o.got.reason.map(|r| format!(": {r}")).unwrap_or_default()
            )
        })
        .collect();
    if !failed.is_empty() {
        return Err(SuggestError::OwnTestsFail(failed.join("; ")));
    }
    let summary = SuggestSummary {
        name: req.name.clone(),
        source: req.source.clone(),
        calls: req.calls.len(),
        tools: plan.summaries(),
        not_allowed: plan.not_allowed.clone(),
        allow_tests: plan.allow_tests.len(),
        deny_tests: plan.probes.len(),
    };
    Ok(Suggestion { toml, summary })
}
