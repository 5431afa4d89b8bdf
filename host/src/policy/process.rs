//! What a policy grants the processes a tool starts (the `shell` tool):
//! whether it may start any, the toolchain directories they see read-only,
//! the environment variables passed through, their limits, and how
//! strictly they are confined. Plain data: the sandbox that enforces it
//! lives elsewhere.
//!
//! Invariants: no process unless a grant layer sets `enabled = true`;
//! toolchain directories are absolute and plain once `~` is expanded (at
//! load time, or left out when `$HOME` is unset); every limit is at least
//! 1, and one no layer sets takes its value from [`default_limits`];
//! confinement is `full` unless a layer names the weaker mode.

use std::path::PathBuf;

use serde::{Deserialize, Deserializer, Serialize, de::Error as _};

use super::command::is_name;
use super::fields::positive;
use crate::capability::process::{ConfinementMode, ProcessLimits};

/// `[grants.<layer>.process]` as the policy file spells it; a field left
/// out inherits from the layer below.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ProcessTable {
    /// Whether the tool may start processes at all.
    pub enabled: Option<bool>,
    /// Directories the processes may read (and run programs from), such as
    /// `~/.cargo`; replaces the lower layer's list.
    #[serde(default, deserialize_with = "toolchains")]
    pub toolchains: Option<Vec<ToolchainDir>>,
    /// Names of environment variables passed through from Warden's own
    /// environment; replaces the lower layer's list.
    #[serde(default, deserialize_with = "env_names")]
    pub env: Option<Vec<String>>,
    /// CPU time per process, in seconds.
    #[serde(default, deserialize_with = "positive")]
    pub cpu_seconds: Option<u64>,
    /// Largest file a process may write, in MiB.
    #[serde(default, deserialize_with = "mib")]
    pub file_size_mib: Option<u64>,
    /// Files a process may have open at once.
    #[serde(default, deserialize_with = "positive")]
    pub open_files: Option<u64>,
    /// Address space per process, in MiB.
    #[serde(default, deserialize_with = "mib")]
    pub address_space_mib: Option<u64>,
    /// Processes the call may run at once.
    #[serde(default, deserialize_with = "positive")]
    pub max_processes: Option<u64>,
    /// Bytes of standard output and error kept per call.
    #[serde(default, deserialize_with = "positive")]
    pub output_bytes: Option<u64>,
    /// How strictly processes are confined.
    pub confinement: Option<ConfinementMode>,
}

/// A toolchain directory, as written and as expanded.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ToolchainDir {
    /// As the policy writes it, e.g. `~/.cargo`.
    pub written: String,
    /// Absolute, with `~` expanded when the policy was loaded; `None` when
    /// it starts with `~` and `$HOME` is not set (a call then goes
    /// without it, and its grant says so).
    pub path: Option<PathBuf>,
}

/// The most a policy grants one tool's processes.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct ProcessSpec {
    /// Whether the tool may start processes. Default false.
    pub enabled: bool,
    /// Directories processes may read and run programs from. Default none.
    pub toolchains: Vec<ToolchainDir>,
    /// Environment variables passed through. Default none.
    pub env: Vec<String>,
    /// Limits. Default [`default_limits`].
    pub limits: ProcessLimits,
    /// Confinement. Default full.
    pub confinement: ConfinementMode,
}

impl Default for ProcessSpec {
    fn default() -> Self {
        ProcessSpec::layered([])
    }
}

/// The limits a grant that sets none gets: enough for a build and its
/// tests, bounded so a runaway command ends.
pub fn default_limits() -> ProcessLimits {
    ProcessLimits {
        cpu_seconds: 300,
        address_space: Some(DEFAULT_ADDRESS_SPACE),
        ..ProcessLimits::default()
    }
}

/// Address space a process gets unless a policy says otherwise: room for
/// runtimes that reserve far more than they use (V8, the JVM, Go).
const DEFAULT_ADDRESS_SPACE: u64 = 64 << 30;

impl ProcessSpec {
    /// `layers`, lowest first, merged field by field.
    pub fn layered<'a>(layers: impl IntoIterator<Item = &'a ProcessTable>) -> ProcessSpec {
        let mut m = ProcessTable::default();
        for l in layers {
            let l = l.clone();
            m.enabled = l.enabled.or(m.enabled);
            m.toolchains = l.toolchains.or(m.toolchains);
            m.env = l.env.or(m.env);
            m.cpu_seconds = l.cpu_seconds.or(m.cpu_seconds);
            m.file_size_mib = l.file_size_mib.or(m.file_size_mib);
            m.open_files = l.open_files.or(m.open_files);
            m.address_space_mib = l.address_space_mib.or(m.address_space_mib);
            m.max_processes = l.max_processes.or(m.max_processes);
            m.output_bytes = l.output_bytes.or(m.output_bytes);
            m.confinement = l.confinement.or(m.confinement);
        }
        let d = default_limits();
        ProcessSpec {
            enabled: m.enabled.unwrap_or(false),
            toolchains: m.toolchains.unwrap_or_default(),
            env: m.env.unwrap_or_default(),
            limits: ProcessLimits {
                cpu_seconds: m.cpu_seconds.unwrap_or(d.cpu_seconds),
                file_size: m.file_size_mib.map_or(d.file_size, |v| v << 20),
                open_files: m.open_files.unwrap_or(d.open_files),
                address_space: m.address_space_mib.map(|v| v << 20).or(d.address_space),
                processes: m.max_processes.unwrap_or(d.processes),
                output_bytes: m.output_bytes.unwrap_or(d.output_bytes),
                ..d
            },
            confinement: m.confinement.unwrap_or_default(),
        }
    }
}

/// Largest size in MiB a limit may name (1 TiB).
const MAX_MIB: u64 = 1 << 20;

fn mib<'de, D: Deserializer<'de>>(d: D) -> Result<Option<u64>, D::Error> {
    let v = u64::deserialize(d)?;
    if v == 0 || v > MAX_MIB {
        return Err(D::Error::custom(format!(
            "must be between 1 and {MAX_MIB} MiB; leave it out for the default"
        )));
    }
    Ok(Some(v))
}

fn toolchains<'de, D: Deserializer<'de>>(d: D) -> Result<Option<Vec<ToolchainDir>>, D::Error> {
    let home = std::env::var("HOME").ok().filter(|h| h.starts_with('/'));
    Vec::<String>::deserialize(d)?
        .into_iter()
        .map(|written| {
            let path = match expand(&written, home.as_deref()) {
                Ok(path) => Some(PathBuf::from(path)),
                Err(Expand::NoHome) => None,
                Err(Expand::Bad(e)) => return Err(D::Error::custom(e)),
            };
            Ok(ToolchainDir { written, path })
        })
        .collect::<Result<_, _>>()
        .map(Some)
}

/// Why a toolchain directory could not be expanded.
#[derive(Debug, PartialEq, Eq)]
pub(super) enum Expand {
    /// It starts with `~`, and `$HOME` is not an absolute path.
    NoHome,
    /// It is not a directory a policy may name.
    Bad(String),
}

/// `written` with a leading `~` replaced by `home`, checked to be an
/// absolute, plain path other than `/`.
pub(super) fn expand(written: &str, home: Option<&str>) -> Result<String, Expand> {
    let tail = if written == "~" {
        Some("")
    } else {
        written.strip_prefix("~/")
    };
    let path = match tail {
        Some(tail) => {
            let home = home.filter(|h| h.starts_with('/')).ok_or(Expand::NoHome)?;
            let home = home.trim_end_matches('/');
            if tail.is_empty() {
                home.to_string()
            } else {
                format!("{home}/{tail}")
            }
        }
        None if written.starts_with('~') => {
            return Err(Expand::Bad(format!(
                "toolchain directory `{written}`: only `~` and `~/…` are expanded; write the path out"
            )));
        }
        None => written.to_string(),
    };
    if path == "/" || (path.is_empty() && tail.is_some()) {
        return Err(Expand::Bad(format!(
            "toolchain directory `{written}` would expose the whole filesystem; name the toolchain's own directory"
        )));
    }
    if !path.starts_with('/') {
        return Err(Expand::Bad(format!(
            "toolchain directory `{written}` must be an absolute path or start with `~/`"
        )));
    }
    if super::normalize_path(&path) != path {
        return Err(Expand::Bad(format!(
            "toolchain directory `{written}` must be written plainly: no `.` or `..`, no `//`, no trailing `/`"
        )));
    }
    Ok(path)
}

fn env_names<'de, D: Deserializer<'de>>(d: D) -> Result<Option<Vec<String>>, D::Error> {
    let names = Vec::<String>::deserialize(d)?;
    if let Some(bad) = names.iter().find(|n| !is_name(n)) {
        return Err(D::Error::custom(format!(
            "`{bad}` in `env` is not a variable name (letters, digits and `_`, not starting with a digit)"
        )));
    }
    Ok(Some(names))
}
