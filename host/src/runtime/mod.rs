//! The wasmtime host: one engine, a compile cache, loaded plugins, calls.
//!
//! Invariants: each call gets a fresh store and instance (no state leaks
//! between calls); every limit in [`Limits`] is applied to every call; a
//! guest that traps, loops or exhausts memory ends its own call only.

pub mod bindings;
mod cache;
mod call;
mod compile_observer;
mod component;
mod egress_report;
mod engine;
mod fan_out;
mod guest;
mod guest_record;
mod host_iface;
mod instance;
mod interaction_call;
mod interaction_iface;
mod link;
mod memory;
mod prefilter_iface;
mod process_call;
mod process_iface;
mod quota_report;
mod report;
mod state;

use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

use wasmtime::Engine;

pub use cache::CompileCache;
pub use call::CallRequest;
pub use compile_observer::{CompileEvent, CompileObserver};
pub use component::{
    LoadError, LoadedPlugin, PLUGIN_EXPORT, PluginMeta, SUPPORTED_WIT, SchemaError,
};
pub use engine::{Instances, MAX_CONCURRENT_INSTANCES, TICK, WORKER_INSTANCES};
pub use fan_out::{MAX_TASKS, parallelism};
pub use guest::WitVersion;
pub use interaction_call::{
    AskRecord, CallInteraction, InteractionParty, InteractionReport, MAX_QUESTIONS,
};
pub use link::{LinkProfile, linker_for};
pub use report::CallReport;
pub use state::CallState;

use crate::base::{CancelToken, Limits, sha256_hex};
use crate::capability::{CappedPipe, Grant, Manifest};

/// Side-data file extension for cached [`PluginMeta`].
const META_EXT: &str = "meta.json";

/// Build, on another thread, the I/O runtime that wasmtime-wasi runs WASI
/// calls on when the caller has none of its own. It starts two worker
/// threads, about 0.3 ms that a one-shot process would otherwise spend
/// inside its one call; built here, that happens on the other core while the
/// process reads its policy and maps the component. A process that runs
/// calls inside its own tokio runtime (the agent) never needs it.
pub fn warm_up_wasi_io() {
    let _ = std::thread::Builder::new()
        .name("warden-warm-up".into())
        .spawn(|| wasmtime_wasi::runtime::with_ambient_tokio_runtime(|| ()));
}

/// The engine and compile cache shared by every plugin and call.
#[derive(Clone)]
pub struct Runtime {
    engine: Engine,
    cache: CompileCache,
    /// Told when a component misses the cache and is compiled.
    observer: Option<CompileObserver>,
}

/// The runtime could not start.
#[derive(Debug, thiserror::Error)]
#[error("cannot start the WebAssembly engine: {0}")]
pub struct RuntimeError(String);

impl Runtime {
    /// A runtime whose compiled components are cached in `cache_dir`, with
    /// pooled instances.
    pub fn new(cache_dir: PathBuf) -> Result<Self, RuntimeError> {
        Runtime::with_instances(cache_dir, Instances::Pooled)
    }

    /// [`Runtime::new`], with instances allocated as `instances` says.
    pub fn with_instances(cache_dir: PathBuf, instances: Instances) -> Result<Self, RuntimeError> {
        let engine = engine::build(instances).map_err(|e| RuntimeError(format!("{e:#}")))?;
        let cache = CompileCache::new(cache_dir, &engine);
        Ok(Runtime {
            engine,
            cache,
            observer: None,
        })
    }

    /// Tell `observer` whenever a component is compiled (not mapped from
    /// the cache) from now on.
    pub fn observe_compiles(&mut self, observer: Option<CompileObserver>) {
        self.observer = observer;
    }

    pub fn engine(&self) -> &Engine {
        &self.engine
    }

    pub fn cache(&self) -> &CompileCache {
        &self.cache
    }

    /// The metadata of a component, from the cache when possible.
    pub fn meta(&self, wasm: &[u8], sha256: &str) -> Result<PluginMeta, LoadError> {
        if let Some(meta) = self.cache.read_json::<PluginMeta>(sha256, META_EXT) {
            return Ok(meta);
        }
        Ok(self.load(wasm, Some(sha256))?.meta.clone())
    }

    /// Load a component: compile it (or map it from the cache), check that
    /// it fits the `warden:tool` world at a supported version, and read its
    /// manifest and tool list. `sha256` may be passed when already known.
    pub fn load(&self, wasm: &[u8], sha256: Option<&str>) -> Result<Arc<LoadedPlugin>, LoadError> {
        let sha = match sha256 {
            Some(s) => s.to_string(),
            None => sha256_hex(wasm),
        };
        let cached_meta = self.cache.read_json::<PluginMeta>(&sha, META_EXT);
        if let (Some(meta), Some(component)) = (&cached_meta, self.cache.load(&self.engine, &sha)) {
            return Ok(Arc::new(LoadedPlugin::new(
                self.engine.clone(),
                component,
                meta.clone(),
                sha,
            )));
        }

        component::check_preamble(wasm)?;
        let manifest = Manifest::from_component(wasm)?;
        let name = manifest.name.clone();
        let _compiling = compile_observer::Compiling::start(self.observer.as_ref(), &name);
        let component = self
            .cache
            .compile(&self.engine, &sha, wasm)
            .map_err(|e| LoadError::Compile(format!("{e:#}")))?;
        let (imports, wit_version) = component::interface_facts(&self.engine, &component)?;
        let meta = PluginMeta {
            manifest,
            tools: Vec::new(),
            imports,
            wit_version,
        };
        let mut plugin = LoadedPlugin::new(self.engine.clone(), component, meta, sha.clone());
        plugin.meta.tools = list_tools(&plugin)?;
        component::check_tools(&plugin.meta.tools)?;
        component::check_guidance(&plugin.meta)?;
        if let Ok(v) = serde_json::to_value(&plugin.meta) {
            self.cache.write_json(&sha, META_EXT, &v);
        }
        Ok(Arc::new(plugin))
    }
}

/// Ask the plugin for its tools, in a sandbox with no capabilities.
fn list_tools(plugin: &LoadedPlugin) -> Result<Vec<crate::protocol::ToolSpec>, LoadError> {
    let limits = Limits {
        deadline: Duration::from_secs(10),
        ..Limits::default()
    };
    let grant = Grant::none();
    let stdout = CappedPipe::new(limits.stdio_bytes);
    let stderr = CappedPipe::new(limits.stdio_bytes);
    let wasi = crate::capability::build_wasi(&grant, &limits, &stdout, &stderr)
        .map_err(|e| LoadError::World(e.to_string()))?;
    let state = CallState::new(
        wasi,
        crate::capability::FsBoundary::for_grant(&grant),
        stderr,
        limits.clone(),
        CancelToken::new(),
        None,
    );
    let mut store = instance::new_store(&plugin.engine, state, &limits);
    let pre = plugin.instance_pre(LinkProfile::for_grant(&grant))?;
    let specs = pre.tools(&mut store).map_err(|e| match e {
        guest::ListFailure::Instantiate(e) => LoadError::World(format!("{e:#}")),
        guest::ListFailure::Call(e) => LoadError::Tools(format!("listing tools failed: {e:#}")),
    })?;
    if specs.len() > component::MAX_TOOLS {
        return Err(LoadError::Tools(format!(
            "the plugin lists {} tools; the host takes at most {}",
            specs.len(),
            component::MAX_TOOLS
        )));
    }
    specs.into_iter().map(component::spec_from_guest).collect()
}
