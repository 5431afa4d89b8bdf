//! The Warden process confines itself with Landlock before any guest code
//! runs (`tool call`, `run`, `mcp`), while it still has one thread: from then on
//! it may read the system, its data directory and what the policy could
//! grant a call, and write only its data directory, the temporary
//! directory and the workspace (when a call could be granted writes).
//! Defence in depth under the sandbox: were a guest ever to escape
//! wasmtime, the process still could not read `~/.ssh` or write outside
//! those places. What it allows is in `docs/sandbox.md`.

use std::path::{Path, PathBuf};

use crate::capability::FsAccess;
use crate::capability::process::{HostPaths, confine_host, landlock_abi};
use crate::home::Home;
use crate::policy::Policy;

/// Confine this process for calls under `policy` in `workspace`; `read`
/// names files it still reads later. Returns a warning to show when the
/// kernel can confine the process and it could not be done; nothing when
/// the kernel has no Landlock (the process sandbox says so itself when a
/// command needs it).
pub fn confine_self(
    home: &Home,
    workspace: &Path,
    policy: &Policy,
    read: Vec<PathBuf>,
) -> Option<String> {
    if landlock_abi() == 0 {
        return None;
    }
    let reach = policy.host_reach();
    let access = match reach.workspace_writes {
        true => FsAccess::ReadWrite,
        false => FsAccess::ReadOnly,
    };
    let mut read = read;
    read.extend(reach.files);
    let paths = HostPaths {
        workspace: Some((workspace.to_path_buf(), access)),
        data_dir: home.root().to_path_buf(),
        cache_dir: None,
        read,
        toolchains: reach.toolchains,
        extra_dirs: reach.extra_dirs,
    };
    confine_host(&paths).err().map(|e| {
        format!("the warden process could not confine itself (it runs unconfined; calls stay sandboxed): {e}")
    })
}
