//! Installing, upgrading, approving and removing plugins, in two steps: a
//! [`Candidate`] is validated first (so the caller can show its bill of
//! materials and capability diff, and ask), then committed — stored and
//! entered in the lockfile.

use std::path::Path;

use super::BUILTIN;
use super::catalog::{Catalog, CatalogError, PluginEntry};
use super::diff::{CapChange, diff};
use super::fetch::{Fetched, Origin};
use super::lockfile::{Locked, Lockfile};
use super::registry::{InstallError, InstallReport, InstalledPlugin};
use crate::base::sha256_hex;
use crate::runtime::PluginMeta;

/// A validated component, not yet installed.
pub struct Candidate {
    wasm: Vec<u8>,
    pub sha256: String,
    pub meta: PluginMeta,
    /// The installed version it replaces, if any.
    pub previous: Option<InstalledPlugin>,
    /// Where it was fetched from; none for a local file (or bytes approved
    /// as they are on disk, which no longer are what was fetched).
    pub origin: Option<Origin>,
}

impl Candidate {
    pub fn name(&self) -> &str {
        &self.meta.manifest.name
    }

    /// How its capabilities differ from the version it replaces.
    pub fn changes(&self) -> Vec<CapChange> {
        match &self.previous {
            Some(old) => diff(&old.meta, &self.meta),
            None => Vec::new(),
        }
    }
}

impl Catalog {
    /// Validate the component at `path` for installation.
    pub fn prepare_install(&self, path: &Path) -> Result<Candidate, CatalogError> {
        let wasm = std::fs::read(path).map_err(|source| InstallError::Read {
            path: path.to_path_buf(),
            source,
        })?;
        self.candidate(wasm)
    }

    /// Validate a fetched component for installation, through the same
    /// checks as a local file.
    pub fn prepare_fetched(&self, fetched: Fetched) -> Result<Candidate, CatalogError> {
        let candidate = self.candidate(fetched.wasm)?;
        Ok(Candidate {
            origin: Some(fetched.origin),
            ..candidate
        })
    }

    /// Validate installed plugin `name`'s component as it is on disk now,
    /// to approve it again.
    pub fn prepare_approve(&self, name: &str) -> Result<Candidate, CatalogError> {
        if BUILTIN.iter().any(|b| b.name == name) {
            return Err(InstallError::Builtin(name.to_string()).into());
        }
        let installed = self
            .registry
            .get(name)
            .ok_or_else(|| InstallError::NotInstalled(name.to_string()))?;
        let path = self.registry.component_path(name);
        let wasm = std::fs::read(&path).map_err(|source| InstallError::Read {
            path: path.clone(),
            source,
        })?;
        let candidate = self.candidate(wasm)?;
        if candidate.name() != name {
            return Err(InstallError::Renamed {
                stored: name.to_string(),
                found: candidate.name().to_string(),
            }
            .into());
        }
        Ok(Candidate {
            previous: Some(installed),
            ..candidate
        })
    }

    fn candidate(&self, wasm: Vec<u8>) -> Result<Candidate, CatalogError> {
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
        Ok(Candidate {
            previous: self.registry.get(&name),
            meta: plugin.meta.clone(),
            sha256,
            wasm,
            origin: None,
        })
    }

    /// Install `c`: store it, and approve its bytes in the lockfile.
    pub fn commit(&mut self, c: Candidate) -> Result<InstallReport, CatalogError> {
        let name = c.name().to_string();
        let record = InstalledPlugin {
            sha256: c.sha256.clone(),
            size: c.wasm.len() as u64,
            meta: c.meta.clone(),
        };
        self.registry.store(&c.wasm, &record)?;
        Lockfile::update(&self.lock_path, |lock| {
            lock.plugins.insert(
                name.clone(),
                Locked {
                    version: record.meta.manifest.version.clone(),
                    sha256: record.sha256.clone(),
                    source: c.origin.as_ref().map(|o| o.source.clone()),
                    manifest_digest: c.origin.as_ref().and_then(|o| o.manifest_digest.clone()),
                },
            );
        })?;
        self.entries.retain(|e| e.name() != name);
        self.entries.push(PluginEntry::just_installed(
            record.meta.clone(),
            record.sha256.clone(),
            record.size,
            self.registry.component_path(&name),
        ));
        Ok(InstallReport {
            installed: record,
            replaced: c.previous.map(|p| p.meta.manifest.version),
        })
    }

    /// Remove installed plugin `name`, and its lockfile entry.
    pub fn remove(&mut self, name: &str) -> Result<InstalledPlugin, CatalogError> {
        if BUILTIN.iter().any(|b| b.name == name) {
            return Err(InstallError::Builtin(name.to_string()).into());
        }
        let removed = self.registry.remove(name)?;
        Lockfile::update(&self.lock_path, |lock| {
            lock.plugins.remove(name);
        })?;
        self.entries.retain(|e| e.name() != name);
        Ok(removed)
    }
}
