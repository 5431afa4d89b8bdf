//! Installed plugins on disk: `<home>/plugins/<name>/component.wasm` beside
//! `plugin.json`, written so that a crash never leaves a half-installed
//! plugin visible.

use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use crate::base::{Rename, write_atomic};
use crate::runtime::PluginMeta;

/// Installed plugins are not private: components and their records.
const INSTALLED_FILE: u32 = 0o644;

const COMPONENT_FILE: &str = "component.wasm";
const RECORD_FILE: &str = "plugin.json";

/// What the registry records about an installed plugin.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct InstalledPlugin {
    pub sha256: String,
    pub size: u64,
    pub meta: PluginMeta,
}

/// The outcome of an install.
#[derive(Debug, Clone, Serialize)]
pub struct InstallReport {
    pub installed: InstalledPlugin,
    /// The version replaced, when this was an upgrade.
    pub replaced: Option<String>,
}

/// Why an install or removal failed.
#[derive(Debug, thiserror::Error)]
pub enum InstallError {
    #[error("cannot read {path}: {source}")]
    Read {
        path: PathBuf,
        source: std::io::Error,
    },
    #[error(transparent)]
    Load(#[from] crate::runtime::LoadError),
    #[error("{0} is a built-in plugin and cannot be replaced or removed")]
    Builtin(String),
    #[error("tool {tool} is already provided by plugin {plugin}; remove that plugin first")]
    ToolConflict { tool: String, plugin: String },
    #[error("no installed plugin named {0} (see `warden plugin list`)")]
    NotInstalled(String),
    #[error(
        "the component stored as plugin {stored} now calls itself {found}; remove {stored} and install the component anew"
    )]
    Renamed { stored: String, found: String },
    #[error("cannot write the plugin registry at {path}: {source}")]
    Write {
        path: PathBuf,
        source: std::io::Error,
    },
}

/// The directory of installed plugins.
#[derive(Debug, Clone)]
pub struct Registry {
    dir: PathBuf,
}

impl Registry {
    pub fn new(dir: PathBuf) -> Self {
        Registry { dir }
    }

    /// Every installed plugin with a readable record, sorted by name; no
    /// directory yet is none. Directories without a valid record (an
    /// interrupted install) are skipped.
    pub fn list(&self) -> Result<Vec<InstalledPlugin>, InstallError> {
        let entries = match std::fs::read_dir(&self.dir) {
            Ok(entries) => entries,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(Vec::new()),
            Err(source) => {
                return Err(InstallError::Read {
                    path: self.dir.clone(),
                    source,
                });
            }
        };
        let mut out: Vec<InstalledPlugin> = entries
            .filter_map(Result::ok)
            // Staging and backup directories of an interrupted install start with a dot.
            .filter(|e| !e.file_name().to_string_lossy().starts_with('.'))
            .filter_map(|e| std::fs::read(e.path().join(RECORD_FILE)).ok())
            .filter_map(|bytes| serde_json::from_slice(&bytes).ok())
            .collect();
        out.sort_by(|a, b| a.meta.manifest.name.cmp(&b.meta.manifest.name));
        Ok(out)
    }

    /// The installed plugin called `name` (never a path: names are validated).
    pub fn get(&self, name: &str) -> Option<InstalledPlugin> {
        if !crate::capability::valid_plugin_name(name) {
            return None;
        }
        let bytes = std::fs::read(self.dir.join(name).join(RECORD_FILE)).ok()?;
        serde_json::from_slice(&bytes).ok()
    }

    /// Path of the stored component for plugin `name`.
    pub fn component_path(&self, name: &str) -> PathBuf {
        self.dir.join(name).join(COMPONENT_FILE)
    }

    /// Store a validated plugin, replacing any previous version. The new
    /// files are staged in a sibling directory and swapped in by rename.
    pub fn store(&self, wasm: &[u8], record: &InstalledPlugin) -> Result<(), InstallError> {
        let name = &record.meta.manifest.name;
        let final_dir = self.dir.join(name);
        let staging = self
            .dir
            .join(format!(".staging-{name}-{}", std::process::id()));
        let write = |path: &Path, bytes: &[u8]| -> Result<(), InstallError> {
            write_atomic(path, bytes, INSTALLED_FILE, Rename::Synced).map_err(|source| {
                InstallError::Write {
                    path: path.to_path_buf(),
                    source,
                }
            })
        };
        let io = |path: &Path| {
            let path = path.to_path_buf();
            move |source| InstallError::Write { path, source }
        };
        let _ = std::fs::remove_dir_all(&staging);
        std::fs::create_dir_all(&staging).map_err(io(&staging))?;
        write(&staging.join(COMPONENT_FILE), wasm)?;
        let json = serde_json::to_vec_pretty(record).map_err(|e| InstallError::Write {
            path: staging.join(RECORD_FILE),
            source: std::io::Error::other(e),
        })?;
        write(&staging.join(RECORD_FILE), &json)?;
        let old = self.dir.join(format!(".old-{name}-{}", std::process::id()));
        if final_dir.exists() {
            std::fs::rename(&final_dir, &old).map_err(io(&final_dir))?;
        }
        std::fs::rename(&staging, &final_dir).map_err(io(&final_dir))?;
        let _ = std::fs::remove_dir_all(&old);
        Ok(())
    }

    /// Remove plugin `name`.
    pub fn remove(&self, name: &str) -> Result<InstalledPlugin, InstallError> {
        let record = self
            .get(name)
            .ok_or_else(|| InstallError::NotInstalled(name.to_string()))?;
        let dir = self.dir.join(name);
        std::fs::remove_dir_all(&dir)
            .map_err(|source| InstallError::Write { path: dir, source })?;
        Ok(record)
    }
}
