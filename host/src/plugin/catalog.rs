//! The catalog: built-in and installed plugins, and the tools they provide.
//!
//! Listing tools reads cached metadata only; a component is compiled or
//! mapped from the cache when one of its tools is called. An installed
//! plugin whose component does not hash to its lockfile entry is listed but
//! refused (see [`super::lockfile`]).

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, OnceLock, PoisonError};

use super::inspect::Inspection;
use super::lockfile::{LOCKFILE, Lockfile};
use super::registry::{InstallError, Registry};
use super::{BUILTIN, BuiltinPlugin};
use crate::base::sha256_hex;
use crate::home::Home;
use crate::protocol::ToolSpec;
use crate::runtime::{
    CompileObserver, Instances, LoadError, LoadedPlugin, PluginMeta, Runtime, RuntimeError,
};

/// Where a plugin's component comes from.
#[derive(Debug, Clone)]
pub enum PluginSource {
    /// Compiled into the `warden` binary.
    Builtin(&'static [u8]),
    /// Installed under the data directory.
    Installed(PathBuf),
    /// A component file run without installing it (see
    /// [`Catalog::use_uninstalled`]); never one of [`Catalog::plugins`].
    Uninstalled(PathBuf),
}

/// One plugin the catalog knows.
#[derive(Debug, Clone)]
pub struct PluginEntry {
    pub meta: PluginMeta,
    pub sha256: String,
    pub size: u64,
    pub source: PluginSource,
    approval: Approval,
}

/// Whether an installed plugin may run. What the lockfile and the
/// installation record say is decided when the catalog opens; whether the
/// component on disk still hashes to the approved sha256 is decided the
/// first time anyone asks, so a call pays for hashing only its own plugin.
#[derive(Debug, Clone)]
enum Approval {
    Decided(Option<String>),
    OnDisk {
        approved: String,
        path: PathBuf,
        refused: OnceLock<Option<String>>,
    },
}

impl PluginEntry {
    /// A plugin installed just now, from bytes already checked.
    pub(super) fn just_installed(
        meta: PluginMeta,
        sha256: String,
        size: u64,
        path: PathBuf,
    ) -> Self {
        PluginEntry {
            meta,
            sha256,
            size,
            source: PluginSource::Installed(path),
            approval: Approval::Decided(None),
        }
    }

    /// A component file run without installing it, from bytes already checked.
    pub(super) fn uninstalled(
        meta: PluginMeta,
        sha256: String,
        size: usize,
        path: PathBuf,
    ) -> Self {
        PluginEntry {
            meta,
            sha256,
            size: size as u64,
            source: PluginSource::Uninstalled(path),
            approval: Approval::Decided(None),
        }
    }

    pub fn name(&self) -> &str {
        &self.meta.manifest.name
    }

    /// Why this plugin may not run (it was never approved, or its bytes
    /// changed since they were); `None` when it may.
    pub fn refused(&self) -> Option<&str> {
        match &self.approval {
            Approval::Decided(refused) => refused.as_deref(),
            Approval::OnDisk {
                approved,
                path,
                refused,
            } => refused
                .get_or_init(|| super::trust::changed_on_disk(self.name(), path, approved))
                .as_deref(),
        }
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
    /// The plugin's component is not the one approved (see the lockfile).
    #[error("{0}")]
    NotApproved(String),
    #[error(transparent)]
    Lock(#[from] super::lockfile::LockError),
    #[error(transparent)]
    Install(#[from] InstallError),
    #[error("no plugin named {0} and no such file (see `warden plugin list`)")]
    UnknownPlugin(String),
}

/// Every plugin available, built-in first.
pub struct Catalog {
    pub(super) runtime: Runtime,
    pub(super) registry: Registry,
    /// `<data dir>/plugins.lock`.
    pub(super) lock_path: PathBuf,
    pub(super) entries: Vec<PluginEntry>,
    /// A component run without installing it: when set, tools are looked
    /// up in it alone.
    pub(super) uninstalled: Option<PluginEntry>,
    /// Plugins loaded so far, by sha256: each keeps its `InstancePre`s, so
    /// later calls only instantiate.
    pub(super) loaded: Mutex<HashMap<String, Arc<LoadedPlugin>>>,
    /// What went wrong reading the data directory, each once: the catalog
    /// opened without the plugins it could not vouch for.
    problems: Vec<CatalogError>,
}

impl Catalog {
    /// Open the catalog for `home`: built-ins plus installed plugins, with
    /// pooled instances.
    pub fn open(home: &Home) -> Result<Self, CatalogError> {
        Catalog::open_with(home, Instances::Pooled)
    }

    /// [`Catalog::open`], with instances allocated as `instances` says.
    pub fn open_with(home: &Home, instances: Instances) -> Result<Self, CatalogError> {
        Catalog::open_observed(home, instances, None)
    }

    /// [`Catalog::open_with`], telling `observer` of every component
    /// compiled, now (a built-in on a fresh data directory) or later.
    pub fn open_observed(
        home: &Home,
        instances: Instances,
        observer: Option<CompileObserver>,
    ) -> Result<Self, CatalogError> {
        let mut runtime = Runtime::with_instances(home.cache_dir(), instances)?;
        runtime.observe_compiles(observer);
        let registry = Registry::new(home.plugins_dir());
        let lock_path = home.root().join(LOCKFILE);
        let mut problems = Vec::new();
        let installed = registry.list().unwrap_or_else(|e| {
            problems.push(CatalogError::Install(e));
            Vec::new()
        });
        let lock = Lockfile::read(&lock_path).map_err(|e| {
            // Said once, for the catalog; each plugin is refused in short.
            if !installed.is_empty() {
                problems.push(CatalogError::Lock(e));
            }
        });
        let mut entries = Vec::new();
        for b in BUILTIN {
            entries.push(builtin_entry(&runtime, b)?);
        }
        for installed in installed {
            let name = installed.meta.manifest.name.clone();
            let path = registry.component_path(&name);
            let approval = match &lock {
                Ok(lock) => match super::trust::approved_sha256(lock, &installed) {
                    Ok(approved) => Approval::OnDisk {
                        approved,
                        path: path.clone(),
                        refused: OnceLock::new(),
                    },
                    Err(why) => Approval::Decided(Some(why.to_string())),
                },
                Err(()) => Approval::Decided(Some(
                    "the plugin lockfile cannot be read (see the warning above)".to_string(),
                )),
            };
            entries.push(PluginEntry {
                meta: installed.meta,
                sha256: installed.sha256,
                size: installed.size,
                source: PluginSource::Installed(path),
                approval,
            });
        }
        Ok(Catalog {
            runtime,
            registry,
            lock_path,
            entries,
            uninstalled: None,
            loaded: Mutex::default(),
            problems,
        })
    }

    pub fn runtime(&self) -> &Runtime {
        &self.runtime
    }

    /// Tell `observer`, instead of the one before, of every component
    /// compiled from now on.
    pub fn observe_compiles(&mut self, observer: Option<CompileObserver>) {
        self.runtime.observe_compiles(observer);
    }

    /// What could not be read in the data directory (an unreadable
    /// plugins directory or lockfile), for the caller to report once.
    pub fn problems(&self) -> &[CatalogError] {
        &self.problems
    }

    pub fn plugins(&self) -> &[PluginEntry] {
        &self.entries
    }

    /// The plugin providing tool `name`, and the tool's spec; only the
    /// uninstalled component's tools, when one was chosen.
    pub fn find_tool(&self, name: &str) -> Option<(&PluginEntry, &ToolSpec)> {
        self.searched().iter().find_map(|e| {
            e.meta
                .tools
                .iter()
                .find(|t| t.name.as_str() == name)
                .map(|t| (e, t))
        })
    }

    /// Every tool with the plugin providing it; only the uninstalled
    /// component's tools, when one was chosen.
    pub fn tools(&self) -> impl Iterator<Item = (&PluginEntry, &ToolSpec)> {
        self.searched()
            .iter()
            .flat_map(|e| e.meta.tools.iter().map(move |t| (e, t)))
    }

    /// Where tools are looked up.
    fn searched(&self) -> &[PluginEntry] {
        match &self.uninstalled {
            Some(entry) => std::slice::from_ref(entry),
            None => &self.entries,
        }
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
        if let Some(why) = entry.refused() {
            return Err(CatalogError::NotApproved(why.to_string()));
        }
        let name = entry.name().to_string();
        // The entry's metadata was read when the catalog opened: with the
        // compiled component cached, nothing else needs reading.
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
        match &entry.source {
            PluginSource::Builtin(wasm) => self
                .runtime
                .load(wasm, Some(&entry.sha256))
                .map_err(|source| CatalogError::Load { name, source }),
            PluginSource::Installed(path) | PluginSource::Uninstalled(path) => {
                let wasm = std::fs::read(path).map_err(|source| InstallError::Read {
                    path: path.clone(),
                    source,
                })?;
                if sha256_hex(&wasm) != entry.sha256 {
                    return Err(CatalogError::NotApproved(super::trust::changed_message(
                        &name,
                        &sha256_hex(&wasm),
                        &entry.sha256,
                    )));
                }
                self.runtime
                    .load(&wasm, Some(&entry.sha256))
                    .map_err(|source| CatalogError::Load { name, source })
            }
        }
    }

    /// Inspect a plugin by name, or a component file by path (not
    /// installed). A refused installed plugin is inspected from the bytes
    /// on disk, which are what approving it would trust.
    pub fn inspect(&self, name_or_path: &str) -> Result<Inspection, CatalogError> {
        if let Some(e) = self.entries.iter().find(|e| e.name() == name_or_path) {
            let refused = e.refused();
            let mut ins = match (refused, &e.source) {
                (Some(_), PluginSource::Installed(path)) => self.inspect_file(path)?,
                (None, _)
                | (Some(_), PluginSource::Builtin(_))
                | (Some(_), PluginSource::Uninstalled(_)) => {
                    Inspection::new(&e.meta, &e.sha256, e.size)
                }
            };
            ins.refused = refused.map(str::to_string);
            return Ok(ins);
        }
        let path = Path::new(name_or_path);
        if !path.is_file() {
            return Err(CatalogError::UnknownPlugin(name_or_path.to_string()));
        }
        self.inspect_file(path)
    }

    fn inspect_file(&self, path: &Path) -> Result<Inspection, CatalogError> {
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
        approval: Approval::Decided(None),
    })
}
