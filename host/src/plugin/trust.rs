//! Whether an installed plugin's component is the one the user approved.
//!
//! Invariant: a component runs only if the lockfile names it and its bytes
//! still hash to the approved sha256.

use std::path::Path;

use super::lockfile::Lockfile;
use super::registry::InstalledPlugin;
use crate::base::sha256_hex;

/// Why the lockfile does not approve an installed plugin.
#[derive(Debug, thiserror::Error)]
pub(super) enum NotApproved {
    /// The lockfile has no entry for it.
    #[error(
        "plugin {name} is not approved: the lockfile has no entry for it; check it with \
         `warden plugin inspect {name}`, then approve it with `warden plugin approve {name}` \
         (or install it again)"
    )]
    NotLocked { name: String },
    /// Its installation record names other bytes than the lockfile.
    #[error(
        "plugin {name}: its installation record does not match the lockfile; approve it \
         again with `warden plugin approve {name}` (or install it again)"
    )]
    RecordMismatch { name: String },
}

/// The sha256 the lockfile approves for `installed`, or why it may not run:
/// the lockfile has no entry for it, or its installation record names other
/// bytes than the lockfile does. Reads nothing from disk.
pub(super) fn approved_sha256(
    lock: &Lockfile,
    installed: &InstalledPlugin,
) -> Result<String, NotApproved> {
    let name = &installed.meta.manifest.name;
    let Some(locked) = lock.plugins.get(name) else {
        return Err(NotApproved::NotLocked { name: name.clone() });
    };
    if installed.sha256 != locked.sha256 {
        return Err(NotApproved::RecordMismatch { name: name.clone() });
    }
    Ok(locked.sha256.clone())
}

/// Why plugin `name`, whose component is at `path`, may not run: its bytes
/// cannot be read or no longer hash to `approved`.
pub(super) fn changed_on_disk(name: &str, path: &Path, approved: &str) -> Option<String> {
    match std::fs::read(path) {
        Ok(wasm) => {
            let on_disk = sha256_hex(&wasm);
            (on_disk != approved).then(|| changed_message(name, &on_disk, approved))
        }
        // No path in the message: it can reach the model as a call's error.
        Err(e) => Some(format!(
            "plugin {name}: its component cannot be read ({}); install it again",
            e.kind()
        )),
    }
}

/// The refusal of a component whose bytes hash to `on_disk`, not `approved`.
pub(super) fn changed_message(name: &str, on_disk: &str, approved: &str) -> String {
    let short = |s: &str| s.get(..12).unwrap_or(s).to_string();
    format!(
        "plugin {name}: its component changed on disk since it was approved (sha256 {} on disk, \
         {} approved); it will not run until you check it with `warden plugin inspect {name}` \
         and approve it again with `warden plugin approve {name}` (or install it again)",
        short(on_disk),
        short(approved)
    )
}
