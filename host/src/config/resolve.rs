//! Which service, model, base URL, key and idle timeout a run uses.
//!
//! Precedence, highest first: command-line flags, environment variables
//! (`WARDEN_PROVIDER`, `WARDEN_MODEL`, `WARDEN_BASE_URL`, and the standard
//! key variables `OPENAI_API_KEY` / `ANTHROPIC_API_KEY`), the resumed
//! session's model, the config file, the built-in defaults. There is no
//! key flag: a command line is visible to every user of the machine.

use std::time::Duration;

use crate::provider::{ApiKey, DEFAULT_IDLE_TIMEOUT, ProviderName};

use super::key::{self, KeySource};
use super::{Config, ConfigError};

/// What the command line (and a resumed session) say; `None` when silent.
#[derive(Debug, Clone, Copy, Default)]
pub struct Overrides<'a> {
    pub provider: Option<ProviderName>,
    pub model: Option<&'a str>,
    pub base_url: Option<&'a str>,
    /// The model of the session being resumed.
    pub session_model: Option<&'a str>,
    /// `--idle-timeout`.
    pub idle_timeout: Option<Duration>,
}

/// The settings a run uses.
#[derive(Debug, Clone)]
pub struct Chosen {
    pub provider: ProviderName,
    pub model: String,
    pub base_url: String,
    pub api_key: Option<ApiKey>,
    /// Where the key came from, when there is one.
    pub key_source: Option<KeySource>,
    /// The longest silence of the provider before an attempt is retried.
    pub idle_timeout: Duration,
}

/// Apply the precedence. `env` looks up environment variables (empty
/// values count as unset).
pub fn choose(
    flags: &Overrides<'_>,
    env: &dyn Fn(&str) -> Option<String>,
    config: &Config,
) -> Result<Chosen, ConfigError> {
    let var = |name: &str| env(name).filter(|v| !v.trim().is_empty());
    let provider = match (flags.provider, var("WARDEN_PROVIDER")) {
        (Some(p), _) => p,
        (None, Some(name)) => {
            ProviderName::parse(name.trim()).ok_or_else(|| ConfigError::BadProvider {
                name: name.trim().to_string(),
            })?
        }
        (None, None) => config.provider.unwrap_or(ProviderName::Openai),
    };
    let settings = config.provider(provider);
    let model = flags
        .model
        .map(str::to_string)
        .or_else(|| var("WARDEN_MODEL"))
        .or_else(|| flags.session_model.map(str::to_string))
        .or_else(|| settings.and_then(|s| s.model.clone()))
        .unwrap_or_else(|| provider.default_model().to_string());
    let custom_url = flags
        .base_url
        .map(str::to_string)
        .or_else(|| var("WARDEN_BASE_URL"))
        .or_else(|| settings.and_then(|s| s.base_url.clone()));
    let standard = provider
        .key_variable()
        .and_then(|name| var(name).map(|k| (name, k)));
    let (api_key, key_source) = match standard {
        Some((name, k)) => (
            Some(key::resolved(&k)),
            Some(KeySource::Environment(name.to_string())),
        ),
        None => {
            let config_path = config.path.clone().unwrap_or_default();
            match settings
                .map(|s| key::from_settings(provider, s, &config_path, env))
                .transpose()?
                .flatten()
            {
                Some((k, source)) => (Some(k), Some(source)),
                None => (None, None),
            }
        }
    };
    if api_key.is_none()
        && custom_url.is_none()
        && let Some(name) = provider.key_variable()
    {
        return Err(ConfigError::NoKey {
            provider,
            var: name,
            config: config.path.clone().unwrap_or_else(|| "config.toml".into()),
        });
    }
    let idle_timeout = flags
        .idle_timeout
        .or_else(|| {
            settings
                .and_then(|s| s.idle_timeout_secs)
                .map(|secs| Duration::from_secs(secs.get()))
        })
        .unwrap_or(DEFAULT_IDLE_TIMEOUT);
    Ok(Chosen {
        provider,
        model,
        base_url: custom_url.unwrap_or_else(|| provider.default_base_url().to_string()),
        api_key,
        key_source,
        idle_timeout,
    })
}
