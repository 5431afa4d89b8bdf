//! Where Warden keeps its state: `$WARDEN_HOME`, or the XDG data directory
//! (`~/.local/share/warden`).

use std::path::{Path, PathBuf};

use etcetera::BaseStrategy;

/// Warden's data directory and the paths inside it.
#[derive(Debug, Clone)]
pub struct Home {
    root: PathBuf,
}

/// No data directory could be determined.
#[derive(Debug, thiserror::Error)]
#[error("cannot find a data directory: set WARDEN_HOME or HOME")]
pub struct HomeError;

impl Home {
    /// `$WARDEN_HOME` if set and not empty, else the XDG data dir.
    pub fn from_env() -> Result<Self, HomeError> {
        if let Some(dir) = std::env::var_os("WARDEN_HOME").filter(|d| !d.is_empty()) {
            return Ok(Home::at(PathBuf::from(dir)));
        }
        let base = etcetera::choose_base_strategy().map_err(|_| HomeError)?;
        Ok(Home::at(base.data_dir().join("warden")))
    }

    pub fn at(root: PathBuf) -> Self {
        Home { root }
    }

    pub fn root(&self) -> &Path {
        &self.root
    }

    /// Compiled components and cached plugin metadata.
    pub fn cache_dir(&self) -> PathBuf {
        self.root.join("cache")
    }

    /// Installed plugins, one directory each.
    pub fn plugins_dir(&self) -> PathBuf {
        self.root.join("plugins")
    }
}
