//! The OCI artifact layout of a Wasm component, as the wasm-pkg tools
//! (`wkg oci push`) and the CNCF Wasm OCI artifact spec publish it: an OCI
//! image manifest whose config has media type
//! `application/vnd.wasm.config.v0+json` and whose one layer is the
//! component itself, `application/wasm`. Components pushed by `wkg`
//! install here, and `warden plugin push` writes the same layout.

use serde::Serialize;

/// The media type of the manifest.
pub const MANIFEST_MEDIA_TYPE: &str = "application/vnd.oci.image.manifest.v1+json";
/// The media type of the config blob.
pub const CONFIG_MEDIA_TYPE: &str = "application/vnd.wasm.config.v0+json";
/// The media type of the one layer: the component's bytes.
pub const LAYER_MEDIA_TYPE: &str = "application/wasm";

/// The config blob (`application/vnd.wasm.config.v0+json`).
#[derive(Debug, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct WasmConfig {
    /// RFC 3339.
    pub created: String,
    pub author: Option<String>,
    /// Always `wasm`.
    pub architecture: String,
    /// `wasip2` for a component.
    pub os: String,
    /// `sha256:…` of the one layer.
    pub layer_digests: Vec<String>,
    pub component: ComponentInfo,
}

/// What the component imports and exports, by interface name.
#[derive(Debug, Serialize)]
pub struct ComponentInfo {
    pub exports: Vec<String>,
    pub imports: Vec<String>,
    pub target: Option<String>,
}

impl WasmConfig {
    /// The config of component `wasm`, created now.
    pub fn of_component(wasm: &[u8], layer_digest: String) -> WasmConfig {
        let (imports, exports) = top_level_names(wasm);
        WasmConfig {
            created: humantime::format_rfc3339_seconds(std::time::SystemTime::now()).to_string(),
            author: None,
            architecture: "wasm".into(),
            os: "wasip2".into(),
            layer_digests: vec![layer_digest],
            component: ComponentInfo {
                exports,
                imports,
                target: None,
            },
        }
    }
}

/// The names a component imports and exports at its top level.
fn top_level_names(wasm: &[u8]) -> (Vec<String>, Vec<String>) {
    use wasmparser::{Parser, Payload};
    let (mut imports, mut exports) = (Vec::new(), Vec::new());
    let mut depth = 0usize;
    for payload in Parser::new(0).parse_all(wasm) {
        let Ok(payload) = payload else { break };
        match payload {
            Payload::ModuleSection { .. } | Payload::ComponentSection { .. } => depth += 1,
            Payload::End(_) => depth = depth.saturating_sub(1),
            Payload::ComponentImportSection(s) if depth == 0 => {
                imports.extend(s.into_iter().flatten().map(|i| i.name.name.to_string()));
            }
            Payload::ComponentExportSection(s) if depth == 0 => {
                exports.extend(s.into_iter().flatten().map(|e| e.name.name.to_string()));
            }
            _ => {}
        }
    }
    (imports, exports)
}

/// What `bytes` is, if it is not a component: `Some(reason)`.
pub fn not_a_component(bytes: &[u8]) -> Option<&'static str> {
    if !bytes.starts_with(b"\0asm") {
        return Some("it is not WebAssembly");
    }
    if wasmparser::Parser::is_component(bytes) {
        None
    } else if wasmparser::Parser::is_core_wasm(bytes) {
        Some("it is a core WebAssembly module, not a component")
    } else {
        Some("it is WebAssembly of an unknown version, not a component")
    }
}
