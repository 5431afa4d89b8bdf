//! The catalog: built-in and installed plugins, and the tools they provide.
//!
//! Listing tools reads cached metadata only; a component is compiled or
//! mapped from the cache when one of its tools is called.

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, PoisonError};

use super::inspect::Inspection;
use super::registry::{InstallError, InstallReport, InstalledPlugin, Registry};
use super::{BUILTIN, BuiltinPlugin};
use crate::home::Home;
use crate::protocol::ToolSpec;
use crate::runtime::{LoadError, LoadedPlugin, PluginMeta, Runtime, RuntimeError, sha256_hex};

/// Where a plugin's component comes from.
#[derive(Debug, Clone)]
pub enum PluginSource {
    /// Compiled into the `warden` binary.
    Builtin(&'static [u8]),
    /// Installed under the data directory.
    Installed(PathBuf),
}

/// One plugin the catalog knows.
#[derive(Debug, Clone)]
pub struct PluginEntry {
    pub meta: PluginMeta,
    pub sha256: String,
    pub size: u64,
    pub source: PluginSource,
}

impl PluginEntry {
    pub fn name(&self) -> &str {
        &self.meta.manifest.name
    }

    pub fn is_builtin(&self) -> bool {
        matches!(self.source, PluginSource::Builtin(_))
    }
}

/// Why the catalog could not answer.
#[derive(Debug, thiserror::Error)]
pub enum CatalogError {
    #[error(transparent)]
    Runtime(#[from] RuntimeError),
    #[error("built-in plugin {name} failed to load: {source}")]
    Builtin {
        name: &'static str,
        source: LoadError,
    },
    #[error("plugin {name}: {source}")]
    Load { name: String, source: LoadError },
    #[error(
        "plugin {name}: its component changed on disk since it was installed; install it again"
    )]
    Tampered { name: String },
    #[error(transparent)]
    Install(#[from] InstallError),
    #[error("no plugin named {0} and no such file (see `warden plugin list`)")]
    UnknownPlugin(String),
}

/// Every plugin available, built-in first.
pub struct Catalog {
    runtime: Runtime,
    registry: Registry,
    entries: Vec<PluginEntry>,
    /// Plugins loaded so far, by sha256: each keeps its `InstancePre`s, so
    /// later calls only instantiate.
    loaded: Mutex<HashMap<String, Arc<LoadedPlugin>>>,
}

impl Catalog {
    /// Open the catalog for `home`: built-ins plus installed plugins.
    pub fn open(home: &Home) -> Result<Self, CatalogError> {
        let runtime = Runtime::new(home.cache_dir())?;
        let registry = Registry::new(home.plugins_dir());
        let mut entries = Vec::new();
        for b in BUILTIN {
            entries.push(builtin_entry(&runtime, b)?);
        }
        for installed in registry.list() {
            let path = registry.component_path(&installed.meta.manifest.name);
            entries.push(PluginEntry {
                meta: installed.meta,
                sha256: installed.sha256,
                size: installed.size,
                source: PluginSource::Installed(path),
            });
        }
        Ok(Catalog {
            runtime,
            registry,
            entries,
            loaded: Mutex::default(),
        })
    }

    pub fn runtime(&self) -> &Runtime {
        &self.runtime
    }

    pub fn plugins(&self) -> &[PluginEntry] {
        &self.entries
    }

    /// The plugin providing tool `name`, and the tool's spec.
    pub fn find_tool(&self, name: &str) -> Option<(&PluginEntry, &ToolSpec)> {
        self.entries.iter().find_map(|e| {
            e.meta
                .tools
                .iter()
                .find(|t| t.name.as_str() == name)
                .map(|t| (e, t))
        })
    }

    /// Every tool with the plugin providing it.
    pub fn tools(&self) -> impl Iterator<Item = (&PluginEntry, &ToolSpec)> {
        self.entries
            .iter()
            .flat_map(|e| e.meta.tools.iter().map(move |t| (e, t)))
    }

    /// Load `entry`'s component, ready for calls; loaded once per catalog.
    pub fn load(&self, entry: &PluginEntry) -> Result<Arc<LoadedPlugin>, CatalogError> {
        if let Some(p) = self
            .loaded
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .get(&entry.sha256)
        {
            return Ok(p.clone());
        }
        let plugin = self.load_uncached(entry)?;
        self.loaded
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .insert(entry.sha256.clone(), plugin.clone());
        Ok(plugin)
    }

    fn load_uncached(&self, entry: &PluginEntry) -> Result<Arc<LoadedPlugin>, CatalogError> {
        let name = entry.name().to_string();
        match &entry.source {
            PluginSource::Builtin(wasm) => self
                .runtime
                .load(wasm, Some(&entry.sha256))
                .map_err(|source| CatalogError::Load { name, source }),
            PluginSource::Installed(path) => {
                if let Some(component) = self
                    .runtime
                    .cache()
                    .load(self.runtime.engine(), &entry.sha256)
                {
                    return Ok(Arc::new(LoadedPlugin::new(
                        self.runtime.engine().clone(),
                        component,
                        entry.meta.clone(),
                        entry.sha256.clone(),
                    )));
                }
                let wasm = std::fs::read(path).map_err(|source| InstallError::Read {
                    path: path.clone(),
                    source,
                })?;
                if sha256_hex(&wasm) != entry.sha256 {
                    return Err(CatalogError::Tampered { name });
                }
                self.runtime
                    .load(&wasm, Some(&entry.sha256))
                    .map_err(|source| CatalogError::Load { name, source })
            }
        }
    }

    /// Validate and install the component at `path`.
    pub fn install(&mut self, path: &Path) -> Result<InstallReport, CatalogError> {
        let wasm = std::fs::read(path).map_err(|source| InstallError::Read {
            path: path.to_path_buf(),
            source,
        })?;
        let sha256 = sha256_hex(&wasm);
        let plugin = self
            .runtime
            .load(&wasm, Some(&sha256))
            .map_err(InstallError::Load)?;
        let name = plugin.name().to_string();
        if BUILTIN.iter().any(|b| b.name == name) {
            return Err(InstallError::Builtin(name).into());
        }
        for tool in plugin.tools() {
            if let Some((owner, _)) = self.find_tool(tool.name.as_str())
                && owner.name() != name
            {
                return Err(InstallError::ToolConflict {
                    tool: tool.name.to_string(),
                    plugin: owner.name().to_string(),
                }
                .into());
            }
        }
        let replaced = self
            .registry
            .get(&name)
            .map(|old| old.meta.manifest.version);
        let record = InstalledPlugin {
            sha256: sha256.clone(),
            size: wasm.len() as u64,
            meta: plugin.meta.clone(),
        };
        self.registry.store(&wasm, &record)?;
        self.entries.retain(|e| e.name() != name);
        self.entries.push(PluginEntry {
            meta: record.meta.clone(),
            sha256,
            size: record.size,
            source: PluginSource::Installed(self.registry.component_path(&name)),
        });
        Ok(InstallReport {
            installed: record,
            replaced,
        })
    }

    /// Remove installed plugin `name`.
    pub fn remove(&mut self, name: &str) -> Result<InstalledPlugin, CatalogError> {
        if BUILTIN.iter().any(|b| b.name == name) {
            return Err(InstallError::Builtin(name.to_string()).into());
        }
        let removed = self.registry.remove(name)?;
        self.entries.retain(|e| e.name() != name);
        Ok(removed)
    }

    /// Inspect a plugin by name, or a component file by path (not installed).
    pub fn inspect(&self, name_or_path: &str) -> Result<Inspection, CatalogError> {
        if let Some(e) = self.entries.iter().find(|e| e.name() == name_or_path) {
            return Ok(Inspection::new(&e.meta, &e.sha256, e.size));
        }
        let path = Path::new(name_or_path);
        if !path.is_file() {
            return Err(CatalogError::UnknownPlugin(name_or_path.to_string()));
        }
        let wasm = std::fs::read(path).map_err(|source| InstallError::Read {
            path: path.to_path_buf(),
            source,
        })?;
        let sha = sha256_hex(&wasm);
        let plugin = self
            .runtime
            .load(&wasm, Some(&sha))
            .map_err(InstallError::Load)?;
        Ok(Inspection::new(&plugin.meta, &sha, wasm.len() as u64))
    }
}

fn builtin_entry(runtime: &Runtime, b: &BuiltinPlugin) -> Result<PluginEntry, CatalogError> {
    let meta = runtime
        .meta(b.wasm, b.sha256)
        .map_err(|source| CatalogError::Builtin {
            name: b.name,
            source,
        })?;
    Ok(PluginEntry {
        meta,
        sha256: b.sha256.to_string(),
        size: b.wasm.len() as u64,
        source: PluginSource::Builtin(b.wasm),
    })
}
