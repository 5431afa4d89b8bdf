//! What a policy grants each plugin and tool: filesystem, network, limits.
//!
//! Grants are layered field by field: `[grants.tool.<name>]` overrides
//! `[grants.plugin.<name>]`, which overrides `[grants.default]`. A field no
//! layer sets takes the safe default: workspace read-only, no extra
//! directories, no network, no processes, the runtime's default limits
//! (interaction and memory, which reach only the user and Warden's own
//! data directory, are on unless a layer turns them off). The grant is an
//! upper bound: a call gets the plugin's declared needs intersected with it.

use std::collections::BTreeMap;
use std::path::PathBuf;
use std::time::Duration;

use serde::{Deserialize, Deserializer, Serialize, de::Error as _};

use super::fields::positive;
use super::process::{ProcessSpec, ProcessTable};
use crate::base::{Limits, MAX_MEMORY_BYTES};
use crate::capability::egress::{CredentialHandle, NetRule};
use crate::capability::{FsAccess, PathGuard};

/// Access to the workspace, as a policy file spells it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum WorkspaceAccess {
    /// No filesystem at all.
    None,
    /// Read files and list directories.
    ReadOnly,
    /// Read and write inside the workspace (protected paths excepted).
    ReadWrite,
}

impl WorkspaceAccess {
    /// The filesystem access this grants, `None` for no filesystem.
    pub fn fs_access(self) -> Option<FsAccess> {
        match self {
            WorkspaceAccess::None => None,
            WorkspaceAccess::ReadOnly => Some(FsAccess::ReadOnly),
            WorkspaceAccess::ReadWrite => Some(FsAccess::ReadWrite),
        }
    }
}

/// A directory outside the workspace a call may use.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ExtraDir {
    /// Absolute host path (no `~` expansion, no relative paths).
    #[serde(deserialize_with = "absolute_path")]
    pub path: PathBuf,
    /// Read-only or read-write.
    pub access: FsAccess,
}

/// One layer of grants (`[grants.default]`, `[grants.plugin.<name>]` or
/// `[grants.tool.<name>]`). `None` fields inherit from the layer below.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct GrantTable {
    /// Workspace access: `none`, `read-only` or `read-write`.
    pub workspace: Option<WorkspaceAccess>,
    /// Directories besides the workspace; replaces the lower layer's list.
    pub extra_dirs: Option<Vec<ExtraDir>>,
    /// Egress rules: `scheme://host[:port]` strings, or tables with `url`
    /// and optional `methods`, `paths` and `allow_private`; replaces the
    /// lower layer's list.
    pub network: Option<Vec<NetRule>>,
    /// Destinations the user may grant, one exact destination per call,
    /// when the policy asks about a call that would reach them (same
    /// syntax as `network`); replaces the lower layer's list.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub network_ask: Option<Vec<NetRule>>,
    /// Names of `[[credential]]`s the host injects for these calls;
    /// replaces the lower layer's list.
    pub credentials: Option<Vec<String>>,
    /// Wall-clock deadline per call, in milliseconds (at least 1).
    #[serde(default, deserialize_with = "positive")]
    pub deadline_ms: Option<u64>,
    /// Guest memory per call, in MiB (1 to 4096).
    #[serde(default, deserialize_with = "memory_mib")]
    pub memory_mib: Option<u64>,
    /// Result text kept per call before truncation, in bytes (at least 1).
    #[serde(default, deserialize_with = "positive")]
    pub output_bytes: Option<u64>,
    /// Request body bytes per outgoing HTTP request (at least 1).
    #[serde(default, deserialize_with = "positive")]
    pub http_request_bytes: Option<u64>,
    /// Response body bytes per outgoing HTTP request (at least 1).
    #[serde(default, deserialize_with = "positive")]
    pub http_response_bytes: Option<u64>,
    /// Outgoing HTTP requests per call (at least 1).
    #[serde(default, deserialize_with = "positive")]
    pub http_requests: Option<u64>,
    /// Workers a call's `fan-out` may run at once (at least 1; 1 runs
    /// them one at a time).
    #[serde(default, deserialize_with = "positive")]
    pub workers: Option<u64>,
    /// Bytes a call may write into its granted directories, its workers
    /// included (at least 1).
    #[serde(default, deserialize_with = "positive")]
    pub write_bytes: Option<u64>,
    /// Processes the tool may start (`[grants.<layer>.process]`), merged
    /// field by field across layers.
    pub process: Option<ProcessTable>,
    /// `warden:tool/interaction` (a plan shown to the user, questions to
    /// the user): `false` turns it off. Default on.
    pub interaction: Option<bool>,
    /// The workspace's memory notes: `false` turns memory off, and the
    /// tools of a plugin that declares memory are neither offered nor
    /// run. Default on.
    pub memory: Option<bool>,
}

/// Every grant layer of a policy.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Grants {
    /// `[grants.default]`: applies to every call.
    #[serde(default)]
    pub default: GrantTable,
    /// `[grants.plugin.<name>]`: applies to every tool of a plugin.
    #[serde(default)]
    pub plugin: BTreeMap<String, GrantTable>,
    /// `[grants.tool.<name>]`: applies to one tool.
    #[serde(default)]
    pub tool: BTreeMap<String, GrantTable>,
}

/// Limits a policy sets; `None` keeps the runtime default.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize)]
pub struct LimitOverrides {
    /// Wall-clock deadline per call.
    pub deadline: Option<Duration>,
    /// Guest memory per call, in bytes.
    pub memory_bytes: Option<usize>,
    /// Result text kept per call, in bytes.
    pub output_bytes: Option<usize>,
    /// Request body bytes per outgoing HTTP request.
    pub http_request_bytes: Option<u64>,
    /// Response body bytes per outgoing HTTP request.
    pub http_response_bytes: Option<u64>,
    /// Outgoing HTTP requests per call.
    pub http_requests: Option<u64>,
    /// Workers a call's `fan-out` runs at once.
    pub workers: Option<u32>,
    /// Bytes a call may write into its granted directories.
    pub write_bytes: Option<u64>,
}

impl LimitOverrides {
    /// `base` with these overrides applied.
    pub fn apply(&self, mut base: Limits) -> Limits {
        if let Some(d) = self.deadline {
            base.deadline = d;
        }
        if let Some(m) = self.memory_bytes {
            base.memory_bytes = m;
        }
        if let Some(o) = self.output_bytes {
            base.output_bytes = o;
        }
        if let Some(b) = self.http_request_bytes {
            base.http_request_bytes = b;
        }
        if let Some(b) = self.http_response_bytes {
            base.http_response_bytes = b;
        }
        if let Some(n) = self.http_requests {
            base.http_requests = n;
        }
        if let Some(n) = self.workers {
            base.workers = n;
        }
        if let Some(b) = self.write_bytes {
            base.write_bytes = b;
        }
        base
    }
}

/// The most a policy grants one tool of one plugin.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct GrantSpec {
    /// Workspace access, `None` for no filesystem. Default read-only.
    pub workspace: Option<FsAccess>,
    /// Directories besides the workspace. Default none.
    pub extra_dirs: Vec<ExtraDir>,
    /// Egress rules. Default none: no network.
    pub network: Vec<NetRule>,
    /// Destinations an approval may add, one exact destination at a time.
    /// Default none: an ask never grants network.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub network_ask: Vec<NetRule>,
    /// Credentials the host injects (handles, resolved from the policy's
    /// `[[credential]]`s by [`crate::policy::Policy::grant_for`]). Default none.
    pub credentials: Vec<CredentialHandle>,
    /// Limit overrides. Default none: the runtime defaults.
    pub limits: LimitOverrides,
    /// Paths the call may not change (or read, if so set), enforced by the
    /// filesystem layer. [`Grants::resolve`] gives the defaults;
    /// [`crate::policy::Policy::grant_for`] the policy's own.
    pub protected: PathGuard,
    /// Processes the call may start. Default none.
    pub process: ProcessSpec,
    /// `warden:tool/interaction`: the plan and questions. Default on.
    pub interaction: bool,
    /// The workspace's memory notes. Default on.
    pub memory: bool,
}

impl GrantSpec {
    /// This grant with every write taken away: the workspace and extra
    /// directories read-only.
    pub fn read_only(mut self) -> GrantSpec {
        self.workspace = self.workspace.map(|_| FsAccess::ReadOnly);
        for dir in &mut self.extra_dirs {
            dir.access = FsAccess::ReadOnly;
        }
        self
    }
}

impl Grants {
    /// The layers for `plugin` and `tool`, merged field by field.
    pub fn resolve(&self, plugin: &str, tool: &str) -> GrantSpec {
        let layers = [
            Some(&self.default),
            self.plugin.get(plugin),
            self.tool.get(tool),
        ];
        let process =
            ProcessSpec::layered(layers.iter().flatten().filter_map(|l| l.process.as_ref()));
        let mut merged = GrantTable::default();
        for layer in layers.into_iter().flatten() {
            let l = layer.clone();
            merged.workspace = l.workspace.or(merged.workspace);
            merged.extra_dirs = l.extra_dirs.or(merged.extra_dirs);
            merged.network = l.network.or(merged.network);
            merged.network_ask = l.network_ask.or(merged.network_ask);
            merged.credentials = l.credentials.or(merged.credentials);
            merged.http_request_bytes = l.http_request_bytes.or(merged.http_request_bytes);
            merged.http_response_bytes = l.http_response_bytes.or(merged.http_response_bytes);
            merged.http_requests = l.http_requests.or(merged.http_requests);
            merged.deadline_ms = l.deadline_ms.or(merged.deadline_ms);
            merged.memory_mib = l.memory_mib.or(merged.memory_mib);
            merged.output_bytes = l.output_bytes.or(merged.output_bytes);
            merged.workers = l.workers.or(merged.workers);
            merged.write_bytes = l.write_bytes.or(merged.write_bytes);
            merged.interaction = l.interaction.or(merged.interaction);
            merged.memory = l.memory.or(merged.memory);
        }
        GrantSpec {
            workspace: merged
                .workspace
                .unwrap_or(WorkspaceAccess::ReadOnly)
                .fs_access(),
            extra_dirs: merged.extra_dirs.unwrap_or_default(),
            network: merged.network.unwrap_or_default(),
            network_ask: merged.network_ask.unwrap_or_default(),
            credentials: Vec::new(),
            limits: LimitOverrides {
                deadline: merged.deadline_ms.map(Duration::from_millis),
                memory_bytes: merged
                    .memory_mib
                    .and_then(|m| usize::try_from(m << 20).ok()),
                output_bytes: merged
                    .output_bytes
                    .map(|o| usize::try_from(o).unwrap_or(usize::MAX)),
                http_request_bytes: merged.http_request_bytes,
                http_response_bytes: merged.http_response_bytes,
                http_requests: merged.http_requests,
                workers: merged.workers.map(|n| u32::try_from(n).unwrap_or(u32::MAX)),
                write_bytes: merged.write_bytes,
            },
            protected: PathGuard::defaults(),
            process,
            interaction: merged.interaction.unwrap_or(true),
            memory: merged.memory.unwrap_or(true),
        }
    }
}

impl Grants {
    /// The `credentials` names for `plugin` and `tool`, layered like the
    /// other fields.
    pub fn credential_names(&self, plugin: &str, tool: &str) -> Vec<String> {
        [
            Some(&self.default),
            self.plugin.get(plugin),
            self.tool.get(tool),
        ]
        .into_iter()
        .flatten()
        .filter_map(|l| l.credentials.clone())
        .next_back()
        .unwrap_or_default()
    }

    /// Every layer, for validation.
    pub(crate) fn layers(&self) -> impl Iterator<Item = &GrantTable> {
        std::iter::once(&self.default)
            .chain(self.plugin.values())
            .chain(self.tool.values())
    }
}

fn memory_mib<'de, D: Deserializer<'de>>(d: D) -> Result<Option<u64>, D::Error> {
    let v = u64::deserialize(d)?;
    let max = (MAX_MEMORY_BYTES >> 20) as u64;
    if v == 0 || v > max {
        return Err(D::Error::custom(format!(
            "memory_mib must be between 1 and {max} (the engine's ceiling)"
        )));
    }
    Ok(Some(v))
}

fn absolute_path<'de, D: Deserializer<'de>>(d: D) -> Result<PathBuf, D::Error> {
    let p = String::deserialize(d)?;
    extra_dir_problem(&p).map_or(Ok(PathBuf::from(p)), |msg| Err(D::Error::custom(msg)))
}

/// Why `path` cannot name an extra directory: it must be absolute, in
/// normal form (the guest sees it under exactly this name), and clear of
/// the workspace's guest path.
fn extra_dir_problem(path: &str) -> Option<String> {
    use crate::capability::GUEST_WORKSPACE;
    if !path.starts_with('/') {
        return Some(format!(
            "extra directory `{path}` must be an absolute path (no `~`, nothing relative)"
        ));
    }
    if path != "/" && crate::policy::normalize_path(path) != path {
        return Some(format!(
            "extra directory `{path}` must be written plainly: no `.` or `..`, no `//`, \
             no trailing `/`"
        ));
    }
    let clash = path == GUEST_WORKSPACE || path.starts_with(&format!("{GUEST_WORKSPACE}/"));
    clash.then(|| {
        format!(
            "extra directory `{path}` clashes with `{GUEST_WORKSPACE}`, where tools see the \
             workspace; grant the workspace itself with `workspace = ...`"
        )
    })
}
