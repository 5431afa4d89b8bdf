//! A loaded plugin: compiled component, manifest, tool specs, and cached
//! `InstancePre`s (one per link profile) so each call only instantiates.

use std::collections::HashMap;
use std::sync::{Arc, Mutex, PoisonError};

use wasmtime::Engine;
use wasmtime::component::Component;
use wasmtime::component::types::ComponentItem;

use super::guest::{GuestPre, GuestSpec, WitVersion};
use super::link::{LinkProfile, linker_for};
use super::state::CallState;
use crate::capability::{Manifest, ManifestError};
use crate::protocol::{ToolName, ToolSpec};

/// The WIT package versions this host can run.
pub const SUPPORTED_WIT: &[&str] = &["0.1.0", "0.1.1", "0.2.0", "0.2.1", "0.2.2"];

/// The interface every plugin must export, without its version.
pub const PLUGIN_EXPORT: &str = "warden:tool/plugin";

/// Why a component could not be loaded as a plugin.
#[derive(Debug, thiserror::Error)]
pub enum LoadError {
    #[error(transparent)]
    Manifest(#[from] ManifestError),
    #[error(
        "not a WebAssembly file (it does not start with the `\\0asm` magic bytes); give the .wasm a plugin build produced"
    )]
    NotWasm,
    #[error(
        "a core WebAssembly module, not a component; build the plugin with warden-sdk for wasm32-wasip2 (or wrap it with `wasm-tools component new`)"
    )]
    CoreModule,
    #[error("not a valid WebAssembly component: {0}")]
    Compile(String),
    #[error(
        "not a Warden tool plugin: it does not export `{PLUGIN_EXPORT}`; build it with warden-sdk"
    )]
    NotAPlugin,
    #[error(
        "the plugin was built against warden:tool@{found}, but this warden supports {}; rebuild it with a matching warden-sdk",
        SUPPORTED_WIT.join(", ")
    )]
    UnsupportedWit { found: String },
    #[error("the component does not fit the warden:tool world: {0}")]
    World(String),
    #[error("the plugin's tool list is invalid: {0}")]
    Tools(String),
}

/// Why a tool's input cannot be checked: validation never fails open, so
/// the call is refused.
#[derive(Debug, thiserror::Error)]
pub enum SchemaError {
    /// The plugin lists no tool of that name.
    #[error("plugin {plugin} has no tool {tool}")]
    UnknownTool { plugin: String, tool: String },
    /// The tool's input schema does not compile.
    #[error("{0}")]
    Invalid(String),
}

/// Refuse, in one line, bytes that are not a WebAssembly component: the
/// magic bytes, then the component layer (a core module has layer 0).
pub fn check_preamble(wasm: &[u8]) -> Result<(), LoadError> {
    match wasm.get(..8) {
        Some([0, b'a', b's', b'm', _, _, 1, 0]) => Ok(()),
        Some([0, b'a', b's', b'm', _, _, 0, 0]) => Err(LoadError::CoreModule),
        Some(_) | None => Err(LoadError::NotWasm),
    }
}

/// Everything known about a component without running a tool.
#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct PluginMeta {
    pub manifest: Manifest,
    pub tools: Vec<ToolSpec>,
    /// Interfaces the component imports, with versions.
    pub imports: Vec<String>,
    /// The `warden:tool` version the component was built against.
    pub wit_version: String,
}

/// A plugin ready to run calls.
pub struct LoadedPlugin {
    pub(crate) engine: Engine,
    pub(crate) component: Component,
    pub meta: PluginMeta,
    pub sha256: String,
    /// The component imports `fan-out`, so its calls get workers set up.
    pub(crate) fans_out: bool,
    /// The `warden:tool` version whose bindings run it.
    pub(crate) version: WitVersion,
    pres: Mutex<HashMap<LinkProfile, GuestPre<CallState>>>,
    validators: Mutex<HashMap<String, Arc<jsonschema::Validator>>>,
}

impl std::fmt::Debug for LoadedPlugin {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("LoadedPlugin")
            .field("name", &self.meta.manifest.name)
            .field("sha256", &self.sha256)
            .finish()
    }
}

impl LoadedPlugin {
    pub(crate) fn new(
        engine: Engine,
        component: Component,
        meta: PluginMeta,
        sha256: String,
    ) -> Self {
        LoadedPlugin {
            fans_out: imports_fan_out(&engine, &component),
            // `interface_facts` refused every version without bindings.
            version: WitVersion::of(&meta.wit_version).unwrap_or(WitVersion::V0_1),
            engine,
            component,
            meta,
            sha256,
            pres: Mutex::default(),
            validators: Mutex::default(),
        }
    }

    /// The plugin's name from its manifest.
    pub fn name(&self) -> &str {
        &self.meta.manifest.name
    }

    /// The tools the plugin provides.
    pub fn tools(&self) -> &[ToolSpec] {
        &self.meta.tools
    }

    /// The spec of tool `name`, if this plugin provides it.
    pub fn tool(&self, name: &str) -> Option<&ToolSpec> {
        self.meta.tools.iter().find(|t| t.name.as_str() == name)
    }

    /// The pre-linked instance for `profile`, built on first use.
    pub(crate) fn instance_pre(
        &self,
        profile: LinkProfile,
    ) -> Result<GuestPre<CallState>, LoadError> {
        let mut pres = self.pres.lock().unwrap_or_else(PoisonError::into_inner);
        if let Some(pre) = pres.get(&profile) {
            return Ok(pre.clone());
        }
        let linker = linker_for(&self.engine, &self.component, self.version, profile)
            .map_err(|e| LoadError::World(format!("{e:#}")))?;
        let pre = linker
            .instantiate_pre(&self.component)
            .map_err(|e| LoadError::World(format!("{e:#}")))?;
        let pre =
            GuestPre::new(self.version, pre).map_err(|e| LoadError::World(format!("{e:#}")))?;
        pres.insert(profile, pre.clone());
        Ok(pre)
    }

    /// The compiled JSON Schema validator for tool `name`'s input. Fails
    /// (and the call must be refused) if the tool is unknown or its schema
    /// does not compile: validation never fails open.
    pub fn validator(&self, name: &str) -> Result<Arc<jsonschema::Validator>, SchemaError> {
        let mut validators = self
            .validators
            .lock()
            .unwrap_or_else(PoisonError::into_inner);
        if let Some(v) = validators.get(name) {
            return Ok(v.clone());
        }
        let spec = self.tool(name).ok_or_else(|| SchemaError::UnknownTool {
            plugin: self.name().to_string(),
            tool: name.to_string(),
        })?;
        let v = Arc::new(compile_schema(&spec.input_schema)?);
        validators.insert(name.to_string(), v.clone());
        Ok(v)
    }
}

/// True if `component` imports the host's `fan-out` function.
fn imports_fan_out(engine: &Engine, component: &Component) -> bool {
    component
        .component_type()
        .imports(engine)
        .any(|(name, item)| match item.ty {
            ComponentItem::ComponentInstance(instance) if name.starts_with(HOST_IMPORT) => instance
                .exports(engine)
                .any(|(export, _)| export == "fan-out"),
            _ => false,
        })
}

/// The host interface every plugin may import, without its version.
const HOST_IMPORT: &str = "warden:tool/host@";

/// The imports of `component` and the `warden:tool` version it exports.
pub(crate) fn interface_facts(
    engine: &Engine,
    component: &Component,
) -> Result<(Vec<String>, String), LoadError> {
    let ty = component.component_type();
    let imports: Vec<String> = ty
        .imports(engine)
        .map(|(name, _)| name.to_string())
        .collect();
    let version = ty
        .exports(engine)
        .find_map(|(name, _)| name.strip_prefix(PLUGIN_EXPORT).map(str::to_string))
        .ok_or(LoadError::NotAPlugin)?;
    let version = version
        .strip_prefix('@')
        .unwrap_or("unversioned")
        .to_string();
    if !SUPPORTED_WIT.contains(&version.as_str()) || WitVersion::of(&version).is_none() {
        return Err(LoadError::UnsupportedWit { found: version });
    }
    for import in &imports {
        if let Some(v) = import
            .strip_prefix(HOST_IMPORT)
            .or_else(|| import.strip_prefix("warden:tool/types@"))
            && v != version
        {
            return Err(LoadError::UnsupportedWit {
                found: v.to_string(),
            });
        }
    }
    Ok((imports, version))
}

/// Compile an input schema. A schema naming its draft in `$schema` gets that
/// draft; one that does not is read as draft 7, the dialect tool-calling
/// APIs use (and far cheaper to set up per process than 2020-12).
pub fn compile_schema(schema: &serde_json::Value) -> Result<jsonschema::Validator, SchemaError> {
    let built = if schema.get("$schema").is_some() {
        jsonschema::validator_for(schema)
    } else {
        jsonschema::options()
            .with_draft(jsonschema::Draft::Draft7)
            .build(schema)
    };
    built.map_err(|e| SchemaError::Invalid(e.to_string()))
}

/// Check a plugin's tool list: valid unique names and compilable schemas.
pub(crate) fn check_tools(tools: &[ToolSpec]) -> Result<(), LoadError> {
    let mut seen = std::collections::HashSet::new();
    for t in tools {
        if !seen.insert(t.name.as_str()) {
            return Err(LoadError::Tools(format!("tool {} is listed twice", t.name)));
        }
        if !t.input_schema.is_object() {
            return Err(LoadError::Tools(format!(
                "tool {}: the input schema is not a JSON object",
                t.name
            )));
        }
        if let Err(e) = compile_schema(&t.input_schema) {
            return Err(LoadError::Tools(format!(
                "tool {}: invalid input schema: {e}",
                t.name
            )));
        }
    }
    if tools.is_empty() {
        return Err(LoadError::Tools("the plugin provides no tools".into()));
    }
    Ok(())
}

/// Usage notes in the manifest must be for tools the plugin provides: a
/// misspelt name would otherwise never reach the model.
pub(crate) fn check_guidance(meta: &PluginMeta) -> Result<(), LoadError> {
    match (meta.manifest.guidance.keys())
        .find(|name| !meta.tools.iter().any(|t| t.name.as_str() == *name))
    {
        Some(name) => Err(LoadError::Tools(format!(
            "the manifest's [guidance] names tool {name:?}, which the plugin does not provide"
        ))),
        None => Ok(()),
    }
}

/// The most tools one plugin may list.
pub const MAX_TOOLS: usize = 256;
/// The longest tool description the host keeps, in bytes.
pub const MAX_DESCRIPTION_BYTES: usize = 16 << 10;
/// The longest input schema the host keeps, in bytes of JSON text.
pub const MAX_SCHEMA_BYTES: usize = 256 << 10;

/// Turn a guest tool spec into a host one, refusing one larger than the
/// host keeps.
pub(crate) fn spec_from_guest(spec: GuestSpec) -> Result<ToolSpec, LoadError> {
    if spec.description.len() > MAX_DESCRIPTION_BYTES || spec.input_schema.len() > MAX_SCHEMA_BYTES
    {
        return Err(LoadError::Tools(format!(
            "a tool's description ({} bytes) or input schema ({} bytes) is longer than the host \
             keeps ({MAX_DESCRIPTION_BYTES} and {MAX_SCHEMA_BYTES} bytes)",
            spec.description.len(),
            spec.input_schema.len()
        )));
    }
    let mut description = spec.description;
    description.shrink_to_fit();
    let spec = GuestSpec {
        description,
        ..spec
    };
    let name = ToolName::new(spec.name).map_err(|e| LoadError::Tools(e.to_string()))?;
    let input_schema: serde_json::Value = serde_json::from_str(&spec.input_schema)
        .map_err(|e| LoadError::Tools(format!("tool {name}: the input schema is not JSON: {e}")))?;
    Ok(ToolSpec {
        name,
        description: spec.description,
        input_schema,
        annotations: spec.annotations,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::protocol::Annotations;

    fn spec(description: String, input_schema: String) -> GuestSpec {
        GuestSpec {
            name: "t".into(),
            description,
            input_schema,
            annotations: Annotations::default(),
        }
    }

    #[test]
    fn usage_notes_for_a_tool_the_plugin_does_not_provide_refuse_it() {
        let meta = |notes_for: &str| PluginMeta {
            manifest: Manifest::parse(&format!(
                "name = \"p\"\nversion = \"1\"\n[guidance]\n{notes_for} = \"notes\"\n"
            ))
            .unwrap(),
            tools: vec![spec_from_guest(spec("d".into(), r#"{"type":"object"}"#.into())).unwrap()],
            imports: Vec::new(),
            wit_version: "0.2.0".into(),
        };
        assert!(check_guidance(&meta("t")).is_ok());
        let err = check_guidance(&meta("tt")).unwrap_err().to_string();
        assert!(
            err.contains("names tool \"tt\", which the plugin does not provide"),
            "{err}"
        );
    }

    #[test]
    fn a_tool_spec_longer_than_the_host_keeps_is_refused() {
        let schema = r#"{"type":"object"}"#.to_string();
        assert!(spec_from_guest(spec("fine".into(), schema.clone())).is_ok());
        let long = "d".repeat(MAX_DESCRIPTION_BYTES + 1);
        let err = spec_from_guest(spec(long, schema)).unwrap_err().to_string();
        assert!(err.contains("longer than the host keeps"), "{err}");
        let huge_schema = format!(
            r#"{{"type":"object","description":"{}"}}"#,
            "s".repeat(MAX_SCHEMA_BYTES)
        );
        assert!(spec_from_guest(spec("d".into(), huge_schema)).is_err());
    }
}
