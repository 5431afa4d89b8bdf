//! The manifest a plugin carries in its `warden:manifest` custom section.
//!
//! It declares the plugin's name and the capabilities it needs. Parsing is
//! strict: unknown keys, a bad name or an unreadable section refuse the
//! plugin rather than guess.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

use super::egress::NetPattern;

/// Name of the custom section holding the manifest (TOML text).
pub const MANIFEST_SECTION: &str = "warden:manifest";

/// A plugin's self-description.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Manifest {
    /// `^[a-z0-9][a-z0-9_-]{0,63}$`; unique among installed plugins.
    pub name: String,
    /// The plugin's own version.
    pub version: String,
    /// One line for `warden plugin list`.
    #[serde(default)]
    pub description: String,
    #[serde(default)]
    pub capabilities: DeclaredCapabilities,
    /// Longer usage notes for some of the plugin's tools, by tool name:
    /// given to the model with that tool's first result (or error) in a
    /// session, not in every request as descriptions are.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub guidance: BTreeMap<String, String>,
}

/// The longest usage notes of one tool, in bytes.
pub const MAX_GUIDANCE_BYTES: usize = 8 << 10;

/// What the plugin says it needs. A grant never exceeds this.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct DeclaredCapabilities {
    #[serde(default)]
    pub filesystem: FsNeed,
    /// Network destinations as `scheme://host[:port]`; `https://*` means
    /// any host and port over https. A call's requests must match one of
    /// these *and* a policy rule.
    #[serde(default)]
    pub network: Vec<NetPattern>,
    /// Commands run in the host's process sandbox (`warden:tool/process`).
    /// A call gets them only if a policy grants processes too.
    #[serde(default)]
    pub processes: bool,
    /// A plan shown to the user and questions to the user
    /// (`warden:tool/interaction`). A call gets them unless the policy
    /// sets `interaction = false`.
    #[serde(default)]
    pub interaction: bool,
    /// The workspace's memory notes, through `warden:tool/interaction`
    /// (implies `interaction`). A policy with `memory = false` denies
    /// every call of the plugin.
    #[serde(default)]
    pub memory: bool,
}

impl DeclaredCapabilities {
    /// Whether the plugin declares anything of `warden:tool/interaction`.
    pub fn wants_interaction(&self) -> bool {
        self.interaction || self.memory
    }
}

/// Filesystem access a plugin declares.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum FsNeed {
    /// No filesystem at all.
    #[default]
    None,
    /// Read the workspace.
    Read,
    /// Read and write the workspace.
    ReadWrite,
}

impl FsNeed {
    pub fn as_str(self) -> &'static str {
        match self {
            FsNeed::None => "none",
            FsNeed::Read => "read",
            FsNeed::ReadWrite => "read-write",
        }
    }
}

/// Why a manifest was refused.
#[derive(Debug, thiserror::Error)]
pub enum ManifestError {
    #[error(
        "the component has no `{MANIFEST_SECTION}` custom section; build it with warden-sdk's register! macro"
    )]
    Missing,
    #[error("the component has more than one `{MANIFEST_SECTION}` section")]
    Duplicate,
    #[error("the manifest is not UTF-8 text")]
    NotUtf8,
    #[error("the manifest is invalid: {0}")]
    Parse(#[from] toml::de::Error),
    #[error("invalid plugin name {0:?}: names must match ^[a-z0-9][a-z0-9_-]{{0,63}}$")]
    BadName(String),
    #[error(
        "the usage notes of tool {tool:?} are {bytes} bytes; at most {MAX_GUIDANCE_BYTES} are allowed"
    )]
    GuidanceTooLong { tool: String, bytes: usize },
    #[error("the component could not be parsed: {0}")]
    Wasm(#[from] wasmparser::BinaryReaderError),
}

impl Manifest {
    /// Parse and validate manifest text.
    pub fn parse(text: &str) -> Result<Self, ManifestError> {
        let manifest: Manifest = toml::from_str(text)?;
        if !valid_plugin_name(&manifest.name) {
            return Err(ManifestError::BadName(manifest.name));
        }
        if let Some((tool, notes)) =
            (manifest.guidance.iter()).find(|(_, notes)| notes.len() > MAX_GUIDANCE_BYTES)
        {
            return Err(ManifestError::GuidanceTooLong {
                tool: tool.clone(),
                bytes: notes.len(),
            });
        }
        Ok(manifest)
    }

    /// Read the manifest from a component's bytes without running it.
    pub fn from_component(wasm: &[u8]) -> Result<Self, ManifestError> {
        let mut found: Option<&[u8]> = None;
        for payload in wasmparser::Parser::new(0).parse_all(wasm) {
            if let wasmparser::Payload::CustomSection(section) = payload?
                && section.name() == MANIFEST_SECTION
            {
                if found.is_some() {
                    return Err(ManifestError::Duplicate);
                }
                found = Some(section.data());
            }
        }
        let data = found.ok_or(ManifestError::Missing)?;
        Manifest::parse(std::str::from_utf8(data).map_err(|_| ManifestError::NotUtf8)?)
    }
}

/// `^[a-z0-9][a-z0-9_-]{0,63}$`: safe as a directory name.
pub fn valid_plugin_name(name: &str) -> bool {
    let b = name.as_bytes();
    (1..=64).contains(&b.len())
        && (b[0].is_ascii_lowercase() || b[0].is_ascii_digit())
        && b.iter()
            .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || *c == b'_' || *c == b'-')
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn usage_notes_over_the_cap_refuse_the_manifest() {
        let text = |n: usize| {
            format!(
                "name = \"p\"\nversion = \"1\"\n[guidance]\nt = \"{}\"\n",
                "x".repeat(n)
            )
        };
        let ok = Manifest::parse(&text(MAX_GUIDANCE_BYTES)).unwrap();
        assert_eq!(ok.guidance["t"].len(), MAX_GUIDANCE_BYTES);
        assert!(matches!(
            Manifest::parse(&text(MAX_GUIDANCE_BYTES + 1)),
            Err(ManifestError::GuidanceTooLong { bytes, .. }) if bytes == MAX_GUIDANCE_BYTES + 1
        ));
    }

    #[test]
    fn parses_a_manifest() {
        let m = Manifest::parse(
            "name = \"fs\"\nversion = \"0.1.0\"\n[capabilities]\nfilesystem = \"read-write\"\n",
        )
        .unwrap();
        assert_eq!(m.capabilities.filesystem, FsNeed::ReadWrite);
        assert!(m.capabilities.network.is_empty());
    }

    #[test]
    fn refuses_unknown_keys_and_bad_names() {
        let unknown = Manifest::parse("name = \"x\"\nversion = \"1\"\nsudo = true\n");
        assert!(
            unknown
                .unwrap_err()
                .to_string()
                .contains("unknown field `sudo`")
        );
        let bad = Manifest::parse("name = \"../x\"\nversion = \"1\"\n");
        assert!(matches!(bad, Err(ManifestError::BadName(_))));
        let fs = Manifest::parse(
            "name = \"x\"\nversion = \"1\"\n[capabilities]\nfilesystem = \"all\"\n",
        );
        assert!(fs.is_err());
        let net = Manifest::parse(
            "name = \"x\"\nversion = \"1\"\n[capabilities]\nnetwork = [\"ftp://x.test\"]\n",
        );
        assert!(net.unwrap_err().to_string().contains("http or https"));
        let any = Manifest::parse(
            "name = \"x\"\nversion = \"1\"\n[capabilities]\nnetwork = [\"https://*\", \"http://*.example.com\"]\n",
        )
        .unwrap();
        assert_eq!(any.capabilities.network[0].to_string(), "https://*");
    }
}
