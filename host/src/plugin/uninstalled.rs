//! A component run without installing it (`warden tool call --plugin FILE`),
//! for plugin authors. It passes the checks `plugin install` makes, its
//! tools are looked up in it alone, and nothing about it is stored: not in
//! the registry, the lockfile or the plugins directory (only the compile
//! cache keeps it, by sha256). Every call to it is recorded with its
//! [`PluginOrigin`].

use std::path::Path;
use std::sync::PoisonError;

use serde::{Deserialize, Serialize};

use super::BUILTIN;
use super::catalog::{Catalog, CatalogError, PluginEntry, PluginSource};
use super::registry::InstallError;
use crate::base::sha256_hex;

/// Where the component of a call's plugin came from, when it was not
/// installed or built in.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum PluginOrigin {
    /// A component file run as it is, never installed.
    Uninstalled {
        /// The file, as an absolute path.
        path: String,
        /// sha256 (hex) of the bytes that ran.
        sha256: String,
    },
}

impl PluginEntry {
    /// Where the component came from, for a call's record: only a component
    /// that was never installed has an origin to state.
    pub fn origin(&self) -> Option<PluginOrigin> {
        match &self.source {
            PluginSource::Builtin(_) | PluginSource::Installed(_) => None,
            PluginSource::Uninstalled(path) => Some(PluginOrigin::Uninstalled {
                path: path.display().to_string(),
                sha256: self.sha256.clone(),
            }),
        }
    }
}

impl Catalog {
    /// Validate the component at `path` as `plugin install` would, and from
    /// now on look tools up in it alone. A component calling itself by a
    /// built-in plugin's name is refused: rules naming the built-in would
    /// apply to it.
    pub fn use_uninstalled(&mut self, path: &Path) -> Result<&PluginEntry, CatalogError> {
        let read = |source| InstallError::Read {
            path: path.to_path_buf(),
            source,
        };
        let path = std::path::absolute(path).map_err(read)?;
        let wasm = std::fs::read(&path).map_err(read)?;
        let sha256 = sha256_hex(&wasm);
        let plugin = self
            .runtime
            .load(&wasm, Some(&sha256))
            .map_err(InstallError::Load)?;
        let name = plugin.name().to_string();
        if BUILTIN.iter().any(|b| b.name == name) {
            return Err(InstallError::Builtin(name).into());
        }
        let entry = PluginEntry::uninstalled(plugin.meta.clone(), sha256.clone(), wasm.len(), path);
        self.loaded
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .insert(sha256, plugin);
        Ok(self.uninstalled.insert(entry))
    }

    /// The component chosen with [`Catalog::use_uninstalled`], if any.
    pub fn uninstalled(&self) -> Option<&PluginEntry> {
        self.uninstalled.as_ref()
    }
}
