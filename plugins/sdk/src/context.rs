//! The per-call context and the host interface (log, progress, cancellation).

use crate::bindings::{self, host};
use crate::{ToolError, WorkspacePath};

/// Severity of a log line.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum LogLevel {
    Trace,
    Debug,
    Info,
    Warn,
    Error,
}

/// Send a diagnostic line to the host. The host caps lines per call.
pub fn log(level: LogLevel, message: &str) {
    let level = match level {
        LogLevel::Trace => host::LogLevel::Trace,
        LogLevel::Debug => host::LogLevel::Debug,
        LogLevel::Info => host::LogLevel::Info,
        LogLevel::Warn => host::LogLevel::Warn,
        LogLevel::Error => host::LogLevel::Error,
    };
    host::log(level, message);
}

/// Report progress; `fraction` in `0.0..=1.0` when known.
pub fn progress(message: &str, fraction: Option<f32>) {
    host::progress(message, fraction);
}

/// True once the user has cancelled the call. Poll it in long loops.
pub fn is_cancelled() -> bool {
    host::is_cancelled()
}

/// What the host tells a tool about the call it is running.
#[derive(Debug, Clone)]
pub struct Context {
    /// Unique id of this call.
    pub call_id: String,
    /// Guest path of the workspace preopen, when the grant includes it.
    workspace: Option<String>,
    /// The workspace's path as the user knows it.
    workspace_display: Option<String>,
    /// Guest paths of the extra directories, read from the preopens on
    /// first use.
    extra_dirs: std::sync::OnceLock<Vec<String>>,
    /// Milliseconds left when the call started.
    pub deadline_ms: u64,
}

impl Context {
    pub(crate) fn from_wit(cx: bindings::CallContext) -> Self {
        Context {
            call_id: cx.call_id,
            workspace: cx.workspace,
            workspace_display: cx.workspace_display,
            extra_dirs: std::sync::OnceLock::new(),
            deadline_ms: cx.deadline_ms,
        }
    }

    /// A context for native unit tests of tool logic.
    pub fn for_tests(workspace: &str) -> Self {
        Self::for_tests_with_extra(workspace, &[])
    }

    /// A context for native unit tests with extra directories granted.
    pub fn for_tests_with_extra(workspace: &str, extra_dirs: &[&str]) -> Self {
        Context {
            call_id: "test".into(),
            workspace: Some(workspace.into()),
            workspace_display: None,
            extra_dirs: extra_dirs
                .iter()
                .map(|d| d.to_string())
                .collect::<Vec<_>>()
                .into(),
            deadline_ms: 10_000,
        }
    }

    /// Map a path from tool input to a path inside a granted directory.
    ///
    /// Relative paths are taken from the workspace root; an absolute path is
    /// accepted when it lies inside the workspace, or inside an extra
    /// directory the call was granted (named as the user granted it).
    /// Everything else is refused, and `..` may not climb above the root it
    /// starts from. Symlinks are resolved by the host's sandbox, which
    /// refuses any that lead outside.
    ///
    /// Open the result at [`WorkspacePath::guest`], for example
    /// `std::fs::read_to_string(path.guest())`, and map an I/O error with
    /// `ToolError::from_io(&e, path.display())`.
    pub fn path(&self, input: &str) -> Result<WorkspacePath, ToolError> {
        let Some(root) = self.workspace.as_deref() else {
            return Err(ToolError::permission_denied(
                "this call was granted no filesystem access",
            ));
        };
        let display = self.workspace_display.as_deref();
        let extra: &[String] = if input.starts_with('/') {
            self.extra_dirs.get_or_init(|| extra_preopens(root))
        } else {
            &[]
        };
        WorkspacePath::resolve_among(root, display, extra, input)
    }
}

/// The guest paths of every preopen but the workspace's. Only asked when the
/// call has a workspace, so the host has linked the filesystem.
#[cfg(target_family = "wasm")]
fn extra_preopens(workspace: &str) -> Vec<String> {
    wasip2::filesystem::preopens::get_directories()
        .into_iter()
        .map(|(_descriptor, name)| name)
        .filter(|name| name != workspace)
        .collect()
}

/// Natively there are no preopens: only the workspace.
#[cfg(not(target_family = "wasm"))]
fn extra_preopens(_workspace: &str) -> Vec<String> {
    Vec::new()
}
