//! A hostile test fixture: every tool tries something the host must stop or
//! survive (escaping the workspace, writing through a read-only grant,
//! spinning, allocating without end, flooding output or the disk, connecting out,
//! rewriting protected paths while claiming to be read-only, spoofing the
//! terminal with escape sequences), and one that runs a scripted sequence
//! of file operations for the audit tests.
//!
//! It deliberately ignores [`warden_sdk::Context::path`] and hands guest paths
//! straight to `std::fs`, so the host's WASI layer is the only thing that can
//! refuse. Errors carry the raw `std::io::Error` text, which a real plugin
//! would not show.

mod disk_flood;
mod exhaust;
mod fan;
mod files;
mod flood;
mod hostcalls;
mod meta;
mod prefilter;
mod probe;
mod protected;
mod script;
mod spoof;
mod wasi_libc;

use warden_sdk::serde_json::{Value, json};
use warden_sdk::{ToolError, register};

/// Input of the tools that take none.
#[derive(serde::Deserialize)]
pub struct NoInput {}

/// Schema of an input object with no properties.
fn no_input_schema() -> Value {
    json!({"type": "object", "properties": {}})
}

/// One mebibyte.
const MIB: usize = 1 << 20;

/// `mib` mebibytes in bytes, refusing sizes the guest cannot address.
fn mib_to_bytes(mib: usize) -> Result<usize, ToolError> {
    mib.checked_mul(MIB)
        .ok_or_else(|| ToolError::invalid_input(format!("{mib} MiB does not fit in memory")))
}

/// Map an I/O error from `op` on `path`, keeping the raw error text.
fn io_error(op: &str, path: &str, err: &std::io::Error) -> ToolError {
    use std::io::ErrorKind as K;
    let message = format!("{op} {path}: {err} (kind: {:?})", err.kind());
    match err.kind() {
        K::NotFound => ToolError::not_found(message),
        K::PermissionDenied | K::ReadOnlyFilesystem => ToolError::permission_denied(message),
        _ => ToolError::io(message),
    }
}

/// The `/workspace` preopen itself, for tools that call `wasi:filesystem`
/// directly instead of through `std::fs`.
fn workspace_preopen() -> Result<wasip2::filesystem::types::Descriptor, ToolError> {
    wasip2::filesystem::preopens::get_directories()
        .into_iter()
        .find(|(_, name)| name == "/workspace")
        .map(|(dir, _)| dir)
        .ok_or_else(|| ToolError::not_found("no /workspace preopen"))
}

register!(
    probe::Ping,
    probe::Counter,
    probe::ReadEnv,
    probe::Connect,
    probe::Panic,
    exhaust::Spin,
    flood::FloodHost,
    exhaust::AllocBomb,
    exhaust::FloodStdout,
    exhaust::FloodOutput,
    exhaust::FloodLog,
    exhaust::IsCancelledSpin,
    exhaust::SleepMs,
    files::ReadPath,
    files::WritePath,
    files::OpenTruncate,
    files::Rename,
    files::HardLink,
    files::Symlink,
    files::Remove,
    files::SetLen,
    files::SetMtime,
    files::TouchAt,
    files::ListTwice,
    files::Mkdir,
    files::List,
    meta::StatPath,
    prefilter::PrefilterRead,
    meta::ReadLink,
    hostcalls::BigLog,
    hostcalls::OpenMany,
    hostcalls::RandomBytes,
    hostcalls::Progress,
    protected::ClobberGitConfig,
    script::FsScript,
    fan::FanOut,
    spoof::Spoof,
    disk_flood::WriteFlood,
);
