//! What a component could do, read from its imports without running it.

use serde::Serialize;

use crate::capability::{ImportClass, Manifest, classify_import};

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
