//! Reading an API key from where the settings say it is, refusing files
//! other users could read.
//!
//! Invariant: every key resolved here is registered as a secret
//! ([`secrets::register`]) before it is returned.

use std::path::{Path, PathBuf};

use crate::base::secrets;
use crate::provider::{ApiKey, ProviderName};

use super::{ConfigError, ProviderSettings};

/// Where a key came from, for the user (never the key itself).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum KeySource {
    /// A standard variable such as `OPENAI_API_KEY`.
    Environment(String),
    /// The variable the config file names with `api_key_env`.
    ConfigVariable(String),
    /// The file the config file names with `api_key_file`.
    KeyFile(PathBuf),
    /// `api_key` in the config file itself.
    ConfigFile(PathBuf),
}

impl std::fmt::Display for KeySource {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            KeySource::Environment(var) => write!(f, "${var}"),
            KeySource::ConfigVariable(var) => write!(f, "${var} (named in config.toml)"),
            KeySource::KeyFile(path) => write!(f, "key file {}", path.display()),
            KeySource::ConfigFile(path) => write!(f, "{}", path.display()),
        }
    }
}

/// Refuse `path` if any group or other permission bit is set on it (the
/// file a symlink leads to is what counts).
pub fn check_private(path: &Path) -> Result<(), ConfigError> {
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        let meta = std::fs::metadata(path).map_err(|source| ConfigError::Read {
            path: path.to_path_buf(),
            source,
        })?;
        let mode = meta.permissions().mode() & 0o7777;
        if mode & 0o077 != 0 {
            return Err(ConfigError::Exposed {
                path: path.to_path_buf(),
                mode,
            });
        }
    }
    Ok(())
}

/// The key `settings` give for `provider`, if they give one. `env` looks
/// up environment variables; `config` is the settings file's path.
pub(super) fn from_settings(
    provider: ProviderName,
    settings: &ProviderSettings,
    config: &Path,
    env: &dyn Fn(&str) -> Option<String>,
) -> Result<Option<(ApiKey, KeySource)>, ConfigError> {
    if let Some(key) = &settings.api_key {
        return Ok(Some((
            resolved(key.expose()),
            KeySource::ConfigFile(config.to_path_buf()),
        )));
    }
    if let Some(var) = &settings.api_key_env {
        return match env(var).filter(|k| !k.trim().is_empty()) {
            Some(k) => Ok(Some((resolved(&k), KeySource::ConfigVariable(var.clone())))),
            None => Err(ConfigError::UnsetVariable {
                provider,
                var: var.clone(),
            }),
        };
    }
    let Some(file) = &settings.api_key_file else {
        return Ok(None);
    };
    let path = key_path(file, config, env);
    check_private(&path).map_err(|e| match e {
        ConfigError::Read { path, source } => ConfigError::KeyFile {
            provider,
            path,
            source,
        },
        other => other,
    })?;
    let text = std::fs::read_to_string(&path).map_err(|source| ConfigError::KeyFile {
        provider,
        path: path.clone(),
        source,
    })?;
    match text.lines().next().map(str::trim).filter(|k| !k.is_empty()) {
        Some(k) => Ok(Some((resolved(k), KeySource::KeyFile(path)))),
        None => Err(ConfigError::EmptyKeyFile { provider, path }),
    }
}

/// `key` (trimmed) as an [`ApiKey`], registered as a secret to redact
/// from everything Warden writes (see [`secrets`]).
pub(super) fn resolved(key: &str) -> ApiKey {
    let key = key.trim();
    secrets::register(key);
    ApiKey::new(key)
}

/// Register the values of the standard key variables (`OPENAI_API_KEY`,
/// `ANTHROPIC_API_KEY`) as secrets, whichever provider is used: this
/// process can read them, so no record may hold them.
pub fn register_key_variables() {
    for provider in [ProviderName::Openai, ProviderName::Anthropic] {
        if let Some(value) = provider.key_variable().and_then(|v| std::env::var(v).ok()) {
            secrets::register(&value);
        }
    }
}

/// `file` with `~/` expanded, relative to the config file's directory.
fn key_path(file: &Path, config: &Path, env: &dyn Fn(&str) -> Option<String>) -> PathBuf {
    if let Ok(rest) = file.strip_prefix("~")
        && let Some(home) = env("HOME").filter(|h| !h.is_empty())
    {
        return PathBuf::from(home).join(rest);
    }
    if file.is_absolute() {
        return file.to_path_buf();
    }
    config
        .parent()
        .map_or_else(|| file.to_path_buf(), |dir| dir.join(file))
}
