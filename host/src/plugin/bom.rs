//! A plugin's capability bill of materials: what its manifest declares, the
//! most its imports could ever let it do, and what a policy grants each of
//! its tools — with the mismatches between them.
//!
//! Invariant: the import-derived reach is read from the component alone,
//! never from the manifest, so a component that imports more than it
//! declares is always flagged with a [`Severity::Warning`].

use std::path::Path;

use serde::Serialize;

use crate::capability::{DeclaredCapabilities, FsNeed, ImportClass, Manifest, classify_import};
use crate::capability::{FsAccess, GrantCut};
use crate::policy::grant_from_policy;
use crate::policy::{CallFacts, Policy, Verdict};
use crate::protocol::ToolSpec;

/// The most a component could do, from its imports.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct Reach {
    /// `wasi:filesystem`: the directories a grant preopens.
    pub filesystem: bool,
    /// `wasi:http`: HTTP requests through the host's egress checks.
    pub http: bool,
    /// `warden:tool/process`: commands in the host's process sandbox.
    pub process: bool,
    /// `warden:tool/interaction`: a plan, questions to the user, memory notes.
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub interaction: bool,
    /// `wasi:sockets`: raw network, never linked by Warden.
    pub sockets: bool,
    /// `wasi:cli/environment`: always empty in Warden.
    pub environment: bool,
    /// Baseline interfaces: `clocks`, `random`, `io`, `stdio`, `exit`.
    pub baseline: Vec<String>,
    /// Imports Warden does not know: never linked, calls trap.
    pub unknown: Vec<String>,
}

impl Reach {
    pub fn of(imports: &[String]) -> Reach {
        let mut r = Reach::default();
        for name in imports {
            match classify_import(name) {
                ImportClass::Host => {}
                ImportClass::Filesystem => r.filesystem = true,
                ImportClass::Http => r.http = true,
                ImportClass::Process => r.process = true,
                ImportClass::Interaction => r.interaction = true,
                ImportClass::Sockets => r.sockets = true,
                ImportClass::Environment => r.environment = true,
                ImportClass::Baseline => {
                    let kind = baseline_kind(name).to_string();
                    if !r.baseline.contains(&kind) {
                        r.baseline.push(kind);
                    }
                }
                ImportClass::Unknown => r.unknown.push(name.clone()),
            }
        }
        r.baseline.sort();
        r
    }
}

/// `clocks`, `random`, `io`, `stdio` or `exit` for a baseline import.
fn baseline_kind(name: &str) -> &'static str {
    let iface = name.split('@').next().unwrap_or(name);
    if iface.starts_with("wasi:clocks/") {
        "clocks"
    } else if iface.starts_with("wasi:random/") {
        "random"
    } else if iface.starts_with("wasi:io/") {
        "io"
    } else if iface == "wasi:cli/exit" {
        "exit"
    } else {
        "stdio"
    }
}

/// How much a finding matters.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Severity {
    /// The component can reach for more than it declares: `--strict` refuses it.
    Warning,
    /// It declares more than it could ever use.
    Note,
}

/// A mismatch between declaration and imports.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Finding {
    pub severity: Severity,
    /// Stable kebab-case name, e.g. `undeclared-http`.
    pub code: &'static str,
    pub message: String,
}

/// Compare what `declared` says with what `reach` allows.
pub fn findings(declared: &DeclaredCapabilities, reach: &Reach) -> Vec<Finding> {
    let mut out = Vec::new();
    let mut flag = |severity, code, message: String| {
        out.push(Finding {
            severity,
            code,
            message,
        })
    };
    let no_network = declared.network.is_empty();
    if reach.filesystem && declared.filesystem == FsNeed::None {
        flag(
            Severity::Warning,
            "undeclared-filesystem",
            "imports wasi:filesystem but declares no filesystem access".into(),
        );
    }
    if reach.http && no_network {
        flag(
            Severity::Warning,
            "undeclared-http",
            "imports wasi:http (can send HTTP requests) but declares no network".into(),
        );
    }
    if reach.sockets {
        let why = if no_network {
            "but declares no network"
        } else {
            "which no network rule covers"
        };
        flag(
            Severity::Warning,
            "raw-sockets",
            format!("imports wasi:sockets (raw network, never linked: calls trap) {why}"),
        );
    }
    for name in &reach.unknown {
        flag(
            Severity::Warning,
            "unknown-import",
            format!("imports {name}, which Warden does not provide: calls trap"),
        );
    }
    if declared.filesystem != FsNeed::None && !reach.filesystem {
        flag(
            Severity::Note,
            "unused-filesystem",
            format!(
                "declares filesystem {} but does not import wasi:filesystem: it can never use it",
                declared.filesystem.as_str()
            ),
        );
    }
    if !no_network && !reach.http {
        flag(
            Severity::Note,
            "unused-network",
            "declares network rules but does not import wasi:http: it can never use them".into(),
        );
    }
    out
}

/// What a policy grants one tool.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct ToolGrant {
    pub tool: String,
    pub read_only: bool,
    /// The policy's verdict for a call with no arguments.
    pub verdict: Verdict,
    /// Workspace access, `None` for no filesystem.
    pub workspace: Option<FsAccess>,
    /// Egress rules granted: the policy's rules that overlap what the
    /// plugin declared.
    pub network: Vec<String>,
    /// Declared capabilities the grant cuts.
    pub cuts: Vec<GrantCut>,
}

/// What `policy` grants each of `tools` of the plugin `manifest`
/// describes, computed as `warden tool call` does.
pub fn granted(manifest: &Manifest, tools: &[ToolSpec], policy: &Policy) -> Vec<ToolGrant> {
    let empty = serde_json::json!({});
    tools
        .iter()
        .map(|spec| {
            let facts = CallFacts {
                tool: spec.name.as_str(),
                plugin: &manifest.name,
                annotations: spec.annotations,
                input: &empty,
            };
            let spec_grant = policy.grant_for_call(&facts);
            let (grant, cuts) =
                grant_from_policy(&manifest.capabilities, Path::new("."), &spec_grant);
            ToolGrant {
                tool: spec.name.as_str().to_string(),
                read_only: spec.annotations.read_only,
                verdict: policy.decide(&facts).verdict,
                workspace: grant.filesystem.map(|fs| fs.access),
                network: grant
                    .network
                    .iter()
                    .flat_map(|n| n.rules.iter().map(ToString::to_string))
                    .collect(),
                cuts,
            }
        })
        .collect()
}

/// The whole bill of materials.
#[derive(Debug, Clone, Serialize)]
pub struct Bom {
    pub declared: DeclaredCapabilities,
    pub imports: Reach,
    /// The policy the grants are computed under.
    pub policy: String,
    pub granted: Vec<ToolGrant>,
    pub findings: Vec<Finding>,
}

impl Bom {
    /// The bill of materials of a plugin with `manifest`, importing
    /// `imports`, providing `tools`, under `policy`.
    pub fn new(
        manifest: &Manifest,
        imports: &[String],
        tools: &[ToolSpec],
        policy: &Policy,
    ) -> Bom {
        let reach = Reach::of(imports);
        Bom {
            declared: manifest.capabilities.clone(),
            findings: findings(&manifest.capabilities, &reach),
            imports: reach,
            policy: policy.name.clone(),
            granted: granted(manifest, tools, policy),
        }
    }

    /// Whether `--strict` refuses the plugin.
    pub fn has_warnings(&self) -> bool {
        self.findings
            .iter()
            .any(|f| f.severity == Severity::Warning)
    }
}

#[cfg(test)]
#[path = "bom_tests.rs"]
mod tests;
