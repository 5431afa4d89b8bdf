//! The user's settings: `<data dir>/config.toml` (`$WARDEN_HOME/config.toml`);
//! every setting is in `docs/agent.md`, "Configuration and keys".
//!
//! Invariants: a key read from the file, a key file or a variable lives
//! only in an [`ApiKey`] (which never prints); a file that holds a key and
//! that other users may read (any group or other permission bit) is
//! refused, not used; and no error about the file quotes its text, so a
//! typo near a key cannot print the key.

mod key;
mod resolve;

use std::collections::BTreeMap;
use std::num::NonZeroU64;
use std::path::{Path, PathBuf};

use serde::Deserialize;

use crate::home::Home;
use crate::provider::{ApiKey, ProviderName};

pub use key::{KeySource, check_private, register_key_variables};
pub use resolve::{Chosen, Overrides, choose};

/// The parsed `config.toml`. Every field is optional.
#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Config {
    /// The service used when `--provider` and `WARDEN_PROVIDER` are not given.
    pub provider: Option<ProviderName>,
    /// Settings per service.
    #[serde(default)]
    pub providers: BTreeMap<ProviderName, ProviderSettings>,
    #[serde(default)]
    pub context: ContextSettings,
    /// Where the settings are read from (not part of the file).
    #[serde(skip)]
    pub path: Option<PathBuf>,
}

/// One service's settings. At most one of the three key fields is given.
#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ProviderSettings {
    pub model: Option<String>,
    pub base_url: Option<String>,
    /// The key itself; the file must then be readable by its owner only.
    pub api_key: Option<ApiKey>,
    /// A file holding the key (its first line); `~/` is the home
    /// directory, a relative path is relative to the config file. The file
    /// must be readable by its owner only.
    pub api_key_file: Option<PathBuf>,
    /// An environment variable holding the key.
    pub api_key_env: Option<String>,
    /// Seconds to wait for a response, and between two events of its
    /// stream, before the attempt is retried (`--idle-timeout` overrides).
    pub idle_timeout_secs: Option<NonZeroU64>,
}

/// Context-window settings; see [`crate::agent::ContextLimits`].
#[derive(Debug, Default, Clone, Copy, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ContextSettings {
    /// Compact once a request's estimate passes this many tokens.
    pub compact_above: Option<u64>,
    /// Tokens of recent history kept verbatim when compacting.
    pub keep_recent: Option<u64>,
}

/// The settings file could not be used.
#[derive(Debug, thiserror::Error)]
pub enum ConfigError {
    #[error("cannot read {}: {source}", path.display())]
    Read {
        path: PathBuf,
        source: std::io::Error,
    },
    #[error("{}:{line}: {message}; see the README's \"Configuration\" section", path.display())]
    Syntax {
        path: PathBuf,
        line: usize,
        message: String,
    },
    #[error(
        "{} holds an API key but other users may read it (mode {mode:04o}); \
         run `chmod 600 {}` and try again",
        path.display(), path.display()
    )]
    Exposed { path: PathBuf, mode: u32 },
    #[error("{}: [providers.{provider}] gives more than one of api_key, api_key_file and api_key_env; keep one", path.display())]
    TwoKeys {
        path: PathBuf,
        provider: ProviderName,
    },
    #[error("cannot read the {provider} key file {}: {source}", path.display())]
    KeyFile {
        provider: ProviderName,
        path: PathBuf,
        source: std::io::Error,
    },
    #[error("the {provider} key file {} is empty", path.display())]
    EmptyKeyFile {
        provider: ProviderName,
        path: PathBuf,
    },
    #[error(
        "WARDEN_PROVIDER names no provider ({name:?}); use openai, openai-responses, anthropic or ollama"
    )]
    BadProvider { name: String },
    #[error("config.toml takes the {provider} key from ${var}, which is not set")]
    UnsetVariable { provider: ProviderName, var: String },
    #[error(
        "no API key for {provider}: set {var}, or give one in {} \
         (api_key_file, api_key_env or api_key under [providers.{provider}]), \
         or run a recording with --replay FILE",
        config.display()
    )]
    NoKey {
        provider: ProviderName,
        var: &'static str,
        config: PathBuf,
    },
}

/// Where the settings file of `home` is.
pub fn path(home: &Home) -> PathBuf {
    home.root().join("config.toml")
}

impl Config {
    /// Read `<home>/config.toml`; no file means no settings.
    pub fn load(home: &Home) -> Result<Config, ConfigError> {
        Config::load_from(&path(home))
    }

    /// Read the settings at `path`; no file means no settings.
    pub fn load_from(path: &Path) -> Result<Config, ConfigError> {
        let text = match std::fs::read_to_string(path) {
            Ok(t) => t,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
                return Ok(Config {
                    path: Some(path.to_path_buf()),
                    ..Config::default()
                });
            }
            Err(source) => {
                return Err(ConfigError::Read {
                    path: path.to_path_buf(),
                    source,
                });
            }
        };
        let mut config = parse(&text, path)?;
        if config.providers.values().any(|p| p.api_key.is_some()) {
            check_private(path)?;
        }
        for (name, p) in &config.providers {
            let given = [
                p.api_key.is_some(),
                p.api_key_file.is_some(),
                p.api_key_env.is_some(),
            ];
            if given.iter().filter(|g| **g).count() > 1 {
                return Err(ConfigError::TwoKeys {
                    path: path.to_path_buf(),
                    provider: *name,
                });
            }
        }
        config.path = Some(path.to_path_buf());
        Ok(config)
    }

    /// The settings of `provider`, if the file has any.
    pub fn provider(&self, provider: ProviderName) -> Option<&ProviderSettings> {
        self.providers.get(&provider)
    }
}

/// Parse the text; errors give the line and the parser's words, with any
/// quoted value in them blanked out.
fn parse(text: &str, path: &Path) -> Result<Config, ConfigError> {
    toml::from_str(text).map_err(|e| {
        let line = e.span().map_or(1, |s| {
            text[..s.start.min(text.len())].lines().count().max(1)
        });
        // serde points an unknown key at its table; the key's own line helps more.
        let line = unknown_key(e.message())
            .and_then(|key| key_line(text, key, line))
            .unwrap_or(line);
        ConfigError::Syntax {
            path: path.to_path_buf(),
            line,
            message: blank_quoted(e.message().trim()),
        }
    })
}

/// The key an `unknown field` error names.
fn unknown_key(message: &str) -> Option<&str> {
    let rest = message.strip_prefix("unknown field `")?;
    rest.split('`').next()
}

/// The 1-based line, at or after `from`, where `key` is set.
fn key_line(text: &str, key: &str, from: usize) -> Option<usize> {
    text.lines()
        .enumerate()
        .skip(from.saturating_sub(1))
        .find(|(_, l)| {
            l.trim_start()
                .strip_prefix(key)
                .is_some_and(|rest| rest.trim_start().starts_with('='))
        })
        .map(|(i, _)| i + 1)
}

/// Words of the file's own vocabulary, which errors may quote.
const KNOWN: [&str; 17] = [
    "provider",
    "providers",
    "context",
    "model",
    "base_url",
    "api_key",
    "api_key_file",
    "api_key_env",
    "compact_above",
    "keep_recent",
    "idle_timeout_secs",
    "openai",
    "openai-responses",
    "anthropic",
    "ollama",
    "string",
    "integer",
];

/// `message` with the text between each pair of double quotes or
/// backquotes replaced by `…`, unless it is a word of the file's own
/// vocabulary or a misspelling of one: serde quotes values (`invalid type:
/// string "…"`) and unknown names as well as known ones, and either could
/// be a key.
fn blank_quoted(message: &str) -> String {
    let mut out = String::with_capacity(message.len());
    let mut rest = message;
    while let Some(open) = rest.find(['"', '`']) {
        let quote = if rest[open..].starts_with('`') {
            '`'
        } else {
            '"'
        };
        out.push_str(&rest[..=open]);
        let after = &rest[open + 1..];
        match after.find(quote) {
            Some(close) => {
                let inner = &after[..close];
                out.push_str(if sayable(inner) { inner } else { "…" });
                out.push(quote);
                rest = &after[close + 1..];
            }
            None => {
                out.push('…');
                rest = "";
            }
        }
    }
    out.push_str(rest);
    out
}

/// Whether an error may quote `word`: a word of [`KNOWN`], or a short
/// name within two edits of one (a misspelt key, as `api_kye`), which no
/// secret is.
fn sayable(word: &str) -> bool {
    KNOWN.contains(&word)
        || (word.len() <= 24
            && word
                .chars()
                .all(|c| c.is_ascii_lowercase() || c == '_' || c == '-')
            && KNOWN
                .iter()
                .any(|k| strsim::damerau_levenshtein(k, word) <= 2))
}

#[cfg(test)]
mod tests;
