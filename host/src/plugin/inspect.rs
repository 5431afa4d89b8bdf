//! What a component could do, read from its imports without running it.

use serde::Serialize;

use super::Manifest;

/// The kind of authority an import stands for.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum ImportClass {
    /// The Warden host interface (log, progress, is-cancelled).
    Host,
    /// Files in the directories a grant preopens.
    Filesystem,
    /// HTTP requests through the host's egress layer.
    Http,
    /// Raw sockets and name lookups: never linked by Warden.
    Sockets,
    /// Environment variables and arguments: always empty in Warden.
    Environment,
    /// Clocks, randomness, streams, captured stdio, exit.
    Baseline,
    /// Anything else: not linked, traps if called.
    Unknown,
}

impl ImportClass {
    /// What this class of import lets a component do, for humans.
    pub fn describe(self) -> &'static str {
        match self {
            ImportClass::Host => "warden host interface: log, progress, cancellation, fan-out",
            ImportClass::Filesystem => "can touch the directories it is granted",
            ImportClass::Http => "can send HTTP requests (through host egress checks)",
            ImportClass::Sockets => "raw network sockets: never linked, calls trap",
            ImportClass::Environment => "environment and arguments: always empty",
            ImportClass::Baseline => "baseline: clocks, random, streams, captured stdio",
            ImportClass::Unknown => "unknown interface: not linked, calls trap",
        }
    }
}

/// Classify an import name such as `wasi:filesystem/types@0.2.6`.
pub fn classify_import(name: &str) -> ImportClass {
    let iface = name.split('@').next().unwrap_or(name);
    match iface {
        "warden:tool/host" | "warden:tool/types" => ImportClass::Host,
        "wasi:filesystem/types" | "wasi:filesystem/preopens" => ImportClass::Filesystem,
        "wasi:cli/environment" => ImportClass::Environment,
        i if i.starts_with("wasi:http/") => ImportClass::Http,
        i if i.starts_with("wasi:sockets/") => ImportClass::Sockets,
        i if i.starts_with("wasi:clocks/")
            || i.starts_with("wasi:random/")
            || i.starts_with("wasi:io/")
            || i.starts_with("wasi:cli/") =>
        {
            ImportClass::Baseline
        }
        _ => ImportClass::Unknown,
    }
}

/// Everything `warden plugin inspect` shows.
#[derive(Debug, Clone, Serialize)]
pub struct Inspection {
    pub manifest: Manifest,
    pub sha256: String,
    pub size: u64,
    pub wit_version: String,
    pub imports: Vec<InspectedImport>,
    pub tools: Vec<crate::protocol::ToolSpec>,
    /// Why the installed plugin may not run, when it may not.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub refused: Option<String>,
    /// The capability bill of materials, when a policy was given.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub capabilities: Option<super::bom::Bom>,
}

/// One import and what it means.
#[derive(Debug, Clone, Serialize)]
pub struct InspectedImport {
    pub name: String,
    pub class: ImportClass,
}

impl Inspection {
    pub fn new(meta: &crate::runtime::PluginMeta, sha256: &str, size: u64) -> Self {
        Inspection {
            manifest: meta.manifest.clone(),
            sha256: sha256.to_string(),
            size,
            wit_version: meta.wit_version.clone(),
            imports: meta
                .imports
                .iter()
                .map(|n| InspectedImport {
                    name: n.clone(),
                    class: classify_import(n),
                })
                .collect(),
            tools: meta.tools.clone(),
            refused: None,
            capabilities: None,
        }
    }
}

impl Inspection {
    /// This inspection with its bill of materials under `policy`.
    pub fn with_policy(mut self, policy: &crate::policy::Policy) -> Self {
        let imports: Vec<String> = self.imports.iter().map(|i| i.name.clone()).collect();
        self.capabilities = Some(super::bom::Bom::new(
            &self.manifest,
            &imports,
            &self.tools,
            policy,
        ));
        self
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn classifies_imports() {
        assert_eq!(
            classify_import("wasi:filesystem/types@0.2.6"),
            ImportClass::Filesystem
        );
        assert_eq!(
            classify_import("wasi:sockets/tcp@0.2.0"),
            ImportClass::Sockets
        );
        assert_eq!(
            classify_import("wasi:http/outgoing-handler@0.2.0"),
            ImportClass::Http
        );
        assert_eq!(
            classify_import("wasi:cli/stdout@0.2.6"),
            ImportClass::Baseline
        );
        assert_eq!(
            classify_import("wasi:cli/environment@0.2.6"),
            ImportClass::Environment
        );
        assert_eq!(classify_import("warden:tool/host@0.1.0"), ImportClass::Host);
        assert_eq!(classify_import("evil:thing/x"), ImportClass::Unknown);
    }
}
